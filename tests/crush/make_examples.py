"""Regenerate examples/crush-home (Crush cannot run here: see vendor/SOURCE.md).

    .venv/bin/python -m tests.crush.make_examples

Builds the scenarios of scenarios.py in a fresh temp dir (removed afterwards, so the paths recorded
in projects.json exist nowhere once the sample is made, and no leftover can shadow it), with Crush's own migrations, queries and part
shapes (crushdb.py), then copies ``crush-home/`` (projects.json and the two project dirs, each with
its .crush/crush.db and the files the sessions wrote) into examples/crush-home and the ground truth
into examples/crush-ground-truth.json. The recorded paths do not exist where the sample is read, so
the reader finds the project data dirs by their path tail under the global dir, and says so.
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from .scenarios import build

REPO = Path(__file__).resolve().parents[2]
README = """# examples/crush-home: a Crush global data dir (sample)

Built by `tests/crush/make_examples.py`, NOT by the Crush binary, which cannot run on this machine
(its npm package only downloads a binary from GitHub). Every database here was created by Crush's
own goose migrations and filled only through its own sqlc queries and the message part shapes its
source defines (vendored from charmbracelet/crush at 37f36e93, see tests/crush/vendor/SOURCE.md),
driven the way its agent loop writes a turn; the files and command outputs are real.

- `projects.json`: Crush's project list, recording the build paths (a temp dir removed after the
  build, so absent everywhere: the reader finds each data dir by its path tail under this dir and says so).
- `projects/app/.crush/crush.db`: shell + write, a continued session with an edit, a failing command
  (exit 3), a subagent (`agent` tool -> child session `<message id>$$<call id>`), a title session,
  a turn killed mid-stream; `projects/notes/.crush/crush.db`: image_url and binary attachments, a
  bang-mode shell_command (exit 4), a provider error finish.
- Ground truth: `examples/crush-ground-truth.json`.
"""


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="ssift-crush-sample-"))
    try:
        truth = build(base)
        dst = REPO / "examples" / "crush-home"
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(base / "crush-home", dst)
    finally:
        shutil.rmtree(base)
    (dst / "README.md").write_text(README)
    (REPO / "examples" / "crush-ground-truth.json").write_text(json.dumps(
        {"built_at": str(base), "projects": truth.projects, "sessions": truth.sessions}, indent=2, sort_keys=True,
        default=list) + "\n")
    print(len(truth.sessions), "sessions in", dst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
