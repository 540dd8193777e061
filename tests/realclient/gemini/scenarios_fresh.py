"""A Gemini CLI scenario a second new-user pass wrote: several edits of the same files across a
resume (read_file, replace x3 on one file, a write_file overwrite of a file that existed before the
session, a replace that cannot match), failing shell commands (exit 5, exit 1) and a resume in a
later minute.

Run: ``python -m tests.realclient.gemini.runner tests.realclient.gemini.scenarios_fresh:fresh_edits --root R``."""
from __future__ import annotations

from .mock_api import Turn, call, text, thought
from .scenarios import Prompt, Scenario, sh

ALL: dict[str, Scenario] = {}

CONF = "[core]\nname = demo\nmode = slow\n"
APP = "NAME = 'demo'\nMODE = 'slow'\n\nprint(NAME, MODE)\n"

ALL["fresh_edits"] = Scenario(
    "fresh_edits",
    [Prompt("Read conf.ini, make it fast, write app.py to match, and run a check.", [
        Turn([thought("**Reading**\n\nconf.ini first."), call("read_file", file_path="{W}/conf.ini")]),
        Turn([call("replace", file_path="{W}/conf.ini", old_string="mode = slow", new_string="mode = fast",
                   instruction="make it fast")]),
        Turn([call("write_file", file_path="{W}/app.py", content=APP)]),
        Turn([call("replace", file_path="{W}/app.py", old_string="MODE = 'slow'", new_string="MODE = 'fast'",
                   instruction="match conf.ini")]),
        Turn([sh("python3 -c 'raise SystemExit(5)'", "a check that exits 5")]),
        Turn([text("conf.ini and app.py say fast; the check exited 5.")]),
    ]), Prompt("Rename the app and reset the config.", [
        Turn([call("replace", file_path="{W}/app.py", old_string="NAME = 'demo'", new_string="NAME = 'prod'",
                   instruction="rename")]),
        Turn([call("replace", file_path="{W}/app.py", old_string="print(NAME, MODE)",
                   new_string="print(NAME, MODE, sep=':')", instruction="separator")]),
        Turn([call("write_file", file_path="{W}/conf.ini", content="[core]\nname = prod\n")]),
        Turn([call("replace", file_path="{W}/conf.ini", old_string="mode = fast", new_string="mode = x",
                   instruction="cannot match any more")]),
        Turn([sh("python3 app.py && grep -q mode conf.ini", "run and look for mode")]),
        Turn([sh("sed -i 's/prod/live/' app.py", "rename by shell")]),
        Turn([text("app.py now says live; conf.ini has no mode line.")]),
    ], how="resume", new_minute=True)],
    setup_files={"conf.ini": CONF},
    notes="P1: read_file and a replace of a pre-existing conf.ini, write_file + replace of app.py, a command "
          "exiting 5. P2 (--resume latest, a later minute): two replaces of app.py, an overwrite of conf.ini, "
          "a replace that no longer matches, a command chain exiting 1, a `sed -i` of app.py after its last replace.",
    exit_codes={"python3 -c 'raise SystemExit(5)'": 5, "python3 app.py && grep -q mode conf.ini": 1,
                "sed -i 's/prod/live/' app.py": 0},
)


KEEP = "alpha\nbeta\ngamma\n"
BIG = "".join(f"row {i}\n" for i in range(1, 2501))  # past read_file's 2000-line default: the client cuts it
PART = "p1\np2\np3\np4\n"

ALL["fresh_reads"] = Scenario(
    "fresh_reads",
    [Prompt("Look at the files, then try two edits that cannot apply.", [
        Turn([call("read_file", file_path="{W}/keep.txt")]),
        Turn([call("read_file", file_path="{W}/big.txt")]),
        Turn([call("read_file", file_path="{W}/part.txt", start_line=2, end_line=3)]),
        Turn([call("replace", file_path="{W}/part.txt", old_string="no such line", new_string="x",
                   instruction="cannot match")]),
        Turn([call("replace", file_path="{W}/missing.txt", old_string="a", new_string="b",
                   instruction="the file does not exist")]),
        Turn([text("keep.txt read whole; big.txt and part.txt in part; both replaces failed.")]),
    ])],
    setup_files={"keep.txt": KEEP, "big.txt": BIG, "part.txt": PART},
    notes="read_file of a small pre-existing file (whole), of a 2,500-line file (the client shows 2,000 lines "
          "under its truncation header), of lines 2-3 of another (a range: truncation header too); a replace "
          "whose old_string is not in the file and a replace of a file that does not exist (both fail).",
)
