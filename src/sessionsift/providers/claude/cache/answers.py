"""Whole census answers per Claude Code data root: the answer of a census query (`search ''
--count`, `--count-by ...`) over a whole scope, kept in one small index file beside the root
summary (summary.py), so the next identical census costs discovery, a stat per transcript and
one small read - no per-transcript entry is decoded, no per-lane view or outcome is built.

**Key.** The query, exactly (its dataclass repr: patterns, selections, flags, count_by, window),
with what else the answer depends on: the sessionsift and index versions, the local time zone
(`--count-by day` buckets by the local date) and the CPU count (the summary's `workers`).

**Freshness.** A BLAKE2b digest of the scope's transcripts in order - each one's path and its
(device, inode, size, mtime, ctime) from one stat, the same stat the census itself used - and of
the scope's sessions. A transcript that grew, was truncated, rewritten (mtime/ctime), replaced
(inode) or removed, or one added to the scope, changes the digest; the answer is then not used
and the census is answered per transcript again (and kept anew). ctime cannot be set back by
user space, so a stat equal in all five fields means nothing was written (store.py `judge`).

**What is kept.** An answer is kept only from a run in which every transcript was answered from
a fresh index (the root summary or its own index file, `from_index == "index"`): no transcript
scanned, updated, indexed or unreadable - those are answered live (a fork is answered from its
index without its copies, and kept like any other). A run read by several workers keeps how many
(`workers`), and its replay says the same.
What it keeps is what that run's transcripts contributed to the summary and the merged counts;
everything the scope says (sessions, discovery problems) and the plan says (prefilter, left-out
kinds) is recomputed live. At most KEEP answers per root (the most recent).
"""

from __future__ import annotations

import os
import time
from array import array

from ....index import store

KIND = "claude-answers"
SCHEMA = 1
KEEP = 16

LIVE = ("sessions", "unreadable", "prefilter", "left_out", "left_out_note")
"""Summary fields (search/types.py Summary) the scope and the plan make, recomputed on a replay;
every other field is what the transcripts' outcomes made, kept and replayed (an answer kept
without one of them - a field added since - is not used)."""


def kept_fields(summary) -> list[str]:
    return [k for k in vars(summary) if k not in LIVE]


def key(query) -> str:
    from .... import __version__

    return repr((SCHEMA, store.VERSION, __version__, time.timezone, time.altzone, time.tzname,
                 os.environ.get("TZ"), os.cpu_count(), query))


def digest(lanes, stats, sessions) -> bytes | None:
    """The scope's freshness digest, or None when a transcript could not be stat'ed."""
    ints = array("q")
    paths = []
    for ln, st in zip(lanes, stats):
        if st is None:
            return None
        paths.append(os.fspath(ln.path))
        ints.extend((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    h = store.blake2b(digest_size=16)
    h.update(len(paths).to_bytes(8, "little"))
    h.update("\0".join(paths).encode("utf-8", "surrogateescape"))
    h.update(b"\1")
    h.update(ints.tobytes())
    h.update(b"\1")
    h.update("\0".join(f"{s.session_id}\0{os.fspath(s.path)}" for s in sessions).encode("utf-8", "surrogateescape"))
    return h.digest()


class Answers:
    def __init__(self, home: str):
        self.home = os.path.abspath(home)
        self.dest = store.index_path(KIND, self.home)
        self.items: dict[str, list] = {}

    @classmethod
    def load(cls, home) -> "Answers":
        a = cls(os.fspath(home))
        f = store.IndexFile.open(a.dest, KIND, a.home)
        o = f.section("answers") if f is not None else None
        if isinstance(o, dict):
            a.items = o
        return a

    def get(self, k: str, dig: bytes) -> dict | None:
        e = self.items.get(k)
        if not isinstance(e, list) or len(e) != 2 or e[0] != dig or not isinstance(e[1], dict):
            return None
        return e[1]

    def answer(self, k: str, dig: bytes, summary) -> dict | None:
        """The kept answer for `k` over the scope `dig`, when it holds every field `summary` has."""
        got = self.get(k, dig)
        if got is None or "counts" not in got or any(f not in got for f in kept_fields(summary)):
            return None
        return got

    def put(self, k: str, dig: bytes, answer: dict) -> None:
        self.items.pop(k, None)
        self.items[k] = [dig, answer]
        while len(self.items) > KEEP:
            del self.items[next(iter(self.items))]
        try:
            st = os.stat(self.home)
            store.write(self.dest, KIND, self.home, store.identity_of(st, 0, ()), {"answers": self.items})
        except (OSError, ValueError):
            pass
