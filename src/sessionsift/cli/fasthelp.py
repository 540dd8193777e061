"""`sessionsift --help` without importing click (~40 ms of imports: click.core pulls in
`inspect`, `ast`, `dis`): the same text click renders for the group, from GROUP_HELP and
SUMMARIES. tests/test_cli_lazy.py holds it equal to click's own rendering at every width.

Only plain text is handled (no ANSI, no `\\b` blocks, no word longer than the width), which is
what the group's help holds; `main` uses this only for a bare `--help`/`-h`.
"""

from __future__ import annotations

import shutil
import textwrap

from . import COMMANDS, GROUP_HELP, SUMMARIES

_OPTIONS = (("--version", "Show the version and exit."), ("-h, --help", "Show this message and exit."))
MAX_WIDTH = 100
"""The group's `max_content_width`."""


def _width() -> int:
    return max(min(shutil.get_terminal_size().columns, MAX_WIDTH) - 2, 50)


def _wrap(text: str, width: int, indent: str = "") -> str:
    """click.formatting.wrap_text(..., preserve_paragraphs=True) for plain paragraphs."""
    w = textwrap.TextWrapper(width, initial_indent=indent, subsequent_indent=indent, replace_whitespace=False)
    paras: list[str] = []
    buf: list[str] = []
    for line in text.expandtabs().splitlines():
        if not line:
            if buf:
                paras.append(" ".join(buf))
                buf = []
        else:
            buf.append(line.lstrip() if not buf else line)
    if buf:
        paras.append(" ".join(buf))
    return "\n\n".join(w.fill(p) for p in paras)


def _short(text: str, limit: int) -> str:
    """click.utils._make_default_short_help."""
    words = text.partition("\n\n")[0].split()
    if not words:
        return ""
    last = len(words) - 1
    for i, word in enumerate(words):
        if word.endswith(".") and (i == last or not words[i + 1][0].islower()):
            words = words[: i + 1]
            break
    s = " ".join(words)
    if len(s) <= limit:
        return s
    if limit < 3:
        return "..."
    return textwrap.shorten(s, limit, placeholder="...", break_on_hyphens=False)


def _dl(rows: list[tuple[str, str]], width: int, indent: int = 2) -> list[str]:
    """click.HelpFormatter.write_dl (col_max 30, col_spacing 2), every first column fitting."""
    first_col = min(max(len(a) for a, _ in rows), 30) + 2
    out = []
    for first, second in rows:
        head = " " * indent + first
        if not second:
            out.append(head)
            continue
        if len(first) <= first_col - 2:
            head += " " * (first_col - len(first))
        else:
            out.append(head)
            head = " " * (first_col + indent)
        lines = _wrap(second, max(width - first_col - 2, 10)).splitlines()
        if not lines:
            out.append(head)
            continue
        out.append(head + lines[0])
        out.extend(" " * (first_col + indent) + ln for ln in lines[1:])
    return out


def group_help(width: int | None = None) -> str:
    """What click prints for `sessionsift --help` (without the final newline)."""
    width = _width() if width is None else width
    usage_prefix = "Usage: sessionsift "
    args = "[OPTIONS] COMMAND [ARGS]..."
    if width >= len(usage_prefix) + 20:
        usage = textwrap.TextWrapper(width, initial_indent=usage_prefix, subsequent_indent=" " * len(usage_prefix),
                                     replace_whitespace=False).fill(args)
    else:  # pragma: no cover - click clamps the width at 50
        usage = usage_prefix + "\n" + textwrap.fill(args, width, initial_indent=" " * 11, subsequent_indent=" " * 11)
    lines = [usage, "", _wrap(GROUP_HELP.partition("\f")[0].strip("\n"), width, "  "), "", "Options:"]
    lines += _dl(list(_OPTIONS), width)
    names = list(COMMANDS)
    limit = width - 6 - max(len(n) for n in names)
    lines += ["", "Commands:"]
    lines += _dl([(n, _short(SUMMARIES[n], limit).strip()) for n in names], width)
    return "\n".join(lines)
