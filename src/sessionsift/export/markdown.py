"""`export markdown`: one Markdown file per session plus an index.

Transcript text is never interpreted as Markdown or HTML: each text goes into a fenced block
whose fence is longer than any run of backticks or tildes in it, and every transcript string that
must sit in a heading, a list or a ``<summary>`` is HTML-escaped with Markdown's punctuation
backslash-escaped. As on the HTML page (html.clean_text), terminal escape sequences are removed
and any other control character is written as ``\\uXXXX``: the file holds no ESC for a terminal
that prints it or a box for a viewer that renders it. Tool calls and their results are folded in
``<details>`` (rendered by GitHub, GitLab and most viewers), thinking is marked, subagent lanes
are nested under the call that spawned them, compaction boundaries are shown, images are inline
``data:`` URIs.
"""

from __future__ import annotations

import html
import re
from datetime import datetime, timezone

from ..providers import KNOWN
from ..providers.base import SessionRef
from .document import Block, Document, Lane, nested_lanes, summary_line
from .html import USER_HEADS, clean_text, title_of

SCHEMA_VERSION = 1
_MD_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~])")
_RUN = re.compile(r"`+|~+")


def inline(s) -> str:
    """A transcript string on one line of Markdown: no newline, HTML escaped, punctuation escaped."""
    s = "" if s is None else clean_text(str(s))
    s = " ".join(s.split())
    return _MD_PUNCT.sub(r"\\\1", html.escape(s, quote=True))


def fence(text: str, info: str = "text") -> str:
    text = clean_text(text)
    longest = max((len(m.group(0)) for m in _RUN.finditer(text)), default=0)
    f = "`" * max(3, longest + 1)
    return f"\n{f}{info}\n{text}\n{f}\n"


def _imgs(b: Block) -> str:
    return "".join(f'\n<img alt="image" src="data:{html.escape(mt)};base64,{html.escape(d)}">\n' for mt, d in b.images)


def _details(summary: str, body: str, open_: bool = False) -> str:
    return f"\n<details{' open' if open_ else ''}><summary>{summary}</summary>\n{body}\n</details>\n"


def _block(b: Block, rendered_lane) -> str:
    r = b.record
    loc = f"`{r.locator}`" if "`" not in r.locator else inline(r.locator)
    if b.kind == "prompt":
        return f"\n**Prompt** {loc}\n{fence(b.text)}{_imgs(b)}"
    if b.kind == "reply":
        return f"\n**Reply** {loc}\n{fence(b.text)}{_imgs(b)}"
    if b.kind == "user":  # what it is, not its wrapper's type (that is small, beside the locator)
        head = USER_HEADS.get(r.kind) or (r.role or "user").capitalize()
        return f"\n**{inline(head)}** {loc} · _{inline(r.native)}_\n{fence(b.text)}{_imgs(b)}"
    if b.kind == "thinking":
        return _details(f"💭 Thinking {html.escape(r.locator)}", fence(b.text))
    if b.kind == "opaque_thinking":
        return f"\n_💭 Thinking (opaque: redacted or encrypted, not readable)_ {loc}\n"
    if b.kind == "compaction":
        return ("\n---\n\n**⟲ Compaction boundary**: earlier context was summarised here " + loc + "\n"
                + (_details("Summary", fence(b.text)) if b.text else "") + "\n---\n")
    if b.kind == "tool":
        return (tool_open(b) + (result_part(b.result) if b.result is not None else "") + TOOL_MID
                + "".join(sub_open(n) + rendered_lane(n) + SUB_CLOSE for n in b.lanes) + TOOL_CLOSE)
    if b.kind == "result":
        return _details(f"Result {html.escape(r.locator)}", fence(b.text) + _imgs(b))
    if b.kind == "unknown":
        return f"\n_A record of a kind this reader does not know: {inline(r.native)}_ {loc}\n"
    return f"\n_{inline(r.native)}_ {loc}\n" + (fence(b.text) if b.text else "") + _imgs(b)


SEP = ""
"""Between the items (turn headings, blocks) of one lane."""
TOP_SEP = ""
"""Between the document's parts (the top, the main lane, each other lane, the children)."""
TOOL_MID = ""
SUB_CLOSE = "\n</details>\n"
TOOL_CLOSE = "\n</details>\n"
LANE_CLOSE = "\n</details>\n"


def tool_open(b: Block) -> str:
    """A tool call up to where its result goes (then TOOL_MID, its subagent lanes, TOOL_CLOSE)."""
    r = b.record
    return (f"\n<details><summary>🔧 {html.escape(clean_text(r.tool_name or '?'))}: "
            f"<code>{html.escape(clean_text(summary_line(b)))}</code> "
            f"{html.escape(r.locator)}</summary>\n" + "**Input**\n" + fence(b.text, "json" if b.text.startswith(("{", "[")) else "text"))


