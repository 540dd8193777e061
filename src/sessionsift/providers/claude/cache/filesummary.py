"""One file per Claude Code data root with what `files` and `recover` read of every transcript, so
a warm answer over a store of thousands of transcripts reads one index file and a stat per
transcript, not one index file each (the census has the same: providers/claude/cache/summary.py).

Two sections, keyed by the transcript's absolute path:

- ``lanes``: the identity of the transcript the entry was taken from (device, inode, size, mtime,
  ctime - the entry is used only while a stat of the transcript gives exactly these, and the
  per-transcript index it came from covered the whole file), the head facts lineage reads (first
  uuid, first timestamp: providers/claude/model/lineage.py `read_head`, taken when the entry is written) so fork
  detection reads no transcript head, the reading's counts (the ``fev`` section's ``read``) and
  the file-event facts (providers/claude/files/facts.py: every call's, attachment's and backup's own small facts,
  kept with the digest of the rules that derived them), so a warm `files` reads no record;
- ``fev``: a copy of the per-transcript index's ``fev`` section (providers/claude/cache/fileslots.py: where the
  records that carry file events are), each marshalled on its own with the identity it belongs
  to, unmarshalled only for the transcripts whose records `recover` reads (or whose facts are to
  be derived).

Whatever does not match is read from the per-transcript index instead, then written back here.
"""

from __future__ import annotations

import os

from ....index import store

KIND = "claude-root-files"
LEGACY_KINDS = ("claude-root-fev",)
"""Kinds earlier versions wrote this summary under (`index clear` removes them too)."""


def _ident(st: os.stat_result) -> list:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


class FilesSummary:
    def __init__(self, home: str):
        self.home = os.path.abspath(home)
        self.dest = store.index_path(KIND, self.home)
        self.lanes: dict[str, list] = {}
        """path -> [identity, head, read, facts or None] (facts: [rules, facts])."""
        self.fevs: dict[str, list] | None = {}
        """path -> [identity, marshalled fev]; None until first needed (read from `_file`)."""
        self._file: store.IndexFile | None = None
        self.dirty = False
        self.heads: dict[str, tuple] = {}
        """Transcript path as given -> its head facts, for each entry used or written in this run
        (providers/claude/model/lineage.py `known_heads`)."""

    @classmethod
    def load(cls, home) -> "FilesSummary":
        s = cls(os.fspath(home))
        f = store.IndexFile.open(s.dest, KIND, s.home)
        if f is None:
            return s
        o = f.section("lanes")
        if isinstance(o, dict):
            s.lanes = o
            s._file, s.fevs = f, None
        return s

    def _fevs(self) -> dict[str, list]:
        if self.fevs is None:
            o = self._file.section("fev") if self._file is not None else None
            self.fevs = o if isinstance(o, dict) else {}
        return self.fevs

    def get(self, path: str, st: os.stat_result, given: str | None = None) -> list | None:
        """The entry of the transcript at absolute `path` while `st` matches it (`given`: the path
        as the caller names it, under which its head is remembered)."""
        e = self.lanes.get(path)
        if e is None or e[0] != _ident(st):
            return None
        if given is not None:
            self.heads[given] = tuple(e[1])
        return e

    def read(self, path: str) -> list | None:
        """The reading's counts of a transcript `get` answered for."""
        return self.lanes[path][2]

    def facts(self, path: str, rules: str):
        """The file-event facts (providers/claude/files/facts.py) kept for the transcript at `path` under `rules`
        (call only after `get` answered for it: the entry is the file's), or None."""
        f = self.lanes[path][3]
        if not (isinstance(f, list) and len(f) == 2 and f[0] == rules):
            return None
        return f[1]

    def fev(self, path: str) -> dict | None:
        """The ``fev`` section of a transcript `get` answered for, or None."""
        import marshal

        x = self._fevs().get(path)
        if x is None or x[0] != self.lanes[path][0]:
            return None
        try:
            o = marshal.loads(x[1])
        except (EOFError, ValueError, TypeError):
            return None
        return o if isinstance(o, dict) else None

    def put(self, path: str, ident: "store.Identity", fev: dict, given: str | None = None) -> None:
        """Record a lane's section under the identity of the index it came from (only an index
        that covers the whole file), with the transcript's head facts read now (the caller has
        just judged the index fresh: the file is the one it covers)."""
        if ident.end != ident.size:
            return
        import marshal

        from ..model.lineage import read_head

        head = read_head(path)
        key = [ident.dev, ident.ino, ident.size, ident.mtime_ns, ident.ctime_ns]
        self.lanes[path] = [key, list(head), fev.get("read"), None]
        self._fevs()[path] = [key, marshal.dumps(fev)]
        if given is not None:
            self.heads[given] = head
        self.dirty = True

    def put_facts(self, path: str, ident: "store.Identity", rules: str, facts) -> None:
        """Keep a transcript's facts with its entry (while the entry is for the index `ident`,
        which the facts were read with)."""
        e = self.lanes.get(path)
        if e is None or e[0] != [ident.dev, ident.ino, ident.size, ident.mtime_ns, ident.ctime_ns]:
            return
        e[3] = [rules, facts]
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            fevs = self._fevs()
            st = os.stat(self.home)
            store.write(self.dest, KIND, self.home, store.identity_of(st, 0, ()),
                        {"lanes": self.lanes, "fev": {p: fevs[p] for p in self.lanes if p in fevs}})
        except (OSError, ValueError):
            pass  # an unwritable cache costs speed next time, never a result
        self.dirty = False
