"""`list`, `show`, `stats`."""

from __future__ import annotations

from collections import Counter

import click

from ..providers.claude import listing
from ..providers.claude.discover import Lane
from ..providers.claude.model.lane import Entry
from ..providers.claude.model import record as R
from ..timefmt import instant, short_local
from .exit import ExitStatus
from .invocation import targeting
from .options import (claude_root_arg, sessions_unit, claude_scope, lane_fields, refetch, refetch_at, coverage_json, coverage_line, make_selection,
                      problems_json, selection_header)
from .output import Out, clip, esc
from .stats_run import _known_tokens, _plural, _prompts_text, _tools_text, bridges_json  # noqa: F401


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
@targeting(limit=True, dataset=True)
@click.option("--no-subagents", is_flag=True, help="Do not count subagent lanes.")
def list_cmd(inv, no_subagents):
    """One row per session of every provider, newest first (Claude Code: each transcript's head
    and tail only; other providers: the session's records), ending with the coverage line.

    \b
    Example: sessionsift list --home examples/home
    Example: sessionsift list . --format json
    """
    from ..questions.listing import list_refs, sort_key

    if inv.dataset:
        return _list_dataset(inv, no_subagents)
    sel = make_selection(inv, subagents=not no_subagents)
    fmt = inv.fmt
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


def _list_dataset(inv, no_subagents) -> int:
    """`list --dataset`: every machine's sessions, newest first, each row as `list` prints it (with
    its `machine`), from the facts the sync read (docs/dataset.md)."""
    from ..questions.listing import sort_key
    from ..sync.answers import list_rows, machines_text
    from ..sync.dataset import Dataset
    from .options import display_name, refuse_with_dataset

    refuse_with_dataset(inv)
    dataset, fmt = inv.dataset, inv.fmt
    got = list_rows(Dataset.open(dataset), list(inv.providers) or None, not no_subagents)

    class _Sel:  # what the row renderer asks of a selection: each provider's display name
        class survey:
            @staticmethod
            def entry(name):
                return type("E", (), {"display": display_name(name)})

    rows = [(sort_key(r.last_at), "claude", m, r) for m, r in got.claude]
    rows += [(sort_key(r.last_at), "ref", m, r) for m, r in got.refs]
    rows.sort(key=lambda x: x[0], reverse=True)
    out = Out(fmt, "list")
    top = sum(1 for _k, w, _m, r in rows if w == "claude" or r.ref.parent_session_id is None)
    out.header(dataset=dataset, machines=got.machines, sessions=top, claude_home=None, claude_home_source=None)
    for _k, which, m, r in rows:
        sub = _MachineOut(out, m)
        if which == "claude":
            _claude_row(sub, r)
        else:
            kids = None if got.kids is None else Counter({(p, parent): n for (mm, p, parent), n in got.kids.items() if mm == m})
            lineage = {(p, sid): v for (mm, p, sid), v in got.lineage.items() if mm == m}
            _ref_row(sub, r, _Sel, kids, lineage)
    refs = [r for _m, r in got.refs]
    bytes_total = sum(r.size for _m, r in got.claude) + sum(r.report.bytes for r in refs)
    bytes_read = sum(r.bytes_read for _m, r in got.claude) + sum(r.report.bytes for r in refs)
    out.summary(dataset=dataset, machines=got.machines, sessions=top,
                child_sessions=sum(1 for r in refs if r.ref.parent_session_id is not None),
                files_read=len(got.claude) + sum(r.report.files for r in refs), files_unreadable=len(got.problems),
                problems=problems_json(got.problems), bytes_total=bytes_total, bytes_read=bytes_read,
                coverage=coverage_json(got.coverage))
    out.text(f"{sessions_unit(len(rows), got.coverage)} in dataset {esc(dataset)}, {esc(machines_text(got.machines))}; "
             f"the sync read {bytes_read} of {bytes_total} bytes")
    out.text(coverage_line(got.coverage))
    return ExitStatus.INCOMPLETE if got.problems else ExitStatus.OK


class _MachineOut:
    """An Out whose rows carry the dataset machine they came from."""

    def __init__(self, out: Out, machine: str):
        self.out, self.machine = out, machine
        self.json = out.json

    def row(self, kind: str, data: dict) -> None:
        self.out.row(kind, {**data, "machine": self.machine})

    def text(self, line: str = "") -> None:
        self.out.text(line)


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
def show_cmd(inv, lane, lines, locator, uuid, turn, raw, branch_points, full):
    """Show records of one session (any provider) by line, locator, uuid or turn.

    \b
    Example: sessionsift show 3f2a --turn -1
    Example: sessionsift show ses_4b1c --locator part:prt_9a2 --home examples/home
    """
    from ..providers.claude import show as show_mod  # show's own module: no other command pays for it

    from ..errors import TargetError, UsageError

    sel = make_selection(inv)
    fmt = inv.fmt
    claude_home = claude_root_arg(inv)
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

@click.command("stats")
@targeting(dataset=True)
@click.option("--no-subagents", is_flag=True, help="Main lanes only.")
@click.option("--strict", is_flag=True, help="Fail on the first malformed line, naming file and line.")
@click.option("--shared", "shared_claude", is_flag=True,
              help="Also read Claude Code sessions through the shared records, so the `shared` totals cover every provider.")
def stats_cmd(inv, no_subagents, strict, shared_claude):
    """Census per session: Claude Code's line types, labels, turns, compactions, tokens per model;
    for every provider, records, prompts, tool calls and errors per tool, tokens per model.

    \b
    Example: sessionsift stats . --format json
    Example: sessionsift stats --home examples/home --shared
    """
    from .stats_run import run

    return run(inv, no_subagents, strict, shared_claude)
