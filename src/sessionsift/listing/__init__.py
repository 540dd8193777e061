"""`list`: one row per session of every provider, newest first, written once for every agent.

Each session's row is its provider's `summarize` (providers.base.Provider: every record read by
default; Claude Code's reader reads a bounded head and tail of the transcript), its lineage (forks)
its provider's `lineage`, and its child sessions counted here from the selection. What could not
be read is a problem of the answer, never a missing row in silence.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..providers.base import Problem, SessionRef, SessionSummary
from ..timefmt import parse_ts


@dataclass
class SessionRow:
    """One session of any provider in a listing."""

    ref: SessionRef
    summary: SessionSummary
    children: int | None = None
    """Its child sessions that are subagents (other providers' SessionRefs with this parent), where
    the provider keeps subagents as sessions of their own; None: not counted (--no-subagents)."""
    forked_from: dict | None = None
    forks: list[str] | None = None
    """Sessions forked from this one; None when its client records no lineage (unknown, not none)."""

    @property
    def subagents(self) -> int | None:
        """Its subagents, whichever way its client keeps them (lanes inside it, or child sessions)."""
        if self.summary.subagents_are_lanes:
            return self.summary.subagents
        return self.children

    @property
    def last_at(self) -> str | None:
        return self.summary.last_at or self.ref.last_at


@dataclass
class Listing:
    rows: list[SessionRow]
    problems: list[Problem] = field(default_factory=list)
    bytes_total: int | None = 0
    """The bytes the rows' readings chose from (SessionSummary.bytes_total); None when one is unknown."""
    bytes_read: int = 0
    files_read: int = 0
    deleted: list = field(default_factory=list)
    """Sessions their client's history names whose transcripts it deleted
    (providers.claude.history.DeletedSession): their prompts only."""
    notes: list[str] = field(default_factory=list)


def sort_key(ts: str | None) -> float:
    d = parse_ts(ts)
    return d.timestamp() if d is not None else float("-inf")


def row_order(r: SessionRow) -> tuple:
    """Newest first; sessions with the same last instant by provider and id (so every listing of
    the same sessions, a dataset's too, has one order)."""
    return (-sort_key(r.last_at), r.ref.provider, r.ref.session_id)


SORTS: dict[str, str] = {
    "newest": "last activity, most recent first (the default)",
    "oldest": "last activity, least recent first",
    "size": "bytes on disk, largest first",
    "records": "records read, most first",
    "prompts": "prompts, most first",
    "subagents": "subagents, most first",
    "project": "project path, A to Z",
    "agent": "agent (provider), then most recent first",
}
"""The orders `list --sort` takes (key -> what it orders by)."""


def sort_rows(rows: list[SessionRow], key: str) -> list[SessionRow]:
    """`rows` in the order `key` (SORTS) names. A row whose value is not known (a size not
    attributable, records not counted) comes after every known one, whichever the direction: an
    unknown value is never taken for 0. Ties keep the listing's order (newest first)."""
    if key not in SORTS:
        raise ValueError(f"unknown sort {key!r}")
    base = sorted(rows, key=row_order)
    if key == "newest":
        return base
    if key == "oldest":
        known = [r for r in base if r.last_at is not None]
        return sorted(known, key=lambda r: sort_key(r.last_at)) + [r for r in base if r.last_at is None]
    if key == "agent":
        return sorted(base, key=lambda r: r.ref.provider)
    if key == "project":
        def proj(r: SessionRow):
            return r.summary.project or r.ref.project
        return sorted([r for r in base if proj(r)], key=lambda r: str(proj(r))) + [r for r in base if not proj(r)]

    def value(r: SessionRow):
        sm = r.summary
        if key == "size":
            return sm.size if sm.size is not None else r.ref.size
        if key == "records":
            return sm.records
        if key == "prompts":
            return sm.prompts
        return r.subagents

    known = [r for r in base if value(r) is not None]
    return sorted(known, key=lambda r: -(value(r) or 0)) + [r for r in base if value(r) is None]


def list_sessions(sel, subagents: bool = True) -> Listing:
    """Rows for every session of the Selection `sel` (providers.scope.Selection), newest first."""
    from ..read.fanout import map_halves, no_gc

    providers = {e.name: e.provider for e in sel.survey.entries if e.provider is not None}
    refs = sel.session_refs()
    problems: list[Problem] = []

    def one(ref: SessionRef) -> tuple[SessionRef, SessionSummary | Problem]:
        prov = providers.get(ref.provider)
        where = str(ref.paths[0]) if ref.paths else ref.session_id
        if prov is None:
            return ref, Problem(where, f"no reader for {ref.provider}")
        try:
            ref = prov.full(ref)  # every file of the session (a light ref names its main transcript only)
            return ref, prov.summarize(ref, subagents=subagents)
        except Exception as exc:  # a reader's bug: the session is unreadable, the answer goes on
            return ref, Problem(where, f"reader failed: {type(exc).__name__}: {exc}")

    with no_gc():
        # a bounded reader reads at most a few MB of a session: weigh the halves by what is read
        results = map_halves(one, refs, [min(r.size or 0, 3 << 20) for r in refs])
    kids: Counter | None = None
    if subagents:
        kids = Counter((r.provider, r.parent_session_id) for r in refs if r.is_subagent)
    lineage = _lineage(sel, providers)
    rows: list[SessionRow] = []
    total: int | None = 0
    read = files = 0
    for ref, res in results:
        if isinstance(res, Problem):
            problems.append(res)
            continue
        problems.extend(res.problems)
        f, forks = lineage.get((ref.provider, ref.session_id), (None, None))
        rows.append(SessionRow(ref, res, None if kids is None else kids.get((ref.provider, ref.session_id), 0),
                               f, forks))
        total = None if total is None or res.bytes_total is None else total + res.bytes_total
        read += res.bytes_read
        files += res.files_read
    rows.sort(key=row_order)
    seen = set()
    uniq = []
    for p in problems:
        if (p.path, p.why) not in seen:
            seen.add((p.path, p.why))
            uniq.append(p)
    from ..providers.claude import history as H

    deleted, note = H.deleted_of_selection(sel, uniq)
    return Listing(rows, uniq, total, read, files, deleted, [note] if note else [])


def _lineage(sel, providers) -> dict[tuple[str, str], tuple[dict | None, list[str] | None]]:
    """(provider, session id) -> (forked_from, forks) for every session in `sel`: from each
    provider's `lineage` over the sessions its discovery saw (a parent listed alone still names
    its forks); (None, None) for a provider that records no lineage."""
    out: dict[tuple[str, str], tuple[dict | None, list[str] | None]] = {}
    by: dict[str, list[SessionRef]] = {}
    for r in sel.session_refs():
        by.setdefault(r.provider, []).append(r)
    for name, refs in by.items():
        prov = providers.get(name)
        if prov is None or not prov.records_forks:
            continue
        e = sel.survey.entry(name)
        seen = list(e.sessions) if e is not None and e.sessions else refs
        try:
            got = prov.lineage(refs, seen)
        except Exception:  # a reader's bug: lineage unknown for its sessions (None, never "no fork")
            continue
        forks: dict[str, list[str]] = {}
        for sid, f in got.items():
            forks.setdefault(f["session_id"], []).append(sid)
        for r in refs:
            out[(name, r.session_id)] = (got.get(r.session_id), sorted(forks.get(r.session_id, [])))
    return out
