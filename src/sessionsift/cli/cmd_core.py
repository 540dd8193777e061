"""`list`, `show`, `stats`."""

from __future__ import annotations

from collections import Counter

import click

from ..core import listing, stats as stats_mod
from ..discover import Lane
from ..model.lane import Entry
from ..model import record as R
from ..timefmt import instant, short_local
from .exit import ExitStatus
from .options import (claude_root_arg, sessions_unit, claude_scope, lane_fields, refetch, refetch_at, common_options, coverage_json, coverage_line, make_selection,
                      problems_json, provider_options, scope_options, selection_header)
from .output import Out, clip, esc


def bridges_json(st) -> list[dict]:
    """The declared bridges of one reading (model/lane.py): a record whose parent lay in an omitted
    line, joined to the chain across it."""
    return [{"line": ln, "omitted_line": om, "bridged_to": tl, "inferred_opener": op} for ln, om, tl, op in st.bridges]


def entry_fields(lane: Lane, e: Entry, home: str | None) -> dict:
    return {
        **lane_fields(lane),
        "line": e.no,
        "uuid": e.uuid,
        "parent_uuid": e.parent,
        "type": e.type,
        "subtype": e.subtype,
        "labels": list(e.labels),
        "timestamp": instant(e.timestamp),
        "turn": e.turn,
        "survival": e.survival,
        "replay_of": e.replay_of,
        "bridged_to": e.bridged_to,
        "tool_names": list(e.tool_names),
        "attachment": e.attachment,
        "refetch": refetch(lane, e.no, home),
    }


@click.command("list")
@click.argument("targets", nargs=-1)
@common_options
@provider_options
@scope_options
@click.option("--no-subagents", is_flag=True, help="Do not count subagent lanes.")
def list_cmd(targets, fmt, claude_home, sessions_from, no_subagents):
    """One row per session of every provider, newest first (Claude Code: each transcript's head
    and tail only; other providers: the session's records), ending with the coverage line.

    \b
    Example: sessionsift list --home examples/home
    Example: sessionsift list . --format json
    """
    from ..questions.listing import list_refs, sort_key

    sel = make_selection(targets, sessions_from, subagents=not no_subagents)
    rows: list[tuple[float, str, object]] = []
    res = None
    if sel.claude is not None:
        res = listing.list_sessions(sel.claude, subagents=not no_subagents)
        rows += [(sort_key(r.last_at), "claude", r) for r in res.rows]
    gen = list_refs(sel.refs, {e.name: e.provider for e in sel.survey.entries if e.provider is not None})
    rows += [(sort_key(r.last_at), "ref", r) for r in gen.rows]
    rows.sort(key=lambda x: x[0], reverse=True)
    out = Out(fmt, "list")
    out.header(**selection_header(sel))
    kids: Counter | None = None  # a child session of another provider is its parent's subagent
    if sel.subagents:
        kids = Counter((r.provider, r.parent_session_id) for r in sel.refs if r.is_subagent)
    lineage = _lineage(sel)
    for _k, which, r in rows:
        if which == "claude":
            _claude_row(out, r)
        else:
            _ref_row(out, r, sel, kids, lineage)
    problems = sel.problems() + (res.problems if res else []) + gen.problems
    problems = [p for i, p in enumerate(problems) if (p.path, p.why) not in {(q.path, q.why) for q in problems[:i]}]
    covs = sel.coverage()
    bytes_total = (res.bytes_total if res else 0) + sum(r.report.bytes for r in gen.rows)
    bytes_read = (res.bytes_read if res else 0) + sum(r.report.bytes for r in gen.rows)
    n = len(rows)
    out.summary(sessions=sel.top_level(), child_sessions=sel.child_sessions(), files_read=(len(res.rows) if res else 0) + sum(r.report.files for r in gen.rows),
                files_unreadable=len(problems), problems=problems_json(problems), bytes_total=bytes_total,
                bytes_read=bytes_read, coverage=coverage_json(covs))
    unread = f"; {len(problems)} unreadable: " + "; ".join(f"{esc(p.path)} ({esc(p.why)})" for p in problems[:5]) if problems else ""
    where = ""
    if sel.claude is not None:
        # a session id target scans every project dir; the dirs that hold the sessions listed are the answer
        dirs = sel.claude.project_dirs or len({str(s.project_dir) for s in sel.claude.sessions})
        where = (f"; Claude Code: {len(res.rows) if res else 0} in {_plural(dirs, 'project dir')} under "
                 f"{esc(sel.claude.home.path)}")
    out.text(f"{sessions_unit(n, covs)}{where}; read {bytes_read} of {bytes_total} bytes{unread}")
    out.text(coverage_line(covs))
    return ExitStatus.INCOMPLETE if problems or sel.incomplete() else ExitStatus.OK


