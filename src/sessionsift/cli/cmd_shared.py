"""The cross-provider halves of `show`, `search`, `stats` and `files`: rendering of the generic
path (the shared records: sessionsift.search.records and the other questions) for every provider but Claude Code, whose sessions keep their deep
paths in cmd_core / cmd_search / cmd_files."""

from __future__ import annotations

from ..errors import UsageError
from ..providers import deep_name
from ..timefmt import instant, short_local
from .exit import ExitStatus
from .options import coverage_json, coverage_line, problems_json, selection_header
from .output import Out, esc, plural
from .shared import change_json, record_row, record_text_line, refetch, session_fields


def providers_of(sel) -> dict:
    return {e.name: e.provider for e in sel.survey.entries if e.provider is not None}


def pairs_of(sel, refs=None) -> list:
    provs = providers_of(sel)
    return [(provs[r.provider], r) for r in (sel.refs if refs is None else refs) if r.provider in provs]


def display_of(sel, name: str) -> str:
    e = sel.survey.entry(name)
    return e.display if e else name


# -- show -----------------------------------------------------------------------------------


def show_shared(sel, ref, fmt, *, lane, lines, locator, uuid, turn, raw, branch_points):
    from ..show.records import show

    d = display_of(sel, ref.provider)
    if uuid is not None or branch_points:
        raise UsageError(f"--uuid and --branch-points read Claude Code's record graph; {ref.session_id} is a {d} "
                         "session (use --line, --locator or --turn)")
    prov = providers_of(sel)[ref.provider]
    recs, rep = show(prov, ref, lines=lines, locator=locator, turn=turn)
    if lane is not None:
        recs = [r for r in recs if r.lane == lane]
        if not recs:
            from ..errors import NoSuchRecord

            raise NoSuchRecord(f"no such record(s) in lane {lane!r} of session {ref.session_id}")
    out = Out(fmt, "show")
    covs = sel.coverage()
    out.header(**selection_header(sel), session={**session_fields(ref), "paths": [str(p) for p in ref.paths],
                                                 "project": ref.project})
    for r in recs:
        out.row("record", record_row(sel, ref, r, raw=True, content=True))
        out.text(record_text_line(r, 100) + f"  turn={r.turn if r.turn is not None else '-'}")
        if raw:
            from .output import dumps

            out.text("  " + esc(dumps(r.raw).decode("utf-8", "replace")))
            continue
        body = r.text or ""
        if r.kind == "tool_call":
            from ..search.records import record_text

            body = record_text(r)
        for line in body.split("\n")[:200]:
            out.text("  " + esc(line))
        for c in r.file_changes:
            out.text(f"  change: {c.action} {esc(c.path)}" + (f" -> {esc(c.move_to)}" if c.move_to else "")
                     + ("  [whole new content]" if c.new_content is not None else "")
                     + ("  [diff]" if c.diff is not None else ""))
    out.summary(records=len(recs), lines=None, omissions=rep.omissions(), coverage=coverage_json(covs))
    out.text(coverage_line(covs))
    return ExitStatus.OK


# -- search ---------------------------------------------------------------------------------


def search_summary_text(sel, sm) -> str | None:
    if not sm.sessions:
        return None
    names = sorted({display_of(sel, r.provider) for r in sel.refs})
    left = ", ".join(f"{k} {v} ({sm.not_searched_hits.get(k, 0)} would match, -t {k})"
                     for k, v in sorted(sm.not_searched.items()))
    om = {k: v for k, v in sm.omissions.items() if v and k != "unknown_kinds"}  # unknown kinds: kept, named above
    return (f"{plural(sm.hits, 'hit')} in {sm.sessions_with_hits} of {plural(sm.sessions, 'session')} of "
            f"{', '.join(esc(n) for n in names)} "
            f"({plural(sm.records, 'record')} read in {plural(sm.sessions_read, 'session')}, {sm.searched} of them searched"
            + (f"; {plural(sm.sessions_indexed_out, 'session')} ruled out by the full-text index (no record holds "
               "the pattern's literal), not parsed" if sm.sessions_indexed_out else "")
            + (f"; {plural(sm.sessions_prefiltered, 'session')} ruled out by "
               f"{'its' if sm.sessions_prefiltered == 1 else 'their'} bytes (no file or database row holds the pattern's literal), "
               "not parsed" if sm.sessions_prefiltered else "")
            + (f"; not searched: {left}" if left else "")
            + (f"; {_truncated_text(sel, sm.truncated)}" if sm.truncated else "")
            + (f"; {sm.undated_skipped} undated records left out of the time window" if sm.undated_skipped else "")
            + (f"; {len(sm.problems)} unreadable: " + "; ".join(f"{esc(p.path)} ({esc(p.why)})" for p in sm.problems[:5])
               if sm.problems else "")
            + ("; not read: " + ", ".join(f"{k}={v}" for k, v in om.items()) if om else "") + ")")


def _truncated_text(sel, cut) -> str:
    n = sum(cut.values())
    who = ", ".join(f"{esc(display_of(sel, p))} {v}" for p, v in sorted(cut.items()))
    return (f"{plural(n, 'record')} cut on disk by {'its' if n == 1 else 'their'} client ({who}): "
            "the cut text is not on disk at all, no search can find it")


