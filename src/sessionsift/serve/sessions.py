"""The sessions page: every agent's sessions from `sessionsift.listing.list_sessions` (the
store's snapshot), filtered by agent, project, date and text, sorted, counted; subagents and child
sessions nested under the session that spawned them."""

from __future__ import annotations

from ..listing import sort_key, sort_rows
from .layout import e, href, human_bytes, num, page, session_href, t

SORTS = {"newest": "last activity", "oldest": "last activity, oldest first", "size": "size", "prompts": "prompts",
         "records": "records", "subagents": "subagents", "project": "project", "agent": "agent"}
"""The orders of `list --sort` (sessionsift.listing.SORTS), each made by `listing.sort_rows`: the page
and the command order alike (a size, prompts or records not known come last, never as 0)."""
ALIASES = {"last": "newest"}
PAGE_ROWS = 200


def project_of(r) -> str | None:
    return r.summary.project or r.ref.project


def title_of(r) -> str:
    return r.ref.title or r.summary.first_prompt or r.ref.session_id


def matches(r, agent: str, project: str, since: str, until: str, text: str) -> bool:
    if agent and r.ref.provider != agent:
        return False
    if project and project.lower() not in (project_of(r) or "").lower():
        return False
    day = (r.last_at or "")[:10]
    if since and (not day or day < since):
        return False
    if until and (not day or day > until):
        return False
    if text:
        hay = " ".join(x for x in (r.ref.session_id, r.ref.title, r.summary.first_prompt, r.summary.last_prompt,
                                   r.summary.last_agent_message, project_of(r)) if x).lower()
        if text.lower() not in hay:
            return False
    return True


def render(store, q: dict) -> str:
    snap = store.snapshot()
    agent, project = q.get("agent", ""), q.get("project", "")
    since, until, text = q.get("since", ""), q.get("until", ""), q.get("q", "")
    sort = ALIASES.get(q.get("sort", ""), q.get("sort", ""))
    sort = sort if sort in SORTS else "newest"
    try:
        start = max(0, int(q.get("start", "0")))
    except ValueError:
        start = 0
    rows = snap.listing.rows
    hit = [r for r in rows if matches(r, agent, project, since, until, text)]
    hit_keys = {(r.ref.provider, r.ref.session_id) for r in hit}
    # a child whose parent is shown goes under it; one whose parent is filtered out stands alone
    top = [r for r in hit if r.ref.parent_session_id is None
           or (r.ref.provider, r.ref.parent_session_id) not in hit_keys]
    top = sort_rows(top, sort)
    agents: dict[str, list] = {}
    for r in rows:
        agents.setdefault(r.ref.provider, []).append(r)

    def n_main(rs):
        return sum(1 for r in rs if r.ref.parent_session_id is None)

    facets = []
    for name, rs in sorted(agents.items(), key=lambda kv: store.display(kv[0])):
        cur = ' aria-current="true"' if name == agent else ""
        facets.append(f'<a{cur} href="{href("/", agent=name, project=project, since=since, until=until, q=text, sort=sort)}">'
                      f'{e(store.display(name))}</a> <span class="meta">{n_main(rs)}'
                      f'{" + " + str(len(rs) - n_main(rs)) + " child" if len(rs) > n_main(rs) else ""}</span>')
    form = (f'<form class="filters" method="get" action="/">'
            f'<label>Agent <select name="agent"><option value="">every agent</option>'
            + "".join(f'<option value="{e(n)}"{" selected" if n == agent else ""}>{e(store.display(n))}</option>'
                      for n in sorted(agents))
            + f'</select></label> <label>Project <input name="project" value="{e(project)}" size="18"></label>'
            f' <label>From <input type="date" name="since" value="{e(since)}"></label>'
            f' <label>To <input type="date" name="until" value="{e(until)}"></label>'
            f' <label>Text <input type="search" name="q" value="{e(text)}" size="18"></label>'
            f' <label>Sort <select name="sort">'
            + "".join(f'<option value="{k}"{" selected" if k == sort else ""}>{e(v)}</option>' for k, v in SORTS.items())
            + '</select></label> <button type="submit">Filter</button></form>')
    shown = top[start:start + PAGE_ROWS]
    body_rows = []
    for r in shown:
        body_rows.append(_row(store, r, 0))
        _kids(store, snap, r, hit_keys, body_rows, 1, set())
    n_hit_main = sum(1 for r in hit if r.ref.parent_session_id is None)
    counts = (f'<p class="counts" id="counts"><b>{n_hit_main:,}</b> sessions'
              f' and <b>{len(hit) - n_hit_main:,}</b> child sessions'
              + (f" of {n_main(rows):,} and {len(rows) - n_main(rows):,}" if len(hit) != len(rows) else "")
              + f' · {len(agents)} agents · shown {start + 1 if shown else 0}–{start + len(shown)} of {len(top):,} rows</p>')
    pager = []
    if start > 0:
        pager.append(f'<a rel="prev" href="{href("/", agent=agent, project=project, since=since, until=until, q=text, sort=sort, start=max(0, start - PAGE_ROWS))}">← newer</a>')
    if start + PAGE_ROWS < len(top):
        pager.append(f'<a rel="next" href="{href("/", agent=agent, project=project, since=since, until=until, q=text, sort=sort, start=start + PAGE_ROWS)}">more →</a>')
    probs = snap.listing.problems
    problems = ("" if not probs else
                f'<details class="omissions"><summary>{len(probs)} problems reading the data (the counts are lower bounds)'
                f'</summary><ul>' + "".join(f"<li><code>{t(p.path)}</code>: {t(p.why)}</li>" for p in probs[:200])
                + "</ul></details>")
    table = ('<table class="sessions" id="sessions"><thead><tr><th>Session</th><th>Agent</th><th>Project</th>'
             '<th>Last activity</th><th class="n">Prompts</th><th class="n">Records</th><th class="n">Subagents</th>'
             '<th class="n">Size</th></tr></thead><tbody>' + "".join(body_rows) + "</tbody></table>")
    facet = f'<p class="facets">{" · ".join(facets)}</p>'
    return page("Sessions", f"<h1>Sessions</h1>{facet}{form}{counts}{problems}{table}"
                f'<p class="pager">{" ".join(pager)}</p>', current="/")


