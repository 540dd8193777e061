"""The one rendering path of every command: JSON Lines rows and escaped human text.

JSON Lines: a `header` object first, then rows each tagged with `kind`, then a closing `summary`
object - even when nothing matched, and even when the command failed (the summary then carries
`error`). Field names are snake_case and stable; unknown is `null`, never 0.

Human text cannot carry a raw control character: every line `Out.text`, `Out.block` and
`Out.err` write is escaped AS A WHOLE here, so a caller that interpolates a value from disk and
forgets to escape it still prints one escaped line (newlines, ESC, BEL, CR, other C0/C1 controls,
DEL, bidi overrides and line/paragraph separators become `\\n`, `\\e`, `\\u0007`, ...). Escaping is
idempotent (its output holds no control character), so a value escaped twice reads the same.
The only unescaped output is `Out.file_bytes`: the content of a file the user asked for (e.g.
`recover` into a pipe), which is data, not rendering.

This module sits below `cli/` (the library may use it; it imports nothing from `cli/`).
"""

from __future__ import annotations

import os
import re
import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (postponed): `typing` costs ~3 ms at start
    from typing import IO, Any

from . import __version__

_CTRL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_CTRL_KEEP_TAB = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e"}


def _sub(m: "re.Match[str]") -> str:
    c = m.group(0)
    return _NAMED.get(c) or f"\\u{ord(c):04x}"


def esc(s: Any) -> str:
    """Escape a value for a terminal: control characters never reach it raw. None -> `-`."""
    if s is None:
        return "-"
    if not isinstance(s, str):
        s = str(s)
    return _CTRL.sub(_sub, s)


def esc_keep_tabs(s: str) -> str:
    """`esc`, but a TAB stays a TAB (file content shown on a terminal keeps its indentation)."""
    return _CTRL_KEEP_TAB.sub(_sub, s)


def plural(n: int | None, word: str, many: str | None = None) -> str:
    """``1 session``, ``2 sessions``, ``0 sessions`` (``many`` for an irregular plural); ``None`` ->
    ``? sessions`` (not counted)."""
    if n is None:
        return f"? {many or word + 's'}"
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


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
    import orjson  # here, not at the top: text output (e.g. `--help`) never pays its ~20 ms import

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


COLOR = "auto"
"""``--color auto|always|never`` (set once by the CLI before a command runs): ``auto`` colours a
terminal unless ``NO_COLOR`` is set to anything non-empty (no-color.org) or ``TERM=dumb``;
``always`` colours a pipe too (the flag wins over ``NO_COLOR``: it is the later, explicit choice);
``never`` never. JSON is never coloured."""

STYLES = {"header": "1", "match": "1;31", "id": "33", "dim": "2", "good": "32", "warn": "33", "bad": "31",
          "bold": "1"}
"""SGR parameters of the few styles human output uses (a style no terminal knows is no style)."""

_SGR_PARAMS = re.compile(r"[0-9]{1,3}(?:;[0-9]{1,3})*")
"""What `Out.styled` takes for SGR parameters: numbers and `;`, nothing that ends the sequence."""


def colour_wanted(terminal: bool) -> bool:
    """Whether output to a stream is coloured (`terminal`: it is a terminal, or a pager on one)."""
    if COLOR == "always":
        return True
    if COLOR == "never":
        return False
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return terminal


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


LIVE = None
"""The progress line shown on stderr now (index/progress.py), cleared before an answer line is
written so that the two never share a terminal line."""


def _unlive() -> None:
    if LIVE is not None:
        LIVE.clear()


_CURRENT: "Out | None" = None
"""The writer of the command now running (one per process): an error raised after its header
still closes its JSON stream with a summary (`close_with_error`)."""


