"""A Gemini CLI scenario for `clean` (tests/test_clean_realclient.py), run by the Gemini harness as
``tests.realclient.scenarios_clean_gemini:clean_gemini_hold``: one shell call, then the mock holds
the model's next answer for HOLD_SECONDS, so the real client stays alive mid-turn in its project
with its chat file written."""
from __future__ import annotations

from .gemini.mock_api import Turn, text
from .gemini.scenarios import Prompt, Scenario, sh

HOLD_SECONDS = 25

HOLD = Scenario(
    "clean_gemini_hold",
    [Prompt("Run one command, then think for a while.", [
        Turn([text("Running it."), sh("echo one", "echo one")]),
        Turn([text("Done.")], delay=HOLD_SECONDS),
    ])],
    notes="a shell call, then the next model answer held by the mock: the client waits in its project",
    exit_codes={"echo one": 0},
)

ALL = {HOLD.name: HOLD}
