"""A progress line on stderr for a command that may read much cold (index/progress.Reading): set
for the run only when stderr is a terminal, so a pipe, a file or a test sees nothing."""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator


@contextlib.contextmanager
def reading(verb: str) -> Iterator[object | None]:
    """The progress line (`VERB: N MB of M MB`) read/fanout.map_halves reports to while the block
    runs; None when stderr is no terminal."""
    if not _tty():
        yield None
        return
    from .. import render
    from ..index import progress
    from ..read import fanout

    def shown(live) -> None:  # an answer line clears whichever progress line is on the terminal
        render.LIVE = live

    line = progress.Reading(verb)
    fanout.PROGRESS = line
    progress.SHOWN = shown
    try:
        yield line
    finally:
        fanout.PROGRESS = None
        line.done()
        progress.SHOWN = None
        render.LIVE = None


def _tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def with_reading(verb: str):
    """A command function run inside `reading(verb)` (put it right above the `def`)."""
    import functools

    def deco(f):
        @functools.wraps(f)
        def run(*a, **kw):
            with reading(verb):
                return f(*a, **kw)
        return run
    return deco
