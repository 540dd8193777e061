"""Read-only views of `clean scan` and `worktrees scan`: the library's reports
(`sessionsift.clean.scan.scan` over the selection's survey, `sessionsift.worktrees.scan.scan`
over the harness roots the command line named), rendered; nothing is decided here and nothing
is acted on (the pages have no form that captures, deletes, protects or sweeps: those stay the
CLI's, dry-run by default). Each report is made once per generation and query (store.memo)."""

from __future__ import annotations

from .layout import e, href, human_bytes, num, page, session_href, t

WORDS = {True: "proven", False: "not proven"}
PAGE_ROWS = 200
"""Rows of the clean page a page (the tally covers every candidate)."""


def _err(title: str, current: str, msg: str) -> str:
    return page(title, f'<h1>{e(title)}</h1><p class="problem" id="error">{t(msg)}</p>', current=current)


# -- clean scan ---------------------------------------------------------------------------------

def clean_report(store, older_than: str, waive_kept: bool):
    from ..clean.scan import scan

    snap = store.snapshot()
    return store.memo(("clean", older_than, waive_kept),
                      lambda: scan(snap.selection.survey, older_than=older_than, waive_kept=waive_kept))


def _gate(k: str, g) -> str:
    word = "waived" if g.waived else WORDS[bool(g.proven)]
    ev = "".join(f"<li>{t(', '.join(f'{a}={b}' for a, b in x.items()))}</li>" for x in g.evidence[:8])
    return (f'<details class="gate {e(k)}" data-proven="{int(bool(g.proven))}"><summary><b>{e(k)}</b>: '
            f'<span class="word">{e(word)}</span> ({t(g.reason)})</summary><div class="meta">{t(g.detail)}</div>'
            f"<ul>{ev}</ul></details>")


