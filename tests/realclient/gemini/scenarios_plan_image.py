"""A Gemini CLI scenario for `plan` and `image`: a checklist kept with ``write_todos`` and two images, written
by the real client (0.61.0).

- ``write_todos`` (``todos: [{description, status}]``, status one of pending, in_progress, completed,
  cancelled, blocked; at most one in_progress: the client's ``validateToolParamValues``) is called four
  times: a first list, an INVALID one (two steps in_progress: the client refuses it, the call's status is
  ``error``), a second and a last list, all completed.
- the prompt names ``@red.png``: the client reads the file (its ``read_many_files`` path) and sends it as an
  ``inlineData`` part of the user message; the model then reads blue.png with ``read_file`` (an image
  result, sent back as inlineData).

Run: ``python -m tests.realclient.gemini.runner tests.realclient.gemini.scenarios_plan_image:plan_images --root R``."""
from __future__ import annotations

from ..common.images import BLUE, RED
from .mock_api import Turn, call, text
from .scenarios import Prompt, Scenario

STEPS = ["Look at red.png", "Read blue.png", "Write notes.txt"]


def todos(*statuses: str) -> dict:
    return call("write_todos", todos=[{"description": d, "status": s} for d, s in zip(STEPS, statuses)])


PLAN_IMAGES = Scenario(
    "plan_images",
    [Prompt("@red.png Look at this image and at blue.png, then write notes.txt.", [
        Turn([todos("in_progress", "pending", "pending")]),
        Turn([call("read_file", file_path="{W}/blue.png")]),
        Turn([todos("completed", "in_progress", "in_progress")]),  # refused: two steps in progress
        Turn([todos("completed", "completed", "in_progress")]),
        Turn([call("write_file", file_path="{W}/notes.txt", content="red and blue\n")]),
        Turn([todos("completed", "completed", "completed")]),
        Turn([text("red.png is red, blue.png is blue; notes.txt written.")]),
    ])],
    setup_files={"red.png": RED, "blue.png": BLUE},  # type: ignore[dict-item]
    notes="four write_todos calls (the second refused by the client's validation), an @red.png reference in the "
          "prompt (an inlineData part of the user message) and a read_file of blue.png (an image result)",
)

ALL = {"plan_images": PLAN_IMAGES}

PLAN_TEXT = "# Plan\n\n1. Read config.ini\n2. Change mode to fast\n"

PLAN_MODE = Scenario(
    "plan_mode",
    [Prompt("Plan how to switch config.ini to fast mode, then do it.", [
        Turn([call("enter_plan_mode", reason="plan the change first")]),
        Turn([call("write_file", file_path="{GEMINI}/tmp/gem-plan-mode/{SID}/plans/fast-mode.md", content=PLAN_TEXT)]),
        Turn([call("exit_plan_mode", plan_filename="fast-mode.md")]),
        Turn([text("The plan is approved.")]),
    ])],
    setup_files={"config.ini": "[core]\nmode = slow\n"},
    notes="plan mode: enter_plan_mode, the plan written into the session's plans dir (the mock fills {SID} from "
          "the plans dir the client's plan-mode system instruction names), exit_plan_mode(plan_filename) approved headless",
)

ALL["plan_mode"] = PLAN_MODE
