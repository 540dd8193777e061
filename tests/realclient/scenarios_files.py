"""Real-client scenarios for `files` / `recover`: files written and edited through the structured
tools AND through the shell (heredoc writes, cd-tracked redirects, sed -i, rm, cp, appends),
with re-reads, so both complete and partial reconstructions occur.

The scenarios register into the harness's registry; run_files_scenario has the harness's runner
import this module inside `unshare -n` and run them (`python -m tests.realclient.scenarios_files
[NAME] [--root R]` does the same from a shell).
"""
from __future__ import annotations

import sys
from pathlib import Path

from . import runner
from .mock_api import Turn, text, tool
from .scenarios import ALL as HARNESS_ALL, Prompt, Scenario, ShellEdit, W, register

MODULE = "tests.realclient.scenarios_files"

FILES_SHELL = Scenario(
    name="files_shell",
    mode="interactive",
    notes="Structured and shell writes: Write, quoted heredoc via cat, cd-tracked redirect, sed -i after a Read, "
          "a clean `cat` read, Edit after the shell read, rm, cp, non-heredoc append, re-Read; then a new prompt "
          "that edits the sed-modified file (rejection or staleRecovered) and re-reads it.",
    setup_files={"keep.txt": b"untouched by the session\n"},
    prompts=[
        Prompt("Set up the files.", turns=[
            Turn([tool("Write", file_path=f"{W}/a.txt", content="one\ntwo\nthree\n")]),
            Turn([tool("Bash", command="cat > b.txt <<'EOF'\nalpha\nbeta $HOME\nEOF", description="heredoc write")]),
            Turn([tool("Bash", command="mkdir -p sub && cd sub && printf 'x\\ny\\n' > c.txt && cd ..", description="cd")]),
            Turn([tool("Read", file_path=f"{W}/a.txt")]),
            Turn([tool("Bash", command="sed -i 's/two/TWO/' a.txt", description="sed")]),
            Turn([tool("Bash", command="cat b.txt", description="show b")]),
            Turn([tool("Edit", file_path=f"{W}/b.txt", old_string="alpha", new_string="ALPHA")]),
            Turn([tool("Write", file_path=f"{W}/d.txt", content="doomed\n")]),
            Turn([tool("Bash", command="rm d.txt", description="rm")]),
            Turn([tool("Write", file_path=f"{W}/e.txt", content="e1\ne2\n")]),
            Turn([tool("Bash", command="cp e.txt f.txt && echo more >> e.txt", description="cp + append")]),
            Turn([text("Set up a, b, c, e, f.")]),
        ]),
        Prompt("Fix a.txt.", turns=[
            Turn([tool("Edit", file_path=f"{W}/a.txt", old_string="three", new_string="3")]),
            Turn([tool("Read", file_path=f"{W}/e.txt")]),
            Turn([tool("Bash", command="head -n 2 a.txt", description="head")]),
            Turn([text("Done.")]),
        ]),
        Prompt("Re-read a.txt and finish.", turns=[
            Turn([tool("Read", file_path=f"{W}/a.txt")]),
            Turn([tool("Edit", file_path=f"{W}/a.txt", old_string="one", new_string="1")]),
            Turn([tool("Write", file_path=f"{W}/g.txt", content="no trailing newline")]),
            Turn([tool("Bash", command="printf 'g-extra' >> g.txt", description="append")]),
            Turn([text("Finished.")]),
        ]),
    ],
)

for _s in (FILES_SHELL,):
    register(_s)
ALL = {FILES_SHELL.name: FILES_SHELL}


def run_files_scenario(name: str, root: Path, timeout: float = 300) -> dict:
    """Run `name` (this module's or the harness's) inside `unshare -n`; return its ground truth."""
    return runner.run_scenario(name, root, timeout=timeout, module=MODULE)


if __name__ == "__main__":
    sys.exit(runner.main(module=MODULE))
