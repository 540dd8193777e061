"""A session's files: the ones it changed (`sessionsift.files.touched.touched` over a selection of
that session: one row per file, its operations counted), and for one file the content recovered
from the session with every gap declared (`sessionsift.files.recover.recover`: a lane replay or a
rebuild from record events), with each step that built it and its patch (the diff view)."""

from __future__ import annotations

import difflib
from urllib.parse import quote

from .layout import e, num, page, session_href, t


def _sel(store, row):
    return store.selector((row.ref.session_id,))


def files_href(provider: str, sid: str, path: str | None = None) -> str:
    base = f"/session/{quote(provider, safe='')}/{quote(sid, safe='')}/files"
    return e(base + (f"?path={quote(path, safe='')}" if path is not None else ""))


def _ops(d: dict) -> str:
    return ", ".join(f"{t(k)} {v}" for k, v in sorted(d.items())) or "—"


def render_list(store, row) -> str:
    from ..files.touched import touched

    ref = row.ref
    res = store.memo(("touched", ref.provider, ref.session_id), lambda: touched(_sel(store, row)))
    rows, unnamed = res.by_file()
    sm = res.summary()
    head = (f'<nav class="pager"><a href="{session_href(ref.provider, ref.session_id)}">← the session</a> '
            f'<a href="/">↑ All sessions</a></nav><h1>Files of <code>{t(ref.session_id)}</code></h1>'
            f'<p class="counts" id="counts"><b>{len(rows):,}</b> files · {sm.touches:,} lane touches · '
            f"{sm.changes:,} recorded changes · {sm.reads:,} reads · {sm.shell_writes:,} shell writes"
            + (f" · {sm.shell_unnamed_writers:,} shell calls that may write files they do not name" if sm.shell_unnamed_writers else "")
            + (f" · {sm.unresolved:,} touches naming no path" if sm.unresolved else "") + "</p>")
    if res.incomplete:
        head += ('<p class="omissions">Some transcripts, commands or providers could not be read: the figures are '
                 "lower bounds.</p>")
    body = ['<table class="grid" id="files"><thead><tr><th>File</th><th>Operations</th><th>Failed</th>'
            "<th>First</th><th>Last</th><th>Lanes</th></tr></thead><tbody>"]
    for fr in rows:
        body.append(f'<tr data-path="{t(fr.path)}"><td><a href="{files_href(ref.provider, ref.session_id, fr.path)}">'
                    f"<code>{t(fr.path)}</code></a></td><td>{_ops(fr.ops)}</td><td>{_ops(fr.failed)}</td>"
                    f"<td>{t((fr.first or '')[:19])}</td><td>{t((fr.last or '')[:19])}</td>"
                    f"<td>{t(', '.join(fr.lanes))}</td></tr>")
    body.append("</tbody></table>")
    return page(f"Files of {ref.session_id}", head + "".join(body), current="")


def _diff(c) -> str:
    """A record change's diff: the diff it recorded, else old and new content compared."""
    ch = c.change
    if ch.diff:
        text = ch.diff
    elif ch.old_content is not None and ch.new_content is not None:
        text = "".join(difflib.unified_diff(ch.old_content.splitlines(True), ch.new_content.splitlines(True),
                                            "before", "after"))
    elif ch.new_content is not None:
        text = "(the whole file, as the record holds it)\n" + ch.new_content
    else:
        return ""
    return _diff_pre(text)


def _diff_pre(text: str) -> str:
    lines = []
    for ln in text.split("\n"):
        cls = "add" if ln.startswith("+") and not ln.startswith("+++") else \
              "del" if ln.startswith("-") and not ln.startswith("---") else "hunk" if ln.startswith("@@") else ""
        lines.append(f'<span class="{cls}">{t(ln)}</span>' if cls else t(ln))
    return f'<pre class="diff">{chr(10).join(lines)}</pre>'


