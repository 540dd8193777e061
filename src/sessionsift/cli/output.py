"""Output: one JSON Lines shape for every command, and escaped human text.

JSON Lines: a `header` object first, then rows each tagged with `kind`, then a closing
`summary` object - even when nothing matched. Field names are snake_case and stable; unknown is
`null`, never 0. Human output never carries raw control characters: newlines, ESC, CR, other
C0/C1 controls, DEL and bidi overrides from file names or record text are shown escaped.
"""

from __future__ import annotations

import os
import re
import sys
from typing import IO, Any

import orjson

from .. import __version__

_CTRL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e"}


def esc(s: Any) -> str:
    """Escape a value for a terminal: control characters never reach it raw."""
    if s is None:
        return "-"
    if not isinstance(s, str):
        s = str(s)
    return _CTRL.sub(lambda m: _NAMED.get(m.group(0)) or f"\\u{ord(m.group(0)):04x}", s)


def clip(s: str | None, n: int) -> str:
    """Escape then clip to n characters with an explicit marker."""
    if s is None:
        return "-"
    e = esc(s)
    if len(e) <= n:
        return e
    return e[: max(0, n - 1)] + "…"


def _scrub(v: Any) -> Any:
    if isinstance(v, str):
        try:
            v.encode("utf-8")
            return v
        except UnicodeEncodeError:
            b = v.encode("utf-8", "surrogateescape")
            import base64

            return {"bytes": base64.b64encode(b).decode()}
    if isinstance(v, dict):
        return {k: _scrub(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_scrub(x) for x in v]
    return v


def dumps(obj: Any) -> bytes:
    try:
        return orjson.dumps(obj, default=_default)
    except (TypeError, orjson.JSONEncodeError):
        return orjson.dumps(_scrub(obj), default=_default)


def _default(o: Any) -> Any:
    if isinstance(o, os.PathLike):
        return os.fspath(o)
    if isinstance(o, (set, frozenset)):
        return sorted(o)
    raise TypeError


class Out:
    """Writer for one command's output in the chosen format."""

    def __init__(self, fmt: str, command: str, stream: IO[str] | None = None):
        self.fmt = fmt
        self.command = command
        self.stream = stream or sys.stdout
        self.json = fmt == "json"

    def header(self, **fields: Any) -> None:
        if self.json:
            self._j({"kind": "header", "command": self.command, "sessionsift_version": __version__, **fields})

    def row(self, kind: str, data: dict) -> None:
        if self.json:
            self._j({"kind": kind, **data})

    def summary(self, **fields: Any) -> None:
        if self.json:
            self._j({"kind": "summary", "command": self.command, **fields})

    def text(self, line: str = "") -> None:
        if not self.json:
            self.stream.write(line + "\n")

    def err(self, line: str) -> None:
        sys.stderr.write(line + "\n")

    def _j(self, obj: dict) -> None:
        self.stream.write(dumps(obj).decode("utf-8") + "\n")
