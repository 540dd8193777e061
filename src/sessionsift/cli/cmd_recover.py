"""`recover` (docs/files.md): renders sessionsift.files.recover's answer -- a lane replay (steps,
ranges, the content; or the lanes' checkpoints with --list-backups) or a rebuild from record events
(the complete view, the diffs applied, the shell calls after it)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import click

from .progress_run import with_reading
from ..errors import UsageError
from ..files.recover import LANE_INVISIBLE, RECORD_INVISIBLE, resolve_file_arg
from ..timefmt import instant, short_local
from .exit import ExitStatus
from .invocation import targeting
from .options import (coverage_json, coverage_line, make_selection, problems_json, refetch_at, selection_header, claude_root_arg)
from .output import Out, clip, esc, plural


def clip_cmd(cmd: str, n: int = 80) -> str:
    one = " ".join(cmd.split())
    return one if len(one) <= n else one[:n - 1] + "…"


def _step_row(s, home) -> dict:
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
        if resolve_file_arg(last) == resolve_file_arg(file):
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
@with_reading("reading")
def recover_cmd(inv, file, coverage, at, patches, out_file, list_backups,
                no_subagents):
    """Rebuild a file's content from the Read/Write/Edit stream, with every gap named.

    \b
    The file is --file PATH or the last positional (recover [TARGET...] PATH).
    Example: sessionsift recover 3f2a src/app.py --coverage
    Example: sessionsift recover 3f2a --file src/app.py
    """
    from ..read.fanout import no_gc

    with no_gc():  # as `files`
        return _recover(inv, file, coverage, at, patches, out_file,
                        list_backups, no_subagents)


def _recover(inv, file, coverage, at, patches, out_file, list_backups,
             no_subagents):
    from ..errors import TargetError
    from ..files.recover import recover

    fmt, claude_home = inv.fmt, claude_root_arg(inv)
    given_file = bool(file)
    targets, file = _recover_file_arg(inv, inv.targets, file)
    path = resolve_file_arg(file)
    try:
        sel = make_selection(inv.with_targets(targets), subagents=not no_subagents)
    except TargetError:
        if given_file and (two := _two_files(inv, targets, file)) is not None:
            raise two from None
        raise
    out = Out(fmt, "recover")
    res = recover(sel, path, at, subagents=not no_subagents, progress=True, backups=list_backups)
    if res.records is not None:
        return _records(out, res, file, at, coverage=coverage, patches=patches, out_file=out_file)
    if res.note:
        out.err(f"sessionsift: note: {res.note}")
    return _lanes(out, fmt, claude_home, res, file, at, coverage, patches, out_file, list_backups)


def _lanes(out, fmt, claude_home, res, file, at, coverage, patches, out_file, list_backups):
    """A lane replay (or the lanes' checkpoints: --list-backups)."""
    from ..files.recover import list_backups as backups_of
    from ..providers.fileevents import render_text

    sel, path, irep = res.sel, res.path, res.index
    out.header(**selection_header(sel), file=path, file_given=file, at=at)
    content_view = not (coverage or patches or list_backups)
    # the content view puts the file on stdout and everything else on stderr
    say = out.err if content_view else out.text
    if file != path and not out.json:
        say(f"file: {path} (resolved from {file} against {os.getcwd()})")
    if irep.on and irep.counts["scanned"] and not out.json:
        say(irep.text())  # the transcripts read without the index, and why
    if list_backups:
        rows = backups_of(res)
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
    rec = res.replay
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
    body = text if text is not None else (render_text(rec) if known_pieces and rec.exists is not False
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
                sha256=hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest() if text is not None else None,
                content=text if fmt == "json" and not coverage and not patches else None,
                rendered=render_text(rec) if fmt == "json" and text is None and not coverage else None,
                known_pieces=known_pieces,
                boundaries=rec.boundaries, shell_writes=rec.shell_writes, risks_since_anchor=risks,
                segments=(rec.steps[-1].segment + 1) if rec.steps else 0,
                transcripts=rec.transcripts, files_unreadable=len(unread), problems=problems_json(rec.unreadable),
                at=at, out=written, out_refused=refused, exit_status=int(status),
                invisible=LANE_INVISIBLE,
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


def _recover_exit(rec) -> ExitStatus:
    st = RECOVER_EXIT[rec.status]
    if st == ExitStatus.OK and rec.unreadable:
        return ExitStatus.INCOMPLETE  # complete from what was read; an unread transcript may hold more
    return st




def _records(out: Out, res, given: str, at: str | None, *, coverage: bool, patches: bool,
             out_file: str | None) -> int:
    """A rebuild from record events (files/recover.py RecordRecovery)."""
    from .cmd_shared import change_row, display_of

    sel, path, rr = res.sel, res.path, res.records
    rb, risks = rr.rebuild, rr.risks

    covs = sel.coverage()
    out.header(**selection_header(sel), file=path, file_given=given, at=at)
    content_view = not (coverage or patches)
    say = out.err if content_view else out.text
    for i, st in enumerate(rr.steps):
        c, kind = st.change, st.kind
        row = {"seq": i, **change_row(sel, c), "step_kind": kind, "complete": c.change.new_content is not None,
               "used": st.used, "stopped_here": st.stopped_here,
               "evidence": c.evidence}
        if patches and c.change.diff is not None:
            row["patch"] = c.change.diff
        if coverage or patches or out.json:
            out.row("step", row)
        if coverage or patches:
            out.text(f"{short_local(c.record.instant)} {esc(c.record.locator)} {esc(c.ref.session_id)} "
                     f"({esc(display_of(sel, c.ref.provider))}) {c.change.action:<7} {kind:<13}"
                     + (" used" if st.used else " NOT APPLIED" if st.stopped_here else ""))
        if patches and c.change.diff is not None:
            for line in c.change.diff.split("\n"):
                out.text("    " + esc(line))
    problems = res.problems
    base = dict(file=path, transcripts=res.lane_transcripts, files_unreadable=len(problems),
                problems=problems_json(problems), at=at, coverage=coverage_json(covs), failed_calls=rr.failed_calls,
                reads=rr.reads)
    if rr.status in ("no_record", "no_complete_view"):
        msg = rr.message or ""
        status = ExitStatus.RECOVER_NONE if rr.changes_named or rr.reads else ExitStatus.NO_MATCH
        out.summary(status=rr.status, message=msg, complete=False, exists=None, sha256=None, content=None,
                    exit_status=int(status), **base)
        if not out.json:
            say(f"{esc(path)}: {esc(msg)}")
            say(coverage_line(covs))
        return status
    last = rr.last
    possible = rr.possible
    text = rb.content
    written = None
    if out_file and text is not None:
        op = Path(out_file)
        if op.exists():
            raise UsageError(f"{op} exists; refusing to overwrite (choose another --out)")
        op.write_bytes(text.encode("utf-8", "surrogateescape"))
        written = str(op)
    src = rb.anchor.record
    status = {"stale": ExitStatus.RECOVER_PARTIAL, "deleted": ExitStatus.RECOVER_DELETED,
              "moved": ExitStatus.RECOVER_DELETED}.get(rb.status, ExitStatus.OK)
    if status == ExitStatus.OK and possible:
        status = ExitStatus.RECOVER_AT_RISK
    for r in risks:
        row = {"session_id": r.shell.ref.session_id, "provider": r.shell.ref.provider,
               "locator": r.shell.record.locator, "line": r.shell.record.line,
               "timestamp": instant(r.shell.record.instant), "command": r.shell.command, "cwd": r.shell.cwd,
               "effect": r.effect, "why": r.why}
        if out.json:
            out.row("shell_risk", row)
    out.summary(status=rb.status, exit_status=int(status), complete=rb.complete,
                at_risk=bool(possible) and rb.complete,
                shell_risks=len(risks),
                exists=None if rb.status == "stale" and text is None else rb.status not in ("deleted", "moved"),
                sha256=hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest() if text is not None else None,
                content=text if out.json and content_view else None, out=written,
                source={"provider": rb.anchor.ref.provider, "session_id": rb.anchor.ref.session_id,
                        "locator": src.locator, "line": src.line, "timestamp": instant(src.instant),
                        "action": rb.anchor.change.action, "evidence": rb.anchor.evidence},
                diffs_applied=len(rb.applied), as_of={"locator": last.record.locator, "timestamp": instant(last.record.instant)},
                stopped_at=None if rb.stopped_at is None else {"locator": rb.stopped_at.record.locator,
                                                                "session_id": rb.stopped_at.ref.session_id, "why": rb.why},
                invisible=RECORD_INVISIBLE, **base)
    if content_view and not out.json and text is not None:
        if out.stream.isatty():  # a terminal gets escaped lines; a pipe or file the bytes themselves
            for line in text.split("\n"):
                out.text(line, keep_tabs=True)
        else:
            out.file_bytes(text.encode("utf-8", "surrogateescape"))
        if text and not text.endswith("\n"):
            out.err("sessionsift: note: the file does not end with a newline")
    what = {"complete_view": "complete view", "rebuilt": f"complete view + {len(rb.applied)} diff(s) applied",
            "stale": f"STALE: content as of {last.record.locator}; {rb.why or ''}",
            "deleted": "deleted" + (f" ({rb.why})" if rb.why else ""),
            "moved": f"moved away ({rb.why})"}[rb.status]
    if possible and rb.complete:
        n = len({id(r.shell) for r in possible})
        what += f", AT RISK: {plural(n, 'later shell command')} may have written it"
    say(f"-- {esc(path)}: {esc(what)}; from {esc(rb.anchor.ref.session_id)} ({esc(display_of(sel, rb.anchor.ref.provider))}) "
        f"{esc(src.locator)} {short_local(src.instant)}" + (f"; written to {esc(written)}" if written else ""))
    for r in risks:
        say(f"   {'risk' if r.effect == 'possible' else r.effect}: {esc(r.shell.record.locator)} "
            f"{esc(r.shell.ref.session_id)} `{esc(clip_cmd(r.shell.command))}`: {esc(r.why)}")
    say(coverage_line(covs))
    return status
