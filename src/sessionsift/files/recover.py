"""`recover`: one file's content rebuilt from what the sessions of every agent recorded of it
(docs/files.md).

:func:`recover` asks each provider in the selection for its file events (the ``file_events``
capability). A provider with lane events (a deeper model: Claude Code's) replays the file from
them (``LaneFileEvents.replay``: pieces known or gaps, every step named); where no lane replay
records the file, the record events of every other provider rebuild it (rebuild.py: the latest
complete view, later diffs applied exactly, shell calls after it read by the grammar). The first
lane replay that records the file answers, and a note says the record events were not merged.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from ..providers.fileevents import Change, Cutoff, FileEvents, FileQuery, Replay, merged, norm
from ..timefmt import parse_ts, parse_when
from .rebuild import Rebuild, ShellRisk, against_shells, rebuild, with_views
from .shell import GRAMMAR

LANE_INVISIBLE = "a change by another process with no freshness signal leaves no trace (FH-013)"
RECORD_INVISIBLE = ("a change made outside the client's file tools leaves no trace in these records: a shell command "
                    "the session ran is read for the files it names or may write (shell_risk rows), what it did to "
                    "them is not recorded; another process is not seen at all")


def resolve_file_arg(path: str) -> str:
    """A relative --file is resolved against the CALLER's cwd (printed back by the CLI)."""
    p = os.path.expanduser(path)
    if not os.path.isabs(p) and not p.startswith("\\\\") and not (len(p) > 1 and p[1] == ":"):
        p = os.path.join(os.getcwd(), p)
    return norm(p)


def parse_at(spec: str | None) -> Cutoff | None:
    """`--at`: ``L<line>`` (or a bare number), ``turn<N>``, or an instant or duration."""
    if spec is None:
        return None
    s = spec.strip()
    if s.upper().startswith("L") and s[1:].isdigit():
        return Cutoff(line=int(s[1:]), spec=s)
    if s.isdigit():
        return Cutoff(line=int(s), spec=s)
    if s.lower().startswith("turn") or s.lower().startswith("t") and s[1:].lstrip("=").lstrip("-").isdigit():
        n = s.lower().removeprefix("turn").removeprefix("t").lstrip("=: ")
        try:
            return Cutoff(turn=int(n), spec=s)
        except ValueError:
            pass
    try:
        dt = parse_when(s)
    except Exception as exc:  # noqa: BLE001 - re-raised as a usage error
        raise UsageError(f"--at {spec!r}: expected L<line>, turn<N> or an instant ({exc})")
    if dt is None:
        raise UsageError(f"--at {spec!r}: expected L<line>, turn<N> or an instant")
    return Cutoff(instant=dt.timestamp(), spec=s)


@dataclass
class RecordStep:
    """One record change of the file, as `recover` lists it (``step`` rows)."""

    change: Change
    kind: str
    """rejected | complete_view | delete | diff | change"""
    used: bool
    stopped_here: bool


@dataclass
class RecordRecovery:
    """The file rebuilt from record events (every provider without lane events)."""

    status: str
    """``complete_view`` | ``rebuilt`` | ``stale`` | ``deleted`` | ``moved`` | ``no_complete_view`` |
    ``no_record``"""
    rebuild: Rebuild
    steps: list[RecordStep]
    risks: list[ShellRisk]
    failed_calls: int
    reads: int
    message: str | None = None
    """Why nothing was rebuilt (``no_record``/``no_complete_view``)."""
    changes_named: int = 0
    """Record changes of the file (a rebuild with none is ``no_record``)."""

    @property
    def possible(self) -> list[ShellRisk]:
        return [r for r in self.risks if r.effect == "possible"]

    @property
    def at_risk(self) -> bool:
        return bool(self.possible) and self.rebuild.complete

    @property
    def last(self) -> Change | None:
        rb = self.rebuild
        return rb.applied[-1] if rb.applied else rb.anchor


