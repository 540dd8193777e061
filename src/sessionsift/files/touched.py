"""`files`: which files the sessions of every agent read, wrote and edited, when, and by which
session and lane (docs/files.md).

:func:`touched` asks each provider in the selection for its file events (the ``file_events``
capability, providers/fileevents.py) and never asks which agent it is: lane events (a deeper
model's :class:`Touch` rows, Claude Code's) and record events (:class:`Change` rows from the
shared records) are listed, grouped and counted here, once for every agent. The shell calls of
record events are read by the shell grammar (shell.py): each file a command names as written is a
``shell:<op>`` change, a command that may write files it does not name is counted, not listed.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..providers.fileevents import Change, FileEvents, FileQuery, Touch, merged
from ..timefmt import parse_ts
from .rebuild import shell_touches
from .shell import GRAMMAR

INVISIBLE = ("writes by other processes leave no trace unless a freshness signal or a file-history "
             "version jump records them (FH-013); bash writes never enter file-history (FH-020)")


def sort_key(ts: str | None) -> float:
    d = parse_ts(ts)
    return d.timestamp() if d is not None else float("-inf")


@dataclass
class FileRow:
    """One file (`files --by file`): its touches and changes counted per op."""

    path: str
    ops: dict[str, int]
    failed: dict[str, int]
    first: str | None
    last: str | None
    lanes: list[str]
    """Lane display names (lane events), ``provider:session[/lane]`` (record events only)."""
    lines: list[int | None]
    touches: list[Touch] = field(default_factory=list)
    """Its lane touches (each original once: a fork's copies are left out)."""
    changes: list[Change] = field(default_factory=list)
    """Its record changes."""


@dataclass
class DirRow:
    dir: str
    ops: dict[str, int]
    failed: dict[str, int]
    files: int


@dataclass
class FilesSummary:
    """The figures of a `files` answer (docs/json.md ``files`` summary)."""

    transcripts: int
    """Lanes read by the lane events."""
    touches: int
    files: int
    unresolved: int
    unparsed: int
    ops: dict[str, int]
    failed: dict[str, int]
    copies: int
    omissions: dict[str, int]
    sessions: int
    """Sessions read for the record events."""
    changes: int
    shared_files: int
    actions: dict[str, int]
    shared_failed: dict[str, int]
    reads: int
    complete_views: int
    shell_touches: int
    shell_writes: int
    shell_unnamed_writers: int
    shared_omissions: dict[str, int]


@dataclass
class FilesResult:
    """Every provider's file events of a selection, listed once."""

    sel: Any
    touches: list[Touch]
    """Lane touches of every provider with lane events, ordered by instant (copies included,
    marked ``copy_of``)."""
    rows: list[Change]
    """Record events `files` lists (recorded changes, ``shell:<op>`` changes, reads, failed calls),
    ordered by instant, session, read order."""
    changes: list[Change]
    shell: list[Change]
    reads: list[Change]
    failed: list[Change]
    unnamed_shell: int
    """Shell calls that may have written files they do not name (counted, not listed)."""
    lanes: list = field(default_factory=list)
    """The lane events (providers/fileevents.py LaneFileEvents) of the providers that have them."""
    records: FileEvents | None = None
    problems: list = field(default_factory=list)
    index: Any = None
    """The index report of the reading (index/report.py IndexReport)."""
    displays: dict[str, str] = field(default_factory=dict)
    """Provider name -> its display name."""

    @property
    def lane_problems(self) -> list:
        return [p for ln in self.lanes for p in ln.problems]

    @property
    def record_problems(self) -> list:
        return list(self.records.problems) if self.records is not None else []

    @property
    def incomplete(self) -> bool:
        """Some transcript, side directory or session could not be read, some command could not be
        parsed, or a provider in scope could not be read: the figures are lower bounds."""
        return bool(self.problems) or self.summary().unparsed > 0 or self.sel.incomplete()

    def timeline(self) -> list[Touch | Change]:
        """Every touch and change in one order (instant; a lane touch before a record change at the
        same instant)."""
        both = [(sort_key(t.timestamp), 0, t) for t in self.touches] + \
               [(sort_key(c.record.instant), 1, c) for c in self.rows]
        both.sort(key=lambda x: (x[0], x[1]))
        return [x[2] for x in both]

    def by_file(self) -> tuple[list[FileRow], list[Touch]]:
        """One row per file (lane-touched files first, a record change of the same path merged into
        its row; then the files only record events name), and the lane touches that name no path
        (unresolved operands, markers)."""
        from .rebuild import by_file as changes_by_file

        gfiles = changes_by_file(self.rows)
        out: list[FileRow] = []
        kept = [t for t in self.touches if t.copy_of is None]
        by_path: dict[str, list[Touch]] = {}
        for t in kept:
            if t.path is not None:
                by_path.setdefault(t.path, []).append(t)
        for d in group_by_file(self.touches):
            out.append(FileRow(d["path"], d["ops"], d["failed"], d["first"], d["last"], d["lanes"], d["lines"],
                               by_path.get(d["path"], []), gfiles.pop(d["path"], [])))
        for path, cs in gfiles.items():
            ts = sorted((c.record.instant for c in cs if c.record.instant), key=sort_key)
            lanes: list[str] = []
            for c in cs:
                name = f"{c.ref.provider}:{c.ref.session_id}" + ("" if c.record.lane == "main" else f"/{c.record.lane}")
                if name not in lanes:
                    lanes.append(name)
            out.append(FileRow(path, _count(c.change.action for c in cs if not c.failed),
                               _count(c.change.action for c in cs if c.failed), ts[0] if ts else None,
                               ts[-1] if ts else None, lanes, [c.record.line for c in cs], [], cs))
        return out, [t for t in kept if t.path is None]

    def by_dir(self) -> list[DirRow]:
        from .rebuild import by_dir as changes_by_dir

        gdirs = changes_by_dir(self.rows)
        out = []
        for d in group_by_dir(self.touches):
            for c in gdirs.pop(d["dir"], []):
                k = "failed" if c.failed else "ops"
                d[k][c.change.action] = d[k].get(c.change.action, 0) + 1
            out.append(DirRow(d["dir"], d["ops"], d["failed"], d["files"]))
        for dname, cs in gdirs.items():
            out.append(DirRow(dname, _count(c.change.action for c in cs if not c.failed),
                              _count(c.change.action for c in cs if c.failed), len({c.path for c in cs})))
        return out

    def summary(self) -> FilesSummary:
        got = self.__dict__.get("_summary")
        if got is not None:
            return got
        ts = [t for t in self.touches if t.copy_of is None]  # each original record counted once
        ops, failed = count_ops(ts)
        omissions: dict[str, int] = {}
        for ln in self.lanes:
            for k, v in ln.omissions.items():
                omissions[k] = omissions.get(k, 0) + v
        rows = self.rows
        nsw = sum(1 for c in self.shell if c.change.action != "shell:read")
        s = FilesSummary(
            transcripts=sum(ln.transcripts for ln in self.lanes), touches=len(ts),
            files=len({t.path for t in ts if t.path} | {c.path for c in rows}),
            unresolved=sum(1 for t in ts if t.path is None), unparsed=sum(ln.unparsed for ln in self.lanes),
            ops=ops, failed=failed, copies=sum(ln.copies for ln in self.lanes), omissions=omissions,
            sessions=self.records.sessions if self.records is not None else 0, changes=len(self.changes),
            shared_files=n_files(rows), actions=_count(c.change.action for c in rows if not c.failed),
            shared_failed=_count(c.change.action for c in rows if c.failed), reads=len(self.reads),
            complete_views=sum(c.change.new_content is not None for c in rows), shell_touches=len(self.shell),
            shell_writes=nsw, shell_unnamed_writers=self.unnamed_shell,
            shared_omissions=self.records.omissions() if self.records is not None else {})
        self.__dict__["_summary"] = s
        return s


def file_events(sel, query: FileQuery) -> list[FileEvents]:
    """Each provider's file events of the selection (the ``file_events`` capability), survey order."""
    out = []
    for e in sel.survey.entries:
        if e.provider is None:
            continue
        ev = e.provider.file_events(sel, query)
        if ev is not None:
            out.append(ev)
    return out


def touched(sel, *, subagents: bool = True, subagents_only: bool = False, progress: bool = False) -> FilesResult:
    """Which files the selection's sessions touched, for every agent. `subagents` False: main lanes
    and top-level sessions only; `subagents_only`: only subagents (lanes, child sessions).
    `progress`: a long first index build shows progress on the terminal."""
    evs = file_events(sel, FileQuery(GRAMMAR, subagents=subagents, subagents_only=subagents_only,
                                     progress=progress))
    lanes = [e.lanes for e in evs if e.lanes is not None]
    recs = merged(e for e in evs if e.lanes is None)

    def keep(c: Change) -> bool:  # a child session (another provider's subagent) is not a main lane
        sub = c.record.lane != "main" or c.ref.parent_session_id is not None
        return not (not subagents and sub) and not (subagents_only and not sub)

    stouch, unnamed = shell_touches(recs.shells)  # what their shell calls name as written
    changes = [c for c in recs.changes if keep(c)]
    shell = [c for c in stouch if keep(c)]
    reads = [c for c in recs.reads if keep(c)]  # read tool calls, as a lane model's Read
    failed = [c for c in recs.failed if keep(c)]  # change calls that failed: changed nothing
    rows = sorted(changes + shell + reads + failed, key=lambda c: (sort_key(c.record.instant), c.ref.session_id, c.seq))
    touches: list[Touch] = [t for ln in lanes for t in ln.touches]
    index = lanes[0].index if lanes else _no_index()
    res = FilesResult(sel, touches, rows, changes, shell, reads, failed, unnamed, lanes, recs,
                      [p for ln in lanes for p in ln.problems] + list(recs.problems), index,
                      {e.name: e.display for e in sel.survey.entries})
    return res


def _no_index():
    from ..index.report import IndexReport

    return IndexReport.for_root(None)


def group_by_file(ts: list[Touch]) -> list[dict]:
    g: dict[str, dict] = {}
    for t in ts:
        if t.path is None or t.copy_of is not None:
            continue
        d = g.setdefault(t.path, {"path": t.path, "ops": defaultdict(int), "failed": defaultdict(int),
                                  "first": t.timestamp, "last": t.timestamp, "lanes": [], "lines": []})
        d["failed" if t.failed else "ops"][t.op] += 1
        d["last"] = t.timestamp or d["last"]
        if t.lane.display not in d["lanes"]:
            d["lanes"].append(t.lane.display)
        d["lines"].append(t.line)
    return [{**d, "ops": dict(d["ops"]), "failed": dict(d["failed"])} for d in g.values()]


def group_by_dir(ts: list[Touch]) -> list[dict]:
    g: dict[str, dict] = {}
    for t in ts:
        if t.path is None or t.copy_of is not None:
            continue
        k = posixpath.dirname(t.path)
        d = g.setdefault(k, {"dir": k, "ops": defaultdict(int), "failed": defaultdict(int), "files": set()})
        d["failed" if t.failed else "ops"][t.op] += 1
        d["files"].add(t.path)
    return [{"dir": d["dir"], "ops": dict(d["ops"]), "failed": dict(d["failed"]), "files": len(d["files"])}
            for d in g.values()]


def count_ops(ts: list[Touch]) -> tuple[dict[str, int], dict[str, int]]:
    """(ops, failed): touches per op, a failed tool call (`Touch.failed`) counted apart: it
    changed nothing, so a failed Edit is no edit."""
    ops: dict[str, int] = {}
    failed: dict[str, int] = {}
    for t in ts:
        d = failed if t.failed else ops
        d[t.op] = d.get(t.op, 0) + 1
    return ops, failed


def ops_text(ops: dict[str, int], failed: dict[str, int] | None = None) -> str:
    """`create=1, edit=1 (+1 failed)`: an op that only failed reads `edit=0 (+1 failed)`."""
    failed = failed or {}
    return ", ".join(f"{k}={ops.get(k, 0)}" + (f" (+{failed[k]} failed)" if k in failed else "")
                     for k in sorted(set(ops) | set(failed)))


def n_files(chs: list[Change]) -> int:
    """Files the changes name: a move names its source and its target."""
    return len({p for c in chs for p in (c.path, c.change.move_to) if p})


def _count(it) -> dict[str, int]:
    out: dict[str, int] = {}
    for k in it:
        out[k] = out.get(k, 0) + 1
    return out
