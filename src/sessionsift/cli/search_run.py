"""`search`'s body without click: the command's run once its command line is parsed (by click in
cmd_search.py, or by the fast path of cli/fastsearch.py, which must print the same bytes), and
the text of its summary lines."""

from __future__ import annotations

import os
from dataclasses import dataclass

from .exit import ExitStatus
from .options import coverage_json, coverage_line, make_selection, selection_header
from .output import Out, clip, esc


def _snippet(text: str, span: tuple[int, int] | None, width: int = 240) -> str:
    if span is None:
        return clip(text, width)
    a, b = span
    lo = max(0, a - 80)
    hi = min(len(text), max(b, a) + (width - 80))
    s = ("…" if lo > 0 else "") + esc(text[lo:hi]) + ("…" if hi < len(text) else "")
    return s


def snippet_parts(text: str, span: tuple[int, int] | None, regex=None, width: int = 240) -> list:
    """`_snippet` as parts for `Out.spans`: the match (and, with `regex`, every other match inside
    the window) styled `match`. Joined without colour the parts are `_snippet`'s text exactly
    (escaping is per character)."""
    if span is None:
        return [clip(text, width)]
    a, b = span
    if width >= 240:  # a pipe: 80 characters before the match, 160 after it
        lo = max(0, a - 80)
        hi = min(len(text), max(b, a) + (width - 80))
    else:  # a terminal's line: what it leaves, counted in the characters shown (escapes are two)
        pre = width // 4
        lo = max(0, a - pre)
        while lo < a and len(esc(text[lo:a])) > pre:
            lo += 1
        hi = b
        used = len(esc(text[lo:b]))
        while hi < len(text) and used + len(esc(text[hi])) <= width:
            used += len(esc(text[hi]))
            hi += 1
    spans = [(a, min(b, hi))]
    if regex is not None:
        try:
            for m in regex.finditer(text, lo, hi):
                s, e = m.span()
                if e > s and (e <= a or s >= b):
                    spans.append((s, e))
        except Exception:  # the engine's own matching is the answer; the highlight is only a help
            pass
    spans.sort()
    parts: list = ["…"] if lo > 0 else []
    at = lo
    for s, e in spans:
        if s < at or e <= s:
            continue
        parts.append(text[at:s])
        parts.append((text[s:e], "match"))
        at = e
    parts.append(text[at:hi])
    if hi < len(text):
        parts.append("…")
    return parts


class _Hits:
    """How a hit's snippet is drawn on this output: the pattern that marks every match in it (only
    when the output is coloured) and the room its line leaves (240 characters in a pipe; on a
    terminal what its width leaves after the line's head, at least 20: the match is never cut)."""

    def __init__(self, out: Out, query):
        from .table import term_width

        self.rx = None
        if out.colour and query.patterns:
            try:
                from ..read.pattern import compile_regex, compiled

                regex = compile_regex(tuple(query.patterns), query.ignore_case, query.fixed)
                self.rx = compiled(regex) if regex is not None else None
            except Exception:  # the highlight is only a help; the search validated the pattern
                self.rx = None
        self.width = term_width(out)

    def parts(self, head: str, text: str, span) -> list:
        from .table import cells

        room = 240 if self.width is None else max(20, self.width - cells(esc(head)) - 2)
        return snippet_parts(text, span, self.rx, room)

    def hit(self, out: Out, lead: list, head: str, text: str, span) -> None:
        """One hit: `lead` (the parts of its head, `head` their text) and its snippet on one line;
        on a terminal where the head leaves fewer than 20 cells (a database row's long locator),
        the head alone (broken across lines when wider than the terminal) and the snippet on the
        next line, indented, in what the width leaves there."""
        from .table import cells, wrap

        if self.width is not None and self.width - cells(esc(head)) - 2 < 20:
            if cells(esc(head.rstrip())) <= self.width:
                out.spans([*lead[:-1], lead[-1].rstrip() if isinstance(lead[-1], str) else lead[-1]])
            else:  # a head wider than the terminal: broken across lines (a locator is never cut)
                for piece in wrap(esc(head.rstrip()), self.width, "    "):
                    out.text(piece)
            out.spans(["    ", *snippet_parts(text, span, self.rx, max(20, self.width - 6))])
        else:
            out.spans([*lead, *self.parts(head, text, span)])

    def line(self, s: str) -> str:
        """A line of the answer (a turn's opening prompt) cut to the terminal's width (whole on a pipe)."""
        from .table import fit

        return s if self.width is None else fit(esc(s), self.width)


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
    if sm.index_counts.get("fulltext"):
        extra += (f"; {_n(sm.index_counts['fulltext'], 'transcript')} ruled out by the full-text index (no record "
                  "holds the pattern's literal), not parsed")
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
    rank: bool = False
    """``--rank``: the best whole turns for the words of PATTERN (cli/rank_run.py)."""
    limit: int | None = None
    """``-n/--limit``: how many turns --rank gives (default 10)."""


