"""`index status|update|clear`: the persistent index (docs/index.md)."""

from __future__ import annotations

import os

import click

from .exit import ExitStatus
from .invocation import targeting
from .options import claude_scope, lane_fields, make_selection, selection_header
from .output import Out, esc


def _lanes(scope, subagents: bool = True):
    for s in scope.sessions:
        if s.session_id in scope.explicit_lanes:
            yield scope.explicit_lanes[s.session_id]
        else:
            yield from s.lanes(subagents)


def _plus(total: int | None, n: int | None) -> int | None:
    return None if total is None or n is None else total + n


def _mb(n: int | None) -> str:
    return "?" if n is None else f"{n / 1e6:,.1f} MB"


def _scope(inv):
    """Every provider's sessions the command line names (the root rule), Claude Code's as the lane
    model's scope (an empty one when it is not looked at), and the others the index holds nothing
    for (index/coverage.py)."""
    from ..index.coverage import not_indexed

    sel = make_selection(inv)
    return sel, claude_scope(sel), not_indexed(sel)


def _sessions_text(r: dict) -> str:
    kids = f" (+{r['child_sessions']} child)" if r["child_sessions"] else ""
    return f"{esc(r['display'])}: {r['sessions']} session{'s' if r['sessions'] != 1 else ''}{kids}"


def _say_not_indexed(out: Out, rows: list[dict], text: bool = True) -> None:
    for r in rows:
        out.row("provider", {**r, "state": "not_indexed"})
        if text:
            out.text(f"{_sessions_text(r)} {esc(r['why'])}")


@click.group("index")
def index_cmd():
    """The persistent index of transcripts: see what it covers, bring it up to date, remove it.

    Commands answer from the index when it is fresh for a transcript and scan what it does not
    cover (saying so); `--no-index` on any command scans instead. The index lives in
    ${XDG_CACHE_HOME:-~/.cache}/sessionsift/index (private to you), never in an agent's folder.

    \b
    Example: sessionsift index status
    Example: sessionsift index update --claude-home ~/.claude
    Example: sessionsift index clear --all
    """


@index_cmd.command("status")
@targeting()
def status_cmd(inv):
    """How fresh the index is for each transcript in scope: fresh, grown (an append to take in),
    stale (rewritten: to rebuild) or absent."""
    fmt = inv.fmt
    from ..index import store

    sel, scope, others = _scope(inv)
    out = Out(fmt, "index")
    out.header(action="status", **selection_header(sel), index_dir=str(store.root_dir()))
    counts = dict.fromkeys(("fresh", "grown", "stale", "absent", "unreadable"), 0)
    size = covered = idx_bytes = 0
    for lane in _lanes(scope):
        st = lane.index_state()
        counts[st.state] += 1
        # a figure a lane could not give (unreadable) makes the total unknown, never smaller; an
        # absent index holds no bytes (0 is the fact there)
        size = _plus(size, st.size)
        covered = _plus(covered, st.covered)
        idx_bytes = _plus(idx_bytes, 0 if st.state == "absent" else st.index_bytes)
        out.row("lane", {**lane_fields(lane), "state": st.state, "size": st.size, "covered_bytes": st.covered,
                         "index_bytes": st.index_bytes, "why": st.why})
        out.text(f"{lane.session_id} {esc(lane.display)}: {st.state}" + (f" ({esc(st.why)})" if st.why else ""))
    _say_not_indexed(out, others, text=False)
    from ..index.fulltext import status as ft_status

    from ..index import kept

    ft = ft_status()
    ft_sessions = _fulltext_sessions(out, sel, others)
    kp = kept.status()
    out.summary(action="status", transcripts=sum(counts.values()), states=counts, bytes=size,
                covered_bytes=covered, index_bytes=idx_bytes, index_dir=str(store.root_dir()),
                unreadable=[{"path": p.path, "why": p.why} for p in scope.problems], not_indexed=others,
                fulltext=ft, fulltext_sessions=ft_sessions, kept=kp)
    if kp is not None and kp.get("answers") is not None:
        out.text("answers kept per session: " + (", ".join(f"{esc(k)} {v}" for k, v in sorted(kp["answers"].items()))
                                                 or "none") + f" ({_mb(kp['db_bytes'])})")
    if ft is None:
        out.text("full-text index: none yet (the next `search PATTERN` builds it)")
    elif "error" in ft:
        out.text(f"full-text index: unreadable ({esc(ft['error'])})")
    else:
        out.text(f"full-text index: {_mb(ft['db_bytes'])} for {_mb(ft['src_bytes'])} of transcripts and sessions "
                 f"indexed ({ft['ratio']:.0%}), {ft['units']} units, {ft['rows']:,} records"
                 + (f", {ft['dead_rows']:,} dead rows" if ft["dead_rows"] else "") if ft["ratio"] is not None else
                 f"full-text index: {_mb(ft['db_bytes'])}, {ft['units']} units, {ft['rows']:,} records"
                 + (f" ({ft['units_size_unknown']} of unknown size: no ratio to the bytes indexed)"
                    if ft.get("units_size_unknown") else ""))
    out.text(f"{sum(counts.values())} transcripts ({_mb(size)}): " + (", ".join(f"{v} {k}" for k, v in counts.items() if v)
                                                                     or "none in scope")
             + f"; index {_mb(idx_bytes)} in {esc(str(store.root_dir()))}")
    return ExitStatus.INCOMPLETE if counts["unreadable"] or scope.problems else ExitStatus.OK