def _kids(store, snap, r, hit_keys, out, depth, seen) -> None:
    key = (r.ref.provider, r.ref.session_id)
    if key in seen or depth > 8:
        return
    seen.add(key)
    for c in sorted(snap.children.get(key, []), key=lambda c: sort_key(c.ref.first_at or c.last_at)):
        if (c.ref.provider, c.ref.session_id) in hit_keys:
            out.append(_row(store, c, depth))
            _kids(store, snap, c, hit_keys, out, depth + 1, seen)


def _row(store, r, depth: int) -> str:
    ref, sm = r.ref, r.summary
    kind = ""
    if ref.helper is not None:
        kind = f'<span class="badge">{t(ref.helper)}</span> '
    elif ref.is_subagent:
        kind = '<span class="badge">subagent</span> '
    title = title_of(r)
    return (f'<tr class="depth-{min(depth, 4)}" data-provider="{t(ref.provider)}" data-session="{t(ref.session_id)}">'
            f'<td class="title">{kind}<a href="{session_href(ref.provider, ref.session_id)}">{t(title[:140])}</a>'
            f'<div class="meta"><code>{t(ref.session_id)}</code></div></td>'
            f"<td>{e(store.display(ref.provider))}</td><td><code>{t(project_of(r) or '')}</code></td>"
            f"<td>{t((r.last_at or '')[:19].replace('T', ' '))}</td><td class=n>{num(sm.prompts)}</td>"
            f"<td class=n>{num(sm.records)}</td><td class=n>{num(r.subagents)}</td>"
            f"<td class=n>{human_bytes(sm.bytes_total if sm.bytes_total is not None else ref.size)}</td></tr>")