def run(inv, a: SearchArgs) -> int:
    """The search command once parsed (by click, cmd_search.search_cmd, or by the fast path);
    returns its exit status. The cyclic collector stays out of it (read.fanout.no_gc):
    discovery, the walk and the outcomes make tens of thousands of acyclic objects per store, and
    its passes over them were ~8% of a search's CPU; reference counting still frees them."""
    from ..read.nogc import no_gc
    from .progress_run import reading

    if a.rank:
        from . import rank_run

        return rank_run.run(inv, a)
    if a.limit is not None:
        from ..errors import UsageError

        raise UsageError("-n/--limit is the number of turns --rank gives: give --rank with it")
    with no_gc(), reading("searching"):
        return _run(inv, a)


def _query(inv, a: SearchArgs):
    """(the Query, its patterns, the targets) of the command line."""
    from ..errors import UsageError
    from ..search import Query
    from ..timefmt import parse_bound

    args = list(a.args)
    if a.regexps:
        patterns = tuple(a.regexps)
        targets = tuple(args)
    else:
        if not args:
            raise UsageError("search needs a PATTERN (use '' to match every record) or -e PATTERN")
        patterns = (args[0],)
        targets = tuple(args[1:])
    if a.count and a.count_by:
        raise UsageError("-c/--count and --count-by are exclusive")
    if a.sessions_only and (a.count or a.count_by):
        raise UsageError("-l cannot be combined with -c/--count-by")
    # -t/-T take Claude Code labels and the shared kinds alike (each provider reads them its way)
    query = Query(
        patterns=patterns, ignore_case=a.ignore_case, fixed=a.fixed, include=tuple(a.include),
        exclude=tuple(a.exclude), attachments=a.attachments, additional_context=a.additional_context,
        since=parse_bound(inv.since) if inv.since else None,
        until=parse_bound(inv.until, end=True) if inv.until else None,
        max_count=a.max_count, subagents=not a.no_subagents, context=not a.no_context,
        count_by=a.count_by or ("total" if a.count else None), sessions_only=a.sessions_only,
        resolve_persisted=a.resolve_persisted, count_lines=a.count_lines,
    )
    return query, patterns, targets


