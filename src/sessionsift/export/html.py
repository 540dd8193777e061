"""`export html`: one self-contained HTML file per session plus an index page.

Self-contained: no script, no remote load, ever -- a strict Content-Security-Policy meta
(``default-src 'none'``: no script, frame, font, connection or remote image; ``img-src data:``
for the inline images; ``style-src 'unsafe-inline'`` for the page's own stylesheet) and nothing
but inline CSS and data: URIs. Everything from the transcript goes through ``html.escape`` (text
and attribute values); images are data: URIs built only from checked base64 of an image type.
Tested in headless Chromium (tests/test_export_html.py): a transcript holding ``<script>`` and
``onerror=`` payloads renders them as text and runs none.
"""

from __future__ import annotations

import html
import re
from datetime import datetime, timezone

from ..providers import KNOWN
from ..providers.base import SessionRef
from .document import Block, Document, Lane, nested_lanes, summary_line

SCHEMA_VERSION = 1
CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'none'")
CSS = """
body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;color:#1b1b1b;background:#fff}
h1{font-size:1.3rem} h2{font-size:1.05rem;margin-top:1.6rem;border-bottom:1px solid #ddd}
.meta{color:#555;font-size:.85rem} pre{white-space:pre-wrap;word-wrap:break-word;margin:.3rem 0;
font:13px/1.4 ui-monospace,monospace;background:#f6f8fa;padding:.5rem;border-radius:4px}
.prompt{border-left:4px solid #2f6feb;padding-left:.6rem} .reply{border-left:4px solid #1a7f37;padding-left:.6rem}
.user{border-left:4px solid #8c959f;padding-left:.6rem}
details{margin:.3rem 0;border:1px solid #d0d7de;border-radius:4px;padding:.2rem .5rem}
details.thinking{background:#fff8c5} details.subagent{background:#f6f0ff} details.result.error{border-color:#cf222e}
.compaction{border-top:3px double #bf8700;margin:1rem 0;padding-top:.3rem;color:#7d4e00}
.omissions{background:#fff1f0;border:1px solid #ffaba8;padding:.4rem .6rem;border-radius:4px}
img.inline{max-width:100%;image-rendering:pixelated;border:1px solid #ccc;min-width:64px}
.label{font-size:.75rem;color:#57606a}
nav.pager{position:sticky;top:0;background:#fff;border-bottom:1px solid #d0d7de;padding:.35rem 0;z-index:1;font-size:.9rem}
nav.pager a{margin-right:1rem}
details.toc{background:#f6f8fa} details.toc ol{margin:.3rem 0;padding-left:1.6rem}
.turnfoot{color:#57606a;font-size:.8rem;margin:.2rem 0 .8rem}
h2 .when{font-weight:normal;color:#57606a;font-size:.85rem}
.md{margin:.3rem 0} .md pre{background:#f6f8fa} .md code{font:13px ui-monospace,monospace;background:#f6f8fa;padding:0 .2rem}
.md table{border-collapse:collapse} .md td,.md th{border:1px solid #d0d7de;padding:.2rem .4rem}
.url{color:#57606a;font-size:.85rem}
"""

NAV_MARK = "<!--sessionsift:nav-->"
"""Where a page's navigation goes: the stable copy an export links to carries it (back to the index,
previous and next session: they change as more sessions are exported); the version the ledger
records keeps the mark (its bytes never change). Transcript text cannot hold it: it is escaped."""

NAV_OPEN = '<nav class="pager"'
NAV_CLOSE = "</nav>"


def nav(r: dict, prev: dict | None, nxt: dict | None) -> str:
    """A stable page's navigation (it sits in DIR/<provider>/): the index, the previous and the next
    session in the index's order, and this page's turns."""
    def link(x: dict, rel: str, label: str) -> str:
        return f'<a rel="{rel}" href="../{e(x["href"])}" title="{e(clean_text(x["title"]))}">{label}</a>'

    parts = ['<a href="../index.html">↑ All sessions</a>']
    parts.append(link(prev, "prev", "← Previous") if prev else '<span class="meta">← Previous</span>')
    parts.append(link(nxt, "next", "Next →") if nxt else '<span class="meta">Next →</span>')
    parts.append('<a href="#turns">Turns</a>')
    return f'{NAV_OPEN} aria-label="sessions">{" ".join(parts)}{NAV_CLOSE}'


