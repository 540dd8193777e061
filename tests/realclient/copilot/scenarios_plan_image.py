"""A GitHub Copilot CLI scenario for `plan` and `image`, written by the real client (1.0.102).

- the todo list: Copilot keeps it in the session's own SQLite database (``session-state/<id>/session.db``,
  table ``todos``: ``id, title, description, status`` with status ``pending``, ``in_progress``, ``done`` or
  ``blocked``, created by the client: its runtime's ``CREATE TABLE IF NOT EXISTS todos``), written by the
  model through the ``sql`` tool; the tool's own event records each statement.
- images: the model ``view``s blue.png (``plan_images``; its prompt's ``@red.png`` is left as text: ``-p`` reads no
  ``@file``), and ``attach_image`` sends red.png over ACP as an image content block of the prompt.

Run: ``python -m tests.realclient.copilot.runner tests.realclient.copilot.scenarios_plan_image:plan_images --root R``."""
from __future__ import annotations

from ..common.images import BLUE, RED
from .mock import Step
from .scenarios import Prompt, Scenario, create, view

STEPS = ["Look at red.png", "Read blue.png", "Write notes.txt"]


def sql(query: str, description: str = "Update the todo list") -> tuple[str, dict]:
    return ("sql", {"query": query, "description": description})


PLAN_IMAGES = Scenario(
    name="plan_images",
    prompts=[Prompt("[plan_images P1] @red.png Look at this image and at blue.png, then write notes.txt.", [
        Step(calls=[sql("INSERT INTO todos (id, title, status) VALUES ('t1', 'Look at red.png', 'in_progress'), "
                        "('t2', 'Read blue.png', 'pending'), ('t3', 'Write notes.txt', 'pending')", "Plan the work")]),
        Step(calls=[view("blue.png")]),
        Step(calls=[sql("UPDATE todos SET status = 'done' WHERE id IN ('t1', 't2')")]),
        Step(calls=[create("notes.txt", "red and blue\n")]),
        Step(calls=[sql("UPDATE todos SET status = 'done' WHERE id = 't3'")]),
        Step(text="red.png is red, blue.png is blue; notes.txt written."),
    ])],
    setup_files={"red.png": RED, "blue.png": BLUE},  # type: ignore[dict-item]
    notes=["three sql calls keeping the todos table, an @red.png reference in the prompt, a view of blue.png, "
           "a create of notes.txt"],
)

ATTACH_IMAGE = Scenario(
    name="attach_image",
    acp=True,
    prompts=[Prompt("[attach_image P1] What colour is the attached image?", [
        Step(text="It is red."),
    ], images=["red.png"])],
    setup_files={"red.png": RED},  # type: ignore[dict-item]
    notes=["over ACP (`copilot --acp`: `-p` reads no image): the prompt carries red.png as an ACP image content "
           "block; no tool runs (none asks for approval)"],
)

ALL = {"plan_images": PLAN_IMAGES, "attach_image": ATTACH_IMAGE}
