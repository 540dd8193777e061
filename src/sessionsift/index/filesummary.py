"""One file per Claude Code data root with every transcript's ``fev`` section (index/fileslots.py),
so a warm `files` or `recover` over a store of thousands of transcripts reads one index file and
a stat per transcript, not one index file each (the census has the same: index/summary.py).

Per transcript (keyed by its absolute path): the identity of the per-transcript index the section
was taken from (device, inode, size, mtime, ctime - the entry is used only while a stat of the
transcript gives exactly these, and that index covered the whole file) and the section itself,
a copy of the per-transcript index's. Whatever does not match is read from the per-transcript
index instead, then written back here.
"""

from __future__ import annotations

import os

from . import store

KIND = "claude-root-fev"


def _ident(st: os.stat_result) -> list:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


class FilesSummary:
    def __init__(self, home: str):
        self.home = os.path.abspath(home)
        self.dest = store.index_path(KIND, self.home)
        self.lanes: dict[str, list] = {}
        self.dirty = False

    @classmethod
    def load(cls, home) -> "FilesSummary":
        s = cls(os.fspath(home))
        f = store.IndexFile.open(s.dest, KIND, s.home)
        if f is None:
            return s
        o = f.section("lanes")
        if isinstance(o, dict):
            s.lanes = o
        return s

    def get(self, path: str, st: os.stat_result) -> dict | None:
        e = self.lanes.get(path)
        if e is None or e[0] != _ident(st):
            return None
        return e[1]

    def put(self, path: str, ident: "store.Identity", fev: dict) -> None:
        """Record a lane's section under the identity of the index it came from (only an index
        that covers the whole file)."""
        if ident.end != ident.size:
            return
        self.lanes[path] = [[ident.dev, ident.ino, ident.size, ident.mtime_ns, ident.ctime_ns], fev]
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            st = os.stat(self.home)
            store.write(self.dest, KIND, self.home, store.identity_of(st, 0, ()), {"lanes": self.lanes})
        except (OSError, ValueError):
            pass  # an unwritable cache costs speed next time, never a result
        self.dirty = False
