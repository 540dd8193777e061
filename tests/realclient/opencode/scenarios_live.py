"""opencode scenarios for the live-state questions (status, wait, whoami), watched WHILE they run.

Not in the library every fixture runs (a test must open their gates or kill the client): run one
with ``runner.start_scenario("tests.realclient.opencode.scenarios_live:<name>", root)``.

- ``live_hold``: a bash call records what the client exports to its tool (``OPENCODE``,
  ``OPENCODE_PID``, ``AGENT``) and runs ``sessionsift whoami`` inside it; the final reply is held at
  gate ``reply`` until the test releases it (the turn stays open, the client alive).
- ``live_tool``: the bash call is ``sleep 300``; the test SIGKILLs the client while it runs.
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

ALL = {s.name: s for s in (LIVE_HOLD, LIVE_TOOL)}
