"""GitHub Copilot CLI scenarios for the live-state questions (status, wait, whoami), watched WHILE they run.

Not in the library every fixture runs (a test must open their gates or kill the client): run one
with ``runner.start_scenario("tests.realclient.copilot.scenarios_live:<name>", root)``.

- ``live_hold``: a bash call records what the client exports to its tool and runs ``sessionsift
  whoami`` inside it; the final reply is held at gate ``reply`` until the test releases it (the turn
  stays open, the client alive).
- ``live_tool``: the bash call is ``sleep 300``; the test SIGKILLs the client while it runs.
- ``live_approval``: over ACP (``copilot --acp``, no ``--allow-all-tools``) a bash call the client asks
  its ACP client (the harness) to approve; granted once the test releases gate ``approve``.
"""
from __future__ import annotations

import sys

from .mock import Step
from .scenarios import Prompt, Scenario, bash

PY = sys.executable
"""This checkout's interpreter: the tool runs the sessionsift under test inside the client's shell."""

WHOAMI = ("env | grep -E '^(COPILOT|GITHUB|GH_|CLAUDE|CODEX|GEMINI|OPENCODE|CRUSH|QWEN|PI_)' | sed 's/=.*TOKEN.*/=<token>/' "
          "| sort > env.txt; sh who.sh > whoami.json; echo recorded")
"""Every path the command names is in the work dir: Copilot CLI denies a command naming a path outside it
without a user to approve (``--allow-all-tools`` is not ``--allow-all-paths``), so the interpreter's path is
in ``who.sh``."""
WHO_SH = {"who.sh": f"exec {PY} -m sessionsift whoami --format json\n"}

LIVE_HOLD = Scenario(
    name="live_hold",
    notes=["P1: a bash call records the client's exported variables and runs `sessionsift whoami` inside the "
           "tool; the final reply is held at gate `reply` (the test snapshots the open turn, then releases it)."],
    setup_files=WHO_SH,
    prompts=[Prompt("[live_hold P1] Record who runs this, then answer.", [
        Step(calls=[bash(WHOAMI, "Record the environment")]),
        Step(text="Answered after the hold.", gate="reply"),
    ])],
)

LIVE_TOOL = Scenario(
    name="live_tool",
    notes=["P1: a bash call `sleep 300`; the test SIGKILLs the client while it runs (mid-tool)."],
    prompts=[Prompt("[live_tool P1] Run the long job.", [
        Step(calls=[bash("sleep 300; echo slept", "The long job")]),
        Step(text="never delivered"),
    ])],
)

LIVE_APPROVAL = Scenario(
    name="live_approval",
    acp=True,
    notes=["P1 over ACP (`copilot --acp`, no --allow-all-tools): a bash call the client asks the user to approve "
           "(`session/request_permission`); the harness grants it once the test releases gate `approve`, then "
           "the reply is held at gate `reply`."],
    prompts=[Prompt("[live_approval P1] Run the command once it is approved.", [
        Step(calls=[bash("echo approved > approved.txt; echo ran", "Needs approval")]),
        Step(text="Ran after the approval.", gate="reply"),
    ])],
)

ALL = {s.name: s for s in (LIVE_HOLD, LIVE_TOOL, LIVE_APPROVAL)}