def search_summary_json(sm) -> dict:
    return {"sessions": sm.sessions, "sessions_with_hits": sm.sessions_with_hits, "hits": sm.hits,
            "records": sm.records, "records_searched": sm.searched, "copies_skipped": sm.copies,
            "not_searched_kinds": dict(sm.not_searched), "not_searched_matches": dict(sm.not_searched_hits),
            "undated_skipped": sm.undated_skipped, "sessions_read": sm.sessions_read,
            "truncated_records": None if sm.truncated is None else sum(sm.truncated.values()),
            "sessions_prefiltered": sm.sessions_prefiltered,
            "sessions_indexed_out": sm.sessions_indexed_out,
            "files": sm.files, "bytes": sm.bytes, "omissions": dict(sm.omissions),
            "problems": problems_json(sm.problems)}


# -- stats ----------------------------------------------------------------------------------


def claude_refs(sel, subagents: bool = True) -> list:
    """The selected Claude Code sessions as SessionRefs (for the shared-records census)."""
    if sel.claude is None:
        return []
    e = sel.survey.entry(deep_name())
    want = {s.session_id for s in sel.claude.sessions}
    refs = [r for r in (e.sessions if e else []) if r.session_id in want]
    full = getattr(e.provider, "full", None) if e else None
    if full is not None:  # a light discovery's refs get their lanes and size
        refs = [full(r) for r in refs]
    if not subagents:
        from dataclasses import replace

        refs = [replace(r, paths=r.paths[:1]) for r in refs]
    return refs


def stats_shared(out: Out, sel, refs=None):
    from ..stats import stats

    res = stats(pairs_of(sel, refs))
    stats_rows(out, res, lambda name: display_of(sel, name))
    return res


def stats_rows(out: Out, res, display, extra=None, text_skip=None) -> None:
    """The `session` rows (and text) of a shared census; `extra(session) -> dict` adds fields (a
    dataset's `machine`); `text_skip(session)`: no text for it (printed in another form)."""
    for s in res.sessions:
        ref = s.ref
        out.row("session", {
            **session_fields(ref), **(extra(s) if extra else {}), "path": str(ref.paths[0]) if ref.paths else None,
            "records": s.records, "copies": s.copies, "kinds": None if s.kinds is None else dict(s.kinds),
            "prompts": s.prompts,
            "turns": s.turns, "tool_calls": dict(s.tool_calls), "tool_errors": dict(s.tool_errors),
            "tokens_by_model": s.tokens_by_model, "tokens_unknown": s.tokens_unknown,
            "usage_units_by_model": dict(s.usage_units_by_model),
            "tokens_cumulative_by_model": s.tokens_cumulative_by_model, "file_changes": s.file_changes,
            "unknown_kinds": dict(s.report.unknown_kinds), "omissions": s.report.omissions(),
            "malformed_lines": s.report.malformed_lines[:100],
        })
        if out.json or (text_skip is not None and text_skip(s)):
            continue
        out.text(f"{esc(ref.session_id)} ({esc(display(ref.provider))}): {plural(s.records, 'record')}, "
                 f"{plural(s.prompts, 'prompt')}, {plural(sum(s.tool_calls.values()), 'tool call')}, "
                 f"{sum(s.tool_errors.values())} failed"
                 + (f", {plural(s.copies, 'copy', 'copies')} counted once" if s.copies else ""))
        for k, v in sorted((s.kinds or {}).items(), key=lambda kv: -kv[1]):
            out.text(f"  kind {k:<30} {v}")
        for k, v in sorted(s.tool_calls.items(), key=lambda kv: -kv[1]):
            err = s.tool_errors.get(k, 0)
            out.text(f"  tool {esc(k):<30} {v}" + (f" ({err} failed)" if err else ""))
        for k, v in sorted(s.tool_errors.items()):
            if k not in s.tool_calls:
                out.text(f"  tool {esc(k):<30} 0 ({v} failed)")
        if s.tokens_by_model is None:
            out.text(f"  tokens unknown: {esc(s.tokens_unknown)}")
        for m, d in (s.tokens_by_model or {}).items():
            out.text(f"  tokens {esc(m)}: " + ", ".join(f"{k}={v}" for k, v in d.items())
                     + f" over {s.usage_units_by_model[m]} usage record{'' if s.usage_units_by_model[m] == 1 else 's'}")
        for m, d in s.tokens_cumulative_by_model.items():
            out.text(f"  tokens {esc(m)} (running total, not summed): " + ", ".join(f"{k}={v}" for k, v in d.items()))
        for k, v in s.report.unknown_kinds.items():
            out.text(f"  unknown record kind {esc(k)}: {v} (kept, not interpreted)")
        om = {k: v for k, v in s.report.omissions().items() if v}
        if om:
            out.text("  omissions: " + ", ".join(f"{k}={v}" for k, v in om.items()))


# -- files ----------------------------------------------------------------------------------


def change_row(sel, c) -> dict:
    r = c.record
    return {**session_fields(c.ref, r), "line": r.line, "locator": r.locator, "timestamp": instant(r.instant),
            "turn": r.turn, "file": c.change.path, "tool": r.tool_name, "call_id": r.call_id,
            **{k: v for k, v in change_json(c.change).items() if k != "path"},
            "exit_code": r.exit_code, "is_error": r.is_error, "failed": getattr(c, "failed", False),
            "refetch": refetch(sel, c.ref, r)}


def change_line(sel, c) -> str:
    r = c.record
    ch = c.change
    return (f"{short_local(r.instant)} {esc(r.locator)} {esc(c.ref.session_id)} ({esc(display_of(sel, c.ref.provider))}) "
            f"{ch.action:<7} {esc(ch.path)}" + (f" -> {esc(ch.move_to)}" if ch.move_to else "")
            + (f" via {esc(r.tool_name)}" if r.tool_name else "")
            + ("  [whole new content]" if ch.new_content is not None else "") + ("  [diff]" if ch.diff is not None else "")
            + ("  [failed: changed nothing]" if getattr(c, "failed", False) else ""))