class Out:
    """Writer for one command's output in the chosen format."""

    def __init__(self, fmt: str, command: str, stream: IO[str] | None = None, terminal: bool | None = None):
        global _CURRENT
        self.fmt = fmt
        self.command = command
        self.stream = stream or sys.stdout
        self.json = fmt == "json"
        self.terminal = _isatty(self.stream) if terminal is None else terminal
        """The output reaches a terminal (a pager on one: `terminal=True`)."""
        self.colour = not self.json and colour_wanted(self.terminal)
        self.header_written = False
        self.summary_written = False
        _CURRENT = self

    def header(self, **fields: Any) -> None:
        if self.json:
            self.header_written = True
            self._j({"kind": "header", "command": self.command, "sessionsift_version": __version__, **fields})

    def row(self, kind: str, data: dict) -> None:
        if self.json:
            self._j({"kind": kind, **data})

    def summary(self, **fields: Any) -> None:
        if self.json:
            self.summary_written = True
            self._j({"kind": "summary", "command": self.command, **fields})

    def text(self, line: str = "", keep_tabs: bool = False) -> None:
        """One line of human text (escaped as a whole; a newline inside it prints as `\\n`)."""
        if not self.json:
            if LIVE is not None:
                _unlive()
            self.stream.write((esc_keep_tabs(line) if keep_tabs else esc(line)) + "\n")

    def spans(self, parts: "list[str | tuple[str, str | None]]") -> None:
        """One line of human text made of parts, each a string or (string, style name of
        STYLES): every part is escaped first, then coloured when this output is (so no byte from
        disk can be taken for a colour code, and the line without colour is `text`'s)."""
        if self.json:
            return
        if LIVE is not None:
            _unlive()
        buf = []
        for p in parts:
            t, st = (p, None) if isinstance(p, str) else p
            e = esc(t)
            code = STYLES.get(st) if (st and self.colour and e) else None
            buf.append(f"\x1b[{code}m{e}\x1b[0m" if code else e)
        self.stream.write("".join(buf) + "\n")

    def styled(self, parts: "list[tuple[str, str | None]]") -> None:
        """One line of human text made of (string, SGR parameters or None) parts: `spans` with the
        caller's own styles (a renderer's: digits and `;` only, anything else is no style; never a
        string from disk). Every string is escaped first, then coloured when this output is."""
        if self.json:
            return
        if LIVE is not None:
            _unlive()
        buf = []
        for t, sgr in parts:
            e = esc(t)
            ok = self.colour and e and sgr and _SGR_PARAMS.fullmatch(sgr)
            buf.append(f"\x1b[{sgr}m{e}\x1b[0m" if ok else e)
        self.stream.write("".join(buf) + "\n")

    def paint(self, line: str, style: str | None) -> None:
        """`text`, the whole line in one style when coloured."""
        self.spans([(line, style)])

    def block(self, text: str) -> None:
        """Human text of several lines, written as given line by line (each line escaped), with
        no newline added at the end."""
        if not self.json:
            self.stream.write("\n".join(esc(x) for x in text.split("\n")))

    def file_bytes(self, data: bytes) -> None:
        """The bytes of a file the user asked for, unescaped (they are the file, not rendering).
        Callers use it only when the output is not a terminal."""
        self.stream.flush()
        buf = getattr(self.stream, "buffer", None)
        if buf is None:
            self.stream.write(data.decode("utf-8", "surrogateescape"))
        else:
            buf.write(data)
            buf.flush()

    def document(self, obj: dict) -> None:
        """One JSON document, indented (``usage --json``: ccusage's shapes; not JSON Lines)."""
        import orjson

        try:
            data = orjson.dumps(obj, option=orjson.OPT_INDENT_2, default=_default)
        except (TypeError, orjson.JSONEncodeError):
            data = orjson.dumps(_scrub(obj), option=orjson.OPT_INDENT_2, default=_default)
        self.stream.write(data.decode("utf-8") + "\n")

    def err(self, line: str) -> None:
        """One escaped line on stderr (status and notes that are not the answer)."""
        err_line(line)

    def _j(self, obj: dict) -> None:
        if LIVE is not None:
            _unlive()
        self.stream.write(dumps(obj).decode("utf-8") + "\n")


def err_line(line: str) -> None:
    sys.stderr.write(esc(line) + "\n")


def current() -> "Out | None":
    return _CURRENT


def close_with_error(exc: BaseException, status: int, command: str | None, want_json: bool) -> None:
    """Close the JSON stream of a command that failed: a header if none was written, then a
    summary carrying `error` and the exit status. Text mode: nothing (the error is on stderr)."""
    out = _CURRENT
    if out is not None:
        if not out.json or out.summary_written:
            return
    elif not want_json:
        return
    else:
        out = Out("json", command or "sessionsift")
    if not out.header_written:
        out.header(error=True)
    from .errors import error_kind

    out.summary(error={"kind": error_kind(exc), "message": str(exc),
                       "hint": getattr(exc, "hint", None)}, exit_status=int(status))
