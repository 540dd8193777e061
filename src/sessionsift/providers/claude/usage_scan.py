"""Claude Code's ``usage_scans`` capability (providers/base.py ``Provider.usage_scans``): the usage
extraction of usage.py (prefilter + msgspec) over every transcript of a deep Scope, forks after the
session they copy, a large store read by two processes, each transcript's scan taken from the index's
usage cache where it is fresh (cache/usagecache.py). `usage`, `sync` and `usage blocks` assemble the
answer from these scans (usage/collect.py)."""

from __future__ import annotations

import os

from . import usage as C

PARALLEL_MIN_BYTES = 64 << 20
"""From this many bytes of transcripts on, a forked worker scans the second half (by size)."""


def transcripts(s, subagents: bool) -> list[tuple[str, str, str]]:
    """(path, kind, lane name) of a session's transcripts: the same files as
    `Session.lanes()`, listed with os.scandir on strings (no Path objects: a large store has
    tens of thousands of sessions)."""
    out = [(str(s.path), "main", "main")]
    if not subagents:
        return out
    sub = os.path.join(str(s.project_dir), s.session_id, "subagents")
    try:
        entries = sorted((e.name, e.path, e.is_file(), e.is_dir()) for e in os.scandir(sub))
    except OSError:
        return out
    for name, path, is_file, _d in entries:
        if name.endswith(".jsonl") and is_file:
            out.append((path, "subagent", name[:-6][6:] if name.startswith("agent-") else name[:-6]))
    for name, path, _f, is_dir in entries:
        if name == "workflows" and is_dir:
            try:
                runs = sorted((e.name, e.path) for e in os.scandir(path) if e.name.startswith("wf_") and e.is_dir())
            except OSError:
                runs = []
            for _rn, rp in runs:
                try:
                    files = sorted((e.name, e.path) for e in os.scandir(rp)
                                   if e.name.endswith(".jsonl") and e.name != "journal.jsonl" and e.is_file())
                except OSError:
                    continue
                for fn, fp in files:
                    out.append((fp, "workflow", fn[:-6][6:] if fn.startswith("agent-") else fn[:-6]))
    return out


def _scan_many(parts: list[tuple[str, int, int | None]]) -> list["C.FileScan | tuple[str, str]"]:
    out: list = []
    for p, start, stop in parts:
        try:
            out.append(C.scan_file(p, start, stop=stop))
        except OSError as exc:
            out.append((p, exc.strerror or str(exc)))
    return out


def _scan_all(paths: list[str], parallel: bool = True) -> list:
    """Scans in `paths` order; the second half by size in a forked worker when the corpus is large
    (a file larger than half the corpus is cut at a line boundary; two cores read twice as fast;
    a failed worker only costs time: its half is read here)."""
    sizes = []
    for p in paths:
        try:
            sizes.append(os.stat(p).st_size)
        except OSError:
            sizes.append(0)
    total = sum(sizes)
    whole: list[tuple[str, int, int | None]] = [(p, 0, None) for p in paths]
    if not parallel or total < PARALLEL_MIN_BYTES:
        return _scan_many(whole)
    from ...read.fanout import Worker, can_fork

    if not can_fork():
        return _scan_many(whole)
    parts: list[tuple[str, int, int | None]] = []
    psizes: list[int] = []
    owner: list[int] = []
    for i, (p, n) in enumerate(zip(paths, sizes)):
        cut = C.split_point(p, n) if n * 2 >= total else None
        if cut is not None and 0 < cut < n:
            parts += [(p, 0, cut), (p, cut, None)]
            psizes += [cut, n - cut]
            owner += [i, i]
        else:
            parts.append((p, 0, None))
            psizes.append(n)
            owner.append(i)
    if len(parts) < 2:
        return _scan_many(whole)
    cut, acc = 0, 0
    while cut < len(parts) - 1 and acc + psizes[cut] <= total // 2:
        acc += psizes[cut]
        cut += 1
    cut = max(cut, 1)
    worker = Worker(lambda: _scan_many(parts[cut:]))
    try:
        head = _scan_many(parts[:cut])
        tail = worker.result()
    finally:
        worker.close()
    scans = head + (tail if tail is not None else _scan_many(parts[cut:]))
    out: list = [None] * len(paths)
    for i, sc in zip(owner, scans):
        prev = out[i]
        if prev is None or isinstance(prev, tuple):
            out[i] = prev if isinstance(prev, tuple) else sc
        elif isinstance(sc, tuple):
            out[i] = sc
        else:
            out[i] = C.merge_scans(prev, sc)
    return out


def _originals_first(scope) -> list:
    """The scope's sessions with every fork after the session it was forked from (lineage.py), so a
    response a fork copied is attributed to the original, as `stats` counts it (the copies of one
    response are equal: the first read keeps it, events.py); otherwise in scope order."""
    sessions = list(scope.sessions)
    if len(sessions) < 2:
        return sessions
    from .model.lineage import forks_in_scope

    forks = forks_in_scope(scope)
    if not forks:
        return sessions
    depth: dict[str, int] = {}

    def d(sid: str, seen: int = 0) -> int:
        if sid not in forks or seen > len(forks):
            return 0
        if sid not in depth:
            depth[sid] = 1 + d(forks[sid].parent_session_id, seen + 1)
        return depth[sid]

    return sorted(sessions, key=lambda s: d(s.session_id))  # stable: scope order within a depth


def scans(scope, subagents: bool = True, parallel: bool = True) -> list:
    """``((session, path, kind, lane name), scan)`` for every transcript of `scope` (an explicit lane
    alone where the scope names one), forks after the session they copy; ``scan`` a
    :class:`usage.FileScan`, or ``(path, why)`` when the file could not be read."""
    jobs: list[tuple[object, str, str, str]] = []
    for s in _originals_first(scope):
        if s.session_id in scope.explicit_lanes:
            ln = scope.explicit_lanes[s.session_id]
            jobs.append((s, str(ln.path), ln.kind, "main" if ln.kind == "main" else (ln.agent_id or ln.lane_id)))
        else:
            jobs += [(s, p, k, n) for p, k, n in transcripts(s, subagents)]
    from .cache.usagecache import scans as cached_scans

    home = getattr(scope.home, "path", None)
    got = cached_scans([j[1] for j in jobs], home if home is not None and os.fspath(home) != "-" else None,
                       getattr(scope, "index_off", None), lambda ps: _scan_all(ps, parallel))
    return list(zip(jobs, got))


class Follower:
    """Claude Code's ``usage_follower``: what `usage blocks --live` (usage/live.py) reads with."""

    @staticmethod
    def sessions(targets: tuple[str, ...], home):
        """The Scope of `targets` (none: every session) under the data root `home` (a HomeChoice)."""
        from .discover import resolve_targets

        return resolve_targets(list(targets), choice=home)

    @staticmethod
    def transcripts(s, subagents: bool) -> list[tuple[str, str, str]]:
        return transcripts(s, subagents)

    @staticmethod
    def scan(path: str, start: int = 0):
        return C.scan_file(path, start)
