"""`list`, `show`, `stats`."""

from __future__ import annotations

from collections import Counter
from typing import Any

import click

from .progress_run import with_reading
from ..timefmt import instant, short_local
from .exit import ExitStatus
from .invocation import targeting
from .options import (claude_root_arg, sessions_unit, claude_scope, lane_fields, refetch, refetch_at, coverage_json, coverage_line, make_selection,
                      problems_json, selection_header)
from .output import Out, clip, esc
from .stats_run import _known_tokens, _plural, _prompts_text, _tools_text, bridges_json  # noqa: F401


def entry_fields(lane: Any, e: Any, home: str | None) -> dict:
    """A deep lane's record entry (the lane model's ``Entry``) as `show` and its kin print it."""
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


TERMINAL_ROWS = 10
"""Sessions `list` shows on a terminal without -n or --all (the newest, or the first in --sort's order)."""

_SORT_HELP = ("Order of the rows: newest (default), oldest, size, records, prompts, subagents, project, agent; "
              "unknown values last. With -n: the first N in this order.")


@click.command("list")
@targeting(limit=True, dataset=True)
@click.option("--no-subagents", is_flag=True, help="Do not count subagent lanes.")
@click.option("--sort", "sort", default=None, metavar="KEY",
              type=click.Choice(["newest", "oldest", "size", "records", "prompts", "subagents", "project", "agent"]),
              help=_SORT_HELP)
@click.option("--all", "everything", is_flag=True,
              help=f"Every session on a terminal too (there, without -n or --all, the {TERMINAL_ROWS} newest).")
@click.option("-v", "--verbose", is_flag=True,
              help="Each session's last prompt, last reply and notes, and its child sessions on rows of their own.")
@with_reading("reading")
def list_cmd(inv, no_subagents, sort, everything, verbose):
    """One row per session of every provider, newest first (Claude Code: each transcript's head
    and tail only; other providers: the session's records), ending with the coverage line.
    On a terminal the {TERMINAL_ROWS} newest (-n N, --all: more); each row is the session's
    line and its first prompt (--verbose: its last prompt, last reply, notes and child sessions).
    JSON is every session in full.

    \b
    Example: sessionsift list --home examples/home
    Example: sessionsift list --home examples/home --sort size -n 5
    Example: sessionsift list --home examples/home --all --verbose
    Example: sessionsift list . --format json
    """
    from dataclasses import replace

    from ..listing import list_sessions, sort_rows

    if inv.dataset:
        if sort is not None:
            from ..errors import UsageError

            raise UsageError("--sort orders this machine's listing; a dataset's is newest first (drop --sort)")
        return _list_dataset(inv, no_subagents, everything, verbose)
    if everything and inv.limit is not None:
        from ..errors import UsageError

        raise UsageError("--all lists every session and -n/--limit only the first N: give one of them")
    limit = inv.limit if sort not in (None, "newest") else None
    sel = make_selection(replace(inv, limit=None) if limit is not None else inv, subagents=not no_subagents)
    res = list_sessions(sel, subagents=not no_subagents)
    rows = res.rows if sort is None else sort_rows(res.rows, sort)
    if limit is not None:
        sel, rows = _first_sessions(sel, rows, limit)
    out = Out(inv.fmt, "list")
    out.header(**selection_header(sel), **({"sort": sort} if sort is not None else {}))
    display = _display(sel)
    say = _sayer(out)
    _session_rows(out, [(None, r) for r in rows], display, verbose, everything or inv.limit is not None)
    _deleted_rows(out, res.deleted, display)
    problems = sel.problems() + res.problems
    problems = [p for i, p in enumerate(problems) if (p.path, p.why) not in {(q.path, q.why) for q in problems[:i]}]
    covs = sel.coverage()
    out.summary(sessions=sel.top_level(), child_sessions=sel.child_sessions(), files_read=res.files_read,
                files_unreadable=len(problems), problems=problems_json(problems), bytes_total=res.bytes_total,
                bytes_read=res.bytes_read, sessions_deleted_by_client=len(res.deleted), notes=res.notes,
                coverage=coverage_json(covs))
    for n in res.notes:
        say(f"note: {esc(n)}")
    unread = f"; {len(problems)} unreadable: " + "; ".join(f"{esc(p.path)} ({esc(p.why)})" for p in problems[:5]) if problems else ""
    where = ""
    if sel.claude is not None:
        # a session id target scans every project dir; the dirs that hold the sessions listed are the answer
        dirs = sel.claude.project_dirs or len({str(s.project_dir) for s in sel.claude.sessions})
        ids = {s.session_id for s in sel.claude.sessions}
        n_claude = sum(1 for r in rows if r.ref.session_id in ids)
        where = (f"; Claude Code: {n_claude} in {_plural(dirs, 'project dir')} under "
                 f"{esc(sel.claude.home.path)}")
    from .newcomer import found_nothing, nothing_note

    if not rows and found_nothing(covs):
        say("no sessions: " + nothing_note(covs, "list"))
    total = "an unknown number of" if res.bytes_total is None else str(res.bytes_total)
    say(f"{sessions_unit(len(rows), covs)}{where}; read {res.bytes_read} of {total} bytes{unread}", ("; ", " "))
    if sel.narrowed is not None:
        say(sel.narrowed.text())
    say(coverage_line(covs), (" · ", " "))
    return ExitStatus.INCOMPLETE if problems or sel.incomplete() else ExitStatus.OK


