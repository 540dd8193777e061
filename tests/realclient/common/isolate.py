"""Each harness run gets roots of its own.

Two kinds of root:

- a scratch root for a run that is read back by its caller (a test, a one-off runner call): made
  fresh per run (`fresh_root`), so two runs never share a scenario directory;
- the fixed root the committed sample corpora were made under (`/tmp/ssift-rc`, `/tmp/ssift-gem`,
  `/tmp/ssift-codex`, `/tmp/ssift-oc-sample`, `/tmp/ssift-pi-sample`): the clients write the working
  directory's path into what they record (project directory names, the cwd of every record, ground
  truth keyed on it), so `make_examples` must run at that path to give the same names. It does, in
  a private mount namespace (`private_fixed_roots`): a fresh directory is bind-mounted over each
  fixed path (and over `/tmp/claude-<uid>`, where Claude Code writes background-task output by the
  cwd it encodes), so the run sees the canonical paths and no other run, and no other process, sees
  or touches its files.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MARK = "SSIFT_PRIVATE_ROOTS"
"""Set (to the fixed roots) inside the private mount namespace, so the re-executed run goes on."""


def fresh_root(name: str) -> Path:
    """A new, empty scratch root for one run (under the system temp dir)."""
    return Path(tempfile.mkdtemp(prefix=f"ssift-{name}-"))


def client_tmp_dirs() -> list[Path]:
    """Where a client writes outside its config dir by a path derived from the cwd (Claude Code's
    background-task output, `/tmp/claude-<uid>/<encoded cwd>/`)."""
    return [Path(f"/tmp/claude-{os.getuid()}")]


def private_fixed_roots(fixed: list[Path], module: str, argv: list[str]) -> int | None:
    """Run ``python -m module argv`` again inside a private mount namespace in which each of
    `fixed` (and `client_tmp_dirs()`) is a fresh directory of its own; returns its exit status.
    Returns None when already inside (the caller then runs). The fresh directories are removed
    after it ends; what the run wants to keep it writes elsewhere (`--out`)."""
    want = os.pathsep.join(str(p) for p in fixed)
    if os.environ.get(MARK) == want:
        return None
    targets = [Path(p) for p in fixed] + client_tmp_dirs()
    fresh = [Path(tempfile.mkdtemp(prefix="ssift-private-")) for _ in targets]
    script = " && ".join(f"mkdir -p {shlex.quote(str(t))} && mount --bind {shlex.quote(str(f))} {shlex.quote(str(t))}"
                         for f, t in zip(fresh, targets)) + ' && exec "$@"'
    env = dict(os.environ, **{MARK: want})
    try:
        return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
                               sys.executable, "-m", module, *argv], env=env).returncode
    finally:
        for f in fresh:
            shutil.rmtree(f, ignore_errors=True)
