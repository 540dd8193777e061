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


USAGE_STREAM = register(Scenario(
    name="usage_stream",
    mode="print",
    notes="One API message of three content blocks whose stream pauses 4 s after the first block's "
          "content_block_stop (message_start said output_tokens 1; the final count comes in message_delta): "
          "what the client writes for a block while its message is still streaming.",
    prompts=[Prompt("Think, then run two commands.", turns=[
        Turn([{"type": "thinking", "thinking": "I will run both commands at once, they are independent."},
              tool("Bash", command="echo first", description="First"),
              tool("Bash", command="echo second", description="Second")], stream_pause=4.0),
        Turn([text("Both ran.")]),
    ])],
))
