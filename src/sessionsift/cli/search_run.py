"""`search`'s body without click: the command's run once its command line is parsed (by click in
cmd_search.py, or by the fast path of cli/fastsearch.py, which must print the same bytes), and
the text of its summary lines."""

from __future__ import annotations

import os
from dataclasses import dataclass

from .exit import ExitStatus
from .options import claude_scope, coverage_json, coverage_line, make_selection, selection_header
from .output import Out, clip, esc


def _snippet(text: str, span: tuple[int, int] | None, width: int = 240) -> str:
    if span is None:
        return clip(text, width)
    a, b = span
    lo = max(0, a - 80)
    hi = min(len(text), max(b, a) + (width - 80))
    s = ("…" if lo > 0 else "") + esc(text[lo:hi]) + ("…" if hi < len(text) else "")
    return s


def _summary_line(sm, workers: int) -> str:
    unread = ""
    if sm.unreadable:
        unread = f"; {len(sm.unreadable)} unreadable: " + "; ".join(
            f"{esc(u['path'])} ({esc(u['why'])})" for u in sm.unreadable[:5]) + (" …" if len(sm.unreadable) > 5 else "")
    else:
        unread = "; 0 unreadable"
    extra = ""
    if sm.malformed_lines:
        extra += f"; {sm.malformed_lines} malformed among parsed lines"
    if sm.omitted_lines or sm.bridged_records:
        # an answer narrower than the question says so: the omitted lines' records are lost, and
        # the turns shown were joined across them
        extra += (f"; {_n(sm.omitted_lines, 'omitted line')} (zero-filled or malformed: their records are lost, "
                  f"not searched)")
        if sm.bridged_records:
            extra += (f"; turns and survival joined across them: {_n(sm.bridged_records, 'record')} bridged in "
                      f"{_n(sm.bridged_transcripts, 'transcript')} (`show`/`stats` list the bridges)")
    if sm.unchained_transcripts:
        extra += (f"; {_n(sm.unchained_transcripts, 'transcript')} with hits "
                  f"{'holds' if sm.unchained_transcripts == 1 else 'hold'} omitted lines (zero-filled or "
                  "malformed: their records are lost, not searched), not chained: no turns computed, no bridge "
                  "looked for")
    if sm.unchained_unknown:
        extra += (f"; {_n(sm.unchained_unknown, 'transcript')} with hits could not be read again to look for "
                  "omitted lines (whether their turns hold gaps is unknown)")
    if sm.copies_skipped:
        extra += f"; {sm.copies_skipped} hits on copies of another session's records (a fork) counted once, on the original"
    if sm.undated_skipped:
        extra += f"; {sm.undated_skipped} records without a timestamp left out of the time window"
    if sm.unknown_type_lines:
        extra += "; not searched (record types sessionsift does not read): " + ", ".join(
            f"{esc(k)} {v}" for k, v in sorted(sm.unknown_type_lines.items()))
    if sm.persisted_unresolved:
        extra += f"; {len(sm.persisted_unresolved)} persisted outputs unresolved: " + "; ".join(
            f"{esc(x['persisted_path'])} ({esc(x['why'])})" for x in sm.persisted_unresolved[:3])
    size = f"{sm.lines} lines" if sm.lines is not None else _human_bytes(sm.bytes)
    return (f"{_n(sm.hits, 'hit')} in {_n(sm.files, 'transcript')} ({size}, {_n(sm.sessions, 'session')}"
            f"{unread}{extra}){_left_out_text(sm.left_out, sm.left_out_note)}")


