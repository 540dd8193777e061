"""An opencode (and Kilo Code) scenario for `plan` and `image`, written by the real client: a checklist kept with
``todowrite`` and two images.

- ``todowrite`` (``todos: [{content, status, priority}]``; opencode 1.18.33's TodoWriteTool: the tool keeps
  the list in the ``todo`` table too) is called three times: the first step in progress, then two
  completed, then all completed.
- ``opencode run -f red.png``: the prompt carries red.png as a ``file`` part of the user message; the model
  then ``read``s blue.png (an image result: the read tool answers with the image as an attachment).

The mock model declares image input (``attachment: true``, ``modalities.input`` with ``image``): without it
the client refuses to send an image to it.

Run: ``python -m tests.realclient.opencode.runner tests.realclient.opencode.scenarios_plan_image:plan_images``."""
from __future__ import annotations

from ..common.images import BLUE, RED
from .scenarios import Prompt, Scenario, Step, write

STEPS = ["Look at red.png", "Read blue.png", "Write notes.txt"]


def todos(*statuses: str) -> tuple[str, dict]:
    return ("todowrite", {"todos": [{"content": c, "status": s, "priority": "medium"}
                                    for c, s in zip(STEPS, statuses)]})


PLAN_IMAGES = Scenario(
    name="plan_images",
    title="Plan and images",
    prompts=[Prompt("[plan_images P1] Look at the attached image and at blue.png, then write notes.txt.", [
        Step(calls=[todos("in_progress", "pending", "pending")]),
        Step(calls=[("read", {"filePath": "{W}/blue.png"})]),
        Step(calls=[todos("completed", "completed", "in_progress")]),
        Step(calls=[write("notes.txt", "red and blue\n")]),
        Step(calls=[todos("completed", "completed", "completed")]),
        Step(text="red.png is red, blue.png is blue; notes.txt written."),
    ], files=["red.png"])],
    setup_files={"red.png": RED, "blue.png": BLUE},
    model_extra={"attachment": True, "modalities": {"input": ["text", "image"], "output": ["text"]}},
    notes=["three todowrite calls, `run -f red.png` (a file part of the prompt), a read of blue.png (an image "
           "result), a write of notes.txt"],
)

ALL = {"plan_images": PLAN_IMAGES}
