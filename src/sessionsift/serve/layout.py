"""The frame every page shares: head (the packaged stylesheets and script, nothing else), the top
navigation, and the escaping helpers (the export renderer's: export/html.py ``e`` and
``clean_text``; every string from disk goes through them)."""

from __future__ import annotations

import re
from urllib.parse import quote, unquote, urlencode

from ..export.html import clean_text, e

PAGES = [("/", "Sessions"), ("/search", "Search")]
"""The top navigation (each page module adds itself where the app mounts it: app.py)."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate(m) -> str:
    c = ord(m.group(0))
    return f"\\x{c - 0xdc00:02x}" if 0xdc80 <= c <= 0xdcff else f"\\u{c:04x}"


def unsurrogate(s: str) -> str:
    """A string as valid Unicode: a byte a file name held that is not UTF-8 (decoded with
    surrogateescape: U+DC80..U+DCFF) shown as ``\\xNN``, any other lone surrogate as ``\\uXXXX``."""
    return _SURROGATE.sub(_surrogate, s) if _SURROGATE.search(s) else s


def t(s) -> str:
    """Text from disk as HTML text (and attribute values): terminal escapes removed, control
    characters, bidi overrides and line/paragraph separators shown as ``\\uXXXX``, a byte that is
    not UTF-8 (a file name's) as ``\\xNN``, then escaped."""
    return unsurrogate(e(clean_text("" if s is None else str(s)))).replace("\u2028", "\\u2028").replace(
        "\u2029", "\\u2029")


def encoded(html: str) -> bytes:
    """A page as UTF-8 bytes; a lone surrogate anything left in (none should be) is written as
    its escape, never a failed answer."""
    return html.encode("utf-8", "backslashreplace")


def path_param(request, index: int) -> str:
    """The `index`-th segment of the request's path as the server got it, percent-decoded with
    surrogateescape: a session id holding a byte that is not UTF-8 (quoted as ``%FF`` by
    `session_href`) comes back as the same str (the server's own decoding would make it U+FFFD)."""
    raw = request.scope.get("raw_path") or request.scope["path"].encode("utf-8", "surrogateescape")
    parts = raw.split(b"?", 1)[0].decode("ascii", "surrogateescape").split("/")
    return unquote(parts[index], errors="surrogateescape")


def md(text) -> str:
    """A reply's Markdown as HTML: the export renderer's (markdown-it-py, raw HTML off, links shown
    as text), line/paragraph separators shown as ``\\uXXXX`` as in `t`."""
    from ..export.html import markdown_html

    return unsurrogate(markdown_html(text or "")).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def href(path: str, **params) -> str:
    q = urlencode({k: v for k, v in params.items() if v not in (None, "", False)})
    return e(path + (f"?{q}" if q else ""))


def session_href(provider: str, session_id: str, anchor: str | None = None) -> str:
    return e(f"/session/{quote(provider, safe='', errors='surrogateescape')}/"
             f"{quote(session_id, safe='', errors='surrogateescape')}" + (f"#{unsurrogate(anchor)}" if anchor else ""))


def page(title: str, body: str, *, current: str = "/", scripts: tuple[str, ...] = ()) -> str:
    nav = " ".join(f'<a href="{p}"{" aria-current=page" if p == current else ""}>{e(n)}</a>' for p, n in PAGES)
    js = "".join(f'<script src="/static/{e(s)}" defer></script>' for s in ("app.js", *scripts))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="referrer" content="no-referrer">'
            f"<title>{t(title)} · sessionsift</title>"
            '<link rel="stylesheet" href="/static/export.css"><link rel="stylesheet" href="/static/app.css">'
            f'{js}</head><body><header class="top"><b>sessionsift</b> <nav class="pages">{nav}</nav></header>'
            f'<main>\n{body}\n</main></body></html>\n')


def num(v, unit: str = "") -> str:
    """A count as shown: None is unknown (a dash with a title saying so), never 0."""
    if v is None:
        return '<span class="unknown" title="not counted: unknown">—</span>'
    return f"{v:,}{unit}" if isinstance(v, int) else e(v)


def human_bytes(n: int | None) -> str:
    if n is None:
        return num(None)
    x = float(n)
    for u in ("B", "kB", "MB", "GB"):
        if x < 1000 or u == "GB":
            return f"{x:.0f} {u}" if u == "B" else f"{x:.1f} {u}"
        x /= 1000
    return str(n)
