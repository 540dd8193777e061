"""Paging long human output on a terminal, as git does: through `$SESSIONSIFT_PAGER`, else
`$PAGER`, else `less -FRX` (quit at once when it fits, pass escapes, leave the screen as it is).
Only when stdout is a terminal: a pipe, a file and JSON output are never paged. An empty pager
variable, `cat`, or a pager that cannot start means no pager.

What goes through the pager is written for the terminal behind it (as git does): coloured as
a terminal would be (`--color`, `NO_COLOR` and `TERM=dumb` still decide) and as wide as it is;
`less -R` passes the colour codes on."""

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


class Paged:
    """Where the output goes: `stream`, and whether it reaches a terminal (`terminal`: stdout is
    one, or the pager writes to one) -- the `terminal` argument of render.Out."""

    def __init__(self, stream: IO[str], terminal: bool):
        self.stream = stream
        self.terminal = terminal


@contextlib.contextmanager
def paged(wanted: bool) -> Iterator[Paged]:
    """The stream to write the output to: a pager's stdin when `wanted` and stdout is a
    terminal, else stdout itself. The pager is waited for at the end (its exit is not ours)."""
    on_tty = sys.stdout.isatty()
    argv = pager_argv() if wanted and on_tty else None
    if argv is None:
        yield Paged(sys.stdout, on_tty)
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, text=True, encoding="utf-8", errors="replace", env=env)
    except OSError:
        yield Paged(sys.stdout, on_tty)
        return
    assert proc.stdin is not None
    try:
        yield Paged(proc.stdin, True)
    except BrokenPipeError:
        pass  # the reader quit the pager: no error
    finally:
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        proc.wait()
