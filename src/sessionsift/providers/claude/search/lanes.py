"""Claude Code's lane search run: every lane of a Scope in scope order, batched over forked
workers, census outcomes from the index where it is fresh, the lane summary."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ....read.lines import open_map
from ..discover import Lane, Scope
from .types import LaneOutcome, Query, Summary
from .plan import PERSISTED, Plan, plan
from .scan import copies_of_root, index_path, lines_in, scan_lane
from ...searchquery import merge_counts

PARALLEL_MIN_BYTES = 16 << 20
"""Smaller scopes run in-process: forking workers would cost more than it saves."""
MIN_BATCH_BYTES = 1 << 20

# --- the scope ------------------------------------------------------------------------------


@dataclass
class Unit:
    """A batch of whole sessions for one worker call: [(lane position, lane)] in scope order."""

    lanes: list[tuple[int, Lane, str]]
    bytes: int = 0


def lanes_of(scope: Scope, subagents: bool) -> list[Lane]:
    """Every lane to scan, in scope order. A session has subagent lanes only under its sidecar
    directory `<project>/<session_id>/`: the project listing of discovery says which sessions
    have one (`Session.sidecar`; else each project directory is listed once here), and sessions
    without one skip the per-session directory probes. The subagent lanes listed are kept in
    `scope.listed_lanes` for this answer's coverage count (Selection.subagent_counts)."""
    out: list[Lane] = []
    sidecars: dict[Path, set[str] | None] = {}
    listed = scope.listed_lanes
    for s in scope.sessions:
        if s.session_id in scope.explicit_lanes:
            out.append(scope.explicit_lanes[s.session_id])
            continue
        if not subagents:
            out.append(s.main)
            continue
        has = s.sidecar
        if has is None:
            names = sidecars.get(s.project_dir, ())
            if names == ():
                try:
                    with os.scandir(s.project_dir) as it:
                        names = {e.name for e in it if e.is_dir()}
                except OSError:
                    names = None  # cannot tell: probe per session
                sidecars[s.project_dir] = names
            has = names is None or s.session_id in names
        if not has:
            listed[s.session_id] = []
            out.append(s.main)
            continue
        subs = s.subagent_lanes()
        listed[s.session_id] = subs
        out.append(s.main)
        out.extend(subs)
    return out


def _units(lanes: list[Lane], sizes: list[int], target: int) -> list[Unit]:
    units: list[Unit] = []
    cur = Unit([])
    prev_sid = None
    for i, (ln, sz) in enumerate(zip(lanes, sizes)):
        if cur.lanes and ln.session_id != prev_sid and cur.bytes >= target:
            units.append(cur)
            cur = Unit([])
        cur.lanes.append((i, ln, ln.session_id))
        cur.bytes += sz
        prev_sid = ln.session_id
    if cur.lanes:
        units.append(cur)
    return units


_FORKED: tuple[Plan, list[Unit], bool] | None = None
"""The plan and units of the running parallel search, and whether plain outcomes are folded,
inherited by forked workers (so a task is an index, not a pickled batch of lanes)."""


def _run_forked(i: int):
    assert _FORKED is not None
    p, units, fold = _FORKED
    outs = _run_unit((p, units[i]))
    return _fold_plain(outs) if fold else outs


def _fold_plain(outs: list[LaneOutcome]) -> tuple[list[LaneOutcome], int, int, int]:
    """(the outcomes that are not plain, and the plain ones' count, bytes and lines): a plain
    outcome (LaneOutcome.plain: no hit, nothing parsed, nothing unusual - most lanes of a
    selective search) adds only those three to the summary, so a worker sends them as sums."""
    kept = []
    n = size = lines = 0
    for o in outs:
        if o.index_why is None and o.plain():
            n += 1
            size += o.bytes
            if o.lines is not None:
                lines += o.lines
        else:
            kept.append(o)
    return kept, n, size, lines


def _run_unit(args: tuple[Plan, Unit]) -> list[LaneOutcome]:
    p, unit = args
    outs: list[LaneOutcome] = []
    per_session: dict[str, int] = {}
    mc = 1 if p.query.sessions_only else p.query.max_count
    for pos, lane, sid in unit.lanes:
        cap = None
        if mc is not None:
            cap = mc - per_session.get(sid, 0)
            if cap <= 0:
                o = LaneOutcome(pos=pos)
                try:
                    with open_map(lane.path) as m:
                        o.bytes = len(m.buf)
                        o.lines = lines_in(m.buf) if p.query.count_lines else None
                except OSError as exc:
                    o.unreadable = exc.strerror or str(exc)
                outs.append(o)
                continue
        o = scan_lane(p, pos, lane, cap)
        per_session[sid] = per_session.get(sid, 0) + o.hit_count
        outs.append(o)
    return outs


