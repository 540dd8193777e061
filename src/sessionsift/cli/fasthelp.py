"""`sessionsift --help` without importing click (~40 ms of imports: click.core pulls in
`inspect`, `ast`, `dis`) or any command module: the same text click renders for the group, from
GROUP_HELP and each command's docstring read from its module's SOURCE (a regex finds the
command function's docstring; nothing is imported). tests/test_cli_lazy.py holds it equal to
click's own rendering at every width.

Only plain text is handled (no ANSI, no word longer than the width), which is what the group's
help holds; `main` uses this only for a bare `--help`/`-h`, and falls back to click when a
command's docstring cannot be found this way (`group_help` returns None).
"""

from __future__ import annotations

import os
import re
import sys
import textwrap

from . import COMMANDS, GROUP_HELP

_OPTIONS = (("--version", "Show the version and exit."), ("-h, --help", "Show this message and exit."))
MAX_WIDTH = 100
"""The group's `max_content_width`."""


def summary(name: str) -> str | None:
    """The docstring of command `name`'s function, read from its module's source (None: not found:
    a `help=`/`short_help=` argument, or a function that is not written `def name(...):` + docstring)."""
    mod, attr = COMMANDS[name].split(":")
    try:
        with open(os.path.join(os.path.dirname(__file__), mod + ".py"), encoding="utf-8") as f:
            src = f.read()
    except OSError:
        return None
    i = src.find("\ndef " + attr + "(")
    j = src.find('"""', i) if i >= 0 else -1
    k = src.find('"""', j + 3) if j >= 0 else -1
    sig = src[i + 1:j]
    if k < 0 or "\n\n" in sig or "\ndef " in sig or not sig.rstrip().endswith(":") or sig.endswith(("r", "b", "f")):
        return None
    doc = src[j + 3:k]
    first = doc.partition("\n\n")[0]
    if "\\" in first:
        return None  # an escape in the source: leave it to click
    deco = src[max(0, src.rfind("\n\n", 0, i)):i]
    if any("help" in d for d in re.findall(r"@\w+\.(?:command|group)\(([^\n]*)", deco)):
        return None  # help given to the decorator
    return first


def _columns() -> int:
    """shutil.get_terminal_size().columns, without importing shutil (it pulls in zlib, bz2, lzma
    and fnmatch): $COLUMNS when a positive integer, else the terminal of sys.__stdout__, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
        if columns <= 0:
            columns = 80
    return columns


def _width() -> int:
    return max(min(_columns(), MAX_WIDTH) - 2, 50)


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


def group_help(width: int | None = None) -> str | None:
    """What click prints for `sessionsift --help` (without the final newline); None when a
    command's summary cannot be read from its source."""
    docs = {n: summary(n) for n in COMMANDS}
    if any(d is None for d in docs.values()):
        return None
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
    lines += _dl([(n, _short(docs[n], limit).strip()) for n in names], width)
    return "\n".join(lines)
