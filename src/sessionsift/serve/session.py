"""A session's page: the transcript turn by turn from `sessionsift.show.session.session_view`,
drawn with the export HTML renderer's pieces (export/html.py: its Markdown rendering -- markdown-it-py,
raw HTML off, links shown as text --, its escaping, its turn anchors), tool calls folded with the
result they got, subagent lanes and child sessions after the main lane, and a table of contents."""

from __future__ import annotations

from ..export import html as X
from ..export.document import Block, summary_line, tool_input_text
from .layout import e, md, num, page, session_href, t


def find(store, provider: str, session_id: str):
    return store.snapshot().by_key.get((provider, session_id))


def view(store, row):
    """The session's view with its child sessions (the listing's rows whose parent it is)."""
    from ..show.session import session_view

    snap = store.snapshot()
    prov = store.provider(row.ref.provider)
    kids = [(store.provider(c.ref.provider), c.ref) for c in snap.children.get((row.ref.provider, row.ref.session_id), [])
            if store.provider(c.ref.provider) is not None]
    return session_view(prov, row.ref, kids, harness=True)


def _pre(text) -> str:
    return f"<pre>{t(text)}</pre>"


def record_anchor(lane: str, line: int | None, locator: str | None) -> str:
    """The id of the first item drawn from a record's line (or, where the reader gives no line,
    from its locator): what a search hit links to."""
    where = str(line) if line is not None else (locator or "")
    return "r-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in f"{lane}-{where}")


def _label(r, lane: str, ids: set, prefix: str) -> str:
    """A record's locator, carrying its anchor when it is the first drawn from its line."""
    rid = prefix + record_anchor(lane, r.line, r.locator)
    idattr = ""
    if rid not in ids:
        ids.add(rid)
        idattr = f' id="{e(rid)}"'
    return f'<span class="label"{idattr}>{e(r.locator)}</span>'


def _item(it, lane: str, ids: set, prefix: str = "") -> str:
    r = it.record
    loc = _label(r, lane, ids, prefix)
    if it.kind == "prompt":
        return f'<div class="prompt item" data-locator="{t(r.locator)}"><b>Prompt</b> {loc}{_pre(r.text)}</div>'
    if it.kind == "message":
        if r.role == "user":
            return f'<div class="user item" data-locator="{t(r.locator)}"><b>User message</b> {loc}{_pre(r.text)}</div>'
        return f'<div class="reply item" data-locator="{t(r.locator)}"><b>Reply</b> {loc}{md(r.text)}</div>'
    if it.kind == "meta":
        return (f'<details class="harness item"><summary>Harness record <span class="label">{t(r.native)}</span> '
                f"{loc}</summary>{_pre(r.text) if r.text else ''}</details>")
    if it.kind == "reasoning":
        if not r.text:
            return f'<p class="meta item">Thinking (not readable: redacted or encrypted) {loc}</p>'
        return f'<details class="thinking item"><summary>Thinking {loc}</summary>{_pre(r.text)}</details>'
    # a tool call, folded, with the result it got
    res = it.result
    if res is r:  # a result whose call is not on disk
        return (f'<details class="result item"><summary>Result (its call is not on disk) {loc}</summary>'
                f"{_pre(res.text)}</details>")
    b = Block("tool", r, text=tool_input_text(r))
    first = summary_line(b)
    head = f"tool call {e(r.tool_name or '?')}" + (f": <code>{t(first)}</code>" if first else "")
    if res is None:
        got = '<p class="meta">No result on disk.</p>'
        tag = " unreturned"
    else:
        err = res.is_error or res.exit_code not in (None, 0)
        tag = " error" if err else ""
        ex = f" (exit {e(res.exit_code)})" if res.exit_code is not None else ""
        got = (f'<details class="result{tag}"><summary>Result{ex} {num(it.result_chars)} chars '
               f'{_label(res, lane, ids, prefix)}</summary>{_pre(res.text)}</details>')
    return (f'<details class="tool item{tag}" data-locator="{t(r.locator)}"><summary>{head} {loc}</summary>'
            f"<b>Input</b>{_pre(b.text)}{got}</details>")


def _tokens(tk: dict) -> str:
    if not tk:
        return "tokens not recorded"
    return ", ".join(f"{k} {v:,}" for k, v in tk.items())


