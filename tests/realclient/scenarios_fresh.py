"""Claude Code scenario a second new-user pass wrote (shaped unlike the library and scenarios_review):
four prompts over one session (new, --resume, --continue, --resume), an edit of a file that existed
before the session, Read with offset/limit, Grep and Glob, a synchronous subagent that edits a file
the parent wrote and writes one of its own, a rename and a delete by Bash, a `sed -i` by the agent's
own Bash between two Edits, an overwrite of a pre-existing file, and failing commands (exit 1, 3).

Run: ``python -m tests.realclient.runner fresh_long --module tests.realclient.scenarios_fresh --root R``."""
from __future__ import annotations

from .mock_api import Conversation, Turn, text, thinking, tool
from .scenarios import Prompt, Scenario, W, register

APP = "import sys\n\nx = 1\ny = 2\n\n\ndef main():\n    print(x + y)\n"
UTIL = "VALUE = 1\n\n\ndef double(n):\n    return n * 2\n"

FRESH_LONG = register(Scenario(
    name="fresh_long",
    mode="print",
    notes="P1: Read + Edit of a pre-existing app.py, 2 Writes (one in a new dir), two Bash (exit 0, exit 1), "
          "Grep + Glob. P2 (--resume): a subagent reads and edits util.py and writes report.md, the parent "
          "edits util.py again, `mv old.txt renamed.txt`, a Read with offset/limit. P3 (--continue): the "
          "agent's own `sed -i` on util.py, an Edit after it, an overwrite of app.py, `rm` of the test file, "
          "exit 3. P4 (--resume): an Edit of the subagent's report.md.",
    setup_files={"app.py": APP.encode(), "old.txt": b"legacy\n", "data.csv": b"id,name\n1,a\n2,b\n"},
    prompts=[
        Prompt("Look at app.py, bump x, add a util module with a test, then check.", turns=[
            Turn([thinking("Read app.py first."), tool("Read", file_path=f"{W}/app.py")]),
            Turn([tool("Edit", file_path=f"{W}/app.py", old_string="x = 1", new_string="x = 10")]),
            Turn([tool("Write", file_path=f"{W}/util.py", content=UTIL),
                  tool("Write", file_path=f"{W}/tests/test_util.py",
                       content="from util import double\n\nassert double(2) == 4\n")]),
            Turn([tool("Bash", command="python3 -c 'import util; print(util.double(21))'",
                       description="Import util"),
                  tool("Bash", command="grep -q missing data.csv", description="Look for missing")]),
            Turn([tool("Grep", pattern="def ", path=W, output_mode="files_with_matches"),
                  tool("Glob", pattern="**/*.py", path=W)]),
            Turn([text("x is 10; util.py and tests/test_util.py added; data.csv has no 'missing'.")]),
        ]),
        Prompt("Have a helper review util.py, then tidy up.", how="resume", turns=[
            Turn([tool("Agent", description="Review util.py", subagent_type="general-purpose",
                       prompt="SUBAGENT-R: review util.py, fix it, and write report.md",
                       run_in_background=False)]),
            Turn([tool("Edit", file_path=f"{W}/util.py", old_string="VALUE = 1", new_string="VALUE = 100")]),
            Turn([tool("Bash", command="mv old.txt renamed.txt", description="Rename old.txt")]),
            Turn([tool("Read", file_path=f"{W}/app.py", offset=3, limit=2)]),
            Turn([text("The helper fixed util.py and wrote report.md; old.txt is renamed.txt.")]),
        ]),
        Prompt("Shorten the constant name and finish app.py.", how="continue", turns=[
            Turn([tool("Bash", command="sed -i 's/VALUE/VAL/' util.py", description="Rename the constant")]),
            Turn([tool("Edit", file_path=f"{W}/util.py", old_string="VAL = 100", new_string="VAL = 7")]),
            Turn([tool("Write", file_path=f"{W}/app.py",
                       content="from util import VAL, double\n\nprint(double(VAL))\n")]),
            Turn([tool("Bash", command="rm tests/test_util.py", description="Drop the test")]),
            Turn([tool("Bash", command="python3 app.py; exit 3", description="Run and fail")]),
            Turn([text("app.py prints 14; the run exited 3 on purpose.")]),
        ]),
        Prompt("Note the change in report.md.", how="resume", turns=[
            Turn([tool("Edit", file_path=f"{W}/report.md", old_string="## Review", new_string="## Review (done)")]),
            Turn([text("report.md updated.")]),
        ]),
    ],
    subagents=[Conversation("SUBAGENT-R", name="agent-r", turns=[
        Turn([tool("Read", file_path=f"{W}/util.py")]),
        Turn([tool("Edit", file_path=f"{W}/util.py", old_string="return n * 2", new_string="return 2 * n")]),
        Turn([tool("Write", file_path=f"{W}/report.md", content="## Review\n\n- double(n) now 2 * n\n")]),
        Turn([text("util.py fixed; report.md written.")]),
    ])],
))

ALL = {FRESH_LONG.name: FRESH_LONG}
