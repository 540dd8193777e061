"""One small file per Claude Code data root with what a census needs of each of its transcripts,
so a census over a store of thousands of transcripts reads one index file, not thousands.

Per transcript (keyed by its path): the identity of the per-transcript index it was taken from
(device, inode, size, mtime, ctime: the entry is used only while a stat of the transcript gives
exactly these, and the index covered the whole file), its line count, the census pairs
(kind, draft?, count) with kinds interned in one table for the whole root, the unknown-type lines
by label needle, whether a parent has two user.message children, and the head facts lineage
reads (first uuid, first timestamp). Everything here is a copy of a per-transcript index's
``final`` section (lanes.py): it answers exactly what that index answers (providers/claude/cache/search.py), and
whatever does not match is read from the per-transcript index instead, then written back here.
"""

from __future__ import annotations

import os
from array import array

from ....index import store
from . import codec

KIND = "claude-root"


def _ident(st: os.stat_result) -> list:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


class RootSummary:
    def __init__(self, home: str):
        self.home = os.path.abspath(home)
        self.dest = store.index_path(KIND, self.home)
        self.keys: list[tuple] = []
        self.kid: dict[tuple, int] = {}
        self.lanes: dict[str, list] = {}
        self.dirty = False

    @classmethod
    def load(cls, home) -> "RootSummary":
        s = cls(os.fspath(home))
        f = store.IndexFile.open(s.dest, KIND, s.home)
        if f is None:
            return s
        o = f.section("lanes")
        if not isinstance(o, dict):
            return s
        try:
            s.keys = [codec._combo_from(k) for k in o["keys"]]
            s.kid = {k: i for i, k in enumerate(s.keys)}
            s.lanes = o["lanes"]
        except (KeyError, TypeError, IndexError):
            s.__init__(s.home)
        return s

    def get(self, path: str, st: os.stat_result) -> list | None:
        e = self.lanes.get(path)
        if e is None or e[0] != _ident(st):
            return None
        return e

    def put(self, path: str, v) -> None:
        """Record the census of a lane's index view (providers/claude/cache/search.py View; it covers the whole
        file and has no damaged line) under the identity of that index."""
        i = v.ident
        if i.end != i.size:
            return
        pairs = array("I")
        for kid, draft, n in v.pairs:
            key = v.keys[kid]
            k = self.kid.get(key)
            if k is None:
                k = self.kid[key] = len(self.keys)
                self.keys.append(key)
            pairs.extend((k, 1 if draft else 0, n))
        self.lanes[path] = [[i.dev, i.ino, i.size, i.mtime_ns, i.ctime_ns], v.read[2], bool(v.umsg_multi), pairs.tobytes(),
                            [list(u) for u in v.unknown], list(v.head or (None, None))]
        self.dirty = True

    def prune(self, keep: set[str]) -> None:
        """Forget transcripts no longer under the root."""
        gone = [p for p in self.lanes if p not in keep and os.path.dirname(os.path.dirname(p)).startswith(
            os.path.join(self.home, "projects"))]
        for p in gone:
            del self.lanes[p]
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        st = os.stat(self.home)
        ident = store.identity_of(st, 0, ())
        try:
            store.write(self.dest, KIND, self.home, ident,
                        {"lanes": {"keys": [codec._combo_obj(k) for k in self.keys], "lanes": self.lanes}})
        except (OSError, ValueError):
            pass
        self.dirty = False


def entry_view(e: list, keys: list, lane, how: str = "index"):
    """An providers/claude/cache/search.py View from a summary entry (census queries that read no column)."""
    from .search import View

    pairs = array("I")
    pairs.frombytes(e[3])
    ps = [(pairs[i], bool(pairs[i + 1]), pairs[i + 2]) for i in range(0, len(pairs), 3)]
    read = [0, 0, e[1], 0, 0, [], 0, 0, 0, 0, []]
    ident = store.Identity(e[0][2], e[0][2], e[0][0], e[0][1], e[0][3], e[0][4], ())
    v = View(lane, ident, ps, [tuple(u) for u in e[4]], e[2], set(), b"", read, how=how)
    v.keys = keys
    v.head = tuple(e[5]) if len(e) > 5 else None
    return v
