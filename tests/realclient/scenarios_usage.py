"""Scenarios for `usage`, run with the REAL client: a print-mode session whose turns the mock
delays, so its transcript grows for several seconds while `usage blocks --live` watches it."""
from __future__ import annotations

from .mock_api import Turn, text, tool
from .scenarios import Prompt, Scenario, register

MODULE = "tests.realclient.scenarios_usage"

USAGE_LIVE = register(Scenario(
    name="usage_live",
    mode="print",
    notes="Four API responses 3 s apart (the mock delays each answer), with a thinking block and a parallel "
          "pair of tool calls (one API message written as several records).",
    prompts=[Prompt("Count to three, slowly.", turns=[
        Turn([tool("Bash", command="echo one", description="One")]),
        Turn([{"type": "thinking", "thinking": "Two comes next."},
              tool("Bash", command="echo two", description="Two"),
              tool("Bash", command="echo two-b", description="Two b")], delay=3.0),
        Turn([tool("Bash", command="echo three", description="Three")], delay=3.0),
        Turn([text("Counted to three.")], delay=3.0),
    ])],
))
