"""Qwen Code scenarios for the live-state questions (status, wait, whoami), watched WHILE they run.

Not in the library every fixture runs (a test must open their gates or kill the client): run one
with ``runner.start_scenario("tests.realclient.qwen.scenarios_live:<name>", root)``.

- ``live_hold``: a shell call records what the client exports to its tool (``QWEN_CODE``,
  ``QWEN_CODE_SESSION_ID``, ...) and runs ``sessionsift whoami`` inside it; the final reply is held
  at gate ``reply`` until the test releases it (the turn stays open, the client alive).
- ``live_tool``: the shell call is ``sleep 300``; the test SIGKILLs the client while it runs.
"""
from __future__ import annotations

import sys

from ..common.chat import Step
from .scenarios import Prompt, Scenario, shell

PY = sys.executable
"""This checkout's interpreter: the tool runs the sessionsift under test inside the client's shell."""

WHOAMI = ("env | grep -E '^(QWEN|CLAUDE|CODEX|GEMINI|OPENCODE|CRUSH|PI_)' | sort > env.txt; "
          f"{PY} -m sessionsift whoami --format json > whoami.json; echo recorded")

LIVE_HOLD = Scenario(
    name="live_hold",
    notes=["P1: a shell call records the client's exported variables and runs `sessionsift whoami` inside the "
           "tool; the final reply is held at gate `reply` (the test snapshots the open turn, then releases it)."],
    prompts=[Prompt("Record who runs this, then answer [live_hold P1]", [
        Step(calls=[shell(WHOAMI, "Record the environment")]),
        Step(text="Answered after the hold.", gate="reply"),
    ])],
)

LIVE_TOOL = Scenario(
    name="live_tool",
    notes=["P1: a shell call `sleep 300`; the test SIGKILLs the client while it runs (mid-tool)."],
    prompts=[Prompt("Run the long job [live_tool P1]", [
        # Qwen Code refuses a blocking `sleep N` followed by more (invalid_tool_params); a standalone one marked
        # as intentional runs
        Step(calls=[shell("sleep 300 # intentional-sleep: the test kills the client mid-tool", "The long job")]),
        Step(text="never delivered"),
    ])],
)

ALL = {s.name: s for s in (LIVE_HOLD, LIVE_TOOL)}
