"""Gemini CLI scenarios for the live-state questions (status, wait, whoami), watched WHILE they run.

Not in the library every fixture runs (a test must open their gates or kill the client): run one
with ``runner.start_scenario("tests.realclient.gemini.scenarios_live:<name>", root)``.

- ``live_hold``: a shell call records what the client exports to its tool (``GEMINI_CLI``, any
  ``GEMINI_SESSION_ID``) and runs ``sessionsift whoami`` inside it; the final reply is held at gate
  ``reply`` until the test releases it (the turn stays open, the client alive).
- ``live_tool``: the shell call is ``sleep 300``; the test SIGKILLs the client while it runs.
"""
from __future__ import annotations

import sys

from .mock_api import Turn, call, text
from .scenarios import Prompt, Scenario

PY = sys.executable
"""This checkout's interpreter: the tool runs the sessionsift under test inside the client's shell."""

WHOAMI = ("env | grep -E '^(GEMINI|CLAUDE|CODEX|OPENCODE|CRUSH)' | sort > env.txt; "
          f"{PY} -m sessionsift whoami --format json > whoami.json; echo recorded")

LIVE_HOLD = Scenario(
    name="live_hold",
    notes="P1: a shell call records the client's exported variables and runs `sessionsift whoami` inside the tool; "
          "the final reply is held at gate `reply` (the test snapshots the open turn, then releases it).",
    prompts=[Prompt("Record who runs this, then answer.", turns=[
        Turn([call("run_shell_command", command=WHOAMI, description="record the environment")]),
        Turn([text("Answered after the hold.")], gate="reply"),
    ])],
)

LIVE_TOOL = Scenario(
    name="live_tool",
    killed_by_test=True,
    notes="P1: a shell call `sleep 300`; the test SIGKILLs the client while it runs (mid-tool).",
    prompts=[Prompt("Run the long job.", turns=[
        Turn([call("run_shell_command", command="sleep 300; echo slept", description="the long job")]),
        Turn([text("never delivered")]),
    ])],
)

ALL = {s.name: s for s in (LIVE_HOLD, LIVE_TOOL)}
