"""`recover` for sessions of providers whose records hold a file's whole content.

Gemini CLI records each write's new content and Crush keeps a file-history table: a
``FileChange.new_content`` is a complete view of the file as the session left it, so the latest
one (at or before ``--at INSTANT``) IS the file -- no reconstruction. A file whose changes carry
only diffs or edits (no complete view) is not rebuilt here: the answer says so and lists them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..errors import UsageError
from ..timefmt import instant, short_local
from .exit import ExitStatus
from .options import coverage_json, coverage_line, problems_json, selection_header
from .output import Out, esc, plural


def clip_cmd(cmd: str, n: int = 80) -> str:
    one = " ".join(cmd.split())
    return one if len(one) <= n else one[:n - 1] + "…"


def recover_shared(out: Out, sel, path: str, given: str, at: str | None, cut, *, coverage: bool, patches: bool,
                   out_file: str | None, claude_transcripts: int | None) -> int:
    from ..questions.files import against_shells, changes, rebuild, with_views
    from .cmd_shared import change_row, display_of, pairs_of

    if cut is not None and cut.instant is None:
        raise UsageError(f"--at {at!r}: L<line> and turn<N> address a Claude Code transcript; use an instant "
                         "for other providers' sessions")
    until = None
    if cut is not None:
        from datetime import datetime, timezone

        until = datetime.fromtimestamp(cut.instant, tz=timezone.utc).isoformat()
    res = changes(pairs_of(sel))
    upto = with_views(res.changes, res.views, path)  # a whole-file `cat` a shell printed is a view too
    if until is not None:
        from ..timefmt import parse_ts

        lim = parse_ts(until)
        upto = [c for c in upto if (d := parse_ts(c.record.instant)) is not None and d <= lim]
    mine = [c for c in upto if path in (c.change.path, c.change.move_to)]
    rb = rebuild(upto, path)  # every change: a file moved here is rebuilt from its source's
    rb, risks = against_shells(rb, upto, res.shells, path, until)  # a later shell command may have changed it
    used_ids = {id(c) for c in ([rb.anchor] if rb.anchor else []) + rb.applied}
    mine = [c for c in upto if id(c) in used_ids or path in (c.change.path, c.change.move_to)]
    # calls of the client's file tools that named the file and failed (changed nothing): listed, never applied
    fails = [c for c in res.failed if c.path == path]
    rds = [c for c in res.reads if c.path == path and not c.failed]  # read calls that printed it (whole or not)
    if until is not None:
        fails = [c for c in fails if (d := parse_ts(c.record.instant)) is not None and d <= lim]
        rds = [c for c in rds if (d := parse_ts(c.record.instant)) is not None and d <= lim]
    from ..questions.files import _ts as _order

    steps = sorted(mine + fails, key=lambda c: (_order(c.record.instant), c.ref.session_id, c.seq))
    covs = sel.coverage()
    out.header(**selection_header(sel), file=path, file_given=given, at=at)
    content_view = not (coverage or patches)
    say = out.err if content_view else out.text
    used = {id(c) for c in ([rb.anchor] if rb.anchor else []) + rb.applied}
    for i, c in enumerate(steps):
        kind = ("rejected" if c.failed else "complete_view" if c.change.new_content is not None else
                "delete" if c.change.action == "delete" else "diff" if c.change.diff is not None else "change")
        row = {"seq": i, **change_row(sel, c), "step_kind": kind, "complete": c.change.new_content is not None,
               "used": id(c) in used, "stopped_here": c is rb.stopped_at,
               "evidence": c.evidence}
        if patches and c.change.diff is not None:
            row["patch"] = c.change.diff
        if coverage or patches or out.json:
            out.row("step", row)
        if coverage or patches:
            out.text(f"{short_local(c.record.instant)} {esc(c.record.locator)} {esc(c.ref.session_id)} "
                     f"({esc(display_of(sel, c.ref.provider))}) {c.change.action:<7} {kind:<13}"
                     + (" used" if id(c) in used else " NOT APPLIED" if c is rb.stopped_at else ""))
        if patches and c.change.diff is not None:
            for line in c.change.diff.split("\n"):
                out.text("    " + esc(line))
    problems = res.problems
    base = dict(file=path, transcripts=claude_transcripts, files_unreadable=len(problems),
                problems=problems_json(problems), at=at, coverage=coverage_json(covs), failed_calls=len(fails),
                reads=len(rds))
    if rb.status in ("no_record", "no_complete_view"):
        names = ", ".join(sorted({display_of(sel, r.provider) for r in sel.refs}))
        if rb.status == "no_record" and rds:  # read, never wholly: named, nothing complete known
            rb.status = "no_complete_view"
            msg = (f"{plural(len(rds), 'read')} of this file in other providers' sessions, none printing it whole as "
                   "far as the client's output proves (" + ", ".join(f"{c.record.locator} {c.ref.session_id[:8]} "
                                                                   f"{c.record.tool_name or '?'}"
                                                                   + (f": {c.evidence}" if c.evidence else "")
                                                                   for c in rds[:5])
                   + (", ..." if len(rds) > 5 else "") + "): not rebuilt"
                   + (f"; {plural(len(fails), 'call')} named it and failed" if fails else ""))
        elif rb.status == "no_record" and fails:  # calls named it and failed: never written, but named
            msg = (f"no content of this file in {plural(len(sel.refs), 'session')} of {names or 'other providers'}"
                   + (f" up to --at {at}" if at else "") + f": {plural(len(fails), 'call')} named it and failed ("
                   + ", ".join(f"{c.record.locator} {c.ref.session_id[:8]} {c.record.tool_name or '?'}" for c in fails[:5])
                   + (", ..." if len(fails) > 5 else "") + ")")
        elif mine:
            msg = (f"{len(mine)} recorded change(s) of this file in other providers' sessions, none holding its whole "
                   "content (diffs or edits only): not rebuilt from them")
        else:
            msg = f"no record of this file in {plural(len(sel.refs), 'session')} of {names or 'other providers'}" + (
                f" (and {plural(claude_transcripts, 'Claude Code transcript')})" if claude_transcripts else "") + (
                f" up to --at {at}" if at else "")
        status = ExitStatus.RECOVER_NONE if mine or rds else ExitStatus.NO_MATCH
        out.summary(status=rb.status, message=msg, complete=False, exists=None, sha256=None, content=None,
                    exit_status=int(status), **base)
        if not out.json:
            say(f"{esc(path)}: {esc(msg)}")
            say(coverage_line(covs))
        return status
    last = rb.applied[-1] if rb.applied else rb.anchor
    possible = [r for r in risks if r.effect == "possible"]
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
                invisible="a change made outside the client's file tools leaves no trace in these records: a "
                          "shell command the session ran is read for the files it names or may write (shell_risk "
                          "rows), what it did to them is not recorded; another process is not seen at all", **base)
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
