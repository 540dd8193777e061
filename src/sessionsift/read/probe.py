"""A file whose existence decides what a reader reads, announced as one of the reading's inputs.

The index keeps answers and full-text rows under the identity of every file and directory a reader
opened or listed (index/fulltext.py ``Traced``: Python's ``open``/``os.listdir``/``os.scandir``/
``sqlite3.connect`` audit events). A bare ``Path.is_file()`` raises no audit event, so a file that
was absent when an answer was kept and appeared since (a fork's parent restored, a subagent's
transcript written) would not make the answer stale. ``is_file`` here raises the
``sessionsift.probe`` event first: the tracer records the path like an opened one, with its stat
facts or none when it does not exist."""

from __future__ import annotations

import os
import sys

EVENT = "sessionsift.probe"


def is_file(p: "str | os.PathLike[str]") -> bool:
    """``os.path.isfile(p)``, announced (see the module docstring)."""
    sys.audit(EVENT, os.fspath(p))
    return os.path.isfile(p)