def _claude_row(out: Out, r) -> None:
    out.row("session", {
        "provider": "claude-code",
        "session_id": r.session_id, "is_subagent": False, "parent_session_id": None, "helper": None,
        "path": r.path, "project": r.project,
        "first_prompt": r.first_prompt, "first_prompt_at": instant(r.first_prompt_at),
        "last_prompt": r.last_prompt, "last_prompt_at": instant(r.last_prompt_at),
        "last_agent_message": r.last_agent_message, "last_agent_message_at": instant(r.last_agent_message_at),
        "first_at": instant(r.first_at), "last_at": instant(r.last_at),
        "git_branch": r.git_branch, "version": r.version, "size_bytes": r.size,
        "subagents": r.subagents, "bytes_read": r.bytes_read, "notes": r.notes,
        "forked_from": r.forked_from, "forks": r.forks,
    })
    branch = f", git branch {esc(r.git_branch)}" if r.git_branch else ", no git branch recorded"
    out.text(f"{r.session_id}  {short_local(r.last_at)}  {esc(r.project)}  [Claude Code {esc(r.version or '?')}{branch}] "
             f"{r.size} B, {_plural(r.subagents, 'subagent') if r.subagents is not None else '? subagents'}")
    if r.forked_from:
        f = r.forked_from
        out.text(f"  forked from {f['session_id']} at its L{f['line']} ({f['copied_records']} records copied)")
    if r.forks:
        out.text(f"  forks: {', '.join(r.forks)}")
    out.text(f"  first: {clip(r.first_prompt, 100)}")
    out.text(f"  last:  {clip(r.last_prompt, 100)}")
    out.text(f"  agent: {clip(r.last_agent_message, 100)}")
    for n in r.notes:
        out.text(f"  note: {esc(n)}")


def _lineage(sel) -> dict:
    """(provider, session id) -> (forked_from, forks) for every provider whose client records forks
    (Provider.records_forks): forks are found among all the sessions its discovery saw, so a parent
    listed alone still names them; (None, None) for a provider that records no lineage."""
    out: dict = {}
    for e in sel.survey.entries:
        prov = e.provider
        if prov is None or e.name == "claude-code" or not getattr(type(prov), "records_forks", False):
            continue
        paths = {r.session_id: str(r.paths[0]) if r.paths else None for r in e.sessions}
        forks: dict[str, list[str]] = {}
        for r in e.sessions:
            f = prov.forked_from(r)
            if f is not None:
                if f.get("path") is None:
                    f = {**f, "path": paths.get(f["session_id"])}
                forks.setdefault(f["session_id"], []).append(r.session_id)
            out[(e.name, r.session_id)] = [f, None]
        for (name, sid), v in out.items():
            if name == e.name:
                v[1] = sorted(forks.get(sid, []))
    return out


