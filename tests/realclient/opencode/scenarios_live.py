"""opencode scenarios for the live-state questions (status, wait, whoami), watched WHILE they run.

Not in the library every fixture runs (a test must open their gates or kill the client): run one
with ``runner.start_scenario("tests.realclient.opencode.scenarios_live:<name>", root)``.

- ``live_hold``: a bash call records what the client exports to its tool (``OPENCODE``,
  ``OPENCODE_PID``, ``AGENT``) and runs ``sessionsift whoami`` inside it; the final reply is held at
  gate ``reply`` until the test releases it (the turn stays open, the client alive).
- ``live_tool``: the bash call is ``sleep 300``; the test SIGKILLs the client while it runs.
- ``live_question``: over ``opencode serve`` (its HTTP API) a ``question`` call, answered (first option)
  once the test releases gate ``answer``.
"""
from __future__ import annotations

import sys

from .mock_chat import Step
from .scenarios import Prompt, Scenario, bash

PY = sys.executable
"""This checkout's interpreter: the tool runs the sessionsift under test inside the client's shell."""

WHOAMI = ("env | grep -E '^(OPENCODE|AGENT|CLAUDE|CODEX|GEMINI|CRUSH)' | sort > env.txt; "
          f"{PY} -m sessionsift whoami --format json > whoami.json; echo recorded")

LIVE_HOLD = Scenario(
    name="live_hold",
    title="Live hold",
    notes=["P1: a bash call records the client's exported variables and runs `sessionsift whoami` inside the tool; "
           "the final reply is held at gate `reply` (the test snapshots the open turn, then releases it)."],
    prompts=[Prompt("[live_hold P1] Record who runs this, then answer.", [
        Step(calls=[bash(WHOAMI, "Record the environment")]),
        Step(text="Answered after the hold.", gate="reply"),
    ])],
)

LIVE_TOOL = Scenario(
    name="live_tool",
    title="Live tool",
    notes=["P1: a bash call `sleep 300`; the test SIGKILLs the client while it runs (mid-tool)."],
    prompts=[Prompt("[live_tool P1] Run the long job.", [
        Step(calls=[bash("sleep 300; echo slept", "The long job")]),
        Step(text="never delivered"),
    ])],
)

LIVE_QUESTION = Scenario(
    name="live_question",
    title="Live question",
    notes=["P1 over `opencode serve` (its HTTP API; `opencode run` denies the question tool): a `question` call "
           "(offered with OPENCODE_ENABLE_QUESTION_TOOL=1: its tool registry's `['app','cli','desktop']"
           ".includes(client) || enableQuestionTool`); the harness answers it (first option) once the test releases "
           "gate `answer`, then the final reply."],
    serve=True,
    extra_env={"OPENCODE_ENABLE_QUESTION_TOOL": "1"},
    prompts=[Prompt("[live_question P1] Ask me which style to use.", [
        Step(calls=[("question", {"questions": [{
            "question": "Which greeting style?", "header": "Style",
            "options": [{"label": "Casual", "description": "Say hi"},
                        {"label": "Formal", "description": "Say good day"}]}]})]),
        Step(text="Casual it is."),
    ])],
)

ALL = {s.name: s for s in (LIVE_HOLD, LIVE_TOOL, LIVE_QUESTION)}
