"""Whether the index is used: on unless the command line says `--no-index` (every command
takes it: the Invocation's `no_index`, carried to the readers with the scope as
`Scope.index_off`) or the environment variable SESSIONSIFT_NO_INDEX (non-empty, not "0") turns it
off. No process-wide switch: the reason travels with what is read."""

from __future__ import annotations

import os


def why_off(forced: bool | str | None = None) -> str | None:
    """Why the index is off (None: it is on). `forced`: ``--no-index`` was given (True), or the
    reason a caller already settled (a string, e.g. a Scope's ``index_off``)."""
    if isinstance(forced, str):
        return forced
    if forced:
        return "--no-index"
    v = os.environ.get("SESSIONSIFT_NO_INDEX", "")
    if v not in ("", "0"):
        return "SESSIONSIFT_NO_INDEX is set"
    return None


def enabled(forced: bool | str | None = None) -> bool:
    return why_off(forced) is None
