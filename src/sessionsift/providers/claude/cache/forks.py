"""Whole lineage answers: the forks `model.lineage.find_forks` found among a set of sessions, kept
in one small index file per data root, so the next question over the same unchanged transcripts
reads no head, root or uuid sequence of any of them (a warm `stats` over 4,766 small transcripts
spent 0.7 of its 2.6 s finding families again: every candidate parent's roots read from its own
index file).

**Key and freshness.** A BLAKE2b digest of the code that decides (lineage.py and this module, as
bytes: a changed rule never reads an older answer), then of every session given, in path order:
its id, its transcript's path and (device, inode, size, mtime, ctime) from one stat each. A
transcript that grew, was truncated, rewritten, replaced or removed, or a session added or taken
away, changes the digest, and the families are found again (and kept anew). ctime cannot be set
back by user space: a stat equal in all five fields means nothing was written (index/store.py
`judge`). A session whose transcript cannot be stat'ed means no digest: nothing is read or kept.

**What is kept.** Each fork's fields (`Fork`), at most KEEP answers per root (the most recent):
`stats` over a store, a list of one project, a search's project dirs each ask their own set.
Off with the index (`--no-index`, SESSIONSIFT_NO_INDEX, an index dir under the data root).
"""

from __future__ import annotations

import os
from array import array
from pathlib import Path

from ....index import store

KIND = "claude-forks"
SCHEMA = 1
KEEP = 8

_CODE: list[bytes] = []


def _code() -> bytes:
    if not _CODE:
        h = store.blake2b(digest_size=16)
        h.update(SCHEMA.to_bytes(4, "little"))
        for p in (Path(__file__).resolve().parent.parent / "model" / "lineage.py", Path(__file__).resolve()):
            h.update(p.read_bytes())
        _CODE.append(h.digest())
    return _CODE[0]


def digest(sessions) -> tuple[str, bytes] | None:
    """(the data root the answer is kept under, the digest of the sessions' transcripts), or None
    when a transcript cannot be stat'ed (then nothing is kept or read)."""
    rows = sorted((os.fspath(s.path), str(s.session_id)) for s in sessions)
    if not rows:
        return None
    ints = array("q")
    for p, _sid in rows:
        try:
            st = os.stat(p)
        except (OSError, ValueError):
            return None
        ints.extend((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    h = store.blake2b(digest_size=16)
    h.update(_code())
    h.update(len(rows).to_bytes(8, "little"))
    h.update("\0".join(f"{p}\0{sid}" for p, sid in rows).encode("utf-8", "surrogateescape"))
    h.update(b"\1")
    h.update(ints.tobytes())
    # the data root holding the first transcript (ROOT/projects/<dir>/<id>.jsonl): one file per
    # data root, beside its other summaries (`index clear` removes it with them); an answer over
    # several roots is kept there too, its digest naming every path
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(rows[0][0]))))
    return root, h.digest()


def get(root: str, dig: bytes) -> list | None:
    """The kept forks (each a tuple of Fork's fields) for `dig`, or None."""
    f = store.IndexFile.open(store.index_path(KIND, root), KIND, root)
    o = f.section("forks") if f is not None else None
    if not isinstance(o, dict):
        return None
    e = o.get(dig)
    return e if isinstance(e, list) else None


def put(root: str, dig: bytes, forks: list) -> None:
    dest = store.index_path(KIND, root)
    f = store.IndexFile.open(dest, KIND, root)
    o = f.section("forks") if f is not None else None
    items = dict(o) if isinstance(o, dict) else {}
    items.pop(dig, None)
    items[dig] = forks
    while len(items) > KEEP:
        del items[next(iter(items))]
    try:
        st = os.stat(root)
        store.write(dest, KIND, root, store.identity_of(st, 0, ()), {"forks": items})
    except (OSError, ValueError):
        pass  # an unwritable cache costs speed next time, never a result