def _fulltext_sessions(out: Out, sel, others: list[dict]) -> dict | None:
    """The full-text index's state for each session of the agents whose lane facts the index does
    not hold (a row `kind: "session"` each, a text line per agent); the counts by state, or None
    when there is no full-text database yet."""
    from ..index.fulltext import session_states

    names = {r["provider"] for r in others}
    refs = [r for r in sel.session_refs() if r.provider in names]
    got = session_states(refs) if refs else {}
    states = got if got is not None else {}
    counts = dict.fromkeys(("fresh", "changed", "absent"), 0)
    per: dict[str, dict[str, int]] = {}
    for r in refs if got is not None else ():
        st = states[(r.provider, r.session_id)]
        counts[st["state"]] += 1
        per.setdefault(r.provider, dict.fromkeys(counts, 0))[st["state"]] += 1
        out.row("session", {"provider": r.provider, "session_id": r.session_id,
                            "parent_session_id": r.parent_session_id, "fulltext_state": st["state"],
                            "fulltext_records": st["records"]})
    for r in others:
        c = per.get(r["provider"])
        ft = ("full-text index " + ", ".join(f"{v} {k}" for k, v in c.items() if v)) if c else "full-text index: none yet"
        out.text(f"{_sessions_text(r)}: {ft}; no lane facts (kept for Claude Code only: these sessions are read "
                 "from their own files at every run)")
    return counts if got is not None else None


@index_cmd.command("update")
@targeting()
def update_cmd(inv):
    """Bring the index up to date for every transcript in scope: grown ones take in only their
    new bytes, stale or absent ones are indexed from the start."""
    fmt = inv.fmt
    from ..index import store
    from ..index.progress import Progress
    from ..index.report import IndexReport

    sel, scope, others = _scope(inv)
    out = Out(fmt, "index")
    out.header(action="update", **selection_header(sel), index_dir=str(store.root_dir()))
    rep = IndexReport.for_root(scope.home.path, scope.index_off)
    problems = [{"path": p.path, "why": p.why} for p in scope.problems]
    _say_not_indexed(out, others)
    if not rep.on:
        out.summary(action="update", index=rep.as_json(), unreadable=problems, not_indexed=others)
        out.text(f"index: off ({esc(rep.off)}): nothing updated")
        return ExitStatus.OK
    lanes = list(_lanes(scope))
    prog = Progress(len(lanes), sum(_size(ln.path) for ln in lanes))
    try:
        for lane in lanes:
            try:
                _ls, how = lane.index_update()
            except OSError as exc:
                problems.append({"path": str(lane.path), "why": exc.strerror or str(exc)})
                continue
            rep.add(how)
            prog.step(_size(lane.path), how.how in ("built", "appended"))
            out.row("lane", {**lane_fields(lane), "how": how.how})
    finally:
        prog.done()
    # the full-text index of every agent's transcripts and sessions (what a search picks from),
    # then the ranked index (what `search --rank` ranks from), each with its progress line
    from ..index import fulltext
    from ..index.progress import Reading
    from ..search.records import index_texts

    _l, pairs, roots = fulltext.selection_units(sel)
    ftp = Reading("full-text index")
    ftp.begin(sum(_size(ln.path) for ln in lanes) + sum(r.size or 0 for _p, r in pairs))
    try:
        ftv = fulltext.update_all(lanes, pairs, roots, index_texts(), step=ftp.step)
    finally:
        ftp.done()
    rkv = _update_ranked(sel)
    out.summary(action="update", index=rep.as_json(), unreadable=problems, not_indexed=others,
                fulltext=ftv.as_json(), ranked=rkv)
    out.text(rep.text() or "index: no transcript in scope")
    out.text(f"full-text index: {ftv.built} indexed, {ftv.appended} appended, {ftv.fresh} already fresh"
             + (f", {ftv.left} not indexed (a reading problem: searched each time)" if ftv.left else "")
             if ftv.used else f"full-text index: not updated ({esc(ftv.why or '?')})")
    out.text(f"ranked index: {rkv['sessions_read']} sessions read, {rkv['sessions'] + rkv['child_sessions'] - rkv['sessions_read']}"
             f" already fresh, {rkv['turns']:,} turns" + (f", {len(rkv['unreadable'])} unreadable" if rkv["unreadable"] else "")
             if rkv.get("why_not") is None else f"ranked index: not updated ({esc(rkv['why_not'])})")
    return ExitStatus.INCOMPLETE if problems else ExitStatus.OK


