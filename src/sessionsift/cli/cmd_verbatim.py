"""`verbatim`: the turns a compaction summary clipped, verbatim, and hook-sized slices of them."""

from __future__ import annotations

import click

from ..errors import TargetError
from ..providers import deep_name
from ..timefmt import instant
from ..verbatim import api
from ..verbatim.slices import u16len
from .invocation import targeting
from .options import lane_fields, refetch, claude_root_arg
from .exit import ExitStatus
from .options import make_scope, scope_header, claude_root_arg
from .output import Out, esc
from .options import selection_header
from .shared import refetch as record_refetch, root_args

import shlex


@click.command("verbatim")
@targeting(targets="one")
@click.option("--lane", default=None, help="Subagent lane (agent id or file stem) of the session.")
@click.option("--budget", type=int, default=api.DEFAULT_BUDGET, show_default=True,
              help="Character budget for the whole text, in UTF-16 code units (what the client counts).")
@click.option("--max-compactions", type=int, default=None,
              help="Cross at most N compaction summaries walking back (default: no cap).")
@click.option("--agent-msgs", type=click.Choice(list(api.AGENT_MSG_MODES)), default="longest", show_default=True,
              help="Which agent messages of a turn to print; the others are counted in the fold line.")
@click.option("--max-unit", type=int, default=api.DEFAULT_MAX_UNIT, show_default=True,
              help="Trim any unit longer than N chars in the middle, under an explicit marker (0 = no cap).")
@click.option("--window", type=int, default=api.DEFAULT_WINDOW, show_default=True,
              help="Slice size for --slice/--slices (the client persists SessionStart context over 10,000).")
@click.option("--slice", "slice_k", type=int, default=None,
              help="Print only slice K (1-based) of the text, byte-exact (no added newline).")
@click.option("--slices", "all_slices", is_flag=True,
              help="Text: print the number of slices. JSON: one `slice` row per slice.")
@click.option("--pending-compaction", is_flag=True,
              help="A compaction is happening now (SessionStart(compact) hooks run before the client writes "
                   "its summary): assume one after the last line unless a newer summary is already there.")
def verbatim_cmd(inv, lane, budget, max_compactions, agent_msgs, max_unit, window,
                 slice_k, all_slices, pending_compaction):
    """Give back, verbatim, the most recent turns of a session, across its compactions.

    Walks back from the end of the conversation chain, recency first, until --budget is spent,
    crossing compaction summaries (each crossed one gets a banner naming its line), and prints
    the turns in forward order: user turns whole, tool calls folded, agent messages by
    --agent-msgs. Every unit carries its transcript line L<n>.

    Example: sessionsift verbatim 3f2a --slices --format json
    """
    fmt = inv.fmt
    claude_home = claude_root_arg(inv)
    target = inv.targets[0]
    if window < 100:
        raise click.BadParameter("--window must be at least 100", param_hint="--window")
    if slice_k is not None and all_slices:
        raise click.BadParameter("use --slice K or --slices, not both", param_hint="--slice")
    opts = dict(budget=budget, max_compactions=max_compactions, agent_msgs=agent_msgs, max_unit=max_unit,
                pending_compaction=pending_compaction)
    scope = None
    if inv.root_request().looks_at(deep_name()):
        try:
            scope = make_scope(inv, refuse=False)
        except TargetError:
            scope = None  # not a Claude Code session: asked of every provider below
        else:
            if not scope.sessions:
                scope = None
    out = Out(fmt, "verbatim")
    if scope is None:  # the session of another provider: asked of its provider
        sel, ref = _other_session(inv)
        prov = sel.survey.provider(ref.provider)
        res = api.answer(prov, ref, lane=lane, target=shlex.quote(ref.session_id) + root_args(sel, ref.provider),
                         **opts)
        fields = _ref_fields(ref, res)
        out.header(**selection_header(sel), lane=fields, budget=budget, budget_unit="utf16",
                   max_compactions=max_compactions, agent_msgs=agent_msgs, max_unit=max_unit, window=window,
                   pending_compaction=pending_compaction)
        return _emit(out, res, fields, window, slice_k, all_slices,
                     lambda line, u=None: _refetch_other(sel, ref, line, u))
    ln = scope.pick_lane(lane)
    res = api.verbatim(ln, target=_show_target(ln, target, claude_home), **opts)
    out.header(**scope_header(inv, scope), lane=lane_fields(ln), budget=budget, budget_unit="utf16",
               max_compactions=max_compactions, agent_msgs=agent_msgs, max_unit=max_unit, window=window,
               pending_compaction=pending_compaction)
    return _emit(out, res, lane_fields(ln), window, slice_k, all_slices,
                 lambda line, u=None: refetch(ln, line, claude_home))


