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
"""


def e(s) -> str:
    return html.escape("" if s is None else str(s), quote=True)


def _pre(text: str) -> str:
    return f"<pre>{e(text)}</pre>"


def _imgs(b: Block) -> str:
    return "".join(f'<img class="inline" alt="{e(mt)} image" src="data:{e(mt)};base64,{e(data)}">'
                   for mt, data in b.images)


def _summary_of(b: Block) -> str:
    r = b.record
    first = summary_line(b)
    return f"tool call {e(r.tool_name or '?')}" + (f": <code>{e(first)}</code>" if first else "")


def _block(doc: Document, b: Block, rendered_lane) -> str:
    r = b.record
    loc = f'<span class="label">{e(r.locator)}{" · " + e(", ".join(b.labels)) if b.labels else ""}</span>'
    if b.kind == "prompt":
        return f'<div class="prompt"><b>Prompt</b> {loc}{_pre(b.text)}{_imgs(b)}</div>'
    if b.kind == "reply":
        return f'<div class="reply"><b>Reply</b> {loc}{_pre(b.text)}{_imgs(b)}</div>'
    if b.kind == "user":
        return f'<div class="user"><b>{e(r.role)} ({e(r.native)})</b> {loc}{_pre(b.text)}{_imgs(b)}</div>'
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


def _loc(b: Block) -> str:
    r = b.record
    return f'<span class="label">{e(r.locator)}{" · " + e(", ".join(b.labels)) if b.labels else ""}</span>'


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


def turn_head(lane_name: str, number: int | None) -> str:
    head = f"Turn {number}" if number is not None else "Before the first prompt"
    return f"<h2>{e(head)}{'' if lane_name == 'main' else ' · ' + e(lane_name)}</h2>"


def block(b: Block) -> str:
    """One block with no subagent lane nested under it."""
    return _block(None, b, None)


def lane_open(name: str) -> str:
    """A lane no tool call spawned (rendered after main, then LANE_CLOSE)."""
    return f'<details class="subagent" open><summary>Lane {e(name)}</summary>'


def _lane(doc: Document, lane: Lane, rendered_lane) -> str:
    out = []
    for t in lane.turns:
        out.append(turn_head(lane.name, t.number))
        out += [_block(doc, b, rendered_lane) for b in t.blocks]
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
    return (f"{_PAGE_HEAD}<title>{e(title)}</title><style>{CSS}</style></head><body>\n" + TOP_SEP.join([
        f"<h1>{e(title)}</h1>",
        f'<p class="meta">{e(KNOWN.get(ref.provider, ref.provider))} session <code>{e(ref.session_id)}</code>'
        + (f" · project <code>{e(ref.project)}</code>" if ref.project else "")
        + (f" · {e(ref.first_at)} … {e(ref.last_at)}" if ref.first_at else "")
        + (f" · child of <code>{e(ref.parent_session_id)}</code>" if ref.parent_session_id else "")
        + f" · exported {e(datetime.now(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'))}</p>",
        omissions_html(doc, {"copies_not_repeated": doc.counts.get("copies", 0),
                             "binary_attachments_in_records": doc.binary_attachments, "images_shown_inline": doc.images_shown,
                             "secrets_redacted": doc.redacted, "secrets_found_not_redacted": secrets})]))


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
        return (f'<li><a href="{e(r["href"])}">{e(r["title"])}</a> <span class="meta">{e(KNOWN.get(ref.provider, ref.provider))} · '
                f"<code>{e(ref.session_id)}</code>{' · ' + e(ref.project) if ref.project else ''}"
                f"{' · ' + e(ref.last_at) if ref.last_at else ''}</span>"
                + (f"<ul>{kids}</ul>" if kids else "") + "</li>")

    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["ref"].provider, []).append(r)
    body = ["<h1>Exported sessions</h1>"]
    for prov, rs in by.items():
        body.append(f"<h2>{e(prov)}</h2><ul>{''.join(li(r) for r in rs)}</ul>")
    return page("Exported sessions", "\n".join(body))