def _ref_row(out: Out, r, sel, kids=None, lineage=None) -> None:
    ref = r.ref
    e = sel.survey.entry(ref.provider)
    display = e.display if e else ref.provider
    fk = (lineage or {}).get((ref.provider, ref.session_id), (None, None))
    out.row("session", {
        "provider": ref.provider,
        "session_id": ref.session_id, "is_subagent": ref.is_subagent,
        "parent_session_id": ref.parent_session_id, "helper": ref.helper,
        "path": str(ref.paths[0]) if ref.paths else None, "paths": [str(p) for p in ref.paths],
        "project": ref.project, "project_source": ref.project_source, "title": ref.title,
        "first_prompt": r.first_prompt, "first_prompt_at": instant(r.first_prompt_at),
        "last_prompt": r.last_prompt, "last_prompt_at": instant(r.last_prompt_at),
        "last_agent_message": r.last_agent_message, "last_agent_message_at": instant(r.last_agent_message_at),
        "first_at": instant(r.first_at), "last_at": instant(r.last_at),
        "git_branch": None, "version": ref.version, "size_bytes": ref.size,
        "subagents": None if kids is None else kids.get((ref.provider, ref.session_id), 0),
        "bytes_read": r.report.bytes, "records": r.records, "prompts": r.prompts,
        "models": r.models, "omissions": r.report.omissions(), "notes": r.notes,
        "forked_from": fk[0], "forks": fk[1],
    })
    size = f"{ref.size} B" if ref.size is not None else "size not attributable"
    out.text(f"{esc(ref.session_id)}  {short_local(r.last_at)}  {esc(ref.project)}  [{esc(display)} {esc(ref.version or '?')}] "
             f"{size}, {r.records} records" + (
                 f", {esc(ref.helper)} for {esc(ref.parent_session_id)} (a helper session, not a subagent)" if ref.helper
                 else f", child of {esc(ref.parent_session_id)}" if ref.parent_session_id else "")
             + (f", {_plural(kids[(ref.provider, ref.session_id)], 'subagent')}"
                if kids and kids.get((ref.provider, ref.session_id)) else ""))
    if ref.title:
        out.text(f"  title: {clip(ref.title, 100)}")
    if fk[0]:
        out.text(f"  forked from {esc(fk[0]['session_id'])}"
                 + (f" (before its record ordinal {fk[0]['ordinal_exclusive']})" if fk[0].get("ordinal_exclusive")
                    is not None else ""))
    if fk[1]:
        out.text(f"  forks: {', '.join(esc(x) for x in fk[1])}")
    out.text(f"  first: {clip(r.first_prompt, 100)}")
    out.text(f"  last:  {clip(r.last_prompt, 100)}")
    out.text(f"  agent: {clip(r.last_agent_message, 100)}")
    for n in r.notes:
        out.text(f"  note: {esc(n)}")


@click.command("show")
@click.argument("target")
@common_options
@provider_options
@click.option("--lane", default=None, help="Subagent lane (agent id or file stem) of the session.")
@click.option("--line", "lines", default=None, help="N (explicit) or A..B (range), 1-based physical lines.")
@click.option("--locator", default=None, help="A record's locator (L12, L12#1, or TABLE:ID for a database row).")
@click.option("--uuid", default=None, help="Record uuid (Claude Code).")
@click.option("--turn", type=int, default=None, help="Turn number (negative counts from the end: -1 = last).")
@click.option("--raw", is_flag=True, help="Print the raw line bytes (escaped in text mode).")
@click.option("--branch-points", is_flag=True, help="Records with more than one conversation child (Claude Code).")
@click.option("--full", is_flag=True,
              help="Print large harness payloads (system-prompt snapshots, skill/agent listings) whole.")
