"""`files` over the shared records: the file changes a provider's records hold.

Each ``FileChange`` on a record is one change row (path, action, whether the record holds the
whole new content, the old content, or a diff). Reads are not changes and are not listed for
these providers (Claude Code's own `files` path also lists reads and shell writes). A change
the client made without recording it (a shell command that writes) is invisible here.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

from ..providers.base import FileChange, Problem, Provider, ReadReport, Record, SessionRef
from ..timefmt import parse_ts


@dataclass
class Change:
    ref: SessionRef
    record: Record
    change: FileChange

    @property
    def path(self) -> str:
        return self.change.path


@dataclass
class SharedChanges:
    changes: list[Change] = field(default_factory=list)
    reports: list[ReadReport] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def omissions(self) -> dict[str, int]:
        c: Counter = Counter()
        for r in self.reports:
            c.update(r.omissions())
        return dict(c)


def changes(pairs: list[tuple[Provider, SessionRef]]) -> SharedChanges:
    out = SharedChanges()
    for prov, ref in pairs:
        rep = ReadReport()
        try:
            for r in prov.read(ref, rep):
                if r.copy_of is not None:
                    continue
                for fc in r.file_changes:
                    out.changes.append(Change(ref, r, fc))
        except Exception as exc:  # a reader's bug: this session is unreadable, the answer goes on
            out.problems.append(Problem(str(ref.paths[0]) if ref.paths else ref.session_id,
                                        f"reader failed: {type(exc).__name__}: {exc}"))
        out.reports.append(rep)
        out.problems.extend(rep.problems)
    out.changes.sort(key=lambda c: (_ts(c.record.instant), c.ref.session_id))
    return out


def _ts(s: str | None) -> float:
    d = parse_ts(s)
    return d.timestamp() if d else float("-inf")


def by_file(chs: list[Change]) -> dict[str, list[Change]]:
    out: dict[str, list[Change]] = {}
    for c in chs:
        out.setdefault(c.path, []).append(c)
        if c.change.move_to:
            out.setdefault(c.change.move_to, []).append(c)
    return out


def by_dir(chs: list[Change]) -> dict[str, list[Change]]:
    out: dict[str, list[Change]] = {}
    for c in chs:
        out.setdefault(os.path.dirname(c.path) or ".", []).append(c)
    return out


def latest_complete_view(chs: list[Change], path: str, until: str | None = None) -> Change | None:
    """The last change of `path` whose record holds the whole new content (optionally at or
    before the instant `until`): a complete view of the file as the session left it."""
    cut = parse_ts(until) if until else None
    best = None
    for c in chs:
        target = c.change.move_to or c.change.path
        if target != path and c.change.path != path:
            continue
        if cut is not None:
            d = parse_ts(c.record.instant)
            if d is None or d > cut:
                continue
        if c.change.action == "delete" and c.change.path == path:
            best = c
        elif c.change.new_content is not None and target == path:
            best = c
    return best
