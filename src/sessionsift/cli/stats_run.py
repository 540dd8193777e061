"""`stats`'s body without click: the command's run once its command line is parsed (by click in
cmd_core.py, or by the fast path of cli/fastsearch.py, which must print the same bytes)."""

from __future__ import annotations

from ..providers import deep_name
from .exit import ExitStatus
from .options import (claude_scope, coverage_json, coverage_line, lane_fields, make_selection, problems_json,
                      selection_header)
from .output import Out, esc


def bridges_json(st) -> list[dict]:
    """The declared bridges of one reading (providers/claude/model/lane.py): a record whose parent lay in an omitted
    line, joined to the chain across it."""
    return [{"line": ln, "omitted_line": om, "bridged_to": tl, "inferred_opener": op} for ln, om, tl, op in st.bridges]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _tools_text(calls, errors) -> str:
    """`Bash 3 calls (1 error), Read 1 call, ...; 4 calls, 1 error` (most calls first)."""
    names = sorted(set(calls) | set(errors), key=lambda k: (-calls.get(k, 0), str(k)))
    parts = []
    for k in names:
        n, e = calls.get(k, 0), errors.get(k, 0)
        parts.append(f"{esc(k)} {n} call{'s' if n != 1 else ''}" + (f" ({e} error{'s' if e != 1 else ''})" if e else ""))
    n, e = sum(calls.values()), sum(errors.values())
    return ", ".join(parts) + f"; {n} call{'s' if n != 1 else ''}, {e} error{'s' if e != 1 else ''}"


def _prompts_text(p: dict, kinds: tuple[str, ...], word: str = "typed") -> str:
    """`6 typed: 4 sent, 1 queued, 0 rewound, 1 unsent` (`kinds`: the deep Scope's prompt_kinds)."""
    head = f"{sum(p.values())} {word}: " if word else ""
    return head + ", ".join(f"{p.get(k, 0)} {k}" for k in kinds)


def _known_tokens(tokens: dict, missing: dict, fields: tuple[str, ...]) -> dict:
    """Token totals with a field some API message lacks shown as None (unknown, not the sum of
    the others); the sums stay available as `tokens_lower_bound_by_model` (`fields`: the
    deep Scope's usage_fields)."""
    out = {}
    for m, d in tokens.items():
        miss = missing.get(m, {})
        out[m] = {f: (None if f in miss else d.get(f)) for f in fields if f in d or f in miss}
    return out


def run_dataset(inv, no_subagents, strict) -> int:
    """`stats --dataset`: every machine's sessions, each with the census `stats --shared` takes of it
    (Claude Code read through the shared records), summed the same way (docs/dataset.md)."""
    from ..sync.answers import machines_text, stats_census
    from ..sync.dataset import Dataset
    from .cmd_shared import stats_rows
    from .options import display_name, refuse_with_dataset

    refuse_with_dataset(inv)
    dataset, fmt = inv.dataset, inv.fmt
    if strict:
        from ..errors import UsageError

        raise UsageError("--strict reads this machine's transcripts; a dataset holds what sync read (drop --strict)")
    ds = Dataset.open(dataset)
    got = stats_census(ds, list(inv.providers) or None, not no_subagents)
    res = got.shared
    out = Out(fmt, "stats")
    top = sum(1 for s in res.sessions if s.ref.parent_session_id is None)
    out.header(dataset=dataset, machines=got.machines, sessions=top, claude_home=None, claude_home_source=None)
    stats_rows(out, res, display_name, lambda st: {"machine": got.machine_of.get(id(st))})
    t = res.totals()
    left = ("Claude Code's deep census (line types, labels, turns, compactions, prompts by how they reached the "
            "model) is not in a dataset: its sessions are counted through the shared records, as `stats --shared`")
    out.summary(dataset=dataset, machines=got.machines, files_unreadable=len(res.problems),
                problems=problems_json(res.problems), shared={**t, "providers": sorted({s.ref.provider for s in res.sessions})},
                left_out=[left], coverage=coverage_json(got.coverage))
    from .table import COVERAGE_SEPS, prose

    names = sorted({esc(display_name(s.ref.provider)) for s in res.sessions})
    prose(out, f"every agent's sessions ({', '.join(names)}): {_plural(t['sessions'], 'session')}, "
             f"{_plural(t['records'], 'record')}, {_plural(t['prompts'], 'prompt')}, "
             f"{_plural(sum(t['tool_calls'].values()), 'tool call')}, {sum(t['tool_errors'].values())} failed"
             + (f"; tokens unknown in {_plural(t['tokens_unknown_sessions'], 'session')} (left out of the sums)"
                if t["tokens_unknown_sessions"] else "")
             + (f", {len(res.problems)} unreadable: " + "; ".join(f"{esc(p.path)}: {esc(p.why)}" for p in res.problems[:5])
                if res.problems else ""))
    prose(out, f"note: {left}")
    prose(out, f"dataset {esc(dataset)}, {esc(machines_text(got.machines))}")
    prose(out, coverage_line(got.coverage), COVERAGE_SEPS)
    return ExitStatus.INCOMPLETE if res.problems else ExitStatus.OK