_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]?")
_CTRL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean_text(s: str) -> str:
    """Terminal escape sequences (colours, titles) are removed, a CR line end is a line end, and any
    other control character (or bidi override) is shown as ``\\uXXXX``: nothing invisible or
    box-drawn reaches the page."""
    if "\x1b" in s:
        s = _ANSI.sub("", s)
    if "\r" in s:
        s = s.replace("\r\n", "\n").replace("\r", "\n")
    return _CTRL.sub(lambda m: f"\\u{ord(m.group(0)):04x}", s)


_MD = None


def markdown_html(text: str) -> str:
    """A reply's Markdown as HTML (markdown-it-py, CommonMark): raw HTML in it is NOT passed through
    (``html: False``: shown as text), links are shown as their text and the address beside it (no
    href: the page links nowhere), an image as its alt text and address (nothing loads); code
    stays code. Every string still goes through the library's escaping."""
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt

        md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
        md.enable("table")

        def link_open(self, tokens, idx, options, env):
            env.setdefault("hrefs", []).append(tokens[idx].attrGet("href") or "")
            return '<span class="link">'

        def link_close(self, tokens, idx, options, env):
            href = (env.get("hrefs") or [""]).pop()
            return f'</span> <span class="url">({e(href)})</span>' if href else "</span>"

        def image(self, tokens, idx, options, env):
            t = tokens[idx]
            alt = self.renderInlineAsText(t.children or [], options, env)
            return f'<span class="url">[image: {e(alt)} ({e(t.attrGet("src") or "")})]</span>'

        md.add_render_rule("link_open", link_open)
        md.add_render_rule("link_close", link_close)
        md.add_render_rule("image", image)
        _MD = md
    return f'<div class="md">{_MD.render(clean_text(text))}</div>'



def e(s) -> str:
    return html.escape("" if s is None else str(s), quote=True)


def _pre(text: str) -> str:
    return f"<pre>{e(clean_text(text))}</pre>"


def _imgs(b: Block) -> str:
    return "".join(f'<img class="inline" alt="{e(mt)} image" src="data:{e(mt)};base64,{e(data)}">'
                   for mt, data in b.images)


def _summary_of(b: Block) -> str:
    r = b.record
    first = summary_line(b)
    return f"tool call {e(r.tool_name or '?')}" + (f": <code>{e(first)}</code>" if first else "")


USER_HEADS = {"meta": "Client record", "message": "User message"}
"""The heading of user-role text that is not a prompt, by its shared kind (its native type is in the
small label beside it, with its locator)."""


def _block(doc: Document, b: Block, rendered_lane) -> str:
    r = b.record
    loc = _loc(b)
    if b.kind == "prompt":
        return f'<div class="prompt"><b>Prompt</b> {loc}{_pre(b.text)}{_imgs(b)}</div>'
    if b.kind == "reply":
        return f'<div class="reply"><b>Reply</b> {loc}{markdown_html(b.text)}{_imgs(b)}</div>'
    if b.kind == "user":
        head = USER_HEADS.get(r.kind) or (r.role or "user").capitalize()
        return f'<div class="user"><b>{e(head)}</b> {_loc(b, native=True)}{_pre(b.text)}{_imgs(b)}</div>'
    if b.kind == "thinking":
        return f'<details class="thinking"><summary>Thinking {loc}</summary>{_pre(b.text)}</details>'
    if b.kind == "opaque_thinking":
        return f'<p class="meta">Thinking (opaque: redacted or encrypted, not readable) {loc}</p>'
    if b.kind == "compaction":
        return (f'<div class="compaction"><b>Compaction boundary</b>: earlier context was summarised here {loc}'
                + (f"<details><summary>Summary</summary>{_pre(b.text)}</details>" if b.text else "") + "</div>")
    if b.kind == "tool":
        return (tool_open(b) + (result_part(b.result) if b.result is not None else "") + TOOL_MID
                + "".join(sub_open(n) + rendered_lane(n) + SUB_CLOSE for n in b.lanes) + TOOL_CLOSE)
    if b.kind == "result":
        return f'<details class="result"><summary>Result {loc}</summary>{_pre(b.text)}{_imgs(b)}</details>'
    if b.kind == "unknown":
        return f'<p class="meta">Record of a kind this reader does not know: {e(r.native)} {loc}</p>'
    return f'<p class="meta">{e(r.native)} {loc}</p>' + (_pre(b.text) if b.text else "") + _imgs(b)


SEP = "\n"
"""Between the items (turn headings, blocks) of one lane."""
TOP_SEP = "\n"
"""Between the page's parts (the top, the main lane, each other lane, the children)."""
TOOL_MID = "</details>"
SUB_CLOSE = "</details>"
TOOL_CLOSE = ""
LANE_CLOSE = "</details>"