def _emit(out: Out, res: api.VerbatimResult, fields: dict, window: int, slice_k, all_slices, again) -> int:
    ln_path = res.history.path if res.history is not None else None
    incomplete = any(res.omissions.values())
    slices = res.slices(window) if (slice_k is not None or all_slices) else None

    if slices is not None:
        n = len(slices)
        picked = range(1, n + 1) if all_slices else ([slice_k] if 1 <= slice_k <= n else [])
        for k in picked:
            s = slices[k - 1]
            out.row("slice", {**fields, "index": k, "count": n, "chars": u16len(s), "text": s})
        if not out.json:
            if all_slices:
                out.text(str(n))
            elif picked:
                out.block(slices[slice_k - 1])  # byte-exact: the slice is escaped text already
        _summary(out, res, slices=n)
        if not res.has_compaction:
            return ExitStatus.NO_MATCH
        if slice_k is not None and not picked:
            if not out.json:
                out.err(f"sessionsift: slice {slice_k} of {n}: no such slice")
            return ExitStatus.NO_MATCH
        return ExitStatus.INCOMPLETE if incomplete else ExitStatus.OK

    for c in res.compactions:
        if c.spanned:
            out.row("compaction_boundary", {**fields, "line": None if c.pending else c.summary_line,
                                            "locator": None if c.pending else c.at, "pending": c.pending,
                                            "native": c.native, "first_kept": c.first_kept,
                                            "refetch": None if c.pending else again(c.summary_line, c),
                                            "after_line": (c.summary_line or 1) - 1 if c.pending else None,
                                            "boundary_line": c.boundary_line, "summary_chars": None if c.pending else c.summary_chars,
                                            "trigger": c.trigger, "pre_tokens": c.pre_tokens,
                                            "timestamp": instant(c.timestamp), "uuid": c.uuid})
    for u in res.units:
        out.row("unit", {
            **fields, "turn": u.turn, "unit": u.kind, "line": u.line, "last_line": u.last_line,
            "labels": list(u.labels), "uuid": u.uuid, "timestamp": instant(u.timestamp), "text": u.text,
            "chars": u.chars, "trimmed_chars": u.trimmed_chars, "quoted_in_summary": u.quoted_in_summary,
            "tool_calls": u.tool_calls, "hidden_agent_messages": u.hidden_agent_messages,
            "plan_path": u.plan_path, "locator": u.locator or f"L{u.line}", "refetch": again(u.line, u),
        })
    if not out.json:
        out.block(res.text)
        for k, v in res.omissions.items():
            if v:
                out.err(f"sessionsift: note: {k}={v} while reading {ln_path}")
    _summary(out, res, slices=None)
    if not res.has_compaction:
        return ExitStatus.NO_MATCH
    return ExitStatus.INCOMPLETE if incomplete else ExitStatus.OK


def _show_target(ln, given: str, claude_home) -> str:
    """How a `sessionsift show` command this output points at names the lane so that it runs: the
    transcript's path for a subagent lane or a transcript named by a path outside any projects/
    dir (it has no resolvable id), else the session id plus --claude-home when one was given that the
    command would not find by itself."""
    import os
    import shlex

    # a main transcript under <home>/projects/<dir>/ is found by its id; one elsewhere only by path
    by_path = ln.is_subagent or ((given.endswith(".jsonl") or os.sep in given)
                                 and ln.path.parent.parent.name != "projects")
    t = shlex.quote(str(ln.path)) if by_path else ln.session_id
    if claude_home and not by_path:
        from ..providers import deep_name, get

        # the data root the command would find by itself (the deep Scope's reader's default: its
        # client's variable, else its home dir) needs no flag (the verbatim hook passes the client's
        # own CLAUDE_CONFIG_DIR: the text it injects stays short)
        prov = get(deep_name())
        default = prov.locate().path if prov is not None else None
        if default is None or os.path.realpath(claude_home) != os.path.realpath(default):
            t += f" --claude-home {shlex.quote(str(claude_home))}"
    return t


def _summary(out: Out, res: api.VerbatimResult, slices: int | None) -> None:
    a = res.accounting
    out.summary(
        budget=a.budget, budget_unit=a.unit, chars_used=a.chars_used, turns_total=a.turns_total,
        turns_selected=a.turns_selected, first_turn=a.first_turn, last_turn=a.last_turn,
        boundaries_total=a.boundaries_total, boundaries_spanned=a.boundaries_spanned,
        max_compactions=a.max_compactions, stopped_by=a.stopped_by, agent_msgs=a.agent_msgs,
        max_unit=a.max_unit, units=a.units, units_trimmed=a.units_trimmed,
        agent_messages_in_turns=a.agent_messages_in_turns, agent_messages_shown=a.agent_messages_shown,
        tool_calls_folded=a.tool_calls_folded, latest_summary_line=res.latest_summary_line,
        latest_turn_line=res.latest_turn_line, slices=slices, notes=res.notes, omissions=res.omissions,
        lacks=res.lacks,
    )


def _other_session(inv):
    """The one session the target names among every provider looked at (Claude Code's were tried
    first): (selection, ref); a TargetError naming what was looked at when none or several."""
    from .options import make_selection

    sel = make_selection(inv)
    named = [r for r in sel.refs if (r.provider, r.session_id) not in sel.children]
    if sel.claude is not None and getattr(sel.claude, "sessions", None):
        named = list(sel.session_refs()[:len(sel.claude.sessions)]) + named
    if len(named) != 1:
        ids = [f"{r.session_id} ({r.provider})" for r in named[:10]]
        raise TargetError(f"this command needs exactly one session; the target matched {len(named)}"
                          + (f": {', '.join(ids)}" if ids else ""),
                          hint="name a session id (or unique prefix) or a session file")
    return sel, named[0]


def _ref_fields(ref, res: api.VerbatimResult) -> dict:
    path = res.history.path if res.history is not None else (str(ref.paths[0]) if len(ref.paths) == 1 else None)
    return {"provider": ref.provider, "session_id": ref.session_id, "lane": "main", "is_subagent": ref.is_subagent,
            "parent_session_id": ref.parent_session_id, "agent_id": None, "path": path}


def _refetch_other(sel, ref, line, u) -> str | None:
    rec = getattr(u, "record", None)
    if rec is not None:
        return record_refetch(sel, ref, rec)
    if line is None:
        return None
    return f"sessionsift show {shlex.quote(ref.session_id)} --line {line}{root_args(sel, ref.provider)}"
