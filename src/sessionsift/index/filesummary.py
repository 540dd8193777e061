"""One file per Claude Code data root with every transcript's ``fev`` section (index/fileslots.py),
so a warm `files` or `recover` over a store of thousands of transcripts reads one index file and
a stat per transcript, not one index file each (the census has the same: index/summary.py).

Per transcript (keyed by its absolute path): the identity of the per-transcript index the section
was taken from (device, inode, size, mtime, ctime - the entry is used only while a stat of the
transcript gives exactly these, and that index covered the whole file), the section itself, a
copy of the per-transcript index's, and the head facts lineage reads (first uuid, first
timestamp: model/lineage.py `_read_head`, taken when the entry is written) so fork detection
reads no transcript head either. Whatever does not match is read from the per-transcript
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
        self.heads: dict[str, tuple] = {}
        """Transcript path as given -> its head facts, for each entry used or written in this run
        (model/lineage.py `known_heads`)."""

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

    def get(self, path: str, st: os.stat_result, given: str | None = None) -> dict | None:
        """The section of the transcript at absolute `path` while `st` matches its entry
        (`given`: the path as the caller names it, under which its head is remembered)."""
        e = self.lanes.get(path)
        if e is None or e[0] != _ident(st):
            return None
        if len(e) < 3 or not (isinstance(e[2], list) and len(e[2]) == 2):
            from ..model.lineage import _read_head

            e[2:] = [list(_read_head(path))]  # an entry written without it: the file is the same
            self.dirty = True
        if given is not None:
            self.heads[given] = tuple(e[2])
        return e[1]

    def put(self, path: str, ident: "store.Identity", fev: dict, given: str | None = None) -> None:
        """Record a lane's section under the identity of the index it came from (only an index
        that covers the whole file), with the transcript's head facts read now (the caller has
        just judged the index fresh: the file is the one it covers)."""
        if ident.end != ident.size:
            return
        from ..model.lineage import _read_head

        head = _read_head(path)
        self.lanes[path] = [[ident.dev, ident.ino, ident.size, ident.mtime_ns, ident.ctime_ns], fev, list(head)]
        if given is not None:
            self.heads[given] = head
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
