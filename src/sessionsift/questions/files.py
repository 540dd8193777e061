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


def _session_changes(pair: tuple[Provider, SessionRef]) -> tuple[list[Change], ReadReport, Problem | None]:
    prov, ref = pair
    rep = ReadReport()
    got: list[Change] = []
    try:
        for r in prov.read(ref, rep):
            if r.copy_of is not None:
                continue
            for fc in r.file_changes:
                got.append(Change(ref, r, fc))
    except Exception as exc:  # a reader's bug: this session is unreadable, the answer goes on
        return got, rep, Problem(str(ref.paths[0]) if ref.paths else ref.session_id,
                                 f"reader failed: {type(exc).__name__}: {exc}")
    return got, rep, None


def changes(pairs: list[tuple[Provider, SessionRef]]) -> SharedChanges:
    from ..read.fanout import map_halves, no_gc

    out = SharedChanges()
    pairs = list(pairs)
    with no_gc():
        results = map_halves(_session_changes, pairs, [r.size for _, r in pairs])
    for got, rep, prob in results:
        out.changes.extend(got)
        if prob is not None:
            out.problems.append(prob)
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


@dataclass
class Rebuild:
    """A file's content from the recorded changes of other providers' sessions."""

    status: str
    """``complete_view`` (the last change holds the whole content), ``rebuilt`` (a complete view
    plus every later diff applied exactly), ``stale`` (a later change could not be applied: the
    content is as of the last change that could), ``deleted``, ``moved`` (moved away),
    ``no_complete_view`` (changes, none holding the whole content), ``no_record``."""
    content: str | None
    anchor: Change | None
    applied: list[Change] = field(default_factory=list)
    stopped_at: Change | None = None
    why: str | None = None

    @property
    def complete(self) -> bool:
        return self.status in ("complete_view", "rebuilt")


def apply_diff(content: str, diff: str) -> str:
    """`content` with the unified-diff hunks of `diff` applied, each hunk's context checked
    exactly at its stated lines (whatthepatch); raises ValueError when they do not apply."""
    import whatthepatch

    patches = list(whatthepatch.parse_patch(diff))
    if not patches or not any(p.changes for p in patches):
        raise ValueError("no hunk in the diff")
    lines = content.split("\n")
    trailing = content.endswith("\n")
    if trailing:
        lines = lines[:-1]
    for p in patches:
        try:
            lines = whatthepatch.apply_diff(p, lines)
        except Exception as exc:  # HunkApplyException and friends: the diff does not fit this content
            raise ValueError(str(exc)) from exc
    return "\n".join(lines) + ("\n" if trailing or not content else "")


def rebuild(chs: list[Change], path: str) -> Rebuild:
    """The file at `path` after the changes `chs` (in order): the last complete view (or
    delete), then every later diff applied exactly; stops, saying why, at a change that cannot be
    applied (a diff that does not fit, an edit with no diff)."""
    mine = [c for c in chs if path in (c.change.path, c.change.move_to)]
    if not mine:
        return Rebuild("no_record", None, None)
    anchor_i = None
    for i, c in enumerate(mine):
        ch = c.change
        if (ch.new_content is not None and (ch.move_to or ch.path) == path) or \
                (ch.action == "delete" and ch.path == path and ch.new_content is None):
            anchor_i = i
    if anchor_i is None:
        # moved here (Codex `*** Move to`): the source's content before the move, then the move's diff
        mv_i = next((i for i in range(len(mine) - 1, -1, -1)
                     if mine[i].change.move_to == path and mine[i].change.path != path), None)
        if mv_i is not None:
            mv = mine[mv_i]
            src = rebuild(chs[:next(k for k, c in enumerate(chs) if c is mv)], mv.change.path)
            if src.complete and src.content is not None:
                return _apply(Rebuild(src.status, src.content, src.anchor, list(src.applied)), mine[mv_i:], path)
        return Rebuild("no_complete_view", None, None, why="no change holds the whole content (diffs or edits only)")
    anchor = mine[anchor_i]
    if anchor.change.new_content is None:
        content = None
        status = "deleted"
    else:
        content = anchor.change.new_content
        status = "complete_view"
    return _apply(Rebuild(status, content, anchor), mine[anchor_i + 1:], path)


def _apply(out: Rebuild, later: list[Change], path: str) -> Rebuild:
    """`out` (its content as of its anchor) with each later change applied exactly."""
    content = out.content
    for c in later:
        ch = c.change
        if ch.move_to == path and ch.path != path and ch.diff is None and content is not None:
            out.applied.append(c)  # moved here unchanged
            out.status = "rebuilt"
            continue
        if ch.path == path and ch.move_to and ch.move_to != path:
            return Rebuild("moved", None, out.anchor, out.applied, c, f"moved to {ch.move_to} at {c.record.locator}")
        if content is None:
            out.status, out.stopped_at, out.why = "stale", c, "changed after its recorded delete, without its content"
            return out
        if ch.diff is None:
            out.status, out.stopped_at, out.why = "stale", c, f"a later {ch.action} records no diff"
            return out
        try:
            content = apply_diff(content, ch.diff)
        except ValueError as exc:
            out.status, out.stopped_at, out.why = "stale", c, f"a later diff does not apply: {exc}"
            return out
        out.content = content
        out.applied.append(c)
        out.status = "rebuilt"
    return out
