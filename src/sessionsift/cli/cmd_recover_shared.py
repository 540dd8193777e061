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
from .output import Out, esc


def recover_shared(out: Out, sel, path: str, given: str, at: str | None, cut, *, coverage: bool, patches: bool,
                   out_file: str | None, claude_transcripts: int | None) -> int:
    from ..questions.files import changes, latest_complete_view
    from .cmd_shared import change_row, display_of, pairs_of

    if cut is not None and cut.instant is None:
        raise UsageError(f"--at {at!r}: L<line> and turn<N> address a Claude Code transcript; use an instant "
                         "for other providers' sessions")
    until = None
    if cut is not None:
        from datetime import datetime, timezone

        until = datetime.fromtimestamp(cut.instant, tz=timezone.utc).isoformat()
    res = changes(pairs_of(sel))
    mine = [c for c in res.changes if path in (c.change.path, c.change.move_to)]
    if until is not None:
        from ..timefmt import parse_ts

        lim = parse_ts(until)
        mine = [c for c in mine if (d := parse_ts(c.record.instant)) is not None and d <= lim]
    view = latest_complete_view(mine, path)
    covs = sel.coverage()
    out.header(**selection_header(sel), file=path, file_given=given, at=at)
    content_view = not (coverage or patches)
    say = out.err if content_view else out.text
    for i, c in enumerate(mine):
        row = {"seq": i, **change_row(sel, c), "step_kind": "complete_view" if c.change.new_content is not None else
               ("delete" if c.change.action == "delete" else "change"), "complete": c.change.new_content is not None}
        if patches and c.change.diff is not None:
            row["patch"] = c.change.diff
        if coverage or patches or out.json:
            out.row("step", row)
        if coverage or patches:
            out.text(f"{short_local(c.record.instant)} {esc(c.record.locator)} {c.ref.session_id} "
                     f"({esc(display_of(sel, c.ref.provider))}) {c.change.action:<7} "
                     + ("whole new content" if c.change.new_content is not None else
                        "diff" if c.change.diff is not None else "no content recorded"))
        if patches and c.change.diff is not None:
            for line in c.change.diff.split("\n"):
                out.text("    " + esc(line))
    problems = res.problems
    base = dict(file=path, transcripts=claude_transcripts, files_unreadable=len(problems),
                problems=problems_json(problems), at=at, coverage=coverage_json(covs))
    if view is None:
        if mine:
            msg = (f"{len(mine)} recorded change(s) of this file in other providers' sessions, none holding its whole "
                   "content (diffs or edits only): not rebuilt from them")
            status = "no_complete_view"
        else:
            msg = f"no record of this file in {len(sel.refs)} sessions of other providers" + (
                f" (and {claude_transcripts} Claude Code transcripts)" if claude_transcripts else "") + (
                f" up to --at {at}" if at else "")
            status = "no_record"
        out.summary(status=status, message=msg, complete=False, exists=None, sha256=None, content=None,
                    exit_status=int(ExitStatus.NO_MATCH), **base)
        if not out.json:
            say(f"{esc(path)}: {esc(msg)}")
            say(coverage_line(covs))
        return ExitStatus.NO_MATCH
    deleted = view.change.action == "delete" and view.change.path == path and view.change.new_content is None
    text = None if deleted else view.change.new_content
    written = None
    if out_file and text is not None:
        op = Path(out_file)
        if op.exists():
            raise UsageError(f"{op} exists; refusing to overwrite (choose another --out)")
        op.write_bytes(text.encode("utf-8", "surrogateescape"))
        written = str(op)
    src = view.record
    out.summary(status="deleted" if deleted else "complete_view", complete=not deleted, exists=not deleted,
                sha256=hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest() if text is not None else None,
                content=text if out.json and content_view else None, out=written,
                source={"provider": view.ref.provider, "session_id": view.ref.session_id, "locator": src.locator,
                        "line": src.line, "timestamp": instant(src.instant)},
                later_changes_without_content=sum(1 for c in mine[mine.index(view) + 1:]),
                invisible="a change made outside the client's file tools (a shell command, another process) "
                          "after this record leaves no trace in it", **base)
    if content_view and not out.json and text is not None:
        out.stream.write(text)
        if text and not text.endswith("\n"):
            out.err("sessionsift: note: the file does not end with a newline")
    later = len(mine) - mine.index(view) - 1
    say(f"-- {esc(path)}: " + ("deleted" if deleted else "complete view") + f" from {view.ref.session_id} "
        f"({esc(display_of(sel, view.ref.provider))}) {esc(src.locator)} {short_local(src.instant)}"
        + (f"; {later} later change(s) without the whole content: the file may differ" if later else "")
        + (f"; written to {esc(written)}" if written else ""))
    say(coverage_line(covs))
    return ExitStatus.OK