def _loc(b: Block, native: bool = False) -> str:
    """The block's locator(s) (every record merged into it), its native type (``native``) and labels."""
    r = b.record
    locs = ", ".join(e(x.locator) for x in [r, *b.also])
    nat = f" · {e(r.native)}" if native and r.native else ""
    return f'<span class="label">{locs}{nat}{" · " + e(", ".join(b.labels)) if b.labels else ""}</span>'


def tool_open(b: Block) -> str:
    """A tool call up to where its result goes (then TOOL_MID, its subagent lanes, TOOL_CLOSE)."""
    return f'<details class="tool"><summary>{_summary_of(b)} {_loc(b)}</summary><b>Input</b>{_pre(b.text)}'


def result_part(res: Block) -> str:
    """A tool call's result, folded into the call."""
    rr = res.record
    tag = " error" if (rr.is_error or rr.exit_code not in (None, 0)) else ""
    ex = f" (exit {e(rr.exit_code)})" if rr.exit_code is not None else ""
    return (f'<details class="result{tag}"><summary>Result{ex} <span class="label">{e(rr.locator)}</span>'
            f"</summary>{_pre(res.text)}{_imgs(res)}</details>")


def sub_open(name: str) -> str:
    return f'<details class="subagent" open><summary>Subagent {e(name)}</summary>'


def anchor(lane_name: str, number: int | None) -> str:
    """The id of a turn's heading (the table of contents links to it)."""
    lane = "".join(c if c.isalnum() or c in "-_" else "_" for c in lane_name)
    return f"t-{lane}-{'pre' if number is None else number}"


def _utc(ts: float | None) -> str:
    return "" if ts is None else datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def _took(st) -> str:
    """What a turn took: its span, its responses and their tokens (unknown said so, never 0)."""
    if st is None:
        return ""
    parts = []
    if st.seconds is not None:
        parts.append(f"{st.seconds:,.0f} s" if st.seconds >= 1 else "under 1 s")
    n = st.responses
    if n:
        tot = st.total
        parts.append(f"{n} response{'' if n == 1 else 's'}, "
                     + ("tokens not recorded" if tot is None else f"{tot:,} tokens"))
    else:
        parts.append("no response with a token count")
    return " · ".join(parts)


def turn_head(lane_name: str, number: int | None, stats=None) -> str:
    head = f"Turn {number}" if number is not None else "Before the first prompt"
    when = _utc(stats.first) if stats is not None else ""
    return (f'<h2 id="{anchor(lane_name, number)}">{e(head)}{"" if lane_name == "main" else " · " + e(lane_name)}'
            + (f' <span class="when">{e(when)}</span>' if when else "") + "</h2>")


def turn_foot(lane_name: str, number: int | None, stats=None) -> str:
    """After a turn's blocks: what it took."""
    took = _took(stats)
    if not took:
        return ""
    head = f"Turn {number}" if number is not None else "Before the first prompt"
    return f'<p class="turnfoot">{e(head)}: {e(took)}</p>'


def toc(doc: Document) -> str:
    """The main lane's turns, each linked, with its instant, what it took and its first prompt."""
    items = []
    for (lane, number), st in doc.turns.items():
        if lane != "main" or (lane, number) not in doc.shown:
            continue
        head = f"Turn {number}" if number is not None else "Before the first prompt"
        p = doc.prompts.get((lane, number))
        items.append(f'<li><a href="#{anchor(lane, number)}">{e(head)}</a> <span class="meta">{e(_utc(st.first))}'
                     f'{" · " + e(_took(st)) if _took(st) else ""}</span>' + (f" — {e(clean_text(p))}" if p else "")
                     + "</li>")
    if not items:
        return ""
    return (f'<details class="toc" id="turns" open><summary>Turns ({len(items)})</summary><ol>{"".join(items)}</ol>'
            "</details>")



def block(b: Block) -> str:
    """One block with no subagent lane nested under it."""
    return _block(None, b, None)


def lane_open(name: str) -> str:
    """A lane no tool call spawned (rendered after main, then LANE_CLOSE)."""
    return f'<details class="subagent" open><summary>Lane {e(name)}</summary>'


def _lane(doc: Document, lane: Lane, rendered_lane) -> str:
    out = []
    for t in lane.turns:
        st = doc.turns.get((lane.name, t.number))
        out.append(turn_head(lane.name, t.number, st))
        out += [_block(doc, b, rendered_lane) for b in t.blocks]
        foot = turn_foot(lane.name, t.number, st)
        if foot:
            out.append(foot)
    return SEP.join(out)