def _lane_tokens(ls) -> str:
    """A lane's tokens (every field summed over its models) as a table cell: `≥N` when some API
    message lacks a field, `?` when none was recorded."""
    if not ls.tokens and ls.tokens_missing:
        return "?"
    n = sum(sum(d.values()) for d in ls.tokens.values())
    return ("≥" if ls.tokens_missing else "") + f"{n:,}"


def _shared_tokens(st) -> str:
    if st.tokens_by_model is None:
        return "?"
    n = 0
    for d in st.tokens_by_model.values():
        n += d["total"] if d.get("total") is not None else sum(v for v in d.values() if v)
    return f"{n:,}"


def _short_table(out, sel, res, gres, detailed, display) -> None:
    """`stats`'s short answer: one row per session (its subagents under it), the figures a person
    asks for; the record kinds, labels and token fields are `--verbose`'s."""
    from .table import Col, render

    cols = [Col("SESSION", flex="middle", floor=16), Col("AGENT", flex="end", floor=6), Col("TURNS", right=True, drop=True),
            Col("PROMPTS", right=True), Col("RECORDS", right=True, drop=True), Col("CALLS", right=True),
            Col("FAILED", right=True), Col("TOKENS", right=True)]
    rows: list[list[str]] = []
    claude = display(deep_name())
    order: dict[str, list] = {}
    for ls in res.lanes:
        order.setdefault(ls.lane.session_id, []).append(ls)
    for sid, lanes in order.items():
        lanes.sort(key=lambda ls: ls.lane.is_subagent)
        for ls in lanes:
            sub = ls.lane.is_subagent
            rows.append([("  ↳ " + str(ls.lane.display)) if sub else sid, claude, str(ls.turns),
                         "-" if sub else str(sum(ls.prompts.values())), str(ls.read.records),
                         str(sum(ls.tool_calls.values())), str(sum(ls.tool_errors.values())), _lane_tokens(ls)])
    shared = [st for st in gres.sessions if st.ref.provider not in detailed]
    kids: dict[tuple[str, str], list] = {}
    ids = {(st.ref.provider, st.ref.session_id) for st in shared}
    for st in shared:
        p = st.ref.parent_session_id
        if p is not None and (st.ref.provider, p) in ids:
            kids.setdefault((st.ref.provider, p), []).append(st)

    def add(st, depth: int) -> None:
        ref = st.ref
        name = ref.session_id if depth == 0 else "  " * depth + "↳ " + ref.session_id
        rows.append([name, display(ref.provider), "?" if st.turns is None else str(st.turns),
                     "-" if depth else ("?" if st.prompts is None else str(st.prompts)),
                     "?" if st.records is None else str(st.records), str(sum(st.tool_calls.values())),
                     str(sum(st.tool_errors.values())), _shared_tokens(st)])
        for k in kids.get((ref.provider, ref.session_id), []):
            add(k, depth + 1)

    for st in shared:
        p = st.ref.parent_session_id
        if p is None or (st.ref.provider, p) not in ids:
            add(st, 0)
    if rows:
        render(out, cols, rows)


