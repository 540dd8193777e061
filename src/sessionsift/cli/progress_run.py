"""A progress line on stderr for a command that may read much cold (index/progress.Reading): set
for the run only when stderr is a terminal, so a pipe, a file or a test sees nothing."""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator


@contextlib.contextmanager
def reading(verb: str, search: bool = False) -> Iterator[object | None]:
    """`search`: the search's own batches report too (the command imports its scanner anyway)."""
    if not _tty():
        yield None
        return
    from ..index.progress import Reading
    from ..read import fanout

    line = Reading(verb)
    fanout.PROGRESS = line
    mods = [fanout]
    if search:
        from ..search import api

        api.PROGRESS = line
        mods.append(api)
    try:
        yield line
    finally:
        for m in mods:
            m.PROGRESS = None
        line.done()


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