def result_part(res: Block) -> str:
    """A tool call's result, folded into the call."""
    rr = res.record
    ex = f" (exit {rr.exit_code})" if rr.exit_code is not None else ""
    err = " ⚠ error" if rr.is_error else ""
    return _details(f"Result{ex}{err} {html.escape(rr.locator)}", fence(res.text) + _imgs(res))


def sub_open(name: str) -> str:
    return f"\n<details open><summary>🤖 Subagent {html.escape(name)}</summary>\n"


def turn_foot(lane_name: str, number: int | None, stats=None) -> str:
    """Nothing after a turn in Markdown (the HTML page says what each turn took)."""
    return ""


def turn_head(lane_name: str, number: int | None, stats=None) -> str:
    head = f"Turn {number}" if number is not None else "Before the first prompt"
    return f"\n## {head}{'' if lane_name == 'main' else ' · ' + inline(lane_name)}\n"


def block(b: Block) -> str:
    """One block with no subagent lane nested under it."""
    return _block(b, None)


def lane_open(name: str) -> str:
    """A lane no tool call spawned (rendered after main, then LANE_CLOSE)."""
    return f"\n<details open><summary>Lane {html.escape(name)}</summary>\n"


def top(doc: Document, title: str, secrets: int = 0) -> str:
    """Everything before the main lane: title, session line, what the reading could not take in."""
    ref = doc.ref
    om = {k: v for k, v in {**doc.report.omissions(), "copies_not_repeated": doc.counts.get("copies", 0),
                            "binary_attachments_in_records": doc.binary_attachments, "images_shown_inline": doc.images_shown,
                            "secrets_redacted": doc.redacted, "secrets_found_not_redacted": secrets}.items() if v}
    return "".join([f"# {inline(title)}\n",
                    f"{inline(KNOWN.get(ref.provider, ref.provider))} session `{ref.session_id}`" if "`" not in ref.session_id else inline(ref.session_id),
                    (f" · project {inline(ref.project)}" if ref.project else "")
                    + (f" · {inline(ref.first_at)} … {inline(ref.last_at)}" if ref.first_at else "")
                    + (f" · child of {inline(ref.parent_session_id)}" if ref.parent_session_id else "")
                    + f" · exported {datetime.now(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')}\n",
                    "\n> **Not an exact copy.** A reading of the transcript: harness bookkeeping records are left out; "
                    "what the reading could not take in: "
                    + (", ".join(f"{k} {v}" for k, v in sorted(om.items())) or "none counted") + ".\n"])


def children_part(children: list[tuple[SessionRef, str]]) -> str:
    return "\n## Subagent sessions\n\n" + "".join(
        f"- [{inline(c.session_id)}]({href}) {inline(c.title or '')}\n" for c, href in children)


BOTTOM = ""


def _lane(lane: Lane, rendered_lane) -> str:
    out = []
    for t in lane.turns:
        out.append(turn_head(lane.name, t.number))
        out += [_block(b, rendered_lane) for b in t.blocks]
    return SEP.join(out)


def render(doc: Document, children: list[tuple[SessionRef, str]] | None = None, secrets: int = 0) -> str:
    """The whole document as one string (the export streams it instead: export/stream.py; this
    is its oracle in tests)."""
    nested = nested_lanes(doc)
    cache: dict[str, str] = {}

    def rendered_lane(name: str) -> str:
        if name not in cache:
            lane = doc.lanes.get(name)
            cache[name] = _lane(lane, rendered_lane) if lane is not None else ""
        return cache[name]

    parts = [top(doc, title_of(doc), secrets)]
    main = doc.lanes.get("main")
    if main is not None:
        parts.append(_lane(main, rendered_lane))
    for name, lane in doc.lanes.items():
        if name != "main" and name not in nested:
            parts.append(lane_open(name) + rendered_lane(name) + LANE_CLOSE)
    if children:
        parts.append(children_part(children))
    return TOP_SEP.join(parts) + BOTTOM


def index(rows: list[dict]) -> str:
    def li(r: dict, depth: int) -> str:
        ref = r["ref"]
        s = ("  " * depth + f"- [{inline(r['title'])}]({r['href']}) {inline(KNOWN.get(ref.provider, ref.provider))} `{ref.session_id}`"
             + (f" {inline(ref.project)}" if ref.project else "") + "\n")
        return s + "".join(li(c, depth + 1) for c in r.get("children", []))

    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["ref"].provider, []).append(r)
    return "# Exported sessions\n" + "".join(f"\n## {inline(p)}\n\n" + "".join(li(r, 0) for r in rs)
                                              for p, rs in by.items())
