"""`files`, `recover`, `plan`, `image` (docs/files.md): renderings of sessionsift.files' answers."""

from __future__ import annotations


import click

from .progress_run import with_reading
from ..errors import UsageError
from ..timefmt import instant, short_local
from .invocation import targeting
from .options import lane_fields, refetch, refetch_at, claude_root_arg
from .exit import ExitStatus
from .options import (coverage_json, coverage_line, make_selection, problems_json, selection_header, claude_root_arg)
from .output import Out, clip, esc, plural


def _touch_row(t, home) -> dict:
    return {
        **lane_fields(t.lane), "line": t.line, "timestamp": instant(t.timestamp), "turn": t.turn,
        "file": t.path, "raw": t.raw, "op": t.op, "via": t.via, "tool": t.tool, "verb": t.verb,
        "resolution": t.resolution, "status": t.status, "marker": t.marker, "tool_use_id": t.tool_use_id,
        "detail": t.detail,
        "interval": {"from": instant(t.interval[0]), "to": instant(t.interval[1])} if t.interval else None,
        "copy_of": {"session_id": t.copy_of[0], "line": t.copy_of[1]} if t.copy_of else None,
        "refetch": refetch(t.lane, t.line, home),
    }


@click.command("files")
@targeting()
@click.option("--by", "by", type=click.Choice(["file", "dir", "timeline", "summary"]), default="file",
              show_default=True, help="Grouping of the rows.")
@click.option("--no-subagents", is_flag=True, help="Main lanes only.")
@click.option("--subagents-only", is_flag=True, help="Subagent lanes only.")
@with_reading("reading")
def files_cmd(inv, by, no_subagents, subagents_only):
    """Which files sessions read, wrote and edited (tool calls, shell commands, and the file changes
    each agent's records hold), when, and by which session and lane.

    \b
    Example: sessionsift files 3f2a --by timeline
    Example: sessionsift files --home examples/home --by file
    """
    from ..read.fanout import no_gc

    with no_gc():  # a store's events are hundreds of thousands of acyclic objects: no collector passes
        return _files(inv, by, no_subagents, subagents_only)