def title_of(doc: Document) -> str:
    ref = doc.ref
    if ref.title:
        return ref.title
    for lane in doc.lanes.values():
        for t in lane.turns:
            for b in t.blocks:
                if b.kind == "prompt" and b.text.strip():
                    return b.text.strip().split("\n", 1)[0][:100]
    return ref.session_id


def page(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="referrer" content="no-referrer">'
            f"<title>{e(title)}</title><style>{CSS}</style></head><body>\n{body}\n</body></html>\n")


def omissions_html(doc: Document, extra: dict) -> str:
    om = {k: v for k, v in {**doc.report.omissions(), **extra}.items() if v}
    body = ", ".join(f"{e(k)} {e(v)}" for k, v in sorted(om.items())) or "none counted"
    return (f'<p class="omissions"><b>Not an exact copy.</b> This page is a reading of the transcript: '
            f"harness bookkeeping records are left out; what the reading could not take in: {body}.</p>")


_PAGE_HEAD = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
              f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
              '<meta name="referrer" content="no-referrer">')
BOTTOM = "\n</body></html>\n"


def top(doc: Document, title: str, secrets: int = 0) -> str:
    """Everything before the main lane: the page's head, title, session line, omissions."""
    ref = doc.ref
    return (f"{_PAGE_HEAD}<title>{e(clean_text(title))}</title><style>{CSS}</style></head><body>\n{NAV_MARK}\n" + TOP_SEP.join([
        f"<h1>{e(clean_text(title))}</h1>",
        f'<p class="meta">{e(KNOWN.get(ref.provider, ref.provider))} session <code>{e(ref.session_id)}</code>'
        + (f" · project <code>{e(ref.project)}</code>" if ref.project else "")
        + (f" · {e(ref.first_at)} … {e(ref.last_at)}" if ref.first_at else "")
        + (f" · child of <code>{e(ref.parent_session_id)}</code>" if ref.parent_session_id else "")
        + f" · exported {e(datetime.now(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'))}</p>",
        omissions_html(doc, {"copies_not_repeated": doc.counts.get("copies", 0),
                             "binary_attachments_in_records": doc.binary_attachments, "images_shown_inline": doc.images_shown,
                             "secrets_redacted": doc.redacted, "secrets_found_not_redacted": secrets})]
        + ([toc(doc)] if toc(doc) else [])))


def children_part(children: list[tuple[SessionRef, str]]) -> str:
    return "<h2>Subagent sessions</h2><ul>" + "".join(
        f'<li><a href="{e(href)}">{e(c.session_id)}</a> {e(c.title or "")}</li>' for c, href in children) + "</ul>"


def render(doc: Document, children: list[tuple[SessionRef, str]] | None = None, secrets: int = 0) -> str:
    """The whole page as one string (the export streams it instead: export/stream.py; this is
    its oracle in tests)."""
    nested = nested_lanes(doc)
    cache: dict[str, str] = {}

    def rendered_lane(name: str) -> str:
        if name not in cache:
            lane = doc.lanes.get(name)
            cache[name] = _lane(doc, lane, rendered_lane) if lane is not None else ""
        return cache[name]

    parts = [top(doc, title_of(doc), secrets)]
    main = doc.lanes.get("main")
    if main is not None:
        parts.append(_lane(doc, main, rendered_lane))
    for name, lane in doc.lanes.items():
        if name != "main" and name not in nested:
            parts.append(lane_open(name) + rendered_lane(name) + LANE_CLOSE)
    if children:
        parts.append(children_part(children))
    return TOP_SEP.join(parts) + BOTTOM


def index(rows: list[dict]) -> str:
    """rows: {ref, href, title, status, children: [rows]}"""
    def li(r: dict) -> str:
        ref = r["ref"]
        kids = "".join(li(c) for c in r.get("children", []))
        return (f'<li><a href="{e(r["href"])}">{e(clean_text(r["title"]))}</a> <span class="meta">{e(KNOWN.get(ref.provider, ref.provider))} · '
                f"<code>{e(ref.session_id)}</code>{' · ' + e(ref.project) if ref.project else ''}"
                f"{' · ' + e(ref.last_at) if ref.last_at else ''}</span>"
                + (f"<ul>{kids}</ul>" if kids else "") + "</li>")

    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["ref"].provider, []).append(r)
    def count(rs: list[dict]) -> int:
        return sum(1 + count(r.get("children", [])) for r in rs)

    body = ["<h1>Exported sessions</h1>", f'<p class="meta">{count(rows)} sessions exported into this directory</p>']
    for prov, rs in by.items():
        body.append(f"<h2>{e(KNOWN.get(prov, prov))}</h2><ul>{''.join(li(r) for r in rs)}</ul>")
    return page("Exported sessions", "\n".join(body))
