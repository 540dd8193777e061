"""Plain text tables laid out in the terminal's width (no rich import: `stats` and `list` answer
fast). Every cell is escaped before it is measured, so a value from disk takes the cells it will
show in; a cell too wide for the terminal is cut with an ellipsis only in a column marked
`flex` (names, paths: never a figure), after the columns marked `drop` went (last first; the
table then says which: a narrower answer says what it left out). A session id is cut only in the
middle (`flex="middle"`: its start and its end kept, as a person tells ids apart) and the table
then says so; a pipe, a wider terminal and `--format json` give it whole."""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass

from .output import esc, plural


def cells(s: str) -> int:
    """Terminal cells of `s` (wide East Asian characters take two, combining marks none)."""
    if s.isascii():
        return len(s)
    n = 0
    for ch in s:
        if unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


_UNIT = re.compile(r"\\u[0-9a-f]{4}|\\[entr]|.", re.S)
"""What a cut keeps whole: an escape `esc` wrote (`\\e`, `\\n`, `\\u202e`, ...) or one character."""


def fit(s: str, n: int, keep_end: bool = False) -> str:
    """`s` (escaped) in at most `n` cells, an ellipsis marking the cut (at the start when
    `keep_end`); an escape `esc` wrote is kept whole or cut whole (never `\\u20…`)."""
    if cells(s) <= n:
        return s
    if n <= 1:
        return "…"[:max(n, 0)]
    units = _UNIT.findall(s)
    if keep_end:
        units.reverse()
    kept: list[str] = []
    used = 0
    for u in units:
        w = cells(u)
        if used + w > n - 1:
            break
        kept.append(u)
        used += w
    if keep_end:
        kept.reverse()
        return "…" + "".join(kept)
    return "".join(kept) + "…"


def fit_middle(s: str, n: int) -> str:
    """`s` (escaped) in at most `n` cells, its start and its end kept around an ellipsis (an id:
    `c27489fa-88a9…call_subagent_0_0`); an escape `esc` wrote is kept whole or cut whole."""
    if cells(s) <= n:
        return s
    if n <= 2:
        return fit(s, n)
    units = _UNIT.findall(s)
    room = n - 1
    head_room = (room + 1) // 2
    head: list[str] = []
    used = 0
    for u in units:
        if used + cells(u) > head_room:
            break
        head.append(u)
        used += cells(u)
    tail: list[str] = []
    for u in reversed(units[len(head):]):
        if used + cells(u) > room:
            break
        tail.append(u)
        used += cells(u)
    return "".join(head) + "…" + "".join(reversed(tail))


def _pieces(s: str, sep: str) -> list[str]:
    """`s` split after each `sep` (the separator stays at the end of its piece)."""
    parts = s.split(sep)
    return [p + sep for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def wrap(s: str, width: int | None, indent: str = "  ", seps: tuple[str, ...] = (" ",)) -> list[str]:
    """`s` (escaped) as lines of at most `width` cells, nothing left out: broken after a separator
    (`seps[0]`, then `seps[1]` inside a piece still too wide, ...), a word wider than a line cut
    across lines between escapes (never inside one); the lines after the first start with
    `indent`. `width` None (a pipe): `[s]`."""
    if width is None or cells(s) <= width:
        return [s]
    width = max(width, cells(indent) + 8)
    lines = [""]

    def room() -> int:
        return width - (cells(indent) if len(lines) > 1 else 0) - cells(lines[-1])

    def put(piece: str, depth: int) -> None:
        if cells(piece) <= room():
            lines[-1] += piece
            return
        if lines[-1].strip():
            lines[-1] = lines[-1].rstrip(" ")
            lines.append("")
            piece = piece.lstrip(" ")
            if cells(piece) <= room():
                lines[-1] += piece
                return
        if depth < len(seps):
            for sub in _pieces(piece, seps[depth]):
                put(sub, depth + 1)
            return
        for u in _UNIT.findall(piece):
            if cells(u) > room() and lines[-1]:
                lines.append("")
            lines[-1] += u

    for piece in _pieces(s, seps[0]):
        put(piece, 1)
    return [lines[0].rstrip(" ")] + [indent + x.rstrip(" ") for x in lines[1:] if x.strip()]


def width_of(stream) -> int | None:
    """The width output to `stream` is laid out in: `$COLUMNS` when a positive integer, else the
    terminal's when `stream` is one, else None (a pipe or a file: the natural width, nothing cut
    for a program that reads it)."""
    try:
        c = int(os.environ.get("COLUMNS", ""))
        if c > 0:
            return c
    except ValueError:
        pass
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        pass
    return None


def term_width(out) -> int | None:
    """The width of the terminal `out` writes to (`$COLUMNS` first), None when it writes to a pipe
    or a file (nothing is cut for a program that reads it)."""
    if out.json or not out.terminal:
        return None
    w = width_of(out.stream)
    if w is None:
        import sys

        w = width_of(sys.stdout)  # a pager on the terminal
    return w


@dataclass
class Col:
    name: str
    right: bool = False
    """Right-aligned (figures)."""
    flex: str | None = None
    """"end" / "start": may be cut, keeping its start (a title) or its end (a path); "middle": an
    id, cut in its middle (its start and end kept) only when the figures would not fit otherwise
    (the other flex columns reached their floor first); an indent and `↳ ` before it stay whole."""
    drop: bool = False
    """May be left out on a narrow terminal (the table then says so)."""
    floor: int = 8


def render(out, cols: list[Col], rows: list[list[str]], gap: int = 2, style_header: bool = True) -> None:
    """Print `rows` (raw strings; escaped here) under `cols` through `out`, fitted to its width."""
    rows = [[esc(c) for c in r] for r in rows]
    keep = list(range(len(cols)))
    W = width_of(out.stream)

    def natural(i: int) -> int:
        return max([cells(cols[i].name)] + [cells(r[i]) for r in rows])

    widths = {i: natural(i) for i in keep}

    def total() -> int:
        return sum(widths[i] for i in keep) + gap * (len(keep) - 1)

    dropped: list[str] = []
    if W is not None:
        while total() > W:
            drops = [i for i in keep if cols[i].drop]
            if drops:  # the columns a short answer can do without go first, the last first
                keep.remove(drops[-1])
                dropped.append(cols[drops[-1]].name)
                continue
            flex = [i for i in keep if cols[i].flex not in (None, "middle") and widths[i] > cols[i].floor]
            if not flex:
                flex = [i for i in keep if cols[i].flex == "middle" and widths[i] > cols[i].floor]
                if flex:  # an id is cut last, and only as far as the figures need
                    i = flex[0]
                    widths[i] = max(cols[i].floor, widths[i] - (total() - W))
                    continue
                break  # printed wider than the terminal rather than cut a figure or an id
            i = max(flex, key=lambda k: widths[k])
            widths[i] = max(cols[i].floor, widths[i] - (total() - W))
    last = keep[-1] if keep else None
    cut_ids: list[str] = []

    def line(vals: dict[int, str]) -> str:
        parts = []
        for i in keep:
            c, v = cols[i], vals[i]
            if cells(v) > widths[i]:
                if c.flex == "middle":
                    lead = v[:len(v) - len(v.lstrip(" ↳"))]
                    v = lead + fit_middle(v[len(lead):], widths[i] - cells(lead))
                    cut_ids.append(v)
                else:
                    v = fit(v, widths[i], keep_end=c.flex == "start")
            pad = " " * (widths[i] - cells(v))
            parts.append(pad + v if c.right else (v if i == last else v + pad))
        return (" " * gap).join(parts).rstrip()

    head = line({i: cols[i].name for i in range(len(cols))})
    if style_header:
        out.spans([(head, "header")])
    else:
        out.text(head)
    for r in rows:
        out.spans([line(dict(enumerate(r)))])
    if cut_ids:
        prose(out, f"(… in {plural(len(cut_ids), 'id')}: cut in the middle for the terminal's width; a wider terminal, "
                   "a pipe or --format json shows them whole)")
    if dropped:
        prose(out, f"(left out for the terminal's width: {', '.join(reversed(dropped))}; a wider terminal or a pipe "
                   "shows them)")


COVERAGE_SEPS = (" · ", " ")
"""Where the coverage line is broken: between two agents, else between words."""


def prose(out, line: str, seps: tuple[str, ...] = (" ",), indent: str = "  ", style: str | None = None) -> None:
    """`out.text(line)` for a line of prose (totals, notes, evidence, the coverage line): on a
    terminal broken across lines of its width (`wrap`: nothing cut; the lines after the first
    start with `indent`), on a pipe one line as it is. `style`: each line painted in it."""
    for ln in wrap(esc(line), term_width(out), indent, seps):
        if style is None:
            out.text(ln)
        else:
            out.paint(ln, style)
