"""Real-client scenario for `audit reinjection`: files the session wrote, changed by the shell between
prompts, then left alone for several prompts of unrelated work.

The seed this audits (the pending set that never empties): a file the client holds in its file state
and that a shell command changes joins a set of `edited_text_file` attachments that may be re-emitted
at later flushes until the session edits it with its own Edit/Write tool; a second shell change in
another region makes the entry grow. This scenario reproduces that sequence with the real client
(interactive/tmux mode: print mode does not keep the file state across processes):

  P1  Write track.txt (30 lines), Write reread.txt, Read seed.txt (a setup file the session only reads)
  P2  [before: sed line03 in track.txt, sed in reread.txt, sed in seed.txt]  unrelated Bash
  P3  unrelated Write of other.txt
  P4  Read reread.txt (does a Read take a file out of the set?)
  P5  text only
  P6  [before: sed line28 in track.txt, a second region 25 lines below the first]  text only
  P7  text only
  P8  Edit track.txt with the session's own Edit tool (the one documented exit)
  P9  [before: sed line20 in track.txt, after the session's Edit]  text only (does the file re-enter?)
  P10 text only

What 2.1.258 actually wrote is recorded in docs/audit.md and asserted by tests/test_audit_realclient.py.

The scenario registers into the harness's registry; run_audit_scenario has the harness's runner import
this module inside `unshare -n` and run it (`python -m tests.realclient.scenarios_audit` does the same
from a shell).
"""
from __future__ import annotations

import sys
from pathlib import Path

from . import runner
from .mock_api import Turn, text, tool
from .scenarios import Prompt, Scenario, ShellEdit, W, register

MODULE = "tests.realclient.scenarios_audit"

TRACK = "".join(f"line{i:02d} value {i}\n" for i in range(1, 31))

REINJECTION = Scenario(
    name="audit_reinjection",
    mode="interactive",
    notes="Write track.txt and reread.txt, Read seed.txt; sed -i on all three between P1 and P2; unrelated "
          "prompts; a second sed -i in another region of track.txt before P6; reread.txt Read in P4; "
          "track.txt Edited by the session in P8; a third sed -i on track.txt before P9.",
    setup_files={"seed.txt": b"alpha\nbeta\ngamma\n"},
    prompts=[
        Prompt("Create track.txt and reread.txt, then look at seed.txt.", turns=[
            Turn([tool("Write", file_path=f"{W}/track.txt", content=TRACK),
                  tool("Write", file_path=f"{W}/reread.txt", content="first\nsecond\nthird\n")]),
            Turn([tool("Read", file_path=f"{W}/seed.txt")]),
            Turn([text("Created track.txt and reread.txt; seed.txt has three lines.")]),
        ]),
        Prompt("List the directory.",
               before=[ShellEdit(f"{W}/track.txt", "line03", "LINE03"),
                       ShellEdit(f"{W}/reread.txt", "second", "SECOND"),
                       ShellEdit(f"{W}/seed.txt", "beta", "BETA")],
               turns=[
                   Turn([tool("Bash", command="ls", description="List files")]),
                   Turn([text("Listed.")]),
               ]),
        Prompt("Write other.txt.", turns=[
            Turn([tool("Write", file_path=f"{W}/other.txt", content="unrelated\n")]),
            Turn([text("Wrote other.txt.")]),
        ]),
        Prompt("Look at reread.txt again.", turns=[
            Turn([tool("Read", file_path=f"{W}/reread.txt")]),
            Turn([text("reread.txt has three lines.")]),
        ]),
        Prompt("Anything else to do?", turns=[Turn([text("Nothing else.")])]),
        Prompt("Still there?", before=[ShellEdit(f"{W}/track.txt", "line28", "LINE28")],
               turns=[Turn([text("Yes.")])]),
        Prompt("Say hello.", turns=[Turn([text("Hello.")])]),
        Prompt("Fix the first line of track.txt.", turns=[
            Turn([tool("Edit", file_path=f"{W}/track.txt", old_string="line01 value 1",
                       new_string="LINE01 value 1")]),
            Turn([text("Fixed line 1.")]),
        ]),
        Prompt("Count to three.", before=[ShellEdit(f"{W}/track.txt", "line20", "LINE20")],
               turns=[Turn([text("One, two, three.")])]),
        Prompt("Goodbye.", turns=[Turn([text("Bye.")])]),
    ],
)

register(REINJECTION)
ALL = {REINJECTION.name: REINJECTION}


def run_audit_scenario(name: str = REINJECTION.name, root: Path | None = None, timeout: float = 400) -> dict:
    """Run `name` inside `unshare -n`; return its ground truth (the harness's ground-truth.json)."""
    return runner.run_scenario(name, root, timeout=timeout, module=MODULE)


if __name__ == "__main__":
    sys.exit(runner.main(module=MODULE, scenario=REINJECTION.name))