def run(inv, no_subagents, strict, shared_claude, verbose: bool = False) -> int:
    """The stats command (docs/stats.md) for the Invocation `inv`; its exit status. Text: a table of
    the sessions and the totals; `verbose`: each lane's census in full (record types, labels,
    token fields, prompts by how they reached the model). JSON is the same either way."""
    if inv.dataset:
        return run_dataset(inv, no_subagents, strict)
    from .progress_run import reading

    with reading("reading"):
        return _run(inv, no_subagents, strict, shared_claude, verbose)


def _run(inv, no_subagents, strict, shared_claude, verbose: bool) -> int:
    fmt = inv.fmt
    sel = make_selection(inv, subagents=not no_subagents)
    scope = claude_scope(sel)
    from ..index.report import IndexReport

    irep = IndexReport.for_root(scope.home.path, scope.index_off)
    census = prog = None
    if irep.on:
        from ..index.progress import Progress

        prog = Progress()
        census = scope.index_census(prog)  # the deep model's lanes answered from its index
    from ..stats import stats_of

    try:
        unified = stats_of(sel, subagents=not no_subagents, strict=strict, read_claude=shared_claude, cache=census)
    finally:
        if prog is not None:
            prog.done()
            scope.index_census(None)
    # Claude Code's lane census (its provider's detail): the rows below (with --shared too: the
    # shared totals are then read from its shared records beside it)
    res = unified.detail.get(deep_name()) or scope.empty_census()
    for ls in res.lanes:
        irep.add(getattr(ls, "indexed", None))
    out = Out(fmt, "stats")
    out.header(**selection_header(sel))
    from collections import Counter

    tot_labels: Counter = Counter()
    tot_types: Counter = Counter()
    tot_calls: Counter = Counter()
    tot_errors: Counter = Counter()
    human: dict[str, int] | None = None
    tokens: dict[str, dict[str, int]] = {}
    missing: dict[str, dict[str, int]] = {}
    omis: Counter = Counter()
    copied_total = 0
    for ls in res.lanes:
        tot_labels.update(ls.labels)
        tot_types.update(ls.line_types)
        for m, d in ls.tokens.items():
            agg = tokens.setdefault(m, {})
            for k, v in d.items():
                agg[k] = agg.get(k, 0) + v  # a sum over the lanes that wrote this field (absent fields stay absent)
        for m, d in ls.tokens_missing.items():
            agg = missing.setdefault(m, {})
            for k, v in d.items():
                agg[k] = agg.get(k, 0) + v
        omis.update(ls.read.omissions())
        tot_calls.update(ls.tool_calls)
        tot_errors.update(ls.tool_errors)
        if not ls.lane.is_subagent:  # a subagent's prompt is its seed, written by the parent agent
            human = human or dict.fromkeys(scope.prompt_kinds, 0)
            for k, v in ls.prompts.items():
                human[k] += v
        out.row("lane", {
            **lane_fields(ls.lane),
            "lines": ls.read.lines, "bytes": ls.read.bytes, "records": ls.read.records,
            "line_types": dict(ls.line_types), "system_subtypes": dict(ls.system_subtypes),
            "attachment_kinds": dict(ls.attachment_kinds), "labels": dict(ls.labels),
            "unlabelled_records": ls.unlabelled, "unknown_line_types": dict(ls.unknown_line_types),
            "turns": ls.turns, "compactions": ls.compactions, "survival": dict(ls.survival),
            "replayed_lines": ls.replayed_lines,
            "tokens_by_model": _known_tokens(ls.tokens, ls.tokens_missing, scope.usage_fields),
            "tokens_lower_bound_by_model": ls.tokens if ls.tokens_missing else None,
            "tokens_missing_by_model": ls.tokens_missing or None,
            "api_messages_by_model": dict(ls.messages_by_model),
            "thinking_blocks": ls.thinking_blocks, "narration_blocks": ls.narration_blocks,
            "untagged_thinking_blocks": ls.untagged_thinking_blocks,
            "unknown_thinking_tags": dict(ls.unknown_thinking_tags),
            "malformed_lines": ls.read.malformed_lines[:100],
            "tool_calls": dict(ls.tool_calls), "tool_errors": dict(ls.tool_errors), "prompts": ls.prompts,
            "omissions": ls.read.omissions(),
            "bridges": bridges_json(ls.read),
            "forked_from": ls.forked_from, "copied_records": ls.copied_records,
            "messages_copied": ls.messages_copied, "tokens_copied_by_model": ls.tokens_copied or None,
            "copies_counted_in": dict(ls.copies_counted_in),
        })
        copied_total += ls.messages_copied
        if not verbose:
            continue
        out.text(f"{ls.lane.session_id} {ls.lane.display}: {_plural(ls.read.lines, 'line')}, {_plural(ls.turns, 'turn')}, "
                 f"{_plural(ls.compactions, 'compaction')}, {ls.narration_blocks} narration / "
                 f"{_plural(ls.thinking_blocks, 'thinking block')}")
        if not out.json:
            for k, v in sorted(ls.line_types.items(), key=lambda kv: -kv[1]):
                out.text(f"  type {esc(k):<28} {v}")
            for k, v in sorted(ls.labels.items(), key=lambda kv: -kv[1]):
                out.text(f"  label {k:<34} {v}")
            if ls.unlabelled:
                out.text(f"  label {'(unlabelled)':<34} {ls.unlabelled}")
            for m, d in ls.tokens.items():
                miss = ls.tokens_missing.get(m, {})
                out.text(f"  tokens {esc(m)}: " + ", ".join(
                    f"{k}>={v} ({miss[k]} of {ls.messages_by_model[m]} API messages lack it)" if k in miss
                    else f"{k}={v}" for k, v in d.items())
                    + "".join(f", {k}=? (all {ls.messages_by_model[m]} API messages lack it)"
                              for k in miss if k not in d)
                    + f" over {_plural(ls.messages_by_model[m], 'API message')}")
            if ls.tool_calls or ls.tool_errors:
                out.text("  tools: " + _tools_text(ls.tool_calls, ls.tool_errors))
            out.text(("  seed prompts (written by the parent agent): " if ls.lane.is_subagent else "  human prompts: ")
                     + _prompts_text(ls.prompts, scope.prompt_kinds, "" if ls.lane.is_subagent else "typed"))
            om = {k: v for k, v in ls.read.omissions().items() if v}
            if om:
                out.text("  omissions: " + ", ".join(f"{k}={v}" for k, v in om.items())
                         + (f" (malformed at L{', L'.join(map(str, ls.read.malformed_lines[:10]))})" if ls.read.malformed_lines else ""))
            for n in ls.read.bridge_notes()[:10]:
                out.text(f"  note: {n}")
            if ls.messages_copied:
                out.text(f"  {_plural(ls.messages_copied, 'API message')} also held by another lane, counted there "
                         "(each response once): " + ", ".join(f"{esc(k)} {v}" for k, v in ls.copies_counted_in.items()))
            if ls.forked_from:
                out.text(f"  forked from {ls.forked_from['session_id']} at its L{ls.forked_from['line']}"
                         + (f"; {ls.copied_records} copied records left out (counted on the original)"
                            if ls.copied_records else " (the original is not in scope: its copies are counted here)"))
    from .cmd_shared import display_of, stats_rows

    gres = unified.shared
    # every session's row (JSON); in text a session whose provider's own census was printed above
    # (its lanes) is not printed twice
    detailed = {name for name in unified.detail}
    stats_rows(out, gres, lambda name: display_of(sel, name),
               text_skip=(lambda st: st.ref.provider in detailed) if verbose else (lambda st: True))
    if not verbose and not out.json:
        _short_table(out, sel, res, gres, detailed, lambda name: display_of(sel, name))
    seen = set()
    problems = []
    for p in list(sel.problems()) + list(res.problems) + list(gres.problems):
        if (p.path, p.why) not in seen:
            seen.add((p.path, p.why))
            problems.append(p)
    covs = sel.coverage()
    out.summary(files_read=len(res.lanes), files_unreadable=len(problems), problems=problems_json(problems),
                line_types=dict(tot_types), labels=dict(tot_labels), tokens_by_model=_known_tokens(tokens, missing, scope.usage_fields),
                tokens_lower_bound_by_model=tokens if missing else None, tokens_missing_by_model=missing or None,
                messages_copied=copied_total,
                tool_calls=dict(tot_calls), tool_errors=dict(tot_errors),
                human_prompts=None if human is None else {"typed": sum(human.values()), **human},
                omissions=dict(omis), index={**irep.as_json(), "shared_sessions": unified.kept},
                shared={**gres.totals(), "providers": sorted({st.ref.provider for st in gres.sessions})},
                coverage=coverage_json(covs))
    from .table import COVERAGE_SEPS, prose

    def say(line: str, seps: tuple[str, ...] = (" ",)) -> None:  # a line of prose: broken on a terminal
        prose(out, line, seps)

    if sel.claude is not None and verbose:
        cc = "Claude Code: " if any(st.ref.provider not in detailed for st in gres.sessions) else ""
        if tot_calls or tot_errors:
            say(cc + "tool calls: " + _tools_text(tot_calls, tot_errors))
        say(cc + "human prompts: " + ("no main lane in scope" if human is None else _prompts_text(human, scope.prompt_kinds)))
        say(cc + f"{_plural(len(res.lanes), 'transcript')} read ({_plural(len(scope.sessions), 'session')}), "
                 f"{len(res.problems)} unreadable"
                 + ("".join(f"; {esc(p.path)}: {esc(p.why)}" for p in res.problems[:5])))
        if irep.on and irep.counts["scanned"]:
            say(cc + irep.text())
    elif sel.claude is not None and not out.json:
        cc = "Claude Code: "
        if res.problems:
            say(cc + f"{len(res.problems)} of {_plural(len(res.lanes) + len(res.problems), 'transcript')} unreadable"
                     + "".join(f"; {esc(p.path)}: {esc(p.why)}" for p in res.problems[:5]))
        om = {k: v for k, v in omis.items() if v}
        if om:
            say(cc + "lines left out of the counts: " + ", ".join(f"{k}={v}" for k, v in om.items())
                     + " (--verbose names the transcripts)")
        said = irep.text() if irep.on and irep.counts["scanned"] else None
        if said:
            say(cc + said)
    if not verbose and not out.json and gres.sessions:
        t = gres.totals()
        calls, errs = t["tool_calls"], t["tool_errors"]
        if calls or errs:
            top = sorted(set(calls) | set(errs), key=lambda k: (-calls.get(k, 0), str(k)))
            shown = ", ".join(f"{esc(k)} {calls.get(k, 0)}" + (f" ({errs[k]} failed)" if errs.get(k) else "")
                              for k in top[:8])
            say(f"tools most called: {shown}" + (f", {len(top) - 8} more" if len(top) > 8 else ""))
    if gres.sessions or gres.problems:
        t = gres.totals()
        names = sorted({esc(display_of(sel, st.ref.provider)) for st in gres.sessions})
        say(f"every agent's sessions ({', '.join(names)}): {_plural(t['sessions'], 'session')}, "
                 f"{_plural(t['records'], 'record')}, {_plural(t['prompts'], 'prompt')}, "
                 f"{_plural(sum(t['tool_calls'].values()), 'tool call')}, {sum(t['tool_errors'].values())} failed"
                 + (f"; tokens unknown in {_plural(t['tokens_unknown_sessions'], 'session')} (left out of the sums)"
                    if t["tokens_unknown_sessions"] else "") + (f", {len(gres.problems)} unreadable: " + "; ".join(
                     f"{esc(p.path)}: {esc(p.why)}" for p in gres.problems[:5]) if gres.problems else ""))
    if missing:
        say("token totals are lower bounds: some API messages lack a usage field ("
                 + "; ".join(f"{m}: " + ", ".join(f"{k} missing on {v}" for k, v in d.items())
                             for m, d in missing.items()) + ")")
    if not verbose and not out.json and (res.lanes or gres.sessions):
        say("(--verbose: each session's record kinds, labels, token fields and prompts by how they were sent)")
    if not gres.sessions and not res.lanes and not out.json:
        from .newcomer import found_nothing, nothing_note

        if found_nothing(covs):
            say("no sessions: " + nothing_note(covs, "stats"))
    say(coverage_line(covs), COVERAGE_SEPS)
    # stats read every record: the full-text index is brought up to date for them after the
    # answer (within the search's budget), so the next search is warm
    from .search_run import index_what_was_read

    index_what_was_read(out, sel, None, not no_subagents,
                        [ls.lane for ls in res.lanes if getattr(getattr(ls, "indexed", None), "how", None) != "index"])
    return ExitStatus.INCOMPLETE if problems or missing or sel.incomplete() else ExitStatus.OK