@dataclass
class Recovery:
    """`recover`'s answer for one file, every agent's sessions asked."""

    path: str
    sel: Any
    replay: Replay | None = None
    """The lane replay that answers (a provider's lanes record the file, or no provider has
    record events); None when the record events answer."""
    replayed_by: str | None = None
    """The display name of the provider whose lanes answered."""
    records: RecordRecovery | None = None
    note: str | None = None
    """Said when a lane replay answered while record events were in scope too."""
    lanes: list = field(default_factory=list)
    index: Any = None
    problems: list = field(default_factory=list)
    """What could not be read (record events' sessions)."""

    @property
    def lane_transcripts(self) -> int | None:
        """Transcripts the lane events read (None: no provider in the selection has lane events)."""
        sel = [ln for ln in self.lanes if ln.selected]
        return sum(ln.transcripts for ln in sel) if sel else None


def _lane_label(displays: list[str]) -> str:
    return " or ".join(dict.fromkeys(displays))


def recover(sel, path: str, at: str | None = None, *, subagents: bool = True, progress: bool = False,
            backups: bool = False) -> Recovery:
    """The file at `path` (absolute: :func:`resolve_file_arg`) rebuilt from the selection's
    sessions, up to `at` (``L<line>``, ``turn<N>``: a lane's main transcript; an instant).
    `backups`: the lane events' checkpoints of the file are listed instead (``Recovery.backups``)."""
    cut = parse_at(at)
    evs = _events(sel, FileQuery(GRAMMAR, subagents=subagents, progress=progress))
    withlanes = [e for e in evs if e.lanes is not None]
    lanes = [e.lanes for e in withlanes]
    recs = [e for e in evs if e.lanes is None]
    out = Recovery(path, sel, lanes=lanes, index=lanes[0].index if lanes else _no_index())
    if backups:
        return out
    nrec = sum(e.sessions for e in recs)
    if nrec:
        for e in withlanes:
            if not e.lanes.selected or not e.lanes.transcripts:
                continue
            rp = e.lanes.replay(path, cut)
            if rp.recorded:
                out.replay, out.replayed_by = rp, e.display
                out.note = (f"{e.display}'s transcripts record this file: rebuilt from them; other providers' "
                            "records of it are not merged (narrow with --provider to read theirs)")
                return out
        lane_names = [e.display for e in withlanes if e.lanes.selected]
        out.records = rebuild_records(merged(recs), path, at, cut, sel, out.lane_transcripts, lane_names)
        out.problems = [p for e in recs for p in e.problems]
        return out
    first = next((e for e in withlanes if e.lanes.selected), withlanes[0] if withlanes else None)
    if first is None:
        out.replay = Replay(path)
        return out
    out.replayed_by = first.display
    out.replay = first.lanes.replay(path, cut)
    return out


def list_backups(rec: Recovery) -> list[dict]:
    """The checkpoints the lane events' clients keep of the file (Claude Code's file-history)."""
    rows: list[dict] = []
    for ln in rec.lanes:
        rows.extend(ln.backups(rec.path))
    return rows


def _events(sel, q: FileQuery) -> list[FileEvents]:
    from .touched import file_events

    return file_events(sel, q)


def _no_index():
    from ..index.report import IndexReport

    return IndexReport.for_root(None)