def lane_html(lv, prefix: str = "", ids: set | None = None) -> str:
    """A lane's turns; `prefix` keeps a child session's anchors apart from the session's own."""
    out = []
    ids = set() if ids is None else ids
    for turn in lv.turns:
        anchor = prefix + X.anchor(lv.lane, turn.number)
        head = f"Turn {turn.number}" if turn.number is not None else "Before the first prompt"
        when = (turn.first_at or "")[:19].replace("T", " ")
        out.append(f'<section class="turn" id="{e(anchor)}" data-lane="{t(lv.lane)}" data-turn="{e(turn.number)}">'
                   f'<h2><a href="#{e(anchor)}">{e(head)}</a>{"" if lv.lane == "main" else " · " + t(lv.lane)}'
                   f' <span class="when">{t(when)}</span></h2>')
        out.extend(_item(it, lv.lane, ids, prefix) for it in turn.items)
        extra = []
        if turn.meta:
            extra.append(f"{turn.meta} harness records (folded)")
        if turn.unknown:
            extra.append(f"{turn.unknown} records of kinds the reader does not know")
        if turn.copies:
            extra.append(f"{turn.copies} copies of earlier records shown once")
        out.append(f'<p class="turnfoot">{e(head)}: {e(_tokens(turn.tokens))}'
                   + (" · " + e("; ".join(extra)) if extra else "") + "</p></section>")
    return "\n".join(out)


def toc(v) -> str:
    items = []
    for lv in v.lanes:
        for turn in lv.turns:
            head = f"Turn {turn.number}" if turn.number is not None else "Before the first prompt"
            p = next((it.record.text for it in turn.items if it.kind == "prompt" and it.record.text), None)
            lane = "" if lv.lane == "main" else f" · {t(lv.lane)}"
            items.append(f'<li><a href="#{e(X.anchor(lv.lane, turn.number))}">{e(head)}{lane}</a>'
                         + (f" — {t(p.strip().splitlines()[0][:100])}" if p and p.strip() else "") + "</li>")
    return (f'<details class="toc" id="turns" open><summary>Turns ({len(items)})</summary><ol>{"".join(items)}</ol>'
            "</details>") if items else ""


def render(store, row) -> str:
    v = view(store, row)
    ref = row.ref
    title = ref.title or row.summary.first_prompt or ref.session_id
    om = {k: val for k, val in v.report.omissions().items() if val} if hasattr(v.report, "omissions") else {}
    parent = ""
    if ref.parent_session_id:
        parent = (f' · child of <a href="{session_href(ref.provider, ref.parent_session_id)}">'
                  f"<code>{t(ref.parent_session_id)}</code></a>")
    meta = (f'<p class="meta">{e(store.display(ref.provider))} session <code>{t(ref.session_id)}</code>'
            + (f" · project <code>{t(row.summary.project or ref.project)}</code>" if (row.summary.project or ref.project) else "")
            + (f" · {t(row.summary.first_at)} … {t(row.last_at)}" if row.summary.first_at else "")
            + parent + "</p>")
    omit = ('<p class="omissions"><b>Not an exact copy.</b> A reading of the transcript (harness bookkeeping '
            "folded); what the reading could not take in: "
            + (", ".join(f"{e(k)} {e(val)}" for k, val in sorted(om.items())) or "none counted") + ".</p>")
    nav = (f'<nav class="pager" aria-label="session"><a href="/">↑ All sessions</a>'
           + (' <a href="#turns">Turns</a>' if any(lv.turns for lv in v.lanes) else "")
           + "".join(f' <a href="#lane-{i}">Lane {t(lv.lane)}</a>' for i, lv in enumerate(v.lanes) if lv.lane != "main")
           + (' <a href="#children">Child sessions</a>' if v.children else "")
           + f' <a href="{session_href(ref.provider, ref.session_id)}/files">Files changed</a></nav>')
    parts = [nav, f"<h1>{t(title[:200])}</h1>", meta, omit, toc(v)]
    if not any(lv.turns for lv in v.lanes) and not v.children:
        parts.append(f'<p class="meta" id="empty">No record of this session could be shown: the reader read '
                     f"{v.report.records:,} records in {v.report.files:,} files.</p>")
    for i, lv in enumerate(v.lanes):
        if lv.lane == "main":
            parts.append(f'<div class="lane" id="lane-{i}">{lane_html(lv)}</div>')
        else:
            parts.append(f'<details class="subagent lane" id="lane-{i}" open><summary>Lane {t(lv.lane)} '
                         f'({lv.records} records)</summary>{lane_html(lv)}</details>')
    if v.children:
        parts.append('<h2 id="children">Child sessions</h2>')
        for ci, c in enumerate(v.children):
            parts.append(f'<details class="subagent child" open><summary>Session <a href="'
                         f'{session_href(c.ref.provider, c.ref.session_id)}"><code>{t(c.ref.session_id)}</code></a> '
                         f'{t(c.ref.title or "")}</summary>'
                         + "".join(lane_html(lv, f"c{ci}-") for lv in c.lanes) + "</details>")
    return page(title[:100], "\n".join(parts), current="")