def show_cmd(target, fmt, claude_home, lane, lines, locator, uuid, turn, raw, branch_points, full):
    """Show records of one session (any provider) by line, locator, uuid or turn.

    \b
    Example: sessionsift show 3f2a --turn -1
    Example: sessionsift show ses_4b1c --locator part:prt_9a2 --home examples/home
    """
    from ..core import show as show_mod  # show's own module: no other command pays for it

    from ..errors import TargetError, UsageError

    sel = make_selection((target,))
    n_claude = len(sel.claude.sessions) if sel.claude is not None else 0
    if sel.children:  # one session: not the subagents its id brought along
        from dataclasses import replace as _replace

        sel = _replace(sel, refs=[r for r in sel.refs if (r.provider, r.session_id) not in sel.children],
                       children=frozenset())
    named = sel.refs
    if named and n_claude + len(named) == 1:
        from .cmd_shared import show_shared

        return show_shared(sel, named[0], fmt, lane=lane, lines=lines, locator=locator, uuid=uuid,
                           turn=turn, raw=raw, branch_points=branch_points)
    if named or sel.claude is None:
        from .options import display_name

        ids = [f"{r.session_id} ({display_name(r.provider)})" for r in named[:10]]
        raise TargetError(f"this command needs exactly one session; the target matched {sel.total()}"
                          + (f": {', '.join(ids)}" if ids else ""),
                          hint="name a session id (or unique prefix) or a transcript path")
    scope = sel.claude
    if locator is not None:
        import re as _re

        m = _re.fullmatch(r"L(\d+)(?:#\d+)?", locator)
        if m is None:
            raise UsageError(f"a Claude Code record's locator is L<line> or L<line>#<block>, not {locator!r}")
        lines = m.group(1)
    ln = show_mod.pick_lane(scope, lane)
    out = Out(fmt, "show")
    out.header(**selection_header(sel), lane=lane_fields(ln))
    covs = sel.coverage()
    if branch_points:
        idx, bps = show_mod.branch_points(ln)
        for bp in bps:
            out.row("branch_point", {**entry_fields(ln, bp.entry, claude_home),
                                     "children": [{"line": c.no, "uuid": c.uuid, "labels": list(c.labels),
                                                   "survival": c.survival} for c in bp.children]})
            out.text(f"L{bp.entry.no} {bp.entry.uuid} -> " + ", ".join(
                f"L{c.no} {c.labels[0] if c.labels else c.type} ({c.survival})" for c in bp.children))
        out.summary(branch_points=len(bps), lines=idx.stats.lines, omissions=idx.stats.omissions(),
                    coverage=coverage_json(covs))
        out.text(f"{len(bps)} branch points in {idx.stats.lines} lines of {esc(ln.path)}")
        out.text(coverage_line(covs))
        return ExitStatus.OK
    idx, recs = show_mod.show(ln, lines=lines, uuid=uuid, turn=turn, raw=raw)
    n_collapsed = 0
    for r in recs:
        e = r.entry
        body = R.display_text(r.obj, list(e.labels))
        col = None if (full or raw) else show_mod.collapsed(r, body)
        whole = refetch(ln, e.no, claude_home) + " --full" if col else None
        data = {**entry_fields(ln, e, claude_home), "record": r.obj,
                "collapsed": {"kind": col.kind, "bytes": col.bytes, "refetch": whole} if col else None}
        if raw and r.raw is not None:
            data["raw"] = r.raw.decode("utf-8", "replace")
        out.row("record", data)
        lab = ",".join(e.labels) or "(unlabelled)"
        out.text(f"L{e.no} [{lab}] {e.type or '?'} turn={e.turn if e.turn is not None else '-'} "
                 f"{e.survival or '-'} {short_local(e.timestamp)} {e.uuid or ''}")
        if col:
            n_collapsed += 1
            out.text(f"  [{esc(col.kind)} payload, {_size(col.bytes)}, collapsed; whole: {whole}]")
        elif raw and r.raw is not None:
            out.text("  " + esc(r.raw.decode("utf-8", "replace")))
        else:
            for line in body.split("\n")[:200]:
                out.text("  " + esc(line))
    out.summary(records=len(recs), lines=idx.stats.lines, omissions=idx.stats.omissions(),
                bridges=bridges_json(idx.stats), coverage=coverage_json(covs), collapsed=n_collapsed)
    for n in idx.stats.bridge_notes()[:10]:
        out.err(f"sessionsift: note: {n}")
    out.text(coverage_line(covs))
    return ExitStatus.OK


def _size(n: int) -> str:
    """Decimal units, 3 significant digits."""
    if n < 1000:
        return f"{n} bytes"
    for unit in ("kB", "MB", "GB"):
        n /= 1000
        if n < 999.5 or unit == "GB":
            return f"{n:.3g} {unit}"
    return f"{n} bytes"  # pragma: no cover


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


def _prompts_text(p: dict, word: str = "typed") -> str:
    """`6 typed: 4 sent, 1 queued, 0 rewound, 1 unsent`."""
    head = f"{sum(p.values())} {word}: " if word else ""
    return head + ", ".join(f"{p.get(k, 0)} {k}" for k in stats_mod.PROMPT_KINDS)


def _known_tokens(tokens: dict, missing: dict) -> dict:
    """Token totals with a field some API message lacks shown as None (unknown, not the sum of
    the others); the sums stay available as `tokens_lower_bound_by_model`."""
    from ..core.stats import USAGE_FIELDS

    out = {}
    for m, d in tokens.items():
        miss = missing.get(m, {})
        out[m] = {f: (None if f in miss else d.get(f)) for f in USAGE_FIELDS if f in d or f in miss}
    return out


@click.command("stats")
@click.argument("targets", nargs=-1)
@common_options
@provider_options
@scope_options
@click.option("--no-subagents", is_flag=True, help="Main lanes only.")
@click.option("--strict", is_flag=True, help="Fail on the first malformed line, naming file and line.")
@click.option("--shared", "shared_claude", is_flag=True,
              help="Also read Claude Code sessions through the shared records, so the `shared` totals cover every provider.")