def rebuild_records(res: FileEvents, path: str, at: str | None, cut: Cutoff | None, sel,
                    lane_transcripts: int | None, lane_names: list[str]) -> RecordRecovery:
    """The file rebuilt from the record events of every provider without lane events (`res`,
    merged), up to `cut` (an instant: a line or a turn addresses a lane's transcript)."""
    from ..render import plural

    if cut is not None and cut.instant is None:
        which = f"a {_lane_label(lane_names)} transcript" if lane_names else "a transcript's lanes (none in this answer)"
        raise UsageError(f"--at {at!r}: L<line> and turn<N> address {which}; use an instant for other providers' "
                         "sessions")
    until = None
    lim = None
    if cut is not None:
        from datetime import datetime, timezone

        until = datetime.fromtimestamp(cut.instant, tz=timezone.utc).isoformat()  # type: ignore[arg-type]
        lim = parse_ts(until)
    upto = with_views(res.changes, res.views, path)  # a whole-file `cat` a shell printed is a view too
    if lim is not None:
        upto = [c for c in upto if (d := parse_ts(c.record.instant)) is not None and d <= lim]
    rb = rebuild(upto, path)  # every change: a file moved here is rebuilt from its source's
    rb, risks = against_shells(rb, upto, res.shells, path, until)  # a later shell command may have changed it
    used_ids = {id(c) for c in ([rb.anchor] if rb.anchor else []) + rb.applied}
    mine = [c for c in upto if id(c) in used_ids or path in (c.change.path, c.change.move_to)]
    # calls of the client's file tools that named the file and failed (changed nothing): listed, never applied
    fails = [c for c in res.failed if c.path == path]
    rds = [c for c in res.reads if c.path == path and not c.failed]  # read calls that printed it (whole or not)
    if lim is not None:
        fails = [c for c in fails if (d := parse_ts(c.record.instant)) is not None and d <= lim]
        rds = [c for c in rds if (d := parse_ts(c.record.instant)) is not None and d <= lim]
    from .rebuild import _ts as order

    steps = sorted(mine + fails, key=lambda c: (order(c.record.instant), c.ref.session_id, c.seq))
    used = {id(c) for c in ([rb.anchor] if rb.anchor else []) + rb.applied}
    rows = [RecordStep(c, "rejected" if c.failed else "complete_view" if c.change.new_content is not None else
                       "delete" if c.change.action == "delete" else "diff" if c.change.diff is not None else "change",
                       id(c) in used, c is rb.stopped_at) for c in steps]
    out = RecordRecovery(rb.status, rb, rows, risks, len(fails), len(rds), changes_named=len(mine))
    if rb.status not in ("no_record", "no_complete_view"):
        return out
    displays = {e.name: e.display for e in sel.survey.entries}
    names = ", ".join(sorted({displays.get(r.provider, r.provider) for r in sel.refs}))
    n = len(sel.refs)
    if rb.status == "no_record" and rds:  # read, never wholly: named, nothing complete known
        out.status = "no_complete_view"
        out.message = (f"{plural(len(rds), 'read')} of this file in other providers' sessions, none printing it whole "
                       "as far as the client's output proves (" + ", ".join(
                           f"{c.record.locator} {c.ref.session_id[:8]} {c.record.tool_name or '?'}"
                           + (f": {c.evidence}" if c.evidence else "") for c in rds[:5])
                       + (", ..." if len(rds) > 5 else "") + "): not rebuilt"
                       + (f"; {plural(len(fails), 'call')} named it and failed" if fails else ""))
    elif rb.status == "no_record" and fails:  # calls named it and failed: never written, but named
        out.message = (f"no content of this file in {plural(n, 'session')} of {names or 'other providers'}"
                       + (f" up to --at {at}" if at else "") + f": {plural(len(fails), 'call')} named it and failed ("
                       + ", ".join(f"{c.record.locator} {c.ref.session_id[:8]} {c.record.tool_name or '?'}"
                                   for c in fails[:5])
                       + (", ..." if len(fails) > 5 else "") + ")")
    elif mine:
        out.message = (f"{len(mine)} recorded change(s) of this file in other providers' sessions, none holding its "
                       "whole content (diffs or edits only): not rebuilt from them")
    else:
        lanes = f" (and {plural(lane_transcripts, f'{_lane_label(lane_names)} transcript')})" if lane_transcripts else ""
        out.message = (f"no record of this file in {plural(n, 'session')} of {names or 'other providers'}" + lanes
                       + (f" up to --at {at}" if at else ""))
    return out
