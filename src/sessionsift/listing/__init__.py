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
    (``Provider.deleted_sessions``: Claude Code's history.jsonl): their prompts only."""
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


@dataclass
class Kept:
    """What a listing read, kept for the next one (``list_sessions(keep=...)``, a long-lived
    process such as ``serve``): per session the ref discovery gave, the stat identity of every
    file its summary reads (Provider.summary_files) and the ref and summary (or problem) it gave;
    per provider its lineage with the identities of all its sessions' files. Only what the last
    listing saw is kept (a session gone is dropped)."""

    sessions: dict = field(default_factory=dict)
    lineage: dict = field(default_factory=dict)
    read: int = 0
    """Sessions the last listing read (summarized); the rest it took from here."""
    kept: int = 0


def file_identity(p) -> tuple | None:
    """(device, inode, size, mtime_ns) of `p`, None when it cannot be stat'ed (gone)."""
    import os

    try:
        st = os.stat(p)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def list_sessions(sel, subagents: bool = True, keep: Kept | None = None) -> Listing:
    """Rows for every session of the Selection `sel` (providers.scope.Selection), newest first.

    `keep`: the listing before this one (updated in place): a session whose ref is the one
    discovery gave then and whose files (Provider.summary_files) have the same stat identities
    is not read again, its summary is the one kept; a provider's lineage is computed again only
    when one of its sessions' refs or files changed. The answer is the one a listing without
    `keep` gives (tests/test_serve_incremental.py compares them)."""
    from ..read.fanout import map_halves, no_gc

    providers = {e.name: e.provider for e in sel.survey.entries if e.provider is not None}
    refs = sel.session_refs()
    problems: list[Problem] = []
    old = keep.sessions if keep is not None else {}
    new: dict = {}

    # a session whose provider summarizes it by reading every record (Provider.summarize's
    # default) is summarized once and its summary kept by the index (index/kept.py) while
    # every file its reader opened is as it was; a bounded reader (Claude Code's head and tail)
    # is read each time; a long-lived listing (`keep`: the server's) keeps its own in memory
    from ..index import kept as KI
    from ..providers.base import Provider

    what = f"summary:{int(bool(subagents))}"
    full_read = [i for i, r in enumerate(refs) if r.provider in providers
                 and getattr(type(providers[r.provider]), "summarize", None) is Provider.summarize]
    disk = KI.Kept.for_selection(sel) if full_read and keep is None else None
    hits: dict[int, object] = {}
    if disk is not None:
        got = disk.get(what, [refs[i] for i in full_read])
        hits = {full_read[j]: v for j, v in got.items()}
    keep_these = set(full_read) if disk is not None else set()

    def one_at(i: int):
        h = hits.get(i)
        if isinstance(h, tuple) and len(h) == 2:
            return h[0], h[1], None
        if i in keep_these:
            (ref, res), ident = KI.taken(refs[i], lambda: one(refs[i]))
            return ref, res, ident if isinstance(res, SessionSummary) and not res.problems else None
        ref, res = one(refs[i])
        return ref, res, None

    def one(ref: SessionRef) -> tuple[SessionRef, SessionSummary | Problem]:
        prov = providers.get(ref.provider)
        where = str(ref.paths[0]) if ref.paths else ref.session_id
        if prov is None:
            return ref, Problem(where, f"no reader for {ref.provider}")
        given = ref
        try:
            ref = prov.full(ref)  # every file of the session (a light ref names its main transcript only)
            if keep is not None:
                # stat'ed before the read: a write during it leaves an older identity, read again next time
                stamp = tuple((str(p), file_identity(p)) for p in prov.summary_files(ref))
                k = (given.provider, given.session_id)
                got = old.get(k)
                if got is not None and got[0] == subagents and got[1] == given and got[2] == stamp:
                    new[k] = got
                    return got[3], got[4]
            res = prov.summarize(ref, subagents=subagents)
            if keep is not None:
                new[k] = (subagents, given, stamp, ref, res)
            return ref, res
        except Exception as exc:  # a reader's bug: the session is unreadable, the answer goes on
            return ref, Problem(where, f"reader failed: {type(exc).__name__}: {exc}")

    try:
        with no_gc():
            # a bounded reader reads at most a few MB of a session: weigh the halves by what is read
            # weights for the split only: a kept answer costs no reading (0 is the fact), a size the
            # reader cannot attribute (rows of a shared database) is map_halves' unknown weight
            done = map_halves(one_at, list(range(len(refs))),
                              [0 if i in hits else None if r.size is None else min(r.size, 3 << 20)
                               for i, r in enumerate(refs)])
        results = [(ref, res) for ref, res, _ident in done]
        if disk is not None:
            disk.put(what, [(refs[i], ident, (ref, res)) for i, (ref, res, ident) in enumerate(done)
                            if ident is not None])
    finally:
        if disk is not None:
            disk.close()
    if keep is not None:
        keep.kept = sum(1 for k, v in new.items() if old.get(k) is v)
        keep.read = len(refs) - keep.kept
        keep.sessions = new
    kids: Counter | None = None
    if subagents:
        kids = Counter((r.provider, r.parent_session_id) for r in refs if r.is_subagent)
    lineage = _lineage(sel, providers, keep)
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
    deleted: list = []
    notes: list[str] = []
    for prov in providers.values():  # Provider.deleted_sessions: its client's own history of them
        gone, note = prov.deleted_sessions(sel, uniq)
        deleted += gone
        notes += [note] if note else []
    return Listing(rows, uniq, total, read, files, deleted, notes)


def _lineage(sel, providers, keep: Kept | None = None) -> dict[tuple[str, str], tuple[dict | None, list[str] | None]]:
    """(provider, session id) -> (forked_from, forks) for every session in `sel`: from each
    provider's `lineage` over the sessions its discovery saw (a parent listed alone still names
    its forks); (None, None) for a provider that records no lineage. `keep`: a provider's
    lineage is kept while the refs it was computed over and their files are the same."""
    out: dict[tuple[str, str], tuple[dict | None, list[str] | None]] = {}
    by: dict[str, list[SessionRef]] = {}
    for r in sel.session_refs():
        by.setdefault(r.provider, []).append(r)
    kept_lineage: dict = {}
    for name, refs in by.items():
        prov = providers.get(name)
        if prov is None or not prov.records_forks:
            continue
        e = sel.survey.entry(name)
        seen = list(e.sessions) if e is not None and e.sessions else refs
        sig = None
        if keep is not None and not sel.targeted and sel.narrowed is None:
            # the whole root: `seen` is every session a provider's lineage may read (a narrowed
            # selection's lineage reads siblings outside it, not stamped here: computed again)
            sig = (refs, seen, tuple(tuple(file_identity(p) for p in r.paths) for r in seen),
                   tuple(tuple(file_identity(p) for p in r.paths) for r in refs))
            was = keep.lineage.get(name)
            got = was[1] if was is not None and was[0] == sig else None
        else:
            got = None
        if got is None:
            try:
                got = prov.lineage(refs, seen, sel.index_off)
            except Exception:  # a reader's bug: lineage unknown for its sessions (None, never "no fork")
                continue
        if sig is not None:
            kept_lineage[name] = (sig, got)
        forks: dict[str, list[str]] = {}
        for sid, f in got.items():
            forks.setdefault(f["session_id"], []).append(sid)
        for r in refs:
            out[(name, r.session_id)] = (got.get(r.session_id), sorted(forks.get(r.session_id, [])))
    if keep is not None:
        keep.lineage = kept_lineage
    return out