def render_clean(store, q: dict) -> str:
    from ..errors import SessionsiftError

    older = q.get("older_than") or "30d"
    waive = q.get("waive_kept") in ("1", "true", "yes")
    try:
        rep = clean_report(store, older, waive)
    except SessionsiftError as exc:
        return _err("Clean scan", "/clean", str(exc))
    snap = store.snapshot()
    try:
        start = max(0, int(q.get("start", "0")))
    except ValueError:
        start = 0
    shown = rep.verdicts[start:start + PAGE_ROWS]
    rows = []
    for v in shown:
        who = (f'<a href="{session_href(v.provider, v.session_id)}">{t(v.session_id)}</a>'
               if (v.provider, v.session_id) in snap.by_key else t(v.session_id))
        state = "eligible" if v.eligible else f"blocked: {v.blocked_by}"
        size = human_bytes(v.size) if v.size is not None else num(None)
        note = f'<div class="meta size-note">{t(v.size_note)}</div>' if v.size_note else ""
        ret = ""
        if v.retention is not None and v.retention.deletion_at is not None:
            ret = ("the client deletes it at its next start" if v.retention.due
                   else f"the client deletes it after {v.retention.deletion_at:%Y-%m-%d}")
        probs = "".join(f'<div class="problem">{t(p)}</div>' for p in v.problems)
        rows.append(f'<tr data-provider="{e(v.provider)}" data-session="{t(v.session_id)}">'
                    f'<td class="who">{who}<div class="meta">{t(v.display)}'
                    f'{" · child of " + t(v.parent_session_id) if v.parent_session_id else ""}</div></td>'
                    f'<td class="project">{t(v.project or "")}</td>'
                    f'<td class="last-at">{t((v.last_at or "")[:19].replace("T", " "))}'
                    f'<div class="meta">{t(v.age_source)}</div></td>'
                    f'<td class="n size" data-bytes="{"" if v.size is None else v.size}">{size}{note}</td>'
                    f'<td class="gates">{"".join(_gate(k, v.gates[k]) for k in ("age", "activity", "kept"))}</td>'
                    f'<td class="state" data-eligible="{int(v.eligible)}">{e(state)}'
                    f'<div class="meta">{t(ret)}</div>{probs}</td></tr>')
    tl = rep.tally()
    b = tl["blocked_by"]
    figures = (f'<p class="counts" id="clean-tally" data-candidates="{tl["candidates"]}" '
               f'data-eligible="{tl["eligible"]}" data-blocked="{tl["blocked"]}" data-bytes-held="{tl["bytes_held"]}">'
               f'{tl["candidates"]} candidates ({tl["sessions"]} sessions + {tl["child_sessions"]} child sessions) · '
               f'{tl["eligible"]} eligible · {tl["blocked"]} blocked ('
               + ", ".join(f"{e(k)} {n}" for k, n in b.items()) +
               f') · {human_bytes(tl["bytes_held"])} held by {tl["sized"]} candidates'
               + (f"; {tl['size_unknown']} are rows in shared databases (size not attributable)"
                  if tl["size_unknown"] else "") + "</p>")
    ret = "".join(
        f'<li>{t(rr.root)}: ' + (f"Claude Code will not sweep ({t(rr.period.skipped)})" if rr.period.days is None else
                                 f"cleanupPeriodDays {rr.period.days} ({t(rr.period.source)}); {rr.due} past it "
                                 f"(deleted at the client's next start), {rr.soon} more within 7 days") + "</li>"
        for rr in rep.retention)
    probs = "".join(f'<li class="problem">{t(p)}: {t(w)}</li>' for p, w in rep.problems)
    par = {"older_than": q.get("older_than"), "waive_kept": "1" if waive else None}
    pager = []
    if start > 0:
        pager.append(f'<a rel="prev" href="{href("/clean", **par, start=max(0, start - PAGE_ROWS))}">← previous</a>')
    if start + PAGE_ROWS < len(rep.verdicts):
        pager.append(f'<a rel="next" href="{href("/clean", **par, start=start + PAGE_ROWS)}">more →</a>')
    form = (f'<form method="get" action="/clean" class="filters"><label>older than <input name="older_than" '
            f'value="{t(older)}" size="8"></label> <label><input type="checkbox" name="waive_kept" value="1"'
            f'{" checked" if waive else ""}> waive the kept gate</label> <button>scan</button></form>')
    body = (f"<h1>Clean scan</h1>{form}"
            f'<p class="meta">read only: this page shows what <code>sessionsift clean scan</code> shows and '
            f"changes nothing; capture, delete and protect stay the CLI's (dry run unless --apply). "
            f"Scanned at {e(rep.now.strftime('%Y-%m-%dT%H:%M:%SZ'))} (processes as they were then), cutoff "
            f"{e(rep.cutoff.strftime('%Y-%m-%dT%H:%M:%SZ'))}, archive {t(rep.archive.root)}.</p>"
            f"{figures}" + (f"<h2>Retention</h2><ul>{ret}</ul>" if ret else "")
            + (f"<h2>Problems</h2><ul>{probs}</ul>" if probs else "")
            + f'<p class="meta" id="clean-shown">shown {start + 1 if shown else 0}–{start + len(shown)} of '
              f'{len(rep.verdicts):,} candidates {" ".join(pager)}</p>'
            + '<table class="grid" id="clean"><thead><tr><th>Session</th><th>Project</th><th>Last activity</th>'
              '<th class="n">Size</th><th>Gates</th><th>State</th></tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>")
    return page("Clean scan", body, current="/clean")


# -- worktrees scan -----------------------------------------------------------------------------

def worktrees_report(store, repos: tuple[str, ...]):
    from ..worktrees.scan import scan

    claude, codex, home = store.worktree_roots
    return store.memo(("worktrees", repos), lambda: scan(list(repos), claude, codex, home=home))


def render_worktrees(store, repos: tuple[str, ...]) -> str:
    from ..errors import SessionsiftError
    from ..worktrees import decide as D

    try:
        rep = worktrees_report(store, repos)
    except SessionsiftError as exc:
        return _err("Worktrees scan", "/worktrees", str(exc))
    order = {c: i for i, c in enumerate(D.CATEGORIES)}
    rows = []
    for w in sorted(rep.worktrees, key=lambda w: (order[w.category], w.repo, w.path)):
        st = w.status
        dirty = num(None) if st.dirty is None else ("dirty" if st.dirty else "clean")
        ev = "".join(f'<li data-holds="{t(x["holds"])}"><b>{t(x["check"])}</b>: {t(x["holds"])} '
                     f'<span class="meta">{t(x["detail"])}</span></li>' for x in D.evidence(w))
        sig = "".join(f"<li>{t(s.signal)} ({t(s.source)}): "
                      f"{'unknown' if s.positive is None else 'yes' if s.positive else 'no'} — {t(s.detail)}</li>"
                      for s in w.signals)
        sess = ", ".join(f"{t(k)} ({t(v)})" for k, v in w.session_ids.items())
        rows.append(f'<tr data-path="{t(w.path)}" data-category="{e(w.category)}">'
                    f'<td class="path">{t(w.path)}<div class="meta">{t(w.repo)}</div></td>'
                    f'<td class="branch">{t(w.branch or ("detached" if w.detached else ""))}'
                    f'<div class="meta">{t((w.head or "")[:12])}</div></td>'
                    f'<td class="agent">{t(w.agent or "")}<div class="meta">{sess}</div></td>'
                    f'<td class="n size">{human_bytes(w.size.bytes)}</td>'
                    f'<td class="dirty">{dirty}</td>'
                    f'<td class="n ahead">{num(w.merge.ahead)}</td><td class="n behind">{num(w.merge.behind)}</td>'
                    f'<td class="category"><b>{e(w.category)}</b><div class="meta">{t(w.reason)}</div>'
                    f'<details><summary>evidence</summary><ul>{ev}{sig}</ul></details></td></tr>')
    repo_lines = "".join(
        f"<li>{t(r.path)} — main line: "
        + (f"{t(r.main_line.ref)} @ {e(r.main_line.sha[:12])} ({t(r.main_line.source)})" if r.main_line.known
           else t(r.main_line.source)) + (f' <span class="problem">{t(r.error)}</span>' if r.error else "") + "</li>"
        for r in rep.repos)
    listings = "".join(f"<li>{e(x.harness)}: {t(x.state)}" + (f" at {t(x.path)} ({x.entries} entries, {x.live} live)"
                                                             if x.looked else "") + "</li>" for x in rep.listings)
    probs = "".join(f'<li class="problem">{t(p)}: {t(w)}</li>' for p, w in rep.problems)
    stop = rep.stop_reason
    none = ("" if rep.repos or rep.worktrees else
            '<p id="none">no repository in scope' + ("" if rep.scope.startswith("named") else
                                                     ": no client record names one; name one above") + "</p>")
    form = ('<form method="get" action="/worktrees" class="filters"><label>repository <input name="repo" '
            f'value="{t(repos[0] if repos else "")}" size="50"></label> <button>scan</button></form>')
    body = (f"<h1>Worktrees scan</h1>{form}"
            '<p class="meta">read only: this page shows what <code>sessionsift worktrees scan</code> shows and '
            "changes nothing (git runs with optional locks off); removing stays the CLI's "
            "<code>worktrees sweep</code>, dry run unless --apply.</p>"
            f'<p class="counts" id="wt-tally">{t(D.tally_line(rep.tally()))}'
            + (f" · a sweep would stop: {t(stop)}" if stop else "") + "</p>"
            + (f"<h2>Repositories</h2><ul>{repo_lines}</ul>" if repo_lines else "") + none
            + f"<h2>Harness listings</h2><ul>{listings}</ul>"
            + (f"<h2>Problems</h2><ul>{probs}</ul>" if probs else "")
            + '<table class="grid" id="worktrees"><thead><tr><th>Worktree</th><th>Branch</th><th>Agent</th>'
              '<th class="n">Size</th><th>Status</th><th class="n">Ahead</th><th class="n">Behind</th>'
              "<th>Decision</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    return page("Worktrees scan", body, current="/worktrees")

