"""Scenarios for `clean` (issue 14), run by tests/test_clean_realclient.py.

- `clean_self` (print): P1 is a short session A. P2 forks it (`--resume <A> --fork-session`: a new
  session B in the same project) and its Bash tool runs `sessionsift clean scan` from INSIDE the
  agent -- the real `$CLAUDE_CODE_SESSION_ID`, the real registry row of B, the real client process
  as the scan's ancestor, working in the same project as A -- writing the JSON to
  `<work>/inside-scan.json`, then holds the session busy with `sleep 25` so a test can run
  `clean capture --apply` from outside while B is live.
"""
from __future__ import annotations

import shlex
import sys

from .mock_api import Turn, text, tool
from .scenarios import Prompt, Scenario, W, register

MODULE = "tests.realclient.scenarios_clean"
HOLD_SECONDS = 25

PY = shlex.quote(sys.executable)  # the venv python that runs the tests (absolute: the client's env is env -i)

SCAN = (f"{PY} -m sessionsift clean scan --claude-home \"$CLAUDE_CONFIG_DIR\" --older-than 0s --format json "
        f"--data-dir {W}/inside-data > {W}/inside-scan.json 2> {W}/inside-scan.err; "
        f"echo scanned > {W}/inside-scan.done; sleep {HOLD_SECONDS}; echo held")

SELF = register(Scenario(
    name="clean_self",
    mode="print",
    notes="P1: a short session A. P2: --fork-session (a new session B in the same project) whose Bash tool runs "
          "`sessionsift clean scan` inside the agent, then holds B busy with a sleep.",
    prompts=[
        Prompt("Say hello.", turns=[Turn([text("Hello.")])]),
        Prompt("Scan the sessions, then wait.", how="fork", turns=[
            Turn([tool("Bash", command=SCAN, description="Scan from inside the session, then hold")]),
            Turn([text("Scanned and held.")]),
        ]),
    ],
))

ALL = {s.name: s for s in (SELF,)}