@dataclass
class LaneRun:
    """The result of `search`: iterate `outcomes()` (scope order); `summary` is complete after."""

    plan: Plan
    scope: Scope
    lanes: list[Lane]
    summary: Summary = field(default_factory=Summary)
    workers: int = 1
    _done: bool = False
    _stats: list | None = None

    def outcomes(self, plain: bool = True) -> Iterator[tuple[Lane, LaneOutcome]]:
        """(lane, outcome) of every lane in scope order; `plain=False`: not the plain ones
        (LaneOutcome.plain), which a caller that prints hits and counts has nothing to do with
        (the summary still counts them: it is the same either way)."""
        sm = self.summary
        sm.lines = 0 if self.plan.query.count_lines else None
        sm.sessions = len(self.scope.sessions)
        sm.unreadable = [{"path": pr.path, "why": pr.why} for pr in self.scope.problems]
        sm.prefilter = self.plan.needles if self.plan.needles is not None else (
            self.plan.label_needles if self.plan.label_needles is not None else None)
        stats = self._stat_lanes()
        sizes = [st.st_size if st is not None else 0 for st in stats]
        sess_hit: set[str] = set()
        todo = list(range(len(self.lanes)))
        pre: dict[int, LaneOutcome] = {}
        root = None
        if self.plan.use_index:
            root, pre = self._from_root_summary(stats)
        if self.plan.fulltext:
            pre.update(self._ruled_out(stats, pre))
        todo = [i for i in todo if i not in pre]
        if not pre:
            yield from self._scan_all(list(range(len(self.lanes))), sizes, sess_hit, root,
                                      fold=not plain and not self.plan.use_index)
        else:
            got = {o.pos: o for o in self._collect(todo, sizes, root)}
            for i in range(len(self.lanes)):
                o = pre.get(i) or got.get(i)
                if o is not None:
                    yield self._emit(o, sess_hit), o
        if root is not None:
            root.save()
        self._finish(sess_hit)

    def _ruled_out(self, stats: list, pre: dict) -> dict:
        """Outcomes of the lanes the full-text index rules out (no record's text holds a literal
        of the pattern): the outcome a scan gives a transcript without the needle (its size), each
        lane brought up to date in the index first. A lane whose saved tool outputs match (the
        left-out source counted) is scanned all the same."""
        from ....read.pattern import compiled
        from .scan import _saved_matching, _tool_results_dir

        p = self.plan
        idx = [i for i in range(len(self.lanes)) if i not in pre]
        out, self.summary.fulltext = p.fulltext.lanes([self.lanes[i] for i in idx], [stats[i] for i in idx],
                                                      self.scope.home.path)
        got: dict[int, LaneOutcome] = {}
        persisted = p.count_left_out and PERSISTED in p.left_out_kinds
        rx = compiled(p.regex) if persisted and p.regex is not None else None
        for k in out:
            i = idx[k]
            lane = self.lanes[i]
            if persisted and not (lane.kind == "main" and os.fspath(lane.path) in p.no_sidecar) and _saved_matching(
                    p, rx, _tool_results_dir(lane)):
                continue
            got[i] = LaneOutcome(pos=i, bytes=stats[i].st_size, from_index="fulltext")
        return got

    def _stat_lanes(self) -> list:
        """One stat per lane (None: could not), taken once per run: the root summary, the sizes
        and the answer cache's digest all judge the same stat."""
        if self._stats is None:
            out = []
            for ln in self.lanes:
                try:
                    out.append(os.stat(ln.path))
                except OSError:
                    out.append(None)
            self._stats = out
        return self._stats

    def census(self) -> dict:
        """A census query (`count_by` set, no cap): the merged counts (empty for "total"); the
        summary is complete after. Answered whole from the data root's kept answers
        (providers/claude/cache/answers.py) when they hold this query over exactly these transcripts, unchanged;
        else folded from `outcomes()`, and kept when every transcript came from a fresh index."""
        by = self.plan.query.count_by
        cache = k = dig = None
        if self.plan.use_index and by is not None and self.plan.query.max_count is None \
                and not self.plan.query.sessions_only:
            from ..cache import answers

            dig = answers.digest(self.lanes, self._stat_lanes(), self.scope.sessions)
            if dig is not None:
                cache = answers.Answers.load(self.scope.home.path)
                k = answers.key(self.plan.query)
                got = cache.answer(k, dig, self.summary)
                if got is not None:
                    return self._replay(got)
        counts: dict = {}
        froms: dict = {}
        for _lane, o in self.outcomes(plain=cache is not None):  # to keep it: every lane's source
            if by != "total":
                merge_counts(by, counts, o.counts)
            froms[o.from_index] = froms.get(o.from_index, 0) + 1
        sm = self.summary
        if cache is not None and list(froms) == ["index"] and not sm.unreadable and not sm.persisted_unresolved:
            from ..cache import answers

            ans = {f: getattr(sm, f) for f in answers.kept_fields(sm)}
            ans["counts"] = counts
            ans["workers"] = self.workers  # the summary says how many read it; its replay says the same
            cache.put(k, dig, ans)
        return counts

    def _replay(self, got: dict) -> dict:
        from ..cache import answers

        sm = self.summary
        sm.sessions = len(self.scope.sessions)
        sm.unreadable = [{"path": pr.path, "why": pr.why} for pr in self.scope.problems]
        sm.prefilter = self.plan.needles if self.plan.needles is not None else (
            self.plan.label_needles if self.plan.label_needles is not None else None)
        for f in answers.kept_fields(sm):
            setattr(sm, f, got[f])
        self.workers = got.get("workers", 1)
        self._finish(None)
        return got["counts"]

    def _from_root_summary(self, stat_list: list):
        """Census outcomes of the lanes the data root's summary answers (providers/claude/cache/summary.py): a stat
        each, no index file read. The rest are scanned or read from their own index."""
        from ..cache import search as IS
        from ..cache.summary import RootSummary, entry_view

        if IS.per_record(self.plan):
            return None, {}
        root = RootSummary.load(self.scope.home.path)
        pre: dict[int, LaneOutcome] = {}
        stats: dict = {os.fspath(ln.path): st for ln, st in zip(self.lanes, stat_list) if st is not None}
        for i, lane in enumerate(self.lanes):
            st = stats.get(os.fspath(lane.path))
            if st is None:
                continue
            e = root.get(index_path(os.fspath(lane.path)), st)
            if e is None or copies_of_root(self.plan, lane, root, stats) is not None:
                continue
            v = entry_view(e, root.keys, lane)
            pre[i] = IS.census_from_view(self.plan, i, lane, v)
        return root, pre

    def _collect(self, idxs: list[int], sizes: list[int], root) -> list[LaneOutcome]:
        return [o for _l, o in self._scan_all(idxs, sizes, None, root, emit=False)]

    def _scan_all(self, idxs: list[int], sizes: list[int], sess_hit, root, emit: bool = True, fold: bool = False):
        """`fold`: plain outcomes are summed where they are made (a worker) and not yielded (never
        with the index: a census lane's outcome carries why it was scanned)."""
        lanes = [self.lanes[i] for i in idxs]
        lsizes = [sizes[i] for i in idxs]
        total = sum(lsizes)
        workers = os.cpu_count() or 1

        all_lanes = self.lanes
        account = self._emit

        def out(o: LaneOutcome) -> Lane:
            # (a plain function, not a generator: it runs once per lane, ~10k times a store)
            o.pos = idxs[o.pos]
            if root is not None and o.view is not None:
                root.put(os.path.abspath(all_lanes[o.pos].path), o.view)
            o.view = None
            return account(o, sess_hit) if emit else all_lanes[o.pos]

        from ....read import fanout
        from ....read.fanout import can_fork

        prog = fanout.PROGRESS  # a progress line the CLI set on a terminal: each batch reports its bytes
        if prog is not None:
            prog.begin(total)
        if workers > 1 and total >= PARALLEL_MIN_BYTES and len(lanes) > 1 and can_fork():
            # about 8 byte-balanced batches per worker: small enough to even out, few enough that
            # the per-task cost stays negligible; workers are forked and read the batches from
            # the inherited _FORKED (a task is its index); each takes the next batch when free
            global _FORKED
            units = _units(lanes, lsizes, max(MIN_BATCH_BYTES, total // (workers * 8)))
            from ....read.fanout import imap_forked

            self.workers = min(workers, len(units))
            _FORKED = (self.plan, units, fold)
            try:
                for k, outs in enumerate(imap_forked(_run_forked, len(units), self.workers)):
                    if prog is not None:
                        prog.step(units[k].bytes)
                    if fold:
                        outs = self._add_plain(*outs)
                    for o in outs:
                        yield out(o), o
            finally:
                _FORKED = None
        else:
            for u in _units(lanes, lsizes, 1 << 62):
                outs = _run_unit((self.plan, u))
                if prog is not None:
                    prog.step(u.bytes)
                if fold:
                    outs = self._add_plain(*_fold_plain(outs))
                for o in outs:
                    yield out(o), o

    def _add_plain(self, kept: list[LaneOutcome], n: int, size: int, lines: int) -> list[LaneOutcome]:
        """Account `n` plain outcomes of `size` bytes and `lines` lines (what `_emit` adds for each:
        a file read, scanned without the index); the outcomes that are not plain."""
        sm = self.summary
        if n:
            sm.files += n
            sm.bytes += size
            if sm.lines is not None:
                sm.lines += lines
            sm.index_counts["scanned"] = sm.index_counts.get("scanned", 0) + n
        return kept

    def _finish(self, sess_hit: set[str] | None) -> None:
        sm = self.summary
        if sess_hit is not None:  # None: replayed (sessions_with_hits is set)
            sm.sessions_with_hits = len(sess_hit)
        p = self.plan
        sm.left_out = [{"kind": k, "flag": f, "further_hits": (
            sm.gated_hits.get(k, 0) if p.count_left_out else (0 if k == PERSISTED and p.regex is None else None))}
            for k, f in p.left_out]
        if p.left_out and not p.count_left_out:
            sm.left_out_note = ("further hits not counted: the pattern has no literal needle" if p.needles is None
                                else "further hits not counted: -m/-l stop the scan early")
        self._done = True

    def _emit(self, o: LaneOutcome, sess_hit: set[str]) -> Lane:
        """Account lane outcome `o` in the summary; its lane."""
        sm = self.summary
        lane = self.lanes[o.pos]
        if o.unreadable is not None:
            sm.unreadable.append({"path": str(lane.path), "why": o.unreadable})
        else:
            sm.files += 1
        if o.lines is not None and sm.lines is not None:
            sm.lines += o.lines
        sm.shape_skipped += o.shape_skipped
        sm.shape_counted += o.shape_counted
        sm.bytes += o.bytes
        sm.hits += o.hit_count
        sm.records_parsed += o.parsed
        sm.malformed_lines += o.malformed
        if o.bridged:
            sm.bridged_records += o.bridged
            sm.bridged_transcripts += 1
        if o.omitted:
            sm.omitted_lines += o.omitted
        if o.unchained:
            sm.unchained_transcripts += 1
        elif o.unchained is None:
            sm.unchained_unknown += 1
        if o.reread_failed is not None:
            sm.unreadable.append({"path": str(lane.path), "why": o.reread_failed})
        sm.undated_skipped += o.undated_skipped
        sm.copies_skipped += o.copies_skipped
        if o.from_index is not None:
            sm.index_counts[o.from_index] = sm.index_counts.get(o.from_index, 0) + 1
        elif o.unreadable is None:
            sm.index_counts["scanned"] = sm.index_counts.get("scanned", 0) + 1
            if o.index_why:
                sm.index_why[o.index_why] = sm.index_why.get(o.index_why, 0) + 1
        sm.persisted_unresolved.extend(o.persisted_problems)
        for k, v in o.unknown_type_lines.items():
            sm.unknown_type_lines[k] = sm.unknown_type_lines.get(k, 0) + v
        for k, v in o.gated_hits.items():
            sm.gated_hits[k] = sm.gated_hits.get(k, 0) + v
        if o.hit_count:
            sess_hit.add(lane.session_id)
        return lane


def lane_search(query: Query, scope: Scope, use_index: bool = False, fulltext=None) -> LaneRun:
    """Plan `query` over `scope` (raises UsageError on a bad query). Iterate the result.
    `use_index`: answer from the index where it is fresh (sessionsift/index; the caller decides,
    e.g. not when the index directory lies inside the data root)."""
    p = plan(query)
    p.copies, p.copies_known = {}, False
    p.index_off = scope.index_off
    for s in scope.sessions:
        p.scope_dirs.setdefault(os.fspath(s.project_dir), []).append((s.session_id, os.fspath(s.path)))
    if use_index:
        from ....index import config
        from ..cache import shapes

        if config.enabled(scope.index_off):
            p.use_index = shapes.usable(p)
            p.index_relabel = not p.listing
    if fulltext is not None and p.regex is not None and not query.count_lines and not query.resolve_persisted:
        from ....index import config

        if config.enabled(scope.index_off):
            p.fulltext = fulltext
    if p.count_left_out and PERSISTED in p.left_out_kinds:
        p.no_sidecar = frozenset(os.fspath(s.path) for s in scope.sessions if s.sidecar is False)
    return LaneRun(p, scope, lanes_of(scope, query.subagents))


