"""Real-client scenarios for `files` / `recover`: files written and edited through the structured
tools AND through the shell (heredoc writes, cd-tracked redirects, sed -i, rm, cp, appends),
with re-reads, so both complete and partial reconstructions occur.

The harness's runner only knows scenarios.py, so this module has its own inner entry point
(`python -m tests.realclient.scenarios_files --inside NAME ...`) that registers these scenarios and
reuses the harness's `inside()`. Always run inside `unshare -n` (run_files_scenario does it).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from . import client as clientmod
from . import runner
from .mock_api import Turn, text, tool
from .scenarios import ALL as HARNESS_ALL, Prompt, Scenario, ShellEdit, W, register

REPO = Path(__file__).resolve().parents[2]

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
    problems = clientmod.check_host()
    if problems:
        raise clientmod.PrerequisiteMissing("; ".join(problems))
    exe = clientmod.ensure_client(clientmod.PINNED_VERSION)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO), "LANG": "C.UTF-8"}
    cmd = ["unshare", "-n", sys.executable, "-m", "tests.realclient.scenarios_files", "--inside", name,
           "--root", str(root), "--exe", str(exe)]
    r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    (root / f"{name}.runner.log").write_text(r.stdout + "\n--- stderr ---\n" + r.stderr)
    if r.returncode != 0:
        raise RuntimeError(f"scenario {name} failed (rc={r.returncode}):\n{r.stderr[-3000:]}")
    return json.loads((root / name / "ground-truth.json").read_text())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?")
    ap.add_argument("--inside")
    ap.add_argument("--root", default="/tmp/ssift-rc-files")
    ap.add_argument("--exe")
    a = ap.parse_args(argv)
    if a.inside:
        runner.inside(a.inside, Path(a.root), a.exe)
        return 0
    for n in ([a.scenario] if a.scenario else list(ALL)):
        gt = run_files_scenario(n, Path(a.root))
        print(n, gt["session_ids_on_disk"], gt["seconds"], "s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
