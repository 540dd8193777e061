"""An opencode scenario a second new-user pass wrote: several files (one in a subdirectory), two
edits of one file in a row, a read, a failing command, then a `--continue` that edits, changes a
file by shell (`sed -i`), edits it after that, and overwrites an earlier file.

Run: ``python -m tests.realclient.opencode.runner tests.realclient.opencode.scenarios_fresh:fresh_files --root R``."""
from __future__ import annotations

from .mock_chat import Step
from .scenarios import Prompt, Scenario, bash, edit, write

ALL: dict[str, Scenario] = {}

ALL["fresh_files"] = Scenario(
    name="fresh_files",
    title="Fresh files",
    git=True,
    setup_files={"base.txt": "one\ntwo\nthree\n"},
    prompts=[
        Prompt("[fresh_files P1] Create a small package and check it.", [
            Step(reasoning="Three files.", calls=[write("pkg/a.py", "A = 1\nB = 2\n"),
                                                  write("pkg/b.py", "def f():\n    return 1\n")]),
            Step(calls=[write("notes.md", "# Notes\n\n- start\n")]),
            Step(calls=[edit("pkg/a.py", "A = 1", "A = 11")]),
            Step(calls=[edit("pkg/a.py", "B = 2", "B = 22")]),
            Step(calls=[("read", {"filePath": "{W}/base.txt"})]),
            Step(calls=[bash("python3 -c 'import sys; sys.exit(6)'", "A check that exits 6")]),
            Step(text="pkg/a.py, pkg/b.py and notes.md are set up; the check exited 6."),
        ]),
        Prompt("[fresh_files P2] Tidy up.", [
            Step(calls=[edit("pkg/b.py", "return 1", "return 2")]),
            Step(calls=[bash("sed -i 's/two/TWO/' base.txt", "Upper-case two")]),
            Step(calls=[edit("base.txt", "three", "THREE")]),
            Step(calls=[write("notes.md", "# Notes\n\n- done\n")]),
            Step(calls=[bash("cat pkg/a.py; exit 1", "Show a and fail")]),
            Step(calls=[bash("echo extra >> notes.md", "Append by shell")]),
            Step(text="Done."),
        ], how="continue"),
    ],
    expect_exit={"P1/5/0": 6, "P2/1/0": 0, "P2/4/0": 1, "P2/5/0": 0},
    notes=["P1: 3 writes (one in pkg/), two edits of pkg/a.py, a read of a pre-existing file, exit 6; P2"
           " (--continue): an edit, sed -i on base.txt by bash, an edit after it, an overwrite of notes.md,"
           " a command that prints then exits 1, an append to notes.md by bash after its last write"],
)


KEEP = "alpha\nbeta\ngamma\n"
NOEOL = "first\nlast"
PART = "p1\np2\np3\np4\n"

ALL["fresh_reads"] = Scenario(
    name="fresh_reads",
    title="Fresh reads",
    git=True,
    setup_files={"keep.txt": KEEP, "noeol.txt": NOEOL, "part.txt": PART, "edited.txt": KEEP, "edited_noeol.txt": NOEOL},
    prompts=[
        Prompt("[fresh_reads P1] Look at the files, then edit.", [
            Step(calls=[("read", {"filePath": "{W}/keep.txt"})]),
            Step(calls=[("read", {"filePath": "{W}/noeol.txt"})]),
            Step(calls=[("read", {"filePath": "{W}/part.txt", "offset": 2, "limit": 2})]),
            Step(calls=[("read", {"filePath": "{W}/edited.txt"})]),
            Step(calls=[edit("edited.txt", "gamma", "GAMMA")]),
            Step(calls=[("read", {"filePath": "{W}/edited_noeol.txt"})]),
            Step(calls=[edit("edited_noeol.txt", "last", "LAST")]),
            Step(calls=[edit("part.txt", "no such line", "x")]),
            Step(calls=[edit("missing.txt", "a", "b")]),
            Step(text="Read five files; two edited; two edits failed."),
        ]),
    ],
    notes=["a read of a whole file ending with a newline, of one without a final newline, of lines 2-3 of a "
           "third (offset/limit), a read then an edit of the last line of a fourth and of a fifth without a final "
           "newline (each diff says whether the file ended with a newline), an edit whose oldString is not in the file, an edit of a missing file"],
)
