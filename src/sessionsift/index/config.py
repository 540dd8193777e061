"""Whether the index is used in this process: on unless `--no-index` (any command) or the
environment variable SESSIONSIFT_NO_INDEX (non-empty, not "0") turns it off."""

from __future__ import annotations

import os

_forced_off = False


def disable() -> None:
    """`--no-index`: every command of this process scans."""
    global _forced_off
    _forced_off = True


def enable() -> None:
    global _forced_off
    _forced_off = False


def enabled() -> bool:
    if _forced_off:
        return False
    v = os.environ.get("SESSIONSIFT_NO_INDEX", "")
    return v in ("", "0")


def why_off() -> str | None:
    """Why the index is off (None: it is on)."""
    if _forced_off:
        return "--no-index"
    if not enabled():
        return "SESSIONSIFT_NO_INDEX is set"
    return None
