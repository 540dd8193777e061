"""`list`, `show`, `stats`."""

from __future__ import annotations

import shlex

import click

from ..core import listing, show as show_mod, stats as stats_mod
from ..discover import Lane
from ..model.lane import Entry
from ..model import record as R
from ..timefmt import instant, short_local
from .exit import ExitStatus
from .options import common_options, make_scope, problems_json, scope_header, scope_options
from .output import Out, clip, esc


NO_ADAPTER = {"codex": "Codex CLI", "gemini-cli": "Gemini CLI", "opencode": "opencode", "crush": "Crush"}
"""Agents whose files sessionsift cannot read yet: reported as `null` (no adapter), never 0."""


def lane_fields(lane: Lane) -> dict:
    return {
        "session_id": lane.session_id,
        "lane": lane.display,
        "is_subagent": lane.is_subagent,
        "parent_session_id": lane.parent_session_id,
        "agent_id": lane.agent_id,
        "path": str(lane.path),
    }


def refetch(lane: Lane, line: int, home: str | None) -> str:
    return refetch_at(lane.session_id, str(lane.path), lane.is_subagent, line, home)


def refetch_at(session_id: str, path: str, is_subagent: bool, line: int | None, home: str | None) -> str | None:
    """The ready-to-run command that shows one record (None when there is no line)."""
    if line is None:
        return None
    target = shlex.quote(path) if is_subagent else session_id
    h = f" --claude-home {shlex.quote(str(home))}" if home else ""
    return f"sessionsift show {target} --line {line}{h}"


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
        "tool_names": list(e.tool_names),
        "attachment": e.attachment,
        "refetch": refetch(lane, e.no, home),
    }


@click.command("list")
@click.argument("targets", nargs=-1)
@common_options
@scope_options
@click.option("--no-subagents", is_flag=True, help="Do not count subagent lanes.")
def list_cmd(targets, fmt, claude_home, sessions_from, no_subagents):
    """One row per session, newest first (reads each transcript's head and tail only).

    Example: sessionsift list . --format json
    """
    scope = make_scope(targets, claude_home, sessions_from)
    res = listing.list_sessions(scope, subagents=not no_subagents)
    out = Out(fmt, "list")
    out.header(**scope_header(scope))
    for r in res.rows:
        out.row("session", {
            "session_id": r.session_id, "is_subagent": False, "parent_session_id": None,
            "path": r.path, "project": r.project,
            "first_prompt": r.first_prompt, "first_prompt_at": instant(r.first_prompt_at),
            "last_prompt": r.last_prompt, "last_prompt_at": instant(r.last_prompt_at),
            "last_agent_message": r.last_agent_message, "last_agent_message_at": instant(r.last_agent_message_at),
            "first_at": instant(r.first_at), "last_at": instant(r.last_at),
            "git_branch": r.git_branch, "version": r.version, "size_bytes": r.size,
            "subagents": r.subagents, "bytes_read": r.bytes_read, "notes": r.notes,
        })
        out.text(f"{r.session_id}  {short_local(r.last_at)}  {esc(r.project)}  [{r.version or '?'} {esc(r.git_branch)}] "
                 f"{r.size} B, {r.subagents if r.subagents is not None else '?'} subagents")
        out.text(f"  first: {clip(r.first_prompt, 100)}")
        out.text(f"  last:  {clip(r.last_prompt, 100)}")
        out.text(f"  agent: {clip(r.last_agent_message, 100)}")
        for n in r.notes:
            out.text(f"  note: {esc(n)}")
    coverage = {"claude-code": len(res.rows), **{p: None for p in NO_ADAPTER}}
    out.summary(sessions=len(res.rows), files_read=len(res.rows), files_unreadable=len(res.problems),
                problems=problems_json(res.problems), bytes_total=res.bytes_total, bytes_read=res.bytes_read,
                coverage=coverage, coverage_note="null = no adapter: not read, not zero")
    unread = f", {len(res.problems)} unreadable: " + "; ".join(f"{esc(p.path)} ({esc(p.why)})" for p in res.problems[:5]) if res.problems else ""
    out.text(f"{len(res.rows)} sessions in {scope.project_dirs or '?'} project dirs under {esc(scope.home.path)} "
             f"(read {res.bytes_read} of {res.bytes_total} bytes{unread})")
    out.text("coverage: Claude Code %d sessions · %s" % (len(res.rows), " · ".join(f"{n} no adapter" for n in NO_ADAPTER.values())))
    return ExitStatus.INCOMPLETE if res.problems else ExitStatus.OK