def _files(inv, by, no_subagents, subagents_only):
    from ..files.touched import ops_text, touched
    from .cmd_shared import change_line, change_row

    if no_subagents and subagents_only:
        raise UsageError("--no-subagents and --subagents-only exclude each other")
    fmt, claude_home = inv.fmt, claude_root_arg(inv)
    sel = make_selection(inv, subagents=not no_subagents)
    res = touched(sel, subagents=not no_subagents, subagents_only=subagents_only, progress=True)
    out = Out(fmt, "files")
    out.header(**selection_header(sel), by=by)
    from .table import COVERAGE_SEPS, prose

    def say(line: str, seps: tuple[str, ...] = ("  ", " ")) -> None:
        """A line of the answer: on a terminal broken across lines of its width (nothing cut)."""
        prose(out, line, seps, indent="    ")

    if by == "timeline":
        for c in res.timeline():
            if not hasattr(c, "lane"):
                out.row("change", change_row(sel, c))
                say(change_line(sel, c))
                continue
            t = c
            out.row("touch", _touch_row(t, claude_home))
            iv = f" between {short_local(t.interval[0])} and {short_local(t.interval[1])}" if t.interval else ""
            say(f"{short_local(t.timestamp)} {t.lane.session_id[:8]} L{t.line} {esc(t.lane.display)} {t.op:<16} "
                     f"{esc(t.path or t.raw or t.marker)} [{t.resolution}, {t.status}]{iv}"
                     + (f"  (copy of {t.copy_of[0][:8]} L{t.copy_of[1]}: not counted)" if t.copy_of else "")
                     + (f"  {clip(t.detail, 100)}" if t.detail else ""))
    elif by == "file":
        rows, unresolved_rows = res.by_file()
        for r in rows:
            out.row("file", {"file": r.path, "ops": r.ops, "failed": r.failed, "first": instant(r.first),
                             "last": instant(r.last), "lanes": r.lanes, "lines": r.lines,
                             "touches": [{"session_id": t.lane.session_id, "lane": t.lane.display,
                                          "is_subagent": t.lane.is_subagent,
                                          "parent_session_id": t.lane.parent_session_id, "line": t.line,
                                          "refetch": refetch(t.lane, t.line, claude_home)} for t in r.touches]
                                        + [change_row(sel, c) for c in r.changes]})
            say(f"{esc(r.path)}  " + ops_text(r.ops, r.failed)
                     + f"  [{', '.join(esc(x) for x in r.lanes)}] {short_local(r.first)} .. {short_local(r.last)}")
        for t in unresolved_rows:
            out.row("unresolved", _touch_row(t, claude_home))
            say(f"(unresolved) L{t.line} {esc(t.lane.display)} {t.op} {esc(t.marker or t.raw)}"
                     + (f" via {esc(t.verb)}" if t.verb else ""))
    elif by == "dir":
        for d in res.by_dir():
            out.row("dir", {"dir": d.dir, "ops": d.ops, "failed": d.failed, "files": d.files})
            say(f"{esc(d.dir)}/  {plural(d.files, 'file')}  " + ops_text(d.ops, d.failed))
    sm = res.summary()
    problems = res.problems
    covs = sel.coverage()
    out.summary(transcripts=sm.transcripts, files_unreadable=len(problems), problems=problems_json(problems),
                touches=sm.touches, files=sm.files, unresolved=sm.unresolved, unparsed_commands=sm.unparsed,
                ops=sm.ops, failed=sm.failed, copies=sm.copies, omissions=sm.omissions, index=res.index.as_json(),
                shared={"sessions": sm.sessions, "changes": sm.changes, "files": sm.shared_files,
                        "actions": sm.actions, "failed": sm.shared_failed, "reads": sm.reads,
                        "complete_views": sm.complete_views, "shell_touches": sm.shell_touches,
                        "shell_unnamed_writers": sm.shell_unnamed_writers, "omissions": sm.shared_omissions},
                coverage=coverage_json(covs), invisible=INVISIBLE)
    lane_problems = res.lane_problems
    if any(ln.selected for ln in res.lanes):
        nfiles = len({t.path for t in res.touches if t.path and t.copy_of is None})
        say(f"{plural(sm.touches, 'touch', 'touches')} of {plural(nfiles, 'file')} "
                 f"({sm.unresolved} unresolved/markers) in {plural(sm.transcripts, 'transcript')}"
                 + (f", {len(lane_problems)} unreadable" if lane_problems else "")
                 + (f"; {sm.copies} touches on a fork's copies of another session's records not counted"
                    if sm.copies else "")
                 + (f" ({sum(sm.failed.values())} failed: changed nothing)" if sm.failed else "")
                 + ("; " + ops_text(sm.ops, sm.failed) if by == "summary" else ""))
    if sm.sessions:
        nf = sum(sm.shared_failed.values())
        nsr = sm.shell_touches - sm.shell_writes
        record_problems = res.record_problems
        names = sorted({esc(res.displays.get(r.provider, r.provider)) for r in sel.refs})
        say(f"{plural(sm.changes, 'recorded change')}"
                 + (f" and {plural(sm.shell_writes, 'shell write')} named by a command" if sm.shell_writes else "")
                 + (f", {plural(sm.reads + nsr, 'read')}" if sm.reads or nsr else "")
                 + (f", {plural(nf, 'failed call')} (changed nothing)" if nf else "")
                 + f" of {plural(sm.shared_files, 'file')} in "
                 f"{plural(len(sel.refs), 'session')} of " + ", ".join(names)
                 + (f", {len(record_problems)} unreadable" if record_problems else "")
                 + (f"; {plural(sm.shell_unnamed_writers, 'shell command')} may have written files they do not name "
                    "(an interpreter, a formatter, an unresolved operand): not listed" if sm.shell_unnamed_writers
                    else "")
                 + ("; " + ops_text(sm.actions, sm.shared_failed) if by == "summary" and (sm.actions or sm.shared_failed)
                    else ""))
    lost = {k: v for k, v in sm.omissions.items() if v}
    if lost:
        say("lines not read (touches on them are not counted; the figures are lower bounds): "
                 + ", ".join(f"{k}={v}" for k, v in sorted(lost.items())))
    if sm.unparsed:
        say(f"{sm.unparsed} shell command(s) the parser could not read: the files they wrote are unknown "
                 "(the figures are lower bounds)")
    for p in problems[:5]:
        say(f"could not read: {p.path} ({p.why})")
    if res.index.on and res.index.counts["scanned"]:
        say(res.index.text())  # the transcripts read without the index, and why
    say(coverage_line(covs), COVERAGE_SEPS)
    return ExitStatus.INCOMPLETE if res.incomplete else ExitStatus.OK


INVISIBLE = ("writes by other processes leave no trace unless a freshness signal or a file-history "
             "version jump records them (FH-013); bash writes never enter file-history (FH-020)")