list_cmd.help = (list_cmd.help or "").replace("{TERMINAL_ROWS}", str(TERMINAL_ROWS))


def _session_rows(out, rows, display, verbose: bool, every: bool) -> None:
    """The session rows of `list` (local or a dataset's: `rows` are (machine or None, SessionRow)):
    JSON every row; text the short answer -- on a terminal the first TERMINAL_ROWS sessions unless
    `every` (--all, -n), each its line and first prompt with child sessions folded in -- or, with
    `verbose`, every detail; then how to see more."""
    say = _sayer(out)
    cut = TERMINAL_ROWS if out.terminal and not out.json and not every else None
    shown, more = _shown_rows([r for _m, r in rows], cut, verbose)
    for m, r in rows:
        o = out if m is None else _MachineOut(out, m)
        if out.json:
            session_row(o, r, display, machine=m)
        elif (r.ref.provider, r.ref.session_id) in shown:
            session_row(o, r, display, verbose, shown_kids=shown[(r.ref.provider, r.ref.session_id)], machine=m)
    if more and not out.json:
        say(f"{_plural(more, 'more session')} (-n N or --all to list them"
            + ("" if verbose else "; --verbose: each one's last prompt, last reply and notes") + ")")
    elif not verbose and not out.json and rows:
        say("--verbose: each session's last prompt, last reply, notes and child sessions")


def _sayer(out):
    """table.prose through `out` (a line of prose broken across lines on a terminal)."""
    from .table import prose

    def say(line: str, seps: tuple[str, ...] = (" ",)) -> None:
        prose(out, line, seps)
    return say


def _shown_rows(rows, cut: int | None, verbose: bool) -> tuple[dict, int]:
    """Which rows the text shows: {(provider, session id): [child sessions, helper sessions]
    folded into its line (0 when they have rows of their own)}, and how many top-level sessions
    are left out.
    Without `verbose` a child session whose parent is shown is folded into the parent's line; one
    whose parent is not listed keeps its row."""
    keys = {(r.ref.provider, r.ref.session_id) for r in rows}
    top = [r for r in rows if r.ref.parent_session_id is None
           or (r.ref.provider, r.ref.parent_session_id) not in keys]
    kept = top if cut is None else top[:cut]
    shown = {(r.ref.provider, r.ref.session_id): [0, 0] for r in kept}
    root = {k: k for k in shown}  # a shown or folded session -> the shown row it is on
    grown = True
    while grown:  # a kept session's children (and theirs)
        grown = False
        for r in rows:
            k, parent = (r.ref.provider, r.ref.session_id), (r.ref.provider, r.ref.parent_session_id)
            if k in root or r.ref.parent_session_id is None or parent not in root:
                continue
            grown = True
            if verbose:
                shown[k] = [0, 0]
                root[k] = k
            else:
                root[k] = root[parent]
                shown[root[k]][1 if r.ref.helper else 0] += 1
    return shown, len(top) - len(kept)


