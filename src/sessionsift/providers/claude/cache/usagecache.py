"""One small file per Claude Code data root with the usage scan of each of its transcripts
(providers/claude/usage.py ``FileScan``: every assistant record's usage, the counts the tally
reports), so a warm `usage` reads one index file instead of every transcript.

Per transcript (keyed by the path the scan was given): the identity of the file it was read
from (device, inode, size, mtime, ctime) and the scan's fields. An entry is used only while a
stat of the transcript gives exactly that identity; it is written only for a scan that covered the
whole file (no torn final line, the size the stat gave): anything else is scanned again, as with
the index off. Everything here is what ``scan_file`` returned for those bytes, so the answer is
the scan's (tests/test_usage_cache.py holds them equal).
"""

from __future__ import annotations

import os

from ....index import store

KIND = "claude-usage"
VERSION = 1


def _ident(st: os.stat_result) -> list:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _fs_obj(fs) -> list:
    c = fs.client
    return [fs.size, fs.end, fs.candidates, fs.records, fs.assistant_without_usage, fs.no_usage_ts, fs.echoes,
            fs.malformed, fs.odd_values, fs.no_timestamp, fs.from_iterations, fs.cwd,
            None if c is None else [c.cost_usd, c.by_model, c.path, c.offset, c.source], fs.torn_tail_bytes]


def _fs_from(path: str, o: list):
    from ..usage import ClientRecorded, FileScan

    fs = FileScan(path)
    (fs.size, fs.end, fs.candidates, recs, fs.assistant_without_usage, nts, fs.echoes, fs.malformed, fs.odd_values,
     fs.no_timestamp, fs.from_iterations, fs.cwd, c, fs.torn_tail_bytes) = o
    fs.records = list(recs)
    fs.no_usage_ts = list(nts)
    fs.client = None if c is None else ClientRecorded(c[0], c[1], c[2], c[3], c[4])
    return fs


class UsageCache:
    def __init__(self, home: str):
        self.home = os.path.abspath(home)
        self.dest = store.index_path(KIND, self.home)
        self.lanes: dict[str, list] = {}
        self.dirty = False

    @classmethod
    def load(cls, home) -> "UsageCache":
        s = cls(os.fspath(home))
        f = store.IndexFile.open(s.dest, KIND, s.home)
        if f is None:
            return s
        o = f.section("usage")
        if isinstance(o, dict) and o.get("version") == VERSION and isinstance(o.get("lanes"), dict):
            s.lanes = o["lanes"]
        return s

    def get(self, path: str, st: os.stat_result):
        """The scan of `path` as it is (`st`), or None."""
        e = self.lanes.get(path)
        if e is None or e[0] != _ident(st):
            return None
        try:
            return _fs_from(path, e[1])
        except (TypeError, ValueError, IndexError):
            return None

    def put(self, fs, st: os.stat_result) -> None:
        """Keep `fs`, the scan of a file whose stat before it was `st`, when it read the whole file."""
        if fs.torn_tail_bytes or fs.end != fs.size or fs.size != st.st_size:
            self.lanes.pop(fs.path, None)
            return
        self.lanes[fs.path] = [_ident(st), _fs_obj(fs)]
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            st = os.stat(self.home)
            store.write(self.dest, KIND, self.home, store.identity_of(st, 0, ()),
                        {"usage": {"version": VERSION, "lanes": self.lanes}})
        except (OSError, ValueError):
            pass
        self.dirty = False


def scans(paths: list[str], home, index_off, scan_all):
    """`scan_all(paths)`'s answer (usage/collect.py: a FileScan, or (path, why) per path, in
    order), each transcript unchanged since its last scan taken from the cache, the others
    scanned by `scan_all` and kept. With the index off (or its directory inside the data root)
    every path is scanned."""
    from ....index import config

    if config.why_off(index_off) is not None or home is None or not store.usable_for(home):
        return scan_all(paths)
    try:
        cache = UsageCache.load(home)
    except Exception:  # noqa: BLE001 - an unreadable cache only costs a scan
        return scan_all(paths)
    out: list = [None] * len(paths)
    todo: list[int] = []
    stats: dict[int, os.stat_result] = {}
    for i, p in enumerate(paths):
        try:
            st = os.stat(p)
        except OSError:
            todo.append(i)
            continue
        fs = cache.get(p, st)
        if fs is None:
            stats[i] = st
            todo.append(i)
        else:
            out[i] = fs
    if todo:
        got = scan_all([paths[i] for i in todo])
        for i, fs in zip(todo, got):
            out[i] = fs
            if not isinstance(fs, tuple) and i in stats:
                cache.put(fs, stats[i])
        cache.save()
    return out
