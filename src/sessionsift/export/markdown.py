"""`export markdown`: one Markdown file per session plus an index.

Transcript text is never interpreted as Markdown or HTML: each text goes into a fenced block
whose fence is longer than any run of backticks or tildes in it, and every transcript string that
must sit in a heading, a list or a ``<summary>`` is HTML-escaped with Markdown's punctuation
backslash-escaped. Tool calls and their results are folded in ``<details>`` (rendered by GitHub,
GitLab and most viewers), thinking is marked, subagent lanes are nested under the call that
spawned them, compaction boundaries are shown, images are inline ``data:`` URIs.
"""

from __future__ import annotations

import html
import re
from datetime import datetime, timezone

from ..providers import KNOWN
from ..providers.base import SessionRef
from .document import Block, Document, Lane, nested_lanes, summary_line
from .html import title_of

SCHEMA_VERSION = 1
_MD_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~])")
_RUN = re.compile(r"`+|~+")


def inline(s) -> str:
    """A transcript string on one line of Markdown: no newline, HTML escaped, punctuation escaped."""
    s = "" if s is None else str(s)
    s = " ".join(s.split())
    return _MD_PUNCT.sub(r"\\\1", html.escape(s, quote=True))


def fence(text: str, info: str = "text") -> str:
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
    if b.kind == "user":
        return f"\n**{inline(r.role)} ({inline(r.native)})** {loc}\n{fence(b.text)}{_imgs(b)}"
    if b.kind == "thinking":
        return _details(f"💭 Thinking {html.escape(r.locator)}", fence(b.text))
    if b.kind == "opaque_thinking":
        return f"\n_💭 Thinking (opaque: redacted or encrypted, not readable)_ {loc}\n"
    if b.kind == "compaction":
        return ("\n---\n\n**⟲ Compaction boundary**: earlier context was summarised here " + loc + "\n"
                + (_details("Summary", fence(b.text)) if b.text else "") + "\n---\n")
    if b.kind == "tool":
        first = summary_line(b)
        body = "**Input**\n" + fence(b.text, "json" if b.text.startswith(("{", "[")) else "text")
        if b.result is not None:
            rr = b.result.record
            ex = f" (exit {rr.exit_code})" if rr.exit_code is not None else ""
            err = " ⚠ error" if rr.is_error else ""
            body += _details(f"Result{ex}{err} {html.escape(rr.locator)}", fence(b.result.text) + _imgs(b.result))
        for n in b.lanes:
            body += _details(f"🤖 Subagent {html.escape(n)}", rendered_lane(n), open_=True)
        return _details(f"🔧 {html.escape(r.tool_name or '?')}: <code>{html.escape(first)}</code> "
                        f"{html.escape(r.locator)}", body)
    if b.kind == "result":
        return _details(f"Result {html.escape(r.locator)}", fence(b.text) + _imgs(b))
    if b.kind == "unknown":
        return f"\n_A record of a kind this reader does not know: {inline(r.native)}_ {loc}\n"
    return f"\n_{inline(r.native)}_ {loc}\n" + (fence(b.text) if b.text else "") + _imgs(b)


def _lane(lane: Lane, rendered_lane) -> str:
    out = []
    for t in lane.turns:
        head = f"Turn {t.number}" if t.number is not None else "Before the first prompt"
        out.append(f"\n## {head}{'' if lane.name == 'main' else ' · ' + inline(lane.name)}\n")
        out += [_block(b, rendered_lane) for b in t.blocks]
    return "".join(out)


def render(doc: Document, children: list[tuple[SessionRef, str]] | None = None, secrets: int = 0) -> str:
    ref = doc.ref
    nested = nested_lanes(doc)
    cache: dict[str, str] = {}

    def rendered_lane(name: str) -> str:
        if name not in cache:
            lane = doc.lanes.get(name)
            cache[name] = _lane(lane, rendered_lane) if lane is not None else ""
        return cache[name]

    om = {k: v for k, v in {**doc.report.omissions(), "copies_not_repeated": doc.counts.get("copies", 0),
                            "binary_attachments_in_records": doc.binary_attachments, "images_shown_inline": doc.images_shown,
                            "secrets_redacted": doc.redacted, "secrets_found_not_redacted": secrets}.items() if v}
    parts = [f"# {inline(title_of(doc))}\n",
             f"{inline(KNOWN.get(ref.provider, ref.provider))} session `{ref.session_id}`" if "`" not in ref.session_id else inline(ref.session_id),
             (f" · project {inline(ref.project)}" if ref.project else "")
             + (f" · {inline(ref.first_at)} … {inline(ref.last_at)}" if ref.first_at else "")
             + (f" · child of {inline(ref.parent_session_id)}" if ref.parent_session_id else "")
             + f" · exported {datetime.now(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')}\n",
             "\n> **Not an exact copy.** A reading of the transcript: harness bookkeeping records are left out; "
             "what the reading could not take in: "
             + (", ".join(f"{k} {v}" for k, v in sorted(om.items())) or "none counted") + ".\n"]
    main = doc.lanes.get("main")
    if main is not None:
        parts.append(_lane(main, rendered_lane))
    for name, lane in doc.lanes.items():
        if name != "main" and name not in nested:
            parts.append(_details(f"Lane {html.escape(name)}", rendered_lane(name), open_=True))
    if children:
        parts.append("\n## Subagent sessions\n\n" + "".join(
            f"- [{inline(c.session_id)}]({href}) {inline(c.title or '')}\n" for c, href in children))
    return "".join(parts)


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
