"""`files`, `recover`, `plan`, `image` (docs/files.md)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..errors import UsageError
from ..files import recover as rec_mod, touched  # plan and image: imported by their commands
from ..timefmt import instant, short_local
from .options import lane_fields, refetch, refetch_at
from .exit import ExitStatus
from .invocation import targeting
from .options import (claude_root_arg, claude_scope, coverage_json, coverage_line, make_scope, make_selection,
                      problems_json, scope_header, selection_header)
from .output import Out, clip, esc, plural


def _touch_row(t: touched.Touch, home) -> dict:
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
def files_cmd(inv, by, no_subagents, subagents_only):
    """Which files sessions read, wrote and edited (Claude Code: tools and shell; other providers:
    the file changes their records hold), when, and by which session and lane.

    \b
    Example: sessionsift files 3f2a --by timeline
    Example: sessionsift files --home examples/home --by file
    """
    from ..read.fanout import no_gc

    with no_gc():  # a store's events are hundreds of thousands of acyclic objects: no collector passes
        return _files(inv, by, no_subagents, subagents_only)


def _files(inv, by, no_subagents, subagents_only):
    from ..questions.files import changes as shared_changes
    from .cmd_shared import change_line, change_row, display_of, pairs_of

    if no_subagents and subagents_only:
        raise UsageError("--no-subagents and --subagents-only exclude each other")
    fmt, claude_home = inv.fmt, claude_root_arg(inv)
    sel = make_selection(inv, subagents=not no_subagents)
    scope = claude_scope(sel)
    irep, hows = _index_report(scope)
    with _progress(irep):
        res = touched.touches(scope, subagents=not no_subagents, subagents_only=subagents_only, use_index=irep.on,
                              outcomes=hows)
    _index_done(irep, hows)
    gres = shared_changes(pairs_of(sel))
    from ..questions.files import shell_touches

    stouch, unnamed_shell = shell_touches(gres.shells)  # what their shell calls name as written

    def keep(c) -> bool:  # a child session (another provider's subagent) is not a main lane
        return not (no_subagents and (c.record.lane != "main" or c.ref.parent_session_id is not None)) \
            and not (subagents_only and c.record.lane == "main" and c.ref.parent_session_id is None)

    recorded = [c for c in gres.changes if keep(c)]
    skept = [c for c in stouch if keep(c)]
    sreads = [c for c in gres.reads if keep(c)]  # read tool calls (read_file, read, view), as Claude Code's Read
    sfailed = [c for c in gres.failed if keep(c)]  # change calls that failed: changed nothing
    from ..listing import sort_key as _sk

    gch = sorted(recorded + skept + sreads + sfailed, key=lambda c: (_sk(c.record.instant), c.ref.session_id, c.seq))
    out = Out(fmt, "files")
    out.header(**selection_header(sel), by=by)
    ts = res.touches
    if by == "timeline":
        from ..listing import sort_key

        merged = sorted([(sort_key(t.timestamp), 0, t) for t in ts] + [(sort_key(c.record.instant), 1, c) for c in gch],
                        key=lambda x: (x[0], x[1]))
        for _k, which, c in merged:
            if which == 1:
                out.row("change", change_row(sel, c))
                out.text(change_line(sel, c))
                continue
            t = c
            out.row("touch", _touch_row(t, claude_home))
            iv = f" between {short_local(t.interval[0])} and {short_local(t.interval[1])}" if t.interval else ""
            out.text(f"{short_local(t.timestamp)} {t.lane.session_id[:8]} L{t.line} {esc(t.lane.display)} {t.op:<16} "
                     f"{esc(t.path or t.raw or t.marker)} [{t.resolution}, {t.status}]{iv}"
                     + (f"  (copy of {t.copy_of[0][:8]} L{t.copy_of[1]}: not counted)" if t.copy_of else "")
                     + (f"  {clip(t.detail, 100)}" if t.detail else ""))
    elif by == "file":
        from ..questions.files import by_file

        gfiles = by_file(gch)
        for d in touched.group_by_file(ts):
            out.row("file", {"file": d["path"], "ops": d["ops"], "failed": d["failed"], "first": instant(d["first"]),
                             "last": instant(d["last"]), "lanes": d["lanes"], "lines": d["lines"],
                             "touches": [{"session_id": t.lane.session_id, "lane": t.lane.display,
                                          "is_subagent": t.lane.is_subagent,
                                          "parent_session_id": t.lane.parent_session_id, "line": t.line,
                                          "refetch": refetch(t.lane, t.line, claude_home)}
                                         for t in ts if t.path == d["path"] and t.copy_of is None]
                                        + [change_row(sel, c) for c in gfiles.pop(d["path"], [])]})
            out.text(f"{esc(d['path'])}  " + touched.ops_text(d["ops"], d["failed"])
                     + f"  [{', '.join(esc(x) for x in d['lanes'])}] {short_local(d['first'])} .. {short_local(d['last'])}")
        for path, cs in gfiles.items():
            _shared_file_row(out, sel, path, cs)
        for t in ts:
            if t.path is None and t.copy_of is None:
                out.row("unresolved", _touch_row(t, claude_home))
                out.text(f"(unresolved) L{t.line} {esc(t.lane.display)} {t.op} {esc(t.marker or t.raw)}"
                         + (f" via {esc(t.verb)}" if t.verb else ""))
    elif by == "dir":
        from ..questions.files import by_dir

        gdirs = by_dir(gch)
        for d in touched.group_by_dir(ts):
            for c in gdirs.pop(d["dir"], []):
                k = "failed" if c.failed else "ops"
                d[k][c.change.action] = d[k].get(c.change.action, 0) + 1
            out.row("dir", d)
            out.text(f"{esc(d['dir'])}/  {plural(d['files'], 'file')}  " + touched.ops_text(d["ops"], d["failed"]))
        for dname, cs in gdirs.items():
            d = {"dir": dname, "ops": _count(c.change.action for c in cs if not c.failed),
                 "failed": _count(c.change.action for c in cs if c.failed), "files": len({c.path for c in cs})}
            out.row("dir", d)
            out.text(f"{esc(dname)}/  {plural(d['files'], 'file')}  " + touched.ops_text(d["ops"], d["failed"]))
    ts = [t for t in ts if t.copy_of is None]  # each original record counted once
    ops, failed = touched.count_ops(ts)
    gops = _count(c.change.action for c in gch if not c.failed)
    gfailed = _count(c.change.action for c in gch if c.failed)
    nsw = sum(1 for c in skept if c.change.action != "shell:read")
    files = len({t.path for t in ts if t.path} | {c.path for c in gch})
    unresolved = sum(1 for t in ts if t.path is None)
    problems = res.problems + gres.problems
    covs = sel.coverage()
    out.summary(transcripts=res.transcripts, files_unreadable=len(problems), problems=problems_json(problems),
                touches=len(ts), files=files, unresolved=unresolved, unparsed_commands=res.unparsed, ops=ops,
                failed=failed,
                copies=res.copies,
                omissions=res.omissions, index=irep.as_json(),
                shared={"sessions": len(sel.refs), "changes": len(recorded), "files": _n_files(gch),
                        "actions": gops, "failed": gfailed, "reads": len(sreads),
                        "complete_views": sum(c.change.new_content is not None for c in gch),
                        "shell_touches": len(skept), "shell_unnamed_writers": unnamed_shell,
                        "omissions": gres.omissions()},
                coverage=coverage_json(covs),
                invisible="writes by other processes leave no trace unless a freshness signal or a file-history "
                          "version jump records them (FH-013); bash writes never enter file-history (FH-020)")
    if sel.claude is not None:
        out.text(f"{plural(len(ts), 'touch', 'touches')} of {plural(len({t.path for t in ts if t.path}), 'file')} "
                 f"({unresolved} unresolved/markers) in {plural(res.transcripts, 'transcript')}" + (f", {len(res.problems)} unreadable" if res.problems else "")
                 + (f"; {res.copies} touches on a fork's copies of another session's records not counted"
                    if res.copies else "")
                 + (f" ({sum(failed.values())} failed: changed nothing)" if failed else "")
                 + ("; " + touched.ops_text(ops, failed) if by == "summary" else ""))
    if sel.refs:
        ns = nsw
        nsr = len(skept) - nsw
        nf = sum(gfailed.values())
        out.text(f"{plural(len(recorded), 'recorded change')}"
                 + (f" and {plural(ns, 'shell write')} named by a command" if ns else "")
                 + (f", {plural(len(sreads) + nsr, 'read')}" if sreads or nsr else "")
                 + (f", {plural(nf, 'failed call')} (changed nothing)" if nf else "")
                 + f" of {plural(_n_files(gch), 'file')} in "
                 f"{plural(len(sel.refs), 'session')} of "
                 + ", ".join(sorted({esc(display_of(sel, r.provider)) for r in sel.refs}))
                 + (f", {len(gres.problems)} unreadable" if gres.problems else "")
                 + (f"; {plural(unnamed_shell, 'shell command')} may have written files they do not name "
                    "(an interpreter, a formatter, an unresolved operand): not listed" if unnamed_shell else "")
                 + ("; " + touched.ops_text(gops, gfailed) if by == "summary" and (gops or gfailed) else ""))
    lost = {k: v for k, v in res.omissions.items() if v}
    if lost:
        out.text("lines not read (touches on them are not counted; the figures are lower bounds): "
                 + ", ".join(f"{k}={v}" for k, v in sorted(lost.items())))
    if res.unparsed:
        out.text(f"{res.unparsed} shell command(s) the parser could not read: the files they wrote are unknown "
                 "(the figures are lower bounds)")
    for p in problems[:5]:
        out.text(f"could not read: {p.path} ({p.why})")
    if irep.on and irep.counts["scanned"]:
        out.text(irep.text())  # the transcripts read without the index, and why
    out.text(coverage_line(covs))
    return ExitStatus.INCOMPLETE if problems or res.unparsed or sel.incomplete() else ExitStatus.OK


def _index_report(scope):
    """(IndexReport, list the lanes' outcomes are appended to) for the Claude Code scope."""
    from ..index.report import IndexReport

    return IndexReport.for_root(scope.home.path, scope.index_off), []


class _progress:
    """A long first build of the index shows progress on the terminal (index/progress.py), as
    `stats` and `index update` do."""

    def __init__(self, irep):
        self.on = irep.on

    def __enter__(self):
        if self.on:
            from ..index import lanes as IL
            from ..index.progress import Progress

            IL.PROGRESS = Progress()

    def __exit__(self, *exc):
        if self.on:
            from ..index import lanes as IL

            if IL.PROGRESS is not None:
                IL.PROGRESS.done()
            IL.PROGRESS = None
        return False


def _index_done(irep, hows: list) -> None:
    from ..index.lanes import Outcome

    for h in hows:
        irep.add(Outcome(h, None if h != "scanned" else ("index off" if not irep.on else "a torn final line")))


def _count(it) -> dict[str, int]:
    out: dict[str, int] = {}
    for k in it:
        out[k] = out.get(k, 0) + 1
    return out


def _shared_file_row(out: Out, sel, path: str, cs: list) -> None:
    from ..listing import sort_key
    from .cmd_shared import change_row

    ts = sorted((c.record.instant for c in cs if c.record.instant), key=sort_key)
    lanes = []
    for c in cs:
        name = f"{c.ref.provider}:{c.ref.session_id}" + ("" if c.record.lane == "main" else f"/{c.record.lane}")  # escaped when printed
        if name not in lanes:
            lanes.append(name)
    ops = _count(c.change.action for c in cs if not c.failed)
    failed = _count(c.change.action for c in cs if c.failed)
    out.row("file", {"file": path, "ops": ops, "failed": failed, "first": instant(ts[0]) if ts else None,
                     "last": instant(ts[-1]) if ts else None, "lanes": lanes,
                     "lines": [c.record.line for c in cs], "touches": [change_row(sel, c) for c in cs]})
    out.text(f"{esc(path)}  " + touched.ops_text(ops, failed)
             + f"  [{', '.join(esc(x) for x in lanes)}] {short_local(ts[0] if ts else None)} .. {short_local(ts[-1] if ts else None)}")


def _step_row(s: rec_mod.Step, home) -> dict:
    return {"seq": s.seq, "session_id": s.session_id, "lane": s.lane, "path": s.lane_path,
            "is_subagent": s.is_subagent, "parent_session_id": s.session_id if s.is_subagent else None,
            "line": s.line, "timestamp": instant(s.timestamp), "turn": s.turn,
            "refetch": refetch_at(s.session_id, s.lane_path, s.is_subagent, s.line, home),
            "step_kind": s.kind, "what": s.what, "detail": s.detail, "segment": s.segment,
            "known_pieces": s.known, "total_pieces": s.total, "complete": s.complete, "tool_use_id": s.tool_use_id}


def _recover_file_arg(inv, targets: tuple[str, ...], file: str | None) -> tuple[tuple[str, ...], str]:
    """`recover [TARGET...] PATH` or `recover [TARGET...] --file PATH`: without --file the last
    positional is the file; with it, a last positional naming the same file is the same request
    (dropped), and one that is no session target but a file of its own is a second file (a usage
    error naming both)."""
    if not file:
        if not targets:
            raise UsageError("give the file: recover [TARGET...] PATH (or --file PATH)")
        *rest, last = targets
        if (not rest and os.sep not in last and "." not in last and not os.path.lexists(last)
                and _names_a_session(inv, last)):
            raise UsageError(f"{last!r} names a session, not a file: give the file too "
                             f"(recover {last} PATH, or --file PATH)")
        return tuple(rest), last
    if targets:
        last = targets[-1]
        if rec_mod.resolve_file_arg(last) == rec_mod.resolve_file_arg(file):
            return targets[:-1], file
    return targets, file


def _two_files(inv, targets: tuple[str, ...], file: str) -> UsageError | None:
    """With --file given, a last positional that reads as a file (it is one, or is spelled as a
    path: a separator or a dot) and names no session (nor a directory of them) is a second file:
    the usage error naming both. A bare token stays a bad target (its own error)."""
    last = targets[-1] if targets else None
    if last is None or Path(last).expanduser().is_dir():
        return None
    if not (Path(last).expanduser().is_file() or os.sep in last or "." in last) or _names_a_session(inv, last):
        return None
    return UsageError(f"two files given: --file {file} and {last} (positional); give one "
                      "(the positionals before the file name sessions)")


def _names_a_session(inv, t: str) -> bool:
    """Whether target `t` resolves to a session of a provider looked at."""
    from ..errors import TargetError

    try:
        sel = make_selection(inv.with_targets((t,)))
    except (TargetError, UsageError):
        return False
    return bool(sel.refs) or bool(sel.claude is not None and sel.claude.sessions)


@click.command("recover")
@targeting()
@click.option("--file", "file", required=False, help="The file (relative = against your cwd).")
@click.option("--coverage", is_flag=True, help="Known line ranges and every boundary.")
@click.option("--at", "at", default=None, help="L<line> | turn<N> | instant: content as the session saw it then.")
@click.option("--patches", is_flag=True, help="Unified diffs, segmented at boundaries.")
@click.option("--out", "out_file", default=None, help="Write the reconstruction to FILE (never overwrites).")
@click.option("--list-backups", is_flag=True, help="List the client's file-history checkpoints of the file.")
@click.option("--no-subagents", is_flag=True, help="Ignore subagent lanes.")
def recover_cmd(inv, file, coverage, at, patches, out_file, list_backups, no_subagents):
    """Rebuild a file's content from the Read/Write/Edit stream, with every gap named.

    \b
    The file is --file PATH or the last positional (recover [TARGET...] PATH).
    Example: sessionsift recover 3f2a src/app.py --coverage
    Example: sessionsift recover 3f2a --file src/app.py
    """
    from ..read.fanout import no_gc

    with no_gc():  # as `files`
        return _recover(inv, file, coverage, at, patches, out_file, list_backups, no_subagents)


def _recover(inv, file, coverage, at, patches, out_file, list_backups, no_subagents):
    from ..errors import TargetError

    fmt, claude_home = inv.fmt, claude_root_arg(inv)
    given_file = bool(file)
    targets, file = _recover_file_arg(inv, inv.targets, file)
    path = rec_mod.resolve_file_arg(file)
    try:
        sel = make_selection(inv.with_targets(targets), subagents=not no_subagents)
    except TargetError:
        if given_file and (two := _two_files(inv, targets, file)) is not None:
            raise two from None
        raise
    scope = claude_scope(sel)
    out = Out(fmt, "recover")
    cut = rec_mod.parse_at(at)
    irep, hows = _index_report(scope)
    with _progress(irep):
        lane_evs, problems = rec_mod.collect(scope, not no_subagents, irep.on, hows)
    _index_done(irep, hows)
    if sel.refs and not list_backups:
        # other providers' sessions in scope: their complete views (FileChange.new_content) answer
        # when Claude Code's transcripts hold no record of the file (cmd_recover_shared.py)
        from .cmd_recover_shared import recover_shared

        crec = rec_mod.recover(scope, path, cut, not no_subagents, lane_evs, problems) if scope.sessions else None
        if crec is None or (crec.state is None and crec.exists is None):
            return recover_shared(out, sel, path, file, at, cut, coverage=coverage, patches=patches,
                                  out_file=out_file, claude_transcripts=crec.transcripts if crec else None)
        out.err("sessionsift: note: Claude Code's transcripts record this file: rebuilt from them; other providers' "
                "records of it are not merged (narrow with --provider to read theirs)")
    out.header(**selection_header(sel), file=path, file_given=file, at=at)
    content_view = not (coverage or patches or list_backups)
    # the content view puts the file on stdout and everything else on stderr
    say = out.err if content_view else out.text
    if file != path and not out.json:
        say(f"file: {path} (resolved from {file} against {os.getcwd()})")
    if irep.on and irep.counts["scanned"] and not out.json:
        say(irep.text())  # the transcripts read without the index, and why
    if list_backups:
        rows = rec_mod.list_backups(scope, path, lane_evs)
        for r in rows:
            out.row("backup", {**r, "is_subagent": False, "parent_session_id": None})
            out.text(f"{r['name']}  {'%d B' % r['size'] if r['size'] is not None else 'missing'}  "
                     f"session {r['session_id']}  recorded at {', '.join(r['recorded_backup_times']) or '-'}")
            for n in r["notes"]:
                out.text(f"  note: {n}")
        out.summary(backups=len(rows), file=path, merged_into_reconstruction=False, coverage=coverage_json(sel.coverage()))
        out.text(f"{len(rows)} checkpoint(s); listed only: a checkpoint's content enters a reconstruction only where "
                 "a later snapshot proves the file equals it (checkpoint-restore)")
        out.text(coverage_line(sel.coverage()))
        return ExitStatus.OK if rows else ExitStatus.NO_MATCH
    rec = rec_mod.recover(scope, path, cut, not no_subagents, lane_evs, problems)
    unread = [p.path for p in rec.unreadable]
    if rec.state is None and rec.exists is None:
        failed = [s for s in rec.steps if s.what == "rejected"]
        upto = f" up to --at {at}" if at else ""
        if failed:  # calls named it and failed: the sessions never wrote it, but they did name it
            msg = (f"no content of this file in {plural(rec.transcripts, 'transcript')}{upto}: "
                   f"{plural(len(failed), 'call')} named it and failed ("
                   + ", ".join(f"L{s.line} {s.lane} {s.detail.split(' failed:')[0]}" for s in failed[:5])
                   + (", ..." if len(failed) > 5 else "") + ")")
        else:
            msg = f"no record of this file in {plural(rec.transcripts, 'transcript')}{upto}"
        if unread:
            msg += f" ({len(unread)} unreadable: {', '.join(unread[:5])})"
        for s in rec.steps if out.json else ():
            out.row("step", _step_row(s, claude_home))
        out.summary(status="no_record", file=path, transcripts=rec.transcripts, files_unreadable=len(unread),
                    problems=problems_json(rec.unreadable), message=msg, exit_status=int(ExitStatus.NO_MATCH),
                    failed_calls=len(failed), coverage=coverage_json(sel.coverage()), index=irep.as_json())
        if not out.json:
            say(f"{path}: {msg}")
            say(coverage_line(sel.coverage()))
        return ExitStatus.NO_MATCH
    for s in rec.steps:
        if coverage or patches or fmt == "json":
            out.row("step", {**_step_row(s, claude_home), **({"patch": "".join(s.patch)} if patches and s.patch else {})})
        if coverage or patches:
            out.text(f"[seg {s.segment}] L{s.line} {s.lane} {s.kind:<10} {s.what:<18} {clip(s.detail, 110)}")
        if patches and s.patch:
            for l in "".join(s.patch).split("\n"):
                out.text("    " + l)
    rngs = rec.ranges()
    for r in rngs:
        out.row("range", {"range_kind": r["kind"], **{k: v for k, v in r.items() if k != "kind"}})
    if coverage:
        for r in rngs:
            span = f"{r['start']}-{r['end']}" if r["start"] is not None and r["end"] is not None else (
                f"{r['start']}-?" if r["start"] is not None else "?")
            out.text(f"  {r['kind']:<5} lines {span} ({r['lines'] if r['lines'] is not None else '?'})"
                     + (f"  cause: {r['cause']}" if r["cause"] else ""))
    text = rec.text()
    known_pieces = sum(isinstance(x, str) for x in rec.state or [])
    # what the content view and --out carry: the rebuilt file, else (partial) the known lines
    # with gap markers, else nothing (a file of gap markers alone is no file)
    body = text if text is not None else (rec_mod.render_text(rec) if known_pieces and rec.exists is not False
                                          else None)
    if content_view and fmt != "json" and body is not None:
        data = body.encode("utf-8", "surrogateescape")
        if out.stream.isatty():
            for l in body.split("\n"):
                out.text(l, keep_tabs=True)
        else:
            out.file_bytes(data)  # the file itself: raw, unescaped, nothing else on stdout
    written = None
    refused = None
    if out_file:
        op = Path(out_file)
        if body is None:
            refused = ("nothing known to write (the transcripts hold no line of it)" if rec.exists is not False
                       else "its last known state is deleted")
        elif op.exists():
            raise UsageError(f"{op} exists; refusing to overwrite (choose another --out)")
        else:
            op.write_bytes(body.encode("utf-8", "surrogateescape"))
            written = str(op)
    status = _recover_exit(rec)
    risks = [{"line": s.line, "lane": s.lane, "detail": s.detail} for s in rec.risks_since_anchor]
    out.summary(status=rec.status, file=path, complete=rec.complete, exists=rec.exists, index=irep.as_json(),
                sha256=__import__("hashlib").sha256(text.encode("utf-8", "surrogateescape")).hexdigest() if text is not None else None,
                content=text if fmt == "json" and not coverage and not patches else None,
                rendered=rec_mod.render_text(rec) if fmt == "json" and text is None and not coverage else None,
                known_pieces=known_pieces,
                boundaries=rec.boundaries, shell_writes=rec.shell_writes, risks_since_anchor=risks,
                segments=(rec.steps[-1].segment + 1) if rec.steps else 0,
                transcripts=rec.transcripts, files_unreadable=len(unread), problems=problems_json(rec.unreadable),
                at=at, out=written, out_refused=refused, exit_status=int(status),
                invisible="a change by another process with no freshness signal leaves no trace (FH-013)",
                coverage=coverage_json(sel.coverage()))
    if not out.json:
        say(f"-- {path}: {rec.status}; {rec.boundaries} boundaries, {rec.shell_writes} opaque shell writes, "
            f"{len(risks)} possible writers since the last anchor"
            + (f"; written to {written}" if written else "")
            + (f"; --out not written: {refused}" if refused else ""))
        for r in risks[:5]:
            say(f"   risk: L{r['line']} {r['lane']} {clip(r['detail'], 100)}")
        if unread:
            say(f"   {len(unread)} transcript(s) could not be read: " + "; ".join(
                f"{p.path} ({p.why})" for p in rec.unreadable[:5]))
        say(coverage_line(sel.coverage()))
    return status


RECOVER_EXIT = {"complete": ExitStatus.OK, "complete_at_risk": ExitStatus.RECOVER_AT_RISK,
                "partial": ExitStatus.RECOVER_PARTIAL, "none": ExitStatus.RECOVER_NONE,
                "deleted": ExitStatus.RECOVER_DELETED}
"""`recover`'s exit status by reconstruction status (docs/files.md, docs/cli.md)."""


def _recover_exit(rec: rec_mod.Recovery) -> ExitStatus:
    st = RECOVER_EXIT[rec.status]
    if st == ExitStatus.OK and rec.unreadable:
        return ExitStatus.INCOMPLETE  # complete from what was read; an unread transcript may hold more
    return st


@click.command("plan")
@targeting()
@click.option("--audit", is_flag=True, help="Structured writes to plan files the writing session does not bind.")
def plan_cmd(inv, audit):
    """The plan file bound to each session (plan_mode attachment, else the first valid slug).

    Example: sessionsift plan 3f2a --audit
    """
    fmt, claude_home = inv.fmt, claude_root_arg(inv)
    scope = make_scope(inv)
    from ..files import plan as plan_mod

    bs = plan_mod.bind(scope, audit=audit)
    out = Out(fmt, "plan")
    out.header(**scope_header(inv, scope))
    n_audit = 0
    for b in bs:
        out.row("plan", {"session_id": b.session_id, "is_subagent": False, "parent_session_id": None,
                         "source": b.source, "plan_path": b.plan_path, "plan_path_checked": b.plan_path_checked,
                         "plan_exists": b.plan_exists,
                         "plan_exists_recorded": b.plan_exists_recorded, "slug": b.slug, "line": b.line,
                         "refetch": refetch_at(b.session_id, "", False, b.line, claude_home),
                         "minted_at_compaction": b.minted_at_compaction, "plans_dir": b.plans_dir,
                         "plans_dir_source": b.plans_dir_source, "notes": b.notes})
        out.text(f"{b.session_id}  {esc(b.plan_path) if b.plan_path else '(no plan bound)'}  via {b.source or '-'}"
                 + (f" L{b.line}" if b.line else "") + f"  exists={b.plan_exists if b.plan_exists is not None else '-'}"
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
    out.summary(sessions=len(bs), bound=sum(1 for b in bs if b.plan_path), audit_rows=n_audit if audit else None)
    return ExitStatus.OK if bs else ExitStatus.NO_MATCH


@click.command("image")
@targeting()
@click.option("--id", "ident", default=None, help="N (an [Image #N] handle) or L<line>i<n>.")
@click.option("--out", "out_dir", default=None, help="Write the image bytes into DIR.")
@click.option("--all-occurrences", is_flag=True, help="Do not deduplicate by content fingerprint.")
@click.option("--no-subagents", is_flag=True, help="Main lanes only.")
def image_cmd(inv, ident, out_dir, all_occurrences, no_subagents):
    """List and extract inline images (direct blocks and images nested in tool results).

    Example: sessionsift image 3f2a --id L12i1 --out ./imgs
    """
    fmt, claude_home = inv.fmt, claude_root_arg(inv)
    scope = make_scope(inv)
    from ..files import image as image_mod

    ims = image_mod.images(scope, subagents=not no_subagents, dedup=not all_occurrences)
    if ident:
        ims = image_mod.select(ims, ident)
    written = dict()
    if out_dir:
        written = {id(im): p for im, p in image_mod.write_out(ims, out_dir)}
    out = Out(fmt, "image")
    out.header(**scope_header(inv, scope))
    for im in ims:
        out.row("image", {**lane_fields(im.lane), "locator": im.locator, "line": im.line,
                          "refetch": refetch(im.lane, im.line, claude_home), "carrier": im.carrier,
                          "handle": im.handle, "media_type": im.media_type, "source_kind": im.source_kind,
                          "size": im.size, "sha256": im.sha256, "timestamp": instant(im.timestamp),
                          "tool_use_id": im.tool_use_id, "occurrences": im.occurrences,
                          "written": written.get(id(im))})
        out.text(f"{im.lane.session_id}  {esc(im.lane.display)}:{im.locator}  {im.media_type or '?'}  "
                 f"{im.size if im.size is not None else '?'} B"
                 f"  {'[Image #%d]' % im.handle if im.handle is not None else '(no handle)'}  {im.carrier}"
                 + (f"  x{len(im.occurrences)}" if len(im.occurrences) > 1 else "")
                 + (f"  -> {esc(written[id(im)])}" if id(im) in written else ""))
        out.text(f"  transcript: {esc(im.lane.path)}")
    out.summary(images=len(ims), written=len(written) if out_dir else None, deduplicated=not all_occurrences)
    return ExitStatus.OK if ims else ExitStatus.NO_MATCH


def _n_files(chs) -> int:
    """Files the changes name: a move names its source and its target."""
    return len({p for c in chs for p in (c.path, c.change.move_to) if p})
