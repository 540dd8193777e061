"""Claude Code scenarios a reviewer wrote to try the tool as a new user (differently shaped from the
library): a long print-mode session resumed and continued, several files (a unicode path), a big Bash
output (persisted to tool-results/), failures (exit 2, not found, an Edit whose old_string is absent),
a subagent whose file the parent then edits, hostile text (ESC, CR, bidi) in a prompt and an output.

Run: ``python -m tests.realclient.runner review_long --module tests.realclient.scenarios_review``."""
from __future__ import annotations

from .mock_api import Conversation, Turn, text, thinking, tool
from .scenarios import Prompt, Scenario, W, register

CAFE = "café = 'ünïcödé ✓'\n"

LONG = register(Scenario(
    name="review_long",
    mode="print",
    notes="P1: 3 writes (one unicode path), a 60000-line Bash output, exit 2, an Edit. P2 (--resume): a subagent "
          "writes shared.txt, the parent edits it, a hostile output, an Edit that cannot match. P3 (--continue): an "
          "ESC/tab prompt, an overwrite of b.py, a command that prints then exits 4.",
    setup_files={"README.md": b"# app\n"},
    prompts=[
        Prompt("Set up three files and check the tree.", turns=[
            Turn([thinking("Three files, then a listing."),
                  tool("Write", file_path=f"{W}/a.py", content="A = 1\n"),
                  tool("Write", file_path=f"{W}/données/résumé café.py", content=CAFE),
                  tool("Write", file_path=f"{W}/b.py", content="B = 2\n")]),
            Turn([tool("Bash", command="seq 1 60000", description="A big listing")]),
            Turn([tool("Bash", command="ls nope-missing-dir", description="A failing listing")]),
            Turn([tool("Edit", file_path=f"{W}/a.py", old_string="A = 1", new_string="A = 10")]),
            Turn([text("a.py, b.py and données/résumé café.py are set up; one listing failed.")]),
        ]),
        Prompt("Delegate shared.txt, then fix it up.", how="resume", turns=[
            Turn([tool("Agent", description="Write shared.txt", subagent_type="general-purpose",
                       prompt="SUBAGENT-A: write shared.txt with the line from-sub", run_in_background=False)]),
            Turn([tool("Read", file_path=f"{W}/shared.txt")]),
            Turn([tool("Edit", file_path=f"{W}/shared.txt", old_string="from-sub", new_string="from-parent")]),
            Turn([tool("Bash", command="printf 'red \\033[31mALERT\\033[0m\\rover \\xe2\\x80\\xae evil\\n'",
                       description="Hostile output")]),
            Turn([tool("Edit", file_path=f"{W}/a.py", old_string="NOT THERE", new_string="x")]),
            Turn([text("shared.txt now says from-parent.")]),
        ]),
        Prompt("Last: \x1b[2J check\tit — ✓.", how="continue", turns=[
            Turn([tool("Write", file_path=f"{W}/b.py", content="B = 3\n")]),
            Turn([tool("Bash", command="cat b.py; exit 4", description="Show b and fail")]),
            Turn([text("b.py holds B = 3.")]),
        ]),
    ],
    subagents=[Conversation("SUBAGENT-A", name="agent-a", turns=[
        Turn([tool("Write", file_path=f"{W}/shared.txt", content="from-sub\n")]),
        Turn([text("Wrote shared.txt.")]),
    ])],
))

ALL = {LONG.name: LONG}