def _n(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


_KIND_NAMES = {"harness.meta.attachment": "attachments", "hook-context": "hook context",
               "persisted-output": "persisted outputs", "harness.meta.snapshot": "snapshots",
               "harness.meta.system": "system records"}


def _left_out_text(left_out: list[dict], note: str | None) -> str:
    """What the summary line says about the kinds and sources the query did not search."""
    if not left_out:
        return ""
    name = lambda x: _KIND_NAMES.get(x["kind"], x["kind"].removeprefix("harness.meta."))  # noqa: E731
    if any(x["further_hits"] is None for x in left_out):
        return f"; not searched ({note or 'further hits not counted'}): " + ", ".join(name(x) for x in left_out)
    more = [x for x in left_out if x["further_hits"]]
    if not more:
        return "; no match in the kinds not searched (" + ", ".join(name(x) for x in left_out) + ")"
    rest = len(left_out) - len(more)
    return ("; not searched: " + ", ".join(f"{name(x)} {x['further_hits']} more ({x['flag']})" for x in more)
            + (f"; no match in the other {rest} kinds not searched" if rest else ""))


def _human_bytes(n: int) -> str:
    """Decimal units, 3 significant digits (the JSON summary carries the exact `bytes`)."""
    if n < 1000:
        return f"{n} bytes"
    for unit in ("kB", "MB", "GB", "TB"):
        n /= 1000
        if n < 999.5 or unit == "TB":
            return f"{n:.3g} {unit}"
    return f"{n} bytes"  # pragma: no cover



@dataclass(frozen=True)
class SearchArgs:
    """The options of `search` that are its own (the targeting ones are the Invocation's)."""

    args: tuple[str, ...] = ()
    """PATTERN then TARGETs (or TARGETs only with -e)."""
    regexps: tuple[str, ...] = ()
    ignore_case: bool = False
    fixed: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    attachments: bool = False
    additional_context: bool = False
    max_count: int | None = None
    no_subagents: bool = False
    no_context: bool = False
    sessions_only: bool = False
    count: bool = False
    count_by: str | None = None
    resolve_persisted: bool = False
    count_lines: bool = False


def run(inv, a: SearchArgs) -> int:
    """The search command once parsed (by click, cmd_search.search_cmd, or by the fast path);
    returns its exit status. The cyclic collector stays out of it (read.fanout.no_gc):
    discovery, the walk and the outcomes make tens of thousands of acyclic objects per store, and
    its passes over them were ~8% of a search's CPU; reference counting still frees them."""
    from ..read.nogc import no_gc

    with no_gc():
        return _run(inv, a)


def _run(inv, a: SearchArgs) -> int:
    from ..errors import UsageError
    from ..search import Query, search
    from ..timefmt import instant, parse_bound
    from .options import claude_root_arg

    args, regexps, ignore_case, fixed = a.args, a.regexps, a.ignore_case, a.fixed
    include, exclude, attachments, additional_context = a.include, a.exclude, a.attachments, a.additional_context
    max_count, no_subagents, no_context, sessions_only = a.max_count, a.no_subagents, a.no_context, a.sessions_only
    count, count_by, resolve_persisted, count_lines = a.count, a.count_by, a.resolve_persisted, a.count_lines
    since, until, fmt = inv.since, inv.until, inv.fmt
    claude_home = claude_root_arg(inv)
    args = list(args)
    if regexps:
        patterns = tuple(regexps)
        targets = tuple(args)
    else:
        if not args:
            raise UsageError("search needs a PATTERN (use '' to match every record) or -e PATTERN")
        patterns = (args[0],)
        targets = tuple(args[1:])
    if count and count_by:
        raise UsageError("-c/--count and --count-by are exclusive")
    if sessions_only and (count or count_by):
        raise UsageError("-l cannot be combined with -c/--count-by")
    from ..providers.claude.kinds import claude_selectors

    # -t/-T take Claude Code labels and the shared kinds alike (providers/claude/kinds.py)
    c_include, c_exclude = claude_selectors(include), claude_selectors(exclude)
    query = Query(
        patterns=patterns, ignore_case=ignore_case, fixed=fixed, include=c_include, exclude=c_exclude,
        attachments=attachments, additional_context=additional_context,
        since=parse_bound(since) if since else None, until=parse_bound(until, end=True) if until else None,
        max_count=max_count, subagents=not no_subagents, context=not no_context,
        count_by=count_by or ("total" if count else None), sessions_only=sessions_only,
        resolve_persisted=resolve_persisted, count_lines=count_lines,
    )
    from ..search.api import plan as _plan

    pl = _plan(query)  # usage errors before touching the data root
    from ..providers.claude.kinds import selected_kinds

    selected_kinds(tuple(include), tuple(exclude))
    if inv.dataset:
        return _run_dataset(inv, targets, query, pl, patterns, ignore_case, fixed, include, exclude,
                            attachments, additional_context, resolve_persisted, count_lines, fmt)
    sel = make_selection(inv.with_targets(targets), subagents=not no_subagents, narrowed=False)
    scope = claude_scope(sel, empty=bool(include) and not c_include)
    from ..index.report import IndexReport

    irep = IndexReport.for_root(scope.home.path, scope.index_off)
    run = search(query, scope, use_index=irep.on)
    out = Out(fmt, "search")
    out.header(**selection_header(sel), patterns=list(patterns), ignore_case=ignore_case, fixed=fixed,
               include=list(include), exclude=list(exclude), count_by=query.count_by,
               since=instant(query.since), until=instant(query.until))
    counts: dict = {}
    sessions_seen: list[str] = []
    last_group = None
    from .options import lane_fields, refetch

    if query.count_by is not None:
        counts = run.census()  # a census: merged counts (kept whole per data root: index/answers.py)
    # a plain lane prints nothing (the summary counts it)
    for lane, o in run.outcomes(plain=False) if query.count_by is None else ():
        if sessions_only:
            if o.hit_count and lane.session_id not in sessions_seen:
                sessions_seen.append(lane.session_id)
                out.row("session", {"session_id": lane.session_id, "project": lane.path.parent.name
                                    if not lane.is_subagent else None})
                out.text(lane.session_id)
            continue
        lf = lane_fields(lane)
        for h in o.hits:
            tc = None
            if h.opener is not None:
                tc = {"turn": h.turn, "opener": {"line": h.opener.line, "uuid": h.opener.uuid,
                                                  "labels": h.opener.labels,
                                                  "timestamp": instant(h.opener.timestamp),
                                                  "text": h.opener.text}}
            out.row("hit", {
                **lf, "line": h.line, "uuid": h.uuid, "type": h.type, "timestamp": instant(h.timestamp),
                "labels": h.labels, "tool_names": h.tool_names, "attachment": h.attachment,
                "turn": h.turn, "survival": h.survival, "text": h.text,
                "match": {"start": h.span[0], "end": h.span[1]} if h.span else None,
                "persisted_resolved": h.persisted, "turn_context": tc,
                "refetch": refetch(lane, h.line, claude_home),
            })
            if out.json:
                continue
            lab = ",".join(h.labels) or "(unlabelled)"
            if h.tool_names:
                lab += " " + ",".join(esc(n) for n in h.tool_names)
            when = ""
            from ..timefmt import short_local

            when = short_local(h.timestamp)
            if query.context:
                group = (lane.path, h.turn)
                if group != last_group:
                    out.text(f"{lane.session_id} {esc(lane.display)} turn {h.turn if h.turn is not None else '-'}")
                    if h.opener is not None and h.opener.line != h.line:
                        out.text(f"  L{h.opener.line} [{','.join(h.opener.labels)}] {short_local(h.opener.timestamp)}  "
                                 f"{clip(h.opener.text, 200)}")
                    last_group = group
                out.text(f"> L{h.line} [{lab}] {when}  {_snippet(h.text, h.span)}")
            else:
                out.text(f"{lane.session_id} {esc(lane.display)} L{h.line} [{lab}] {when}  {_snippet(h.text, h.span)}")
    from .cmd_shared import search_shared, search_summary_json, search_summary_text

    gsm = search_shared(out, sel, regex=pl.regex, include=include, exclude=exclude, since=query.since,
                        until=query.until, max_count=max_count, count_by=query.count_by,
                        sessions_only=sessions_only, context=query.context, counts=counts,
                        needles=pl.needles, needles_ci=pl.needles_ci)
    sm = run.summary
    hits = sm.hits + gsm.hits
    if query.count_by == "total":
        out.row("count", {"by": None, "key": None, "count": hits})
        out.text(str(hits))
    elif query.count_by is not None:
        _print_counts(out, query.count_by, counts, run.plan.tool_count if query.count_by == "tool" else None)
    covs = sel.coverage()
    out.summary(files=sm.files, lines=sm.lines, bytes=sm.bytes, sessions=sm.sessions + gsm.sessions - gsm.child_sessions,
                child_sessions=gsm.child_sessions,
                sessions_with_hits=sm.sessions_with_hits + gsm.sessions_with_hits, hits=hits, records_parsed=sm.records_parsed,
                malformed_lines=sm.malformed_lines,
                bridges={"records": sm.bridged_records, "transcripts": sm.bridged_transcripts,
                         "omitted_lines": sm.omitted_lines, "unchained_transcripts": sm.unchained_transcripts,
                         "unchained_unknown": sm.unchained_unknown},
                shape_skipped=sm.shape_skipped, shape_counted=sm.shape_counted, undated_skipped=sm.undated_skipped, copies_skipped=sm.copies_skipped,
                unreadable=sm.unreadable, persisted_unresolved=sm.persisted_unresolved,
                unknown_type_lines=sm.unknown_type_lines, prefilter=sm.prefilter, left_out=sm.left_out,
                left_out_note=sm.left_out_note,
                workers=run.workers, shared=search_summary_json(gsm), coverage=coverage_json(covs),
                index=_index_json(irep, sm, run.plan.use_index))
    line = _summary_line(sm, run.workers)
    gline = search_summary_text(sel, gsm)
    if not out.json:
        if sessions_only and hits:
            out.stream.flush()
            if sel.claude is not None:
                out.err(f"{_n(sm.sessions_with_hits, 'session')} with hits; searched " + line.split(" in ", 1)[1])
            if gline:
                out.err(gline)
            out.err(coverage_line(covs))
        else:
            if hits == 0 and query.count_by is None:  # the answer first, then what it was taken over
                out.text(_no_match(patterns, sm.sessions + gsm.sessions - gsm.child_sessions, covs))
            if sel.claude is not None:
                out.text(("Claude Code: " if gline else "") + line)
                note = _index_note(sm, run.plan.use_index)
                if note:
                    out.text(("Claude Code: " if gline else "") + note)
            if gline:
                out.text(gline)
            out.text(coverage_line(covs))
    if sm.unreadable or sm.persisted_unresolved or gsm.problems or sel.incomplete():
        return ExitStatus.INCOMPLETE  # we could not look everywhere: even a zero is a lower bound
    return ExitStatus.NO_MATCH if hits == 0 else ExitStatus.OK


def _no_match(patterns, sessions: int, covs) -> str:
    """`no match for 'PATTERN' in N sessions`, and on a machine where nothing was found, what was
    looked for and how to point the search at data."""
    from .newcomer import found_nothing, nothing_note

    pats = " or ".join(repr(p) for p in patterns)
    if found_nothing(covs):
        return f"no match for {pats}: " + nothing_note(covs, f"search {pats}")
    return f"no match for {pats} in {_n(sessions, 'session')}"


def _run_dataset(inv, targets, query, pl, patterns, ignore_case, fixed, include, exclude,
                 attachments, additional_context, resolve_persisted, count_lines, fmt) -> int:
    """`search --dataset`: every machine's records, each session searched as the shared search
    searches a session (questions/search.py: the same pattern, kinds, turn context, counts),
    Claude Code's through its shared records (docs/dataset.md)."""
    from ..errors import UsageError
    from ..sync.answers import machines_text, search_selection
    from ..sync.dataset import Dataset
    from ..timefmt import instant
    from .cmd_shared import search_shared, search_summary_json, search_summary_text
    from .options import refuse_with_dataset

    refuse_with_dataset(inv.with_targets(targets))
    dataset = inv.dataset
    for flag, on in (("--attachments", attachments), ("--additional-context", additional_context),
                     ("--resolve-persisted", resolve_persisted), ("--count-lines", count_lines)):
        if on:
            raise UsageError(f"{flag} reads Claude Code's transcripts on this machine; a dataset search reads the "
                             "shared records (drop it)")
    sel = search_selection(Dataset.open(dataset), list(inv.providers) or None, query.subagents, pl.needles,
                           pl.needles_ci)
    out = Out(fmt, "search")
    out.header(dataset=dataset, machines=sel.machines, patterns=list(patterns), ignore_case=ignore_case, fixed=fixed,
               include=list(include), exclude=list(exclude), count_by=query.count_by,
               since=instant(query.since), until=instant(query.until))
    counts: dict = {}
    gsm = search_shared(out, sel, regex=pl.regex, include=include, exclude=exclude, since=query.since,
                        until=query.until, max_count=query.max_count, count_by=query.count_by,
                        sessions_only=query.sessions_only, context=query.context, counts=counts)
    gsm.sessions += sel.ruled_out
    gsm.sessions_prefiltered += sel.ruled_out
    hits = gsm.hits
    if query.count_by == "total":
        out.row("count", {"by": None, "key": None, "count": hits})
        out.text(str(hits))
    elif query.count_by is not None:
        _print_counts(out, query.count_by, counts)
    covs = sel.coverage()
    out.summary(dataset=dataset, machines=sel.machines, sessions=gsm.sessions - gsm.child_sessions,
                child_sessions=gsm.child_sessions, sessions_with_hits=gsm.sessions_with_hits, hits=hits,
                shared=search_summary_json(gsm), coverage=coverage_json(covs),
                left_out=["Claude Code's labels, gated kinds (attachments, hook context, snapshots) and persisted "
                          "outputs are searched on the machine itself: a dataset search reads every provider's "
                          "shared records"])
    gline = search_summary_text(sel, gsm)
    if gline and not out.json:
        (out.err if query.sessions_only and hits else out.text)(gline)
        (out.err if query.sessions_only and hits else out.text)(f"dataset {esc(dataset)}, {esc(machines_text(sel.machines))}")
        (out.err if query.sessions_only and hits else out.text)(coverage_line(covs))
    if gsm.problems or sel.incomplete():
        return ExitStatus.INCOMPLETE
    return ExitStatus.NO_MATCH if hits == 0 else ExitStatus.OK


def _index_json(irep, sm, census: bool) -> dict:
    """The summary's `index` (docs/index.md): transcripts answered (a census) or relabelled from
    the index, updated first, or scanned, and why a census transcript was scanned."""
    return {"enabled": irep.on, "off_reason": irep.off, "census": census,
            "from_index": sm.index_counts.get("index", 0), "appended": sm.index_counts.get("appended", 0),
            "built": sm.index_counts.get("built", 0), "scanned": sm.index_counts.get("scanned", 0),
            "scanned_why": dict(sm.index_why) or None}


def _index_note(sm, census: bool) -> str | None:
    """A census that scanned some transcripts says so (a pattern search scans by nature)."""
    if not census or not sm.index_why:
        return None
    n = sum(sm.index_why.values())
    return (f"index: {n} transcript(s) scanned without it (" + "; ".join(f"{k}: {v}" for k, v in sm.index_why.items())
            + "); `sessionsift index update` indexes them")


def _print_counts(out: Out, by: str, counts: dict, of: str | None = None) -> None:
    if by == "pairing":
        rows = sorted(counts.items(), key=lambda kv: (-(kv[1][0] or 0), str(kv[0])))
        for k, (uses, ret, unret) in rows:
            out.row("count", {"by": by, "key": k, "count": uses, "returned": ret, "unreturned": unret})
    else:
        rows = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
        for k, n in rows:
            out.row("count", {"by": by, "key": k, "count": n, **({"of": of} if of else {})})
    if out.json:
        return
    import io

    from rich.console import Console
    from rich.table import Table

    keyw = max([len(esc(k)) for k, _ in rows] + [10])
    buf = io.StringIO()
    con = Console(file=buf, markup=False, highlight=False, emoji=False,
                  no_color=bool(os.environ.get("NO_COLOR")), width=max(80, keyw + 50),
                  force_terminal=False)
    t = Table(show_edge=False, box=None, pad_edge=False)
    t.add_column(by)
    if by == "pairing":
        t.add_column("uses", justify="right")
        t.add_column("returned", justify="right")
        t.add_column("unreturned", justify="right")
        for k, (uses, ret, unret) in rows:
            t.add_row(esc(k), *("-" if v is None else str(v) for v in (uses, ret, unret)))
    else:
        t.add_column(of or "hits", justify="right")
        for k, n in rows:
            t.add_row(esc(k), str(n))
    con.print(t)
    for ln in buf.getvalue().rstrip("\n").split("\n"):
        out.text(ln)  # through the one rendering path, like every other line