def _update_ranked(sel) -> dict:
    """`search --rank`'s index brought up to date for every session of `sel` (search/rank.py
    update), with its progress line: {sessions_read, sessions, child_sessions, turns, bytes,
    unreadable, why_not}."""
    from ..index.progress import Reading
    from ..search.rank import update

    sizes = [r.size or 0 for r in sel.session_refs()]  # the order update reads them in
    rp = Reading("ranked index")
    rp.begin(sum(sizes))
    last = [0]

    def step(i: int, _n: int) -> None:
        rp.step(sum(sizes[last[0]:i]))
        last[0] = i

    try:
        ans = update(sel, getattr(sel, "index_off", None), progress=step)
    except Exception as exc:  # noqa: BLE001 - an SQLite without FTS5: ranking scans, said so
        return {"sessions_read": 0, "sessions": 0, "child_sessions": 0, "turns": 0, "bytes": None,
                "unreadable": [], "why_not": f"{type(exc).__name__}: {exc}"}
    finally:
        rp.done()
    return {"sessions_read": ans.sessions_read, "sessions": ans.sessions, "child_sessions": ans.child_sessions,
            "turns": ans.turns, "bytes": ans.index_bytes, "unreadable": ans.unreadable, "why_not": ans.index_off}


def _size(p) -> int:
    try:
        return os.stat(p).st_size
    except OSError:
        return 0


@index_cmd.command("clear")
@targeting()
@click.option("--all", "everything", is_flag=True, help="Remove the whole index directory (every version).")
def clear_cmd(inv, everything):
    """Remove the index files of the transcripts in scope and their data root's summaries (or
    `--all` of them). Only the index's own files are removed; commands rebuild what they need."""
    fmt = inv.fmt
    from ..index import store

    out = Out(fmt, "index")
    removed = 0
    freed = 0
    if everything:
        out.header(action="clear", index_dir=str(store.cache_dir()))
        removed, freed = store.clear_all()
    else:
        sel, scope, others = _scope(inv)
        out.header(action="clear", **selection_header(sel), index_dir=str(store.root_dir()))
        _say_not_indexed(out, others)
        lanes = list(_lanes(scope))
        for lane in lanes:
            n = lane.index_remove()
            if n is not None:
                removed += 1
                freed += n
                out.row("lane", {**lane_fields(lane), "removed_bytes": n})
        # the full-text index's rows of these transcripts and sessions are no unit's any more
        from ..index import fulltext

        dropped = fulltext.forget_units([fulltext.lane_key(os.fspath(ln.path)) for ln in lanes]
                                        + [fulltext.session_key(r) for r in sel.refs])
        from ..index import kept

        kept_dropped = kept.forget(list(sel.refs))
        # the data root's summaries hold copies of what those files held: they go too
        home = getattr(scope.home, "path", None) if sel.claude is not None else None
        kinds = scope.root_summaries()  # the deep model's own summaries per data root
        for name, kind in kinds if home is not None else ():
            p = store.index_path(kind, home)
            try:
                n = p.stat().st_size
                p.unlink()
            except OSError:
                continue
            removed += 1
            freed += n
            out.row("root_summary", {"summary": name, "data_root": str(home), "removed_bytes": n})
    out.summary(action="clear", removed=removed, removed_bytes=freed,
                not_indexed=None if everything else others,
                fulltext_units_dropped=None if everything else dropped,
                kept_answers_dropped=None if everything else kept_dropped)
    out.text(f"removed {removed} index file(s), {_mb(freed)}"
             + (f"; {dropped} transcript(s)/session(s) dropped from the full-text index" if not everything and dropped
                else ""))
    return ExitStatus.OK
