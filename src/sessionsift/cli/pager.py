"""Paging long human output on a terminal, as git does: through `$SESSIONSIFT_PAGER`, else
`$PAGER`, else `less -FRX` (quit at once when it fits, pass escapes, leave the screen as it is).
Only when stdout is a terminal: a pipe, a file and JSON output are never paged. An empty pager
variable, `cat`, or a pager that cannot start means no pager."""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import sys
from typing import IO, Iterator


def pager_argv(env=None) -> list[str] | None:
    env = os.environ if env is None else env
    for var in ("SESSIONSIFT_PAGER", "PAGER"):
        if var in env:
            v = env[var].strip()
            if not v or v == "cat":
                return None
            return shlex.split(v)
    return ["less", "-FRX"]


@contextlib.contextmanager
def paged(wanted: bool) -> Iterator[IO[str]]:
    """A text stream to write the output to: a pager's stdin when `wanted` and stdout is a
    terminal, else stdout itself. The pager is waited for at the end (its exit is not ours)."""
    argv = pager_argv() if wanted and sys.stdout.isatty() else None
    if argv is None:
        yield sys.stdout
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, text=True, encoding="utf-8", errors="replace", env=env)
    except OSError:
        yield sys.stdout
        return
    assert proc.stdin is not None
    try:
        yield proc.stdin
    except BrokenPipeError:
        pass  # the reader quit the pager: no error
    finally:
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        proc.wait()