@click.command("show")
@click.argument("target")
@common_options
@click.option("--lane", default=None, help="Subagent lane (agent id or file stem) of the session.")
@click.option("--line", "lines", default=None, help="N (explicit) or A..B (range), 1-based physical lines.")
@click.option("--uuid", default=None, help="Record uuid.")
@click.option("--turn", type=int, default=None, help="Turn number (negative counts from the end: -1 = last).")
@click.option("--raw", is_flag=True, help="Print the raw line bytes (escaped in text mode).")
@click.option("--branch-points", is_flag=True, help="Records with more than one conversation child.")
def show_cmd(target, fmt, claude_home, lane, lines, uuid, turn, raw, branch_points):
    """Show records of one transcript by line, uuid or turn.

    Example: sessionsift show 3f2a --turn -1
    """
    scope = make_scope((target,), claude_home)
    ln = show_mod.pick_lane(scope, lane)
    out = Out(fmt, "show")
    out.header(**scope_header(scope), lane=lane_fields(ln))
    if branch_points:
        idx, bps = show_mod.branch_points(ln)
        for bp in bps:
            out.row("branch_point", {**entry_fields(ln, bp.entry, claude_home),
                                     "children": [{"line": c.no, "uuid": c.uuid, "labels": list(c.labels),
                                                   "survival": c.survival} for c in bp.children]})
            out.text(f"L{bp.entry.no} {bp.entry.uuid} -> " + ", ".join(
                f"L{c.no} {c.labels[0] if c.labels else c.type} ({c.survival})" for c in bp.children))
        out.summary(branch_points=len(bps), lines=idx.stats.lines, omissions=idx.stats.omissions())
        out.text(f"{len(bps)} branch points in {idx.stats.lines} lines of {esc(ln.path)}")
        return ExitStatus.OK
    idx, recs = show_mod.show(ln, lines=lines, uuid=uuid, turn=turn, raw=raw)
    for r in recs:
        e = r.entry
        data = {**entry_fields(ln, e, claude_home), "record": r.obj}
        if raw and r.raw is not None:
            data["raw"] = r.raw.decode("utf-8", "replace")
        out.row("record", data)
        lab = ",".join(e.labels) or "(unlabelled)"
        out.text(f"L{e.no} [{lab}] {e.type or '?'} turn={e.turn if e.turn is not None else '-'} "
                 f"{e.survival or '-'} {short_local(e.timestamp)} {e.uuid or ''}")
        if raw and r.raw is not None:
            out.text("  " + esc(r.raw.decode("utf-8", "replace")))
        else:
            body = R.display_text(r.obj, list(e.labels))
            for line in body.split("\n")[:200]:
                out.text("  " + esc(line))
    out.summary(records=len(recs), lines=idx.stats.lines, omissions=idx.stats.omissions())
    return ExitStatus.OK


@click.command("stats")
@click.argument("targets", nargs=-1)
@common_options
@scope_options
@click.option("--no-subagents", is_flag=True, help="Main lanes only.")
@click.option("--strict", is_flag=True, help="Fail on the first malformed line, naming file and line.")
def stats_cmd(targets, fmt, claude_home, sessions_from, no_subagents, strict):
    """Line types, label census, turns, compactions, tokens per model, narration, omissions.

    Example: sessionsift stats . --format json
    """
    scope = make_scope(targets, claude_home, sessions_from)
    res = stats_mod.stats(scope, subagents=not no_subagents, strict=strict)
    out = Out(fmt, "stats")
    out.header(**scope_header(scope))
    from collections import Counter

    tot_labels: Counter = Counter()
    tot_types: Counter = Counter()
    tokens: dict[str, dict[str, int]] = {}
    omis: Counter = Counter()
    for ls in res.lanes:
        tot_labels.update(ls.labels)
        tot_types.update(ls.line_types)
        for m, d in ls.tokens.items():
            agg = tokens.setdefault(m, {})
            for k, v in d.items():
                agg[k] = agg.get(k, 0) + v  # a sum over the lanes that wrote this field (absent fields stay absent)
        omis.update(ls.read.omissions())
        out.row("lane", {
            **lane_fields(ls.lane),
            "lines": ls.read.lines, "bytes": ls.read.bytes, "records": ls.read.records,
            "line_types": dict(ls.line_types), "system_subtypes": dict(ls.system_subtypes),
            "attachment_kinds": dict(ls.attachment_kinds), "labels": dict(ls.labels),
            "unlabelled_records": ls.unlabelled, "unknown_line_types": dict(ls.unknown_line_types),
            "turns": ls.turns, "compactions": ls.compactions, "survival": dict(ls.survival),
            "replayed_lines": ls.replayed_lines,
            "tokens_by_model": ls.tokens, "api_messages_by_model": dict(ls.messages_by_model),
            "thinking_blocks": ls.thinking_blocks, "narration_blocks": ls.narration_blocks,
            "untagged_thinking_blocks": ls.untagged_thinking_blocks,
            "unknown_thinking_tags": dict(ls.unknown_thinking_tags),
            "malformed_lines": ls.read.malformed_lines[:100],
            "omissions": ls.read.omissions(),
        })
        out.text(f"{ls.lane.session_id} {ls.lane.display}: {ls.read.lines} lines, {ls.turns} turns, "
                 f"{ls.compactions} compactions, {ls.narration_blocks} narration / {ls.thinking_blocks} thinking blocks")
        if not out.json:
            for k, v in sorted(ls.line_types.items(), key=lambda kv: -kv[1]):
                out.text(f"  type {esc(k):<28} {v}")
            for k, v in sorted(ls.labels.items(), key=lambda kv: -kv[1]):
                out.text(f"  label {k:<34} {v}")
            if ls.unlabelled:
                out.text(f"  label {'(unlabelled)':<34} {ls.unlabelled}")
            for m, d in ls.tokens.items():
                out.text(f"  tokens {esc(m)}: " + ", ".join(f"{k}={v}" for k, v in d.items())
                         + f" over {ls.messages_by_model[m]} API messages")
            om = {k: v for k, v in ls.read.omissions().items() if v}
            if om:
                out.text("  omissions: " + ", ".join(f"{k}={v}" for k, v in om.items())
                         + (f" (malformed at L{', L'.join(map(str, ls.read.malformed_lines[:10]))})" if ls.read.malformed_lines else ""))
    out.summary(files_read=len(res.lanes), files_unreadable=len(res.problems), problems=problems_json(res.problems),
                line_types=dict(tot_types), labels=dict(tot_labels), tokens_by_model=tokens, omissions=dict(omis))
    out.text(f"{len(res.lanes)} transcripts read ({len(scope.sessions)} sessions), {len(res.problems)} unreadable"
             + ("".join(f"; {esc(p.path)}: {esc(p.why)}" for p in res.problems[:5])))
    return ExitStatus.INCOMPLETE if res.problems else ExitStatus.OK