@click.command("plan")
@targeting()
@click.option("--audit", is_flag=True, help="Structured writes to plan files the writing session does not bind.")
def plan_cmd(inv, audit):
    """The plan each session keeps: a plan file bound to it (Claude Code's plan mode: the plan_mode
    attachment, else the first valid slug), or the checklist its plan tool recorded last (Codex CLI
    update_plan, Gemini CLI write_todos, opencode todowrite, ...).

    Example: sessionsift plan 3f2a --audit
    """
    fmt = inv.fmt
    claude_home = claude_root_arg(inv)
    from ..files.plan import plans
    from .shared import refetch as record_refetch, session_fields

    sel = make_selection(inv)
    res = plans(sel, audit=audit)
    out = Out(fmt, "plan")
    out.header(**selection_header(sel))
    n_audit = 0
    for pl in res.plans:
        b = pl.file
        if b is not None or pl.ref is None:  # a plan file bound to a lane model's session
            row = {"provider": pl.provider, "session_id": pl.session_id, "is_subagent": False,
                   "parent_session_id": None, "source": b.source, "plan_kind": pl.kind, "plan_path": b.plan_path,
                   "plan_path_checked": b.plan_path_checked, "plan_exists": b.plan_exists,
                   "plan_exists_recorded": b.plan_exists_recorded, "slug": b.slug, "line": b.line, "locator": None,
                   "timestamp": None, "refetch": refetch_at(b.session_id, "", False, b.line, claude_home),
                   "minted_at_compaction": b.minted_at_compaction, "plans_dir": b.plans_dir,
                   "plans_dir_source": b.plans_dir_source, "steps": None, "explanation": None, "updates": None,
                   "failed_updates": None, "notes": b.notes}
            out.row("plan", row)
            out.text(f"{b.session_id}  {esc(b.plan_path) if b.plan_path else '(no plan bound)'}  via {b.source or '-'}"
                     + (f" L{b.line}" if b.line else "")
                     + f"  exists={b.plan_exists if b.plan_exists is not None else '-'}"
                     + ("  minted_at_compaction" if b.minted_at_compaction else ""))
            out.text(f"  plans dir: {esc(b.plans_dir)}; source: {esc(b.plans_dir_source)}")
            for n in b.notes:
                out.text(f"  note: {esc(n)}")
            for a in b.audit:
                n_audit += 1
                out.row("foreign_plan_write", {
                    "session_id": b.session_id, **a, "timestamp": instant(a["timestamp"]),
                    "parent_session_id": b.session_id if a["is_subagent"] else None,
                    "refetch": refetch_at(b.session_id, a["lane_path"], a["is_subagent"], a["line"], claude_home)})
                out.text(f"  audit: L{a['line']} {esc(a['lane'])} {a['tool']} {esc(a['path'])}"
                         f" (bound by {a['bound_by'] or 'no session in scope'})")
            continue
        ref = pl.ref
        row = {**session_fields(ref), "source": pl.source, "plan_kind": pl.kind, "plan_path": pl.path,
               "plan_path_checked": pl.path, "plan_exists": pl.exists, "plan_exists_recorded": None, "slug": None,
               "line": pl.line, "locator": pl.locator, "timestamp": instant(pl.timestamp),
               "refetch": record_refetch(sel, ref, pl.record) if pl.record is not None else None,
               "minted_at_compaction": None, "plans_dir": None, "plans_dir_source": None, "steps": pl.steps,
               "explanation": pl.explanation, "updates": pl.updates, "failed_updates": pl.failed_updates,
               "notes": pl.notes}
        row.pop("lane", None)
        out.row("plan", row)
        name = res_display(sel, pl.provider)
        if pl.path is not None:
            out.text(f"{esc(ref.session_id)} ({esc(name)})  {esc(pl.path)}  via {esc(pl.source)} {esc(pl.locator)} "
                     f"{short_local(pl.timestamp)}  exists={pl.exists if pl.exists is not None else '-'}")
        if pl.steps is None:
            if pl.path is None:
                out.text(f"{esc(ref.session_id)} ({esc(name)})  (no plan recorded)")
        elif pl.path is not None:
            for st in pl.steps:
                out.text(f"  [{esc(str(st.get('status')))}] {esc(str(st.get('step')))}")
        else:
            out.text(f"{esc(ref.session_id)} ({esc(name)})  checklist via {esc(pl.source)} {esc(pl.locator)} "
                     f"{short_local(pl.timestamp)}  ({plural(pl.updates, 'update')})")
            for st in pl.steps:
                out.text(f"  [{esc(str(st.get('status')))}] {esc(str(st.get('step')))}")
            if pl.explanation:
                out.text(f"  explanation: {clip(pl.explanation, 200)}")
        for n in pl.notes:
            out.text(f"  note: {esc(n)}")
    for who, why in res.lacks.items():
        out.text(f"{esc(who)}: no plan read: {esc(why)}")
    covs = sel.coverage()
    out.summary(sessions=len(res.plans), bound=sum(1 for p in res.plans if p.kind is not None),
                audit_rows=n_audit if audit else None, lacks=res.lacks or None,
                files_unreadable=len(res.problems), problems=problems_json(res.problems),
                coverage=coverage_json(covs))
    out.text(coverage_line(covs))
    if not res.plans:
        return ExitStatus.NO_MATCH
    return ExitStatus.INCOMPLETE if res.problems or sel.incomplete() else ExitStatus.OK