def render_file(store, row, path: str) -> str:
    from ..files.recover import recover
    from ..providers.fileevents import render_text

    ref = row.ref
    res = store.memo(("recover", ref.provider, ref.session_id, path), lambda: recover(_sel(store, row), path))
    head = (f'<nav class="pager"><a href="{files_href(ref.provider, ref.session_id)}">← files of the session</a> '
            f'<a href="{session_href(ref.provider, ref.session_id)}">the session</a></nav>'
            f"<h1><code>{t(path)}</code></h1>")
    parts = [head]
    if res.note:
        parts.append(f'<p class="meta">{t(res.note)}</p>')
    if res.replay is not None:
        rec = res.replay
        parts.append(f'<p class="counts" id="status">status <b>{e(rec.status)}</b> · {rec.boundaries} boundaries · '
                     f"{rec.shell_writes} opaque shell writes · {len(rec.risks_since_anchor)} possible writers since "
                     f"the last anchor · {rec.transcripts} transcripts read"
                     + (f" · {len(rec.unreadable)} unreadable" if rec.unreadable else "") + "</p>")
        rng = rec.ranges()
        if rng:
            parts.append('<table class="grid" id="ranges"><thead><tr><th>Range</th><th>Lines</th><th>Cause</th></tr>'
                         "</thead><tbody>" + "".join(
                             f'<tr class="{e(r["kind"])}"><td>{e(r["kind"])}</td><td>{num(r.get("start"))}–'
                             f'{num(r.get("end"))} ({num(r.get("lines"))})</td><td>{t(r.get("cause") or "")}</td></tr>'
                             for r in rng) + "</tbody></table>")
        text = rec.text()
        known = sum(isinstance(x, str) for x in rec.state or [])
        body = text if text is not None else (render_text(rec) if known and rec.exists is not False else None)
        if rec.exists is False:  # recover writes nothing (exit 8): an empty Content would say the file is empty
            parts.append(f'<p class="meta" id="content-none">The file does not exist after the last step: '
                         f"<b>{e(rec.status)}</b>.</p>")
        elif body is not None:
            parts.append(f'<h2>Content{"" if text is not None else " (known lines; each gap marked ⟪gap⟫)"}</h2>'
                         f'<pre id="content">{t(body)}</pre>')
        else:
            parts.append('<p class="meta" id="content-none">No line of this file is known from the transcripts.</p>')
        parts.append("<h2>Steps</h2>")
        for s in rec.steps:
            parts.append(f'<details class="step"><summary>seg {s.segment} · L{s.line} {t(s.lane)} · {t(s.kind)} '
                         f'{t(s.what)} <span class="label">{t(s.detail[:160])}</span></summary>'
                         + (_diff_pre("".join(s.patch)) if s.patch else "") + "</details>")
    elif res.records is not None:
        rr = res.records
        rb = rr.rebuild
        parts.append(f'<p class="counts" id="status">status <b>{e(rr.status)}</b> · {rr.changes_named} recorded '
                     f"changes · {rr.failed_calls} failed calls · {rr.reads} reads · {len(rr.possible)} possible "
                     "shell writers" + (f" · {t(rb.why)}" if rb.why else "") + "</p>")
        if rr.message:
            parts.append(f'<p class="meta">{t(rr.message)}</p>')
        if rb.content is not None:
            last = rr.last
            as_of = "" if last is None else f" as of {t(last.record.locator)}"
            if rb.status == "stale" and rb.stopped_at is not None:
                # what recover prints as STALE: the content before the change that could not be applied
                as_of += (f'; the change at {t(rb.stopped_at.record.locator)} could not be applied'
                          f'{": " + t(rb.why) if rb.why else ""}, so what the file held after it is not known')
            parts.append(f'<h2 id="content-as-of">Content{as_of}</h2><pre id="content">{t(rb.content)}</pre>')
        else:
            parts.append('<p class="meta" id="content-none">No complete view of this file is recorded: its content '
                         "is not known.</p>")
        parts.append("<h2>Changes</h2>")
        for st in rr.steps:
            c = st.change
            parts.append(f'<details class="step"{" open" if st.used else ""}><summary>{t(c.record.locator)} · '
                         f"{t(c.change.action)} · {t(st.kind)}{' · used' if st.used else ''}"
                         f"{' · stopped here' if st.stopped_here else ''}</summary>{_diff(c)}</details>")
    return page(path, "\n".join(parts), current="")