def stats_cmd(targets, fmt, claude_home, sessions_from, no_subagents, strict, shared_claude):
    """Census per session: Claude Code's line types, labels, turns, compactions, tokens per model;
    for every provider, records, prompts, tool calls and errors per tool, tokens per model.

    \b
    Example: sessionsift stats . --format json
    Example: sessionsift stats --home examples/home --shared
    """
    sel = make_selection(targets, sessions_from, subagents=not no_subagents)
    scope = claude_scope(sel)
    from ..index.report import IndexReport

    irep = IndexReport.for_root(scope.home.path)
    census = None
    if irep.on:
        from ..index import lanes as index_lanes
        from ..index.progress import Progress

        census = index_lanes.census_one
        index_lanes.PROGRESS = Progress()
    try:
        res = stats_mod.stats(scope, subagents=not no_subagents, strict=strict, census=census)
    finally:
        if census is not None:
            index_lanes.PROGRESS.done()
            index_lanes.PROGRESS = None
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
            human = human or dict.fromkeys(stats_mod.PROMPT_KINDS, 0)
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
            "tokens_by_model": _known_tokens(ls.tokens, ls.tokens_missing),
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
        })
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
                     + _prompts_text(ls.prompts, "" if ls.lane.is_subagent else "typed"))
            om = {k: v for k, v in ls.read.omissions().items() if v}
            if om:
                out.text("  omissions: " + ", ".join(f"{k}={v}" for k, v in om.items())
                         + (f" (malformed at L{', L'.join(map(str, ls.read.malformed_lines[:10]))})" if ls.read.malformed_lines else ""))
            for n in ls.read.bridge_notes()[:10]:
                out.text(f"  note: {n}")
            if ls.forked_from:
                out.text(f"  forked from {ls.forked_from['session_id']} at its L{ls.forked_from['line']}"
                         + (f"; {ls.copied_records} copied records left out (counted on the original)"
                            if ls.copied_records else " (the original is not in scope: its copies are counted here)"))
    from .cmd_shared import claude_refs, stats_shared

    extra = claude_refs(sel, subagents=not no_subagents) if shared_claude else []
    mine = [r for r in sel.refs if not (no_subagents and r.parent_session_id is not None)]  # main lanes only
    gres = stats_shared(out, sel, mine + extra)
    problems = res.problems + gres.problems
    covs = sel.coverage()
    out.summary(files_read=len(res.lanes), files_unreadable=len(problems), problems=problems_json(problems),
                line_types=dict(tot_types), labels=dict(tot_labels), tokens_by_model=_known_tokens(tokens, missing),
                tokens_lower_bound_by_model=tokens if missing else None, tokens_missing_by_model=missing or None,
                tool_calls=dict(tot_calls), tool_errors=dict(tot_errors),
                human_prompts=None if human is None else {"typed": sum(human.values()), **human},
                omissions=dict(omis), index=irep.as_json(),
                shared={**gres.totals(), "providers": sorted({r.provider for r in mine + extra})},
                coverage=coverage_json(covs))
    if sel.claude is not None:
        cc = "Claude Code: " if gres.sessions else ""
        if tot_calls or tot_errors:
            out.text(cc + "tool calls: " + _tools_text(tot_calls, tot_errors))
        out.text(cc + "human prompts: " + ("no main lane in scope" if human is None else _prompts_text(human)))
        out.text(cc + f"{_plural(len(res.lanes), 'transcript')} read ({_plural(len(scope.sessions), 'session')}), "
                 f"{len(res.problems)} unreadable"
                 + ("".join(f"; {esc(p.path)}: {esc(p.why)}" for p in res.problems[:5])))
        if irep.on and irep.counts["scanned"]:
            out.text(cc + irep.text())
    if gres.sessions or gres.problems:
        t = gres.totals()
        from .cmd_shared import display_of

        names = sorted({esc(display_of(sel, r.provider)) for r in mine + extra})
        out.text(f"shared records ({', '.join(names)}): {_plural(t['sessions'], 'session')}, "
                 f"{_plural(t['records'], 'record')}, {_plural(t['prompts'], 'prompt')}, "
                 f"{_plural(sum(t['tool_calls'].values()), 'tool call')}, {sum(t['tool_errors'].values())} failed"
                 + (f"; tokens unknown in {_plural(t['tokens_unknown_sessions'], 'session')} (left out of the sums)"
                    if t["tokens_unknown_sessions"] else "") + (f", {len(gres.problems)} unreadable: " + "; ".join(
                     f"{esc(p.path)}: {esc(p.why)}" for p in gres.problems[:5]) if gres.problems else ""))
    if missing:
        out.text("token totals are lower bounds: some API messages lack a usage field ("
                 + "; ".join(f"{m}: " + ", ".join(f"{k} missing on {v}" for k, v in d.items())
                             for m, d in missing.items()) + ")")
    out.text(coverage_line(covs))
    return ExitStatus.INCOMPLETE if problems or missing or sel.incomplete() else ExitStatus.OK