def res_display(sel, name: str) -> str:
    e = sel.survey.entry(name)
    return e.display if e else name


@click.command("image")
@targeting()
@click.option("--id", "ident", default=None, help="N (an [Image #N] handle) or L<line>i<n> (a record's locator + i<n>).")
@click.option("--out", "out_dir", default=None, help="Write the image bytes into DIR.")
@click.option("--all-occurrences", is_flag=True, help="Do not deduplicate by content fingerprint.")
@click.option("--no-subagents", is_flag=True, help="Main lanes only.")
def image_cmd(inv, ident, out_dir, all_occurrences, no_subagents):
    """List and extract inline images of every agent's sessions (attached to a prompt, in a message,
    or in a tool's output).

    Example: sessionsift image 3f2a --id L12i1 --out ./imgs
    """
    fmt = inv.fmt
    claude_home = claude_root_arg(inv)
    from ..files import image as image_q
    from .shared import refetch as record_refetch, session_fields

    sel = make_selection(inv, subagents=not no_subagents)
    res = image_q.images(sel, dedup=not all_occurrences)
    ims = res.images
    if ident:
        ims = image_q.select(ims, ident)
    written = dict()
    if out_dir:
        written = {id(im): p for im, p in image_q.write_out(ims, out_dir)}
    out = Out(fmt, "image")
    out.header(**selection_header(sel))
    for im in ims:
        if im.lane is not None:
            where = {**lane_fields(im.lane), "refetch": refetch(im.lane, im.line, claude_home)}
        else:
            where = {**session_fields(im.ref, im.record), "path": im.path,
                     "refetch": record_refetch(sel, im.ref, im.record)}
        out.row("image", {**where, "locator": im.locator, "line": im.line, "carrier": im.carrier,
                          "handle": im.handle, "media_type": im.media_type, "source_kind": im.source_kind,
                          "size": im.size, "sha256": im.sha256, "timestamp": instant(im.timestamp),
                          "tool_use_id": im.tool_use_id, "occurrences": im.occurrences,
                          "written": written.get(id(im))})
        label = esc(im.lane.display) if im.lane is not None else esc(res_display(sel, im.ref.provider))
        out.text(f"{esc(im.session_id)}  {label}:{esc(im.locator)}  {im.media_type or '?'}  "
                 f"{im.size if im.size is not None else '?'} B"
                 f"  {'[Image #%d]' % im.handle if im.handle is not None else '(no handle)'}  {im.carrier}"
                 + (f"  x{len(im.occurrences)}" if len(im.occurrences) > 1 else "")
                 + (f"  -> {esc(written[id(im)])}" if id(im) in written else ""))
        if im.lane is not None:
            out.text(f"  transcript: {esc(im.lane.path)}")
        elif im.ref is not None and im.ref.paths:
            out.text(f"  session file: {esc(im.ref.paths[0])}" + (f"  (from {esc(im.path)})" if im.path else ""))
    for who, why in res.lacks.items():
        out.text(f"{esc(who)}: no image read: {esc(why)}")
    covs = sel.coverage()
    out.summary(images=len(ims), written=len(written) if out_dir else None, deduplicated=not all_occurrences,
                lacks=res.lacks or None, files_unreadable=len(res.problems), problems=problems_json(res.problems),
                coverage=coverage_json(covs))
    out.text(coverage_line(covs))
    if not ims:
        return ExitStatus.NO_MATCH
    return ExitStatus.INCOMPLETE if res.problems or sel.incomplete() else ExitStatus.OK
