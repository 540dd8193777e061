"""Scenarios for `usage`, run with the REAL client: a print-mode session whose turns the mock
delays, so its transcript grows for several seconds while `usage blocks --live` watches it."""
from __future__ import annotations

from .mock_api import Conversation, Turn, text, tool
from .scenarios import Prompt, Scenario, W, register

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


USAGE_FORKS = register(Scenario(
    name="usage_forks",
    mode="print",
    notes="Sessions that hold the same API responses: P1 runs a synchronous subagent (SUBAGENT-F) and a Bash "
          "call; P2 resumes it (the same file); P3 and P4 are two `--resume <id> --fork-session` forks of it, "
          "each copying the session's records into a new session file, then making one response of its own.",
    setup_files={"input.txt": b"one\ntwo\nthree\n"},
    prompts=[
        Prompt("Summarise input.txt with a helper.", turns=[
            Turn([tool("Agent", description="Summarise", subagent_type="general-purpose",
                       prompt="SUBAGENT-F: read input.txt and say how many lines it has", run_in_background=False)]),
            Turn([tool("Bash", command="wc -l input.txt", description="Count")]),
            Turn([text("input.txt has 3 lines.")]),
        ]),
        Prompt("Once more.", how="resume", turns=[Turn([text("Still 3 lines.")])]),
        Prompt("First branch.", how="fork", turns=[Turn([text("Branch one.")])]),
        Prompt("Second branch.", how="fork", turns=[Turn([text("Branch two.")])]),
    ],
    subagents=[Conversation("SUBAGENT-F", name="agent-f", turns=[
        Turn([tool("Read", file_path=f"{W}/input.txt")]),
        Turn([text("3 lines.")]),
    ])],
))


USAGE_FORK_ELSEWHERE = register(Scenario(
    name="usage_fork_elsewhere",
    mode="print",
    notes="P1 in the work dir; P2 is `--resume <id> --fork-session` run from a subdirectory (`sub/`): where "
          "the client writes the fork, and whether its copies share the parent's project directory.",
    prompts=[
        Prompt("Say hello.", turns=[Turn([tool("Bash", command="echo hi", description="Hi")]), Turn([text("Hi.")])]),
        Prompt("Branch from a subdirectory.", how="fork", cwd="sub", turns=[Turn([text("Branched.")])]),
    ],
))