def _deleted_rows(out, deleted, display) -> None:
    """Sessions the client deleted (Claude Code's history.jsonl keeps their prompts): a
    `deleted_session` row each and one text line, after the sessions on disk."""
    say = _sayer(out)
    if deleted and not out.json:
        say(f"deleted by the client (their prompts only, from history.jsonl): {len(deleted)} "
            f"session{'' if len(deleted) == 1 else 's'}")
    for d in deleted:
        first = None if d.first_ts is None else fmt_epoch(d.first_ts)
        last = None if d.last_ts is None else fmt_epoch(d.last_ts)
        out.row("deleted_session", {"provider": d.provider, "session_id": d.session_id, "project": d.project,
                                    "deleted_by_client": True, "prompts": len(d.prompts) + d.undated_prompts,
                                    "first_prompt": d.first_prompt, "first_prompt_at": first, "last_prompt_at": last})
        say(f"{esc(d.session_id)}  {esc(first or '?')}  {esc(d.project or '?')}  [{esc(display(d.provider))}, "
            f"deleted by the client] {len(d.prompts) + d.undated_prompts} prompt(s) kept")
        if d.first_prompt:
            say(f"  first: {esc(d.first_prompt[:200])}")


def fmt_epoch(ts: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _first_sessions(sel, rows, limit: int):
    """The selection and rows of the first `limit` top-level sessions of `rows` (in their order)
    with their child sessions; the selection's `narrowed` then says what `--limit` left out (as it
    does when it keeps the most recent)."""
    from dataclasses import replace

    from ..providers.scope import Narrowed

    kept_top = [r for r in rows if r.ref.parent_session_id is None][:limit]
    keep = {(r.ref.provider, r.ref.session_id) for r in kept_top}
    grown = True
    while grown:
        grown = False
        for r in rows:
            k = (r.ref.provider, r.ref.session_id)
            if k not in keep and r.ref.parent_session_id is not None and (r.ref.provider, r.ref.parent_session_id) in keep:
                keep.add(k)
                grown = True
    n_top = sum(1 for r in rows if r.ref.parent_session_id is None)
    old = sel.narrowed
    given = (old.given if old is not None else ()) + (f"--limit {limit}",)
    if sel.claude is not None:  # the Claude Code scope's sessions: those whose transcript a kept row reads
        kept_paths = {str(p) for r in rows if (r.ref.provider, r.ref.session_id) in keep for p in r.ref.paths}
        sel.claude.sessions = [x for x in sel.claude.sessions if str(x.path) in kept_paths]
    sel = replace(sel, refs=[r for r in sel.refs if (r.provider, r.session_id) in keep])
    sel.narrowed = Narrowed(given, len(kept_top), (old.left_out if old else 0) + n_top - len(kept_top),
                            old.undated if old else 0, old.unplaced if old else 0)
    return sel, [r for r in rows if (r.ref.provider, r.ref.session_id) in keep]


def _display(sel):
    def name(provider: str) -> str:
        e = sel.survey.entry(provider)
        return e.display if e else provider
    return name


def session_row(out, r, display, verbose: bool = True, shown_kids=(0, 0), machine: str | None = None) -> None:
    """One listing row (listing.SessionRow) of any provider: its JSON row (docs/json.md `session`)
    and its escaped text lines. `display(provider)` names the provider for people. Without
    `verbose` the text is the session's line and its first prompt (and lineage); `shown_kids`:
    the child and helper sessions folded into the line (their rows are not shown); `machine`:
    the dataset machine the row came from (named in the text; the JSON row's `machine` is added
    by _MachineOut)."""
    ref, sm = r.ref, r.summary
    out.row("session", {
        "provider": ref.provider,
        "session_id": ref.session_id, "is_subagent": ref.is_subagent,
        "parent_session_id": ref.parent_session_id, "helper": ref.helper,
        "path": str(ref.paths[0]) if ref.paths else None, "paths": [str(p) for p in ref.paths],
        "project": sm.project or ref.project,
        "project_source": "record cwd" if sm.project else ref.project_source, "title": ref.title,
        "first_prompt": sm.first_prompt, "first_prompt_at": instant(sm.first_prompt_at),
        "last_prompt": sm.last_prompt, "last_prompt_at": instant(sm.last_prompt_at),
        "last_agent_message": sm.last_agent_message, "last_agent_message_at": instant(sm.last_agent_message_at),
        "first_at": instant(sm.first_at or ref.first_at), "last_at": instant(r.last_at),
        "git_branch": sm.git_branch, "version": sm.version or ref.version,
        "size_bytes": sm.size if sm.size is not None else ref.size,
        "subagents": r.subagents, "bytes_read": sm.bytes_read, "records": sm.records, "prompts": sm.prompts,
        "models": sm.models, "omissions": sm.omissions, "notes": sm.notes,
        "forked_from": r.forked_from, "forks": r.forks,
    })
    size_n = sm.size if sm.size is not None else ref.size
    size = f"{size_n} B" if size_n is not None else "size not attributable"
    version = sm.version or ref.version
    branch = (f", git branch {esc(sm.git_branch)}" if sm.git_branch
              else ", no git branch recorded" if sm.git_branch_recorded else "")
    subs = r.subagents
    if ref.helper:
        rel = f", {esc(ref.helper)} for {esc(ref.parent_session_id)} (a helper session, not a subagent)"
    elif ref.parent_session_id:
        rel = f", child of {esc(ref.parent_session_id)}"
    else:
        rel = ""
    counts = (f", {_plural(sm.records, 'record')}" if sm.records is not None else "") + rel
    if sm.subagents_are_lanes:
        counts += f", {_plural(subs, 'subagent')}" if subs is not None else ", ? subagents"
    elif subs:
        counts += f", {_plural(subs, 'subagent')}"
    kids, helpers = shown_kids
    if kids and not (subs and not sm.subagents_are_lanes and subs >= kids):  # not counted as subagents
        counts += f", {_plural(kids, 'child session')}"
    if helpers:
        counts += f", {_plural(helpers, 'helper session')}"
    from .table import cells, fit, term_width, wrap

    W = term_width(out)
    project = esc(sm.project or ref.project)
    on = f", on {esc(machine)}" if machine is not None else ""
    tail = f"  [{esc(display(ref.provider))} {esc(version or '?')}{branch}{on}] {size}{counts}"
    head = f"{esc(ref.session_id)}  {short_local(r.last_at)}  "
    if W is None or cells(head + project + tail) <= W:
        out.spans([(esc(ref.session_id), "id"), f"  {short_local(r.last_at)}  ", project, tail])
    elif not verbose and cells(head) + 20 + cells(tail) <= W:
        project = fit(project, W - cells(head) - cells(tail), keep_end=True)  # a path keeps its end
        out.spans([(esc(ref.session_id), "id"), f"  {short_local(r.last_at)}  ", project, tail])
    else:  # too narrow for one line: the project, agent, size and counts go under the id
        out.spans([(esc(ref.session_id), "id"), f"  {short_local(r.last_at)}"])
        if verbose and 2 + cells(project + tail) <= W:
            out.text("  " + project + tail)
        elif not verbose and 2 + 12 + cells(tail) <= W:
            out.text("  " + fit(project, W - 2 - cells(tail), keep_end=True) + tail)
        else:  # the project on a line of its own (--verbose: whole, broken across lines), then the rest
            for ln in wrap("  " + project, W, "    ") if verbose else ["  " + fit(project, W - 2, keep_end=True)]:
                out.text(ln)
            for ln in wrap("  " + tail.strip(), W, "    ", (", ", " ")):
                out.text(ln)

    def say(line: str) -> None:
        for ln in wrap(line, W, "    ", (", ", " ")):
            out.text(ln)

    room = 100 if W is None else max(8, min(100, W - 9))

    def cut(v: str | None) -> str:  # a prompt or reply: its first `room` characters (cells on a terminal)
        return clip(v, room) if W is None or v is None else fit(esc(v), room)

    if ref.title and (verbose or ref.title.strip() != (sm.first_prompt or "").strip()):
        out.text(f"  title: {cut(ref.title)}")
    f = r.forked_from
    if f:
        if f.get("line") is not None:
            say(f"  forked from {esc(f['session_id'])} at its L{f['line']} ({f.get('copied_records')} records copied)")
        else:
            say(f"  forked from {esc(f['session_id'])}"
                + (f" (before its record ordinal {f['ordinal_exclusive']})" if f.get("ordinal_exclusive")
                   is not None else ""))
    if r.forks:
        say(f"  forks: {', '.join(esc(x) for x in r.forks)}")
    out.text(f"  first: {cut(sm.first_prompt)}")
    if not verbose:
        return
    out.text(f"  last:  {cut(sm.last_prompt)}")
    out.text(f"  agent: {cut(sm.last_agent_message)}")
    for n in sm.notes:
        say(f"  note: {esc(n)}")


def _list_dataset(inv, no_subagents, everything: bool = False, verbose: bool = False) -> int:
    """`list --dataset`: every machine's sessions, newest first, each row as `list` prints it (with
    its `machine`: short, on a terminal the newest; -n N: the first N; -v: every detail), from the
    facts the sync read (docs/dataset.md)."""
    from ..sync.answers import list_rows, machines_text
    from ..sync.dataset import Dataset
    from .options import display_name, refuse_with_dataset

    refuse_with_dataset(inv)
    dataset = inv.dataset
    if everything and inv.limit is not None:
        from ..errors import UsageError

        raise UsageError("--all lists every session and -n/--limit only the first N: give one of them")
    got = list_rows(Dataset.open(dataset), list(inv.providers) or None, not no_subagents)
    out = Out(inv.fmt, "list")
    top = sum(1 for _m, r in got.rows if r.ref.parent_session_id is None)
    out.header(dataset=dataset, machines=got.machines, sessions=top, claude_home=None, claude_home_source=None,
               **({"limit": inv.limit} if inv.limit is not None else {}))
    rows = got.rows
    if inv.limit is not None:  # the first N sessions (with their child sessions); the totals stay the dataset's
        shown, _more = _shown_rows([r for _m, r in rows], inv.limit, True)
        rows = [(m, r) for m, r in rows if (r.ref.provider, r.ref.session_id) in shown]
    _session_rows(out, rows, display_name, verbose, everything or inv.limit is not None)
    say = _sayer(out)
    sms = [r.summary for _m, r in got.rows]
    bytes_total = None if any(x.bytes_total is None for x in sms) else sum(x.bytes_total for x in sms)  # type: ignore[misc]
    bytes_read = sum(x.bytes_read for x in sms)
    out.summary(dataset=dataset, machines=got.machines, sessions=top,
                child_sessions=sum(1 for _m, r in got.rows if r.ref.parent_session_id is not None),
                files_read=sum(x.files_read for x in sms), files_unreadable=len(got.problems),
                problems=problems_json(got.problems), bytes_total=bytes_total, bytes_read=bytes_read,
                coverage=coverage_json(got.coverage))
    if inv.limit is not None and len(rows) < len(got.rows):
        say(f"the first {_plural(inv.limit, 'session')} listed (-n {inv.limit}); the totals are the dataset's")
    say(f"{sessions_unit(len(got.rows), got.coverage)} in dataset {esc(dataset)}, {esc(machines_text(got.machines))}; "
        f"the sync read {bytes_read} of {'an unknown number of' if bytes_total is None else bytes_total} bytes", ("; ", " "))
    say(coverage_line(got.coverage), (" · ", " "))
    return ExitStatus.INCOMPLETE if got.problems else ExitStatus.OK


class _MachineOut:
    """An Out whose rows carry the dataset machine they came from."""

    def __init__(self, out: Out, machine: str):
        self.out, self.machine = out, machine
        self.json = out.json
        self.terminal, self.stream = out.terminal, out.stream

    def row(self, kind: str, data: dict) -> None:
        self.out.row(kind, {**data, "machine": self.machine})

    def text(self, line: str = "") -> None:
        self.out.text(line)

    def spans(self, parts) -> None:
        self.out.spans(parts)


@click.command("show")
@targeting(targets="one")
@click.option("--lane", default=None, help="Subagent lane (agent id or file stem) of the session.")
@click.option("--line", "lines", default=None, help="N (explicit) or A..B (range), 1-based physical lines.")
@click.option("--locator", default=None, help="A record's locator (L12, L12#1, or TABLE:ID for a database row).")
@click.option("--uuid", default=None, help="Record uuid (Claude Code).")
@click.option("--turn", type=int, default=None, help="Turn number (negative counts from the end: -1 = last).")
@click.option("--raw", is_flag=True, help="Print the raw line bytes (escaped in text mode).")
@click.option("--branch-points", is_flag=True, help="Records with more than one conversation child (Claude Code).")
@click.option("--full", is_flag=True,
              help="Print large harness payloads (system-prompt snapshots, skill/agent listings) whole.")
@click.option("--no-pager", is_flag=True, help="Do not page the whole-session view on a terminal.")
def show_cmd(inv, lane, lines, locator, uuid, turn, raw, branch_points, full, no_pager):
    """Show one session of any provider: whole, turn by turn (no address: the prompts, the replies,
    tool calls folded to one line with their result's size, thinking marked, subagents indented;
    paged on a terminal), or its records by line, locator, uuid or turn.

    \b
    Example: sessionsift show 3f2a
    Example: sessionsift show 3f2a --turn -1
    Example: sessionsift show ses_4b1c --locator part:prt_9a2 --home examples/home
    """
    from ..errors import TargetError, UsageError

    sel = make_selection(inv)
    fmt = inv.fmt
    claude_home = claude_root_arg(inv)
    n_claude = len(sel.claude.sessions) if sel.claude is not None else 0
    if lines is None and locator is None and uuid is None and turn is None and not branch_points:
        return _whole(inv, sel, lane, raw, no_pager)
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
    ln = scope.pick_lane(lane)
    out = Out(fmt, "show")
    out.header(**selection_header(sel), lane=lane_fields(ln))
    covs = sel.coverage()
    if branch_points:
        idx, bps = ln.branch_points()
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
    idx, recs = ln.shown(lines=lines, uuid=uuid, turn=turn, raw=raw, full=full)
    n_collapsed = 0
    for r, body, col in recs:
        e = r.entry
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


def _whole(inv, sel, lane, raw, no_pager) -> int:
    """`show SESSION` with no address: the session view (show/session.py) of the one session named,
    its child sessions indented."""
    from ..errors import TargetError, UsageError
    from ..show.session import session_view
    from . import show_view
    from .options import display_name
    from .pager import paged

    if lane is not None or raw:
        raise UsageError("--lane and --raw address records: give --line, --locator or --turn with them "
                         "(the whole-session view shows every lane)")
    top = [r for r in sel.session_refs() if (r.provider, r.session_id) not in sel.children]
    if len(top) != 1:
        ids = [f"{r.session_id} ({display_name(r.provider)})" for r in top[:10]]
        raise TargetError(f"this command needs exactly one session; the target matched {len(top)}"
                          + (f": {', '.join(ids)}" if ids else ""),
                          hint="name a session id (or unique prefix) or a transcript path")
    provs = {e.name: e.provider for e in sel.survey.entries if e.provider is not None}
    ref = top[0]
    prov = provs[ref.provider]
    ref = prov.full(ref)
    kids: dict = {}
    for r in sel.refs:
        if (r.provider, r.session_id) in sel.children and r.parent_session_id:
            kids.setdefault((r.provider, r.parent_session_id), []).append(r)

    def view_of(p, rf):
        v = session_view(p, rf)
        v.children = [view_of(provs[c.provider], c) for c in kids.get((rf.provider, rf.session_id), [])]
        return v

    if ref.last_at is None:
        sm = prov.summarize(ref, subagents=False)
        from dataclasses import replace as _replace

        ref = _replace(ref, first_at=ref.first_at or sm.first_at, last_at=sm.last_at, project=ref.project or sm.project,
                       version=ref.version or sm.version)
    view = view_of(prov, ref)
    with paged(inv.fmt == "text" and not no_pager) as to:
        out = Out(inv.fmt, "show", to.stream, terminal=to.terminal)
        return show_view.render(out, sel, prov, view, display_name)


def _size(n: int) -> str:
    """Decimal units, 3 significant digits."""
    if n < 1000:
        return f"{n} bytes"
    for unit in ("kB", "MB", "GB"):
        n /= 1000
        if n < 999.5 or unit == "GB":
            return f"{n:.3g} {unit}"
    return f"{n} bytes"  # pragma: no cover

@click.command("stats")
@targeting(dataset=True)
@click.option("--no-subagents", is_flag=True, help="Main lanes only.")
@click.option("--strict", is_flag=True, help="Fail on the first malformed line, naming file and line.")
@click.option("--shared", "shared_claude", is_flag=True,
              help="Read Claude Code's sessions through their shared records too, as every other agent's (a "
                   "cross-check of its lane census, which gives their figures otherwise)")
@click.option("-v", "--verbose", is_flag=True,
              help="Each session's census in full: record types, labels, token fields, prompts by how they were sent.")
def stats_cmd(inv, no_subagents, strict, shared_claude, verbose):
    """Census per session: one row each (turns, prompts, records, tool calls, failed, tokens), the
    tools most called and the totals of every agent; --verbose adds Claude Code's line types,
    labels, compactions and tokens per field, and every provider's record kinds and tools.

    \b
    Example: sessionsift stats --home examples/home
    Example: sessionsift stats . --verbose
    Example: sessionsift stats . --format json
    """
    from .stats_run import run

    return run(inv, no_subagents, strict, shared_claude, verbose)