def _run(inv, a: SearchArgs) -> int:
    from ..search import check, search
    from ..timefmt import instant
    from .options import claude_root_arg

    query, patterns, targets = _query(inv, a)
    check(query)  # usage errors before touching the data root
    if inv.dataset:
        return _run_dataset(inv, a, targets, query, patterns)
    fmt = inv.fmt
    sel = make_selection(inv.with_targets(targets), subagents=query.subagents, narrowed=False)
    run = search(query, sel)
    out = Out(fmt, "search")
    out.header(**selection_header(sel), patterns=list(patterns), ignore_case=query.ignore_case, fixed=query.fixed,
               include=list(query.include), exclude=list(query.exclude), count_by=query.count_by,
               since=instant(query.since), until=instant(query.until))
    counts: dict = {}
    if query.count_by is not None:
        counts = run.census()  # a census: merged counts (kept whole per data root: providers/claude/cache/answers.py)
    else:  # a plain outcome prints nothing (the summary counts it)
        render_outcomes(out, sel, run.outcomes(plain=False), query, claude_root_arg(inv))
    sm = run.summary
    lsm, gsm = sm.lanes, sm.records
    hits = sm.hits
    if query.count_by == "total":
        out.row("count", {"by": None, "key": None, "count": hits})
        out.text(str(hits))
    elif query.count_by is not None:
        _print_counts(out, query.count_by, counts, run.tool_count if query.count_by == "tool" else None)
    covs = sel.coverage()
    from .cmd_shared import search_summary_json, search_summary_text

    deep = run.lanes
    out.summary(files=sm.files, lines=sm.lines, bytes=sm.bytes, sessions=sm.sessions, child_sessions=sm.child_sessions,
                sessions_with_hits=sm.sessions_with_hits, hits=hits, providers=sm.providers,
                records_parsed=lsm.records_parsed, malformed_lines=lsm.malformed_lines,
                bridges={"records": lsm.bridged_records, "transcripts": lsm.bridged_transcripts,
                         "omitted_lines": lsm.omitted_lines, "unchained_transcripts": lsm.unchained_transcripts,
                         "unchained_unknown": lsm.unchained_unknown},
                shape_skipped=lsm.shape_skipped, shape_counted=lsm.shape_counted, undated_skipped=lsm.undated_skipped,
                copies_skipped=lsm.copies_skipped, unreadable=sm.unreadable,
                persisted_unresolved=lsm.persisted_unresolved, unknown_type_lines=lsm.unknown_type_lines,
                prefilter=lsm.prefilter, left_out=lsm.left_out, left_out_note=lsm.left_out_note,
                workers=run.workers, shared=search_summary_json(gsm), coverage=coverage_json(covs),
                index=deep.index_json() if deep is not None else None,
                fulltext=sm.fulltext.as_json() if sm.fulltext is not None else None)
    line = _summary_line(lsm, run.workers)
    gline = search_summary_text(sel, gsm)
    if not out.json:
        if query.sessions_only and hits:
            out.stream.flush()
            if sel.claude is not None:
                out.err(f"{_n(lsm.sessions_with_hits, 'session')} with hits; searched " + line.split(" in ", 1)[1])
            if gline:
                out.err(gline)
            out.err(coverage_line(covs))
        else:
            from .table import COVERAGE_SEPS, prose

            if hits == 0 and query.count_by is None:  # the answer first, then what it was taken over
                prose(out, _no_match(patterns, sm.sessions, covs))
            if sm.fulltext is not None and sm.sessions != 0:  # no session found: nothing was scanned, nothing to say
                from ..index.fulltext import note as ft_note

                ftn = ft_note(sm.fulltext)
                if ftn:
                    prose(out, esc(ftn))
            if sel.claude is not None:
                prose(out, ("Claude Code: " if gline else "") + line, ("; ", " "))
                note = deep.index_note() if deep is not None else None
                if note:
                    prose(out, ("Claude Code: " if gline else "") + note)
            if gline:
                prose(out, gline, ("; ", " "))
            prose(out, coverage_line(covs), COVERAGE_SEPS)
    ic = deep.run.summary.index_counts if deep is not None and deep.run.plan.use_index else None
    index_what_was_read(out, sel, sm.fulltext, query.subagents,
                        [] if ic is not None and not (ic.get("built") or ic.get("appended") or ic.get("scanned")) else None)
    if sm.unreadable or lsm.persisted_unresolved or sel.incomplete():
        return ExitStatus.INCOMPLETE  # we could not look everywhere: even a zero is a lower bound
    return ExitStatus.NO_MATCH if hits == 0 else ExitStatus.OK


def index_what_was_read(out: Out, sel, ft, subagents: bool, lanes: list | None = None) -> None:
    """A search the full-text index did not pick for (a census, a pattern with no literal) read
    every record: after its answer (flushed first) the index is brought up to date for them
    (index/fulltext.py after_reading, within the search's budget), so the next search is warm."""
    from ..index import config

    if not config.enabled(getattr(sel, "index_off", None)):
        return  # (the index is not imported: a --no-index search never touches it)
    from ..index.fulltext import NO_LITERAL

    if ft is not None and ft.why != NO_LITERAL:
        return
    try:
        out.stream.flush()
    except (OSError, ValueError):
        return  # the reader is gone: nothing more to do for it
    from ..index.fulltext import after_reading
    from ..search.records import index_texts

    after_reading(sel, index_texts(), subagents, lanes)


def render_outcomes(out: Out, sel, outcomes, query, claude_home) -> None:
    """The rows (and text) of every outcome with something to show: a lane's hits (a deep part's
    outcome) or a session's hits read from its shared records (records.SessionOutcome)."""
    from ..search.records import SessionOutcome
    from ..timefmt import instant, short_local
    from .options import lane_fields, refetch

    sessions_seen: set[str] = set()
    last_group = None
    hl = _Hits(out, query)
    for unit, o in outcomes:
        if isinstance(o, SessionOutcome):
            last_group = _record_hits(out, sel, o, query, last_group, hl)
            continue
        lane = unit
        if query.sessions_only:
            if o.hit_count and lane.session_id not in sessions_seen:
                sessions_seen.add(lane.session_id)
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
            when = short_local(h.timestamp)
            if query.context:
                group = (lane.path, h.turn)
                if group != last_group:
                    out.spans([(lane.session_id, "id"), f" {esc(lane.display)} turn {h.turn if h.turn is not None else '-'}"])
                    if h.opener is not None and h.opener.line != h.line:
                        out.text(hl.line(f"  L{h.opener.line} [{','.join(h.opener.labels)}] "
                                         f"{short_local(h.opener.timestamp)}  {clip(h.opener.text, 200)}"))
                    last_group = group
                head = f"> L{h.line} [{lab}] {when}  "
                hl.hit(out, [head], head, h.text, h.span)
            else:
                head = f" {esc(lane.display)} L{h.line} [{lab}] {when}  "
                hl.hit(out, [(lane.session_id, "id"), head], lane.session_id + head, h.text, h.span)


