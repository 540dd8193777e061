"""Codex CLI scenarios for the live-state questions (status, wait, whoami), watched WHILE they run.

Not in the library every fixture runs (a test must open their gates or kill the client): run one
with ``runner.start_scenario("tests.realclient.codex.scenarios_live:<name>", root)``.

- ``live_hold``: the shell call records what the client exports to it (``printenv CODEX_THREAD_ID``)
  and runs ``sessionsift whoami`` inside the tool; the final reply is held at gate ``reply`` until
  the test releases it (the turn stays open, the client alive).
- ``live_tool``: the shell call is ``sleep 300``; the test SIGKILLs the client while it runs.
"""
from __future__ import annotations

import sys

from .mock_api import Turn, say
from .scenarios import Prompt, Scenario, exec_cmd

PY = sys.executable
"""This checkout's interpreter: the tool runs the sessionsift under test inside the client's shell."""

WHOAMI = (f"printenv CODEX_THREAD_ID > tid.txt; {PY} -m sessionsift whoami --format json > whoami.json; "
          "echo recorded")

LIVE_HOLD = Scenario(
    name="live_hold",
    notes="P1: a shell call records CODEX_THREAD_ID and runs `sessionsift whoami` inside the tool; the final reply "
          "is held at gate `reply` (the test snapshots the open turn, then releases it).",
    prompts=[Prompt("Record who runs this, then answer.", turns=[
        Turn([exec_cmd(WHOAMI)]),
        Turn([say("Answered after the hold.")], gate="reply"),
    ])],
)

LIVE_TOOL = Scenario(
    name="live_tool",
    killed_by_test=True,
    notes="P1: a shell call `sleep 300`; the test SIGKILLs the client while it runs (mid-tool).",
    prompts=[Prompt("Run the long job.", turns=[
        Turn([exec_cmd("sleep 300; echo slept", expect_exit=None)]),
        Turn([say("never delivered")]),
    ])],
)

ALL = {s.name: s for s in (LIVE_HOLD, LIVE_TOOL)}
