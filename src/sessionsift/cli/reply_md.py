"""A reply's Markdown rendered for a colour terminal (`show SESSION`): rich's Markdown renderer,
fed the reply ALREADY ESCAPED (render.esc, line by line: no control character from disk reaches
the parser, so none reaches the terminal), with

* raw HTML off: a `<script>` or `<div>` in a reply is shown as the text it is, never dropped
  (rich drops HTML tokens);
* links as text (`the docs (https://...)`), never a terminal hyperlink (no OSC 8 sequence carries
  an address from disk); an image as `[image: alt (address)]`, as `export html` says it;
* no console markup and no emoji codes (`[bold]` and `:smile:` are text);
* the styles turned into SGR parameters by this module (digits and `;`), written by
  Out.styled, which escapes every piece of text again (idempotent) before it colours it.

Only on a terminal and only when its output is coloured: a pipe, `NO_COLOR`, `TERM=dumb` and
`--color never` get the reply's Markdown source (docs/cli.md)."""

from __future__ import annotations

import io
import re

from ..render import esc

_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def _reply_class():
    from markdown_it import MarkdownIt
    from rich.markdown import ImageItem, Markdown
    from rich.text import Text

    class _Image(ImageItem):
        def __rich_console__(self, console, options):
            alt = self.text.plain if self.text else ""
            yield Text(f"[image: {alt} ({self.destination})]" if alt else f"[image: {self.destination}]", end="")

    class Reply(Markdown):
        elements = {**Markdown.elements, "image": _Image}

        def __init__(self, text: str):
            super().__init__(text, code_theme="ansi_dark", hyperlinks=False)
            self.parsed = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table").parse(text)

    return Reply


def _sgr(style, cache: dict) -> str | None:
    """The SGR parameters of a rich Style (colours, bold, dim, italic, underline, strike, reverse;
    never its link)."""
    if style is None:
        return None
    key = str(style)
    if key not in cache:
        from rich.color import ColorSystem
        from rich.style import Style

        plain = Style(color=style.color, bgcolor=style.bgcolor, bold=style.bold, dim=style.dim, italic=style.italic,
                      underline=style.underline, strike=style.strike, reverse=style.reverse)
        m = _SGR.match(plain.render("x", color_system=ColorSystem.STANDARD))
        cache[key] = m.group(1) if m and m.group(1) else None
    return cache[key]


def rendered(text: str, width: int) -> list[list[tuple[str, str | None]]]:
    """The lines of the reply `text` (raw, from disk) rendered in `width` cells: each a list of
    (escaped text, SGR parameters or None), trailing blanks taken off; one blank line at most
    between two blocks, none at either end."""
    from rich.console import Console

    safe = "\n".join(esc(ln) for ln in text.split("\n"))
    buf = io.StringIO()  # rendered into a buffer, never written: the lines go out through Out.styled
    con = Console(file=buf, width=max(width, 20), color_system="standard", force_terminal=True,
                  markup=False, emoji=False, highlight=False)
    cache: dict = {}
    lines: list[list[tuple[str, str | None]]] = []
    for segs in con.render_lines(_reply_class()(safe), con.options, pad=False):
        parts = [(esc(s.text), _sgr(s.style, cache)) for s in segs if s.text and not s.control]
        while parts and not parts[-1][0].strip():
            parts.pop()
        if parts:
            parts[-1] = (parts[-1][0].rstrip(), parts[-1][1])
        if parts or (lines and lines[-1]):  # one blank line between blocks (rich pads code and tables)
            lines.append(parts)
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines
