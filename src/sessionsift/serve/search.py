"""The search page: the CLI's query language (`search PATTERN` with -i, -F, -t/-T kinds, no
subagents; cli/search_run.py SearchArgs is the form's model) run by the library's one search
(`sessionsift.search.search` over the selection, as the command runs it), the hits grouped into
the turns they sit in (the turn's prompt, then each matching record, the match marked), each
linked into its session.

The form takes the options of the command (cli/search_run.py SearchArgs) and builds the same
library Query from them, so a query means here what it means on the command line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .layout import e, page, session_href, t
from .session import record_anchor

MAX_TURNS = 100
CLIP = 4000
KEEP = 8
"""Search answers kept (per generation): a repeated query answers at once, memory stays bounded."""


@dataclass
class Group:
    provider: str
    session_id: str
    lane: str
    """The lane as the session page names it (``main``, or a lane inside the session)."""
    turn: int | None
    opener: str | None
    hits: list = field(default_factory=list)
    """(line or None, locator or None, kind, text, span)"""


@dataclass
class Result:
    groups: list[Group]
    hits: int
    sessions_with_hits: int
    error: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Args:
    """The search form: the options of `sessionsift search` it takes (cli/search_run.py SearchArgs)."""

    pattern: str
    ignore_case: bool = False
    fixed: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    no_subagents: bool = False


def args_of(q: dict) -> Args:
    def kinds(v: str) -> tuple[str, ...]:
        return tuple(x.strip() for x in v.split(",") if x.strip())

    return Args(q.get("q", ""), ignore_case=q.get("i") == "1", fixed=q.get("F") == "1", include=kinds(q.get("t", "")),
                exclude=kinds(q.get("T", "")), no_subagents=q.get("nosub") == "1")


def run(store, a: Args) -> Result:
    """The hits of one query: the rows `sessionsift search PATTERN --format json` prints (the same
    Query over the same selection, through the one search: sessionsift.search.search)."""
    from ..errors import UsageError
    from ..providers import deep_name
    from ..search import Query, search
    from ..search.records import SessionOutcome

    query = Query(patterns=(a.pattern,), ignore_case=a.ignore_case, fixed=a.fixed, include=tuple(a.include),
                  exclude=tuple(a.exclude), subagents=not a.no_subagents, context=True)
    sel = store.snapshot().selection
    if a.no_subagents:
        sel = sel.main_only()
    try:
        outcomes = list(search(query, sel).outcomes(plain=False))
    except (UsageError, ValueError) as exc:
        return Result([], 0, 0, error=str(exc))
    groups: dict[tuple, Group] = {}
    n = 0
    with_hits: set[tuple[str, str]] = set()
    for unit, o in outcomes:
        if isinstance(o, SessionOutcome):
            for sh in o.hits:
                n += 1
                r = sh.record
                with_hits.add((o.ref.provider, o.ref.session_id))
                g = groups.setdefault((o.ref.provider, o.ref.session_id, r.lane or "main", sh.turn),
                                      Group(o.ref.provider, o.ref.session_id, r.lane or "main", sh.turn,
                                            sh.opener.text if sh.opener is not None else None))
                g.hits.append((r.line, r.locator, r.kind + (f" {r.tool_name}" if r.tool_name else ""), sh.text,
                               sh.span))
            continue
        lane = unit  # a deep part's lane (Claude Code): a lane inside a session names the session it is in
        sid, agent = lane.session_id, deep_name()
        lname = lane.display if lane.is_subagent else "main"
        for h in o.hits:
            n += 1
            with_hits.add((agent, sid))
            # a hit that is its turn's prompt opens the section itself (as the shared path's SharedHit
            # carries no opener for it): the prompt is not shown twice
            opener = h.opener.text if h.opener is not None and h.opener.line != h.line else None
            g = groups.setdefault((agent, sid, lname, h.turn), Group(agent, sid, lname, h.turn, opener))
            g.hits.append((h.line, None, ",".join(h.labels), h.text, h.span))
    return Result(list(groups.values()), n, len(with_hits))


def _marked(text: str, span) -> str:
    text = text or ""
    if span is None:
        a = b = 0
    else:
        a, b = span
    lo = max(0, a - CLIP // 2)
    hi = min(len(text), max(b, lo + CLIP))
    pre = "…" if lo > 0 else ""
    post = "…" if hi < len(text) else ""
    if span is None:
        return f"<pre>{t(text[lo:hi])}{post}</pre>"
    return (f"<pre>{pre}{t(text[lo:a])}<mark>{t(text[a:b])}</mark>{t(text[b:hi])}{post}</pre>")


def render(store, q: dict) -> str:
    pattern = q.get("q")
    form = (f'<form class="filters" method="get" action="/search"><label>Pattern <input type="search" name="q" '
            f'value="{e(pattern or "")}" size="40" autofocus></label> '
            f'<label><input type="checkbox" name="i" value="1"{" checked" if q.get("i") == "1" else ""}> -i</label> '
            f'<label><input type="checkbox" name="F" value="1"{" checked" if q.get("F") == "1" else ""}> -F</label> '
            f'<label>-t <input name="t" value="{e(q.get("t", ""))}" size="12" placeholder="prompt,tool_call"></label> '
            f'<label>-T <input name="T" value="{e(q.get("T", ""))}" size="12"></label> '
            f'<label><input type="checkbox" name="nosub" value="1"{" checked" if q.get("nosub") == "1" else ""}> '
            f'--no-subagents</label> <button type="submit">Search</button></form>'
            '<p class="meta">The query language of <code>sessionsift search</code> (RE2 regex; docs/search.md).</p>')
    if pattern is None:
        return page("Search", f"<h1>Search</h1>{form}", current="/search")
    a = args_of(q)
    res = store.memo(("search", a), lambda: run(store, a), keep=KEEP)
    if res.error:
        return page("Search", f'<h1>Search</h1>{form}<p class="omissions" id="error">{t(res.error)}</p>',
                    current="/search")
    out = [f'<p class="counts" id="counts"><b>{res.hits:,}</b> hits in <b>{res.sessions_with_hits:,}</b> sessions, '
           f"{len(res.groups):,} turns" + (f" (the first {MAX_TURNS} shown)" if len(res.groups) > MAX_TURNS else "")
           + "</p>"]
    for g in res.groups[:MAX_TURNS]:
        line, loc = g.hits[0][0], g.hits[0][1]
        anchor = record_anchor(g.lane, line, loc)
        head = f"turn {g.turn}" if g.turn is not None else "before the first prompt"
        out.append(f'<section class="hitturn" data-provider="{t(g.provider)}" data-session="{t(g.session_id)}">'
                   f'<h2><a href="{session_href(g.provider, g.session_id, anchor)}">{e(store.display(g.provider))} '
                   f'<code>{t(g.session_id)}</code> · {e(head)}{"" if g.lane == "main" else " · " + t(g.lane)}</a></h2>')
        if g.opener:
            out.append(f'<div class="prompt"><b>Prompt</b><pre>{t(g.opener[:CLIP])}</pre></div>')
        for line, loc, kind, text, span in g.hits:
            out.append(f'<div class="hit" data-line="{e(line)}" data-locator="{t(loc or "")}"><span class="label">'
                       f'<a href="{session_href(g.provider, g.session_id, record_anchor(g.lane, line, loc))}">'
                       f'{e(loc or ("L" + str(line)))}</a> · {t(kind)}</span>{_marked(text, span)}</div>')
        out.append("</section>")
    return page(f"Search {pattern}", f"<h1>Search</h1>{form}" + "\n".join(out), current="/search")