def _record_hits(out: Out, sel, o, query, last_group, hl: _Hits):
    """The rows of one session searched through its shared records; the turn group printed last."""
    from ..timefmt import instant, short_local
    from .cmd_shared import display_of
    from .shared import record_row, session_fields

    ref = o.ref
    if query.sessions_only:
        if o.hit_count:
            out.row("session", {**session_fields(ref), "project": ref.project})
            out.text(esc(ref.session_id))
        return last_group
    for h in o.hits:
        r = h.record
        tc = None
        if h.opener is not None:
            tc = {"turn": h.turn, "opener": {"line": h.opener.line, "locator": h.opener.locator,
                                             "timestamp": instant(h.opener.instant), "text": h.opener.text}}
        out.row("hit", {**record_row(sel, ref, r), "text": h.text,
                        "match": {"start": h.span[0], "end": h.span[1]} if h.span else None,
                        "labels": [r.kind], "turn": h.turn, "turn_context": tc})
        if out.json:
            continue
        head = f"{esc(r.locator)} [{r.kind}{' ' + esc(r.tool_name) if r.tool_name else ''}] {short_local(r.instant)}"
        if query.context:
            group = (ref.provider, ref.session_id, h.turn)
            if group != last_group:
                out.spans([(ref.session_id, "id"), f" ({esc(display_of(sel, ref.provider))}) turn "
                           f"{h.turn if h.turn is not None else '-'}"])
                if h.opener is not None:
                    out.text(hl.line(f"  {esc(h.opener.locator)} [prompt] {short_local(h.opener.instant)}  "
                                     f"{clip(h.opener.text, 200)}"))
                last_group = group
            hl.hit(out, [f"> {head}  "], f"> {head}  ", h.text, h.span)
        else:
            hl.hit(out, [(ref.session_id, "id"), f" {head}  "], f"{ref.session_id} {head}  ", h.text, h.span)
    return last_group


def _no_match(patterns, sessions: int, covs) -> str:
    """`no match for 'PATTERN' in N sessions`, and on a machine where nothing was found, what was
    looked for and how to point the search at data."""
    from .newcomer import found_nothing, nothing_note

    pats = " or ".join(repr(p) for p in patterns)
    if found_nothing(covs):
        return f"no match for {pats}: " + nothing_note(covs, f"search {pats}")
    return f"no match for {pats} in {_n(sessions, 'session')}"


def _run_dataset(inv, a: SearchArgs, targets, query, patterns) -> int:
    """`search --dataset`: every machine's records, each session searched as a session is searched
    through its shared records (search/records.py: the same pattern, kinds, turn context,
    counts), Claude Code's too (docs/dataset.md)."""
    from ..errors import UsageError
    from ..search import search
    from ..search.run import record_query
    from ..sync.answers import machines_text, search_selection
    from ..sync.dataset import Dataset
    from ..timefmt import instant
    from .cmd_shared import search_summary_json, search_summary_text
    from .options import refuse_with_dataset

    refuse_with_dataset(inv.with_targets(targets))
    dataset = inv.dataset
    fmt = inv.fmt
    for flag, on in (("--attachments", a.attachments), ("--additional-context", a.additional_context),
                     ("--resolve-persisted", a.resolve_persisted), ("--count-lines", a.count_lines)):
        if on:
            raise UsageError(f"{flag} reads Claude Code's transcripts on this machine; a dataset search reads the "
                             "shared records (drop it)")
    rq = record_query(query)
    sel = search_selection(Dataset.open(dataset), list(inv.providers) or None, query.subagents, rq.needles,
                           rq.needles_ci)
    out = Out(fmt, "search")
    out.header(dataset=dataset, machines=sel.machines, patterns=list(patterns), ignore_case=query.ignore_case,
               fixed=query.fixed, include=list(query.include), exclude=list(query.exclude), count_by=query.count_by,
               since=instant(query.since), until=instant(query.until))
    run = search(query, sel)
    counts: dict = {}
    if query.count_by is not None:
        counts = run.census()
    else:
        render_outcomes(out, sel, run.outcomes(plain=False), query, None)
    gsm = run.summary.records
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
