"""Lineage: which session was forked from which, and which of its records are copies.

`claude --resume <id> --fork-session` (2.1.258) writes a NEW session file that starts with copies
of the parent's records - the same `uuid`, `parentUuid`, `timestamp`, `message`; only `sessionId`
(and a prompt's `promptId`) differ - and then the fork's own records. No record names the parent
(measured: tests/realclient/scenarios_robust.py `robust_fork`). So a fork is recognised by its
records: two sessions whose first root record (no parentUuid) has the same uuid are one family, whichever
project directory holds them (a fork run from another directory is written under that one's), and
so is a session whose first record is a later root of a sibling's in its project directory (a fork
of a session rewound to before its first prompt, `_join_rerooted`); the member whose first
timestamped line is the earliest is the original, and each
later member was forked from the earlier member it shares the longest uuid prefix with, at the
last record of that prefix. A fork's copies are its records whose uuid the parent holds.

Counting each original record once: when the parent is in an answer's scope, the fork's copies
are left out of the censuses and file touches (and shown as copies where rows are listed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable

from ....read.lines import parse_line

HEAD_LINES = 256
"""How far into a transcript its first uuid-bearing record is looked for."""


@dataclass
class Fork:
    session_id: str
    path: str
    parent_session_id: str
    parent_path: str
    at_line: int | None
    """The parent's line of the last record copied (where the fork branched off)."""
    at_uuid: str | None
    copied_lines: dict[int, int] = field(default_factory=dict)
    """Fork line -> the parent's line of the record it copies."""
    copied_offsets: frozenset[int] = frozenset()

    @property
    def copied_records(self) -> int:
        return len(self.copied_lines)

    def as_json(self) -> dict:
        return {"session_id": self.parent_session_id, "path": self.parent_path, "line": self.at_line,
                "uuid": self.at_uuid, "copied_records": self.copied_records}


_KNOWN_HEADS: dict[str, tuple] = {}


class known_heads:
    """`with known_heads({path: (first uuid, first timestamp)}):` - heads already known (from an
    index whose identity still matches the file) are not read again."""

    def __init__(self, heads: dict[str, tuple]):
        self.heads = heads

    def __enter__(self):
        _KNOWN_HEADS.update(self.heads)

    def __exit__(self, *exc):
        for k in self.heads:
            _KNOWN_HEADS.pop(k, None)


_READ: dict[tuple, tuple[tuple, object]] = {}
"""(what, path, argument) -> (the file's stat identity when it was read, the answer): what the
family search read of a transcript, kept for as long as the file's identity (device, inode, size,
mtime_ns) stays (a long-lived process lists again after every change: only changed files are read
again). Bounded: cleared past _READ_MAX entries."""
_READ_MAX = 200_000


def _remembered(what: str, path, arg, read):
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return read()
    ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    k = (what, os.fspath(path), arg)
    got = _READ.get(k)
    if got is not None and got[0] == ident:
        return got[1]
    v = read()  # the identity taken before the read: a write during it is read again next time
    if len(_READ) >= _READ_MAX:
        _READ.clear()
    _READ[k] = (ident, v)
    return v


def _head(path) -> tuple[str | None, str | None]:
    h = _KNOWN_HEADS.get(os.fspath(path)) if _KNOWN_HEADS else None
    if h is not None:
        return h
    return _remembered("head", path, None, lambda: read_head(path))


def read_head(path) -> tuple[str | None, str | None]:
    """(first root's uuid, first timestamp) of a transcript's head; (None, None) when unreadable.
    The family key is the uuid of the first record with no parent (the chain's root), not of the
    first line: the client can flush a turn's reply before its prompt (measured: 2.1.258's
    `robust_rewind_fork`, one run in three, wrote the assistant record, parent the prompt's last
    attachment, two lines before the prompt), while a fork copies the chain from its root; where
    no root is in the head, the first uuid-bearing record's uuid. Reads
    the head in growing windows (not the whole file): the lines looked at are those `iter_lines`
    yields first, at most HEAD_LINES of them."""
    first_uuid = first_ts = root_uuid = any_uuid = None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None, None
    try:
        size = os.fstat(fd).st_size
        data = b""
        want = 4 << 10
        n = 0
        pos = 0  # start of the first line not looked at yet
        while True:
            if len(data) < size:
                data += os.pread(fd, min(want, size) - len(data), len(data))
            at_end = len(data) >= size
            while n < HEAD_LINES and not (first_uuid and first_ts):
                nl = data.find(b"\n", pos)
                if nl < 0:
                    if not at_end:
                        break
                    raw = data[pos:]
                    if not raw or not _complete(raw):
                        return first_uuid or any_uuid, first_ts
                    nl = len(data)
                else:
                    raw = data[pos:nl]
                pos = nl + 1
                n += 1
                o = parse_line(raw)
                if not o:
                    continue
                if first_ts is None and isinstance(o.get("timestamp"), str):
                    first_ts = o["timestamp"]
                if root_uuid is None and isinstance(o.get("uuid"), str) and o["uuid"]:
                    if any_uuid is None:
                        any_uuid = o["uuid"]
                    if not o.get("parentUuid"):
                        root_uuid = first_uuid = o["uuid"]
            if n >= HEAD_LINES or (first_uuid and first_ts) or at_end:
                return first_uuid or any_uuid, first_ts
            want *= 4
    except OSError:
        return None, None
    finally:
        os.close(fd)


def _complete(frag: bytes) -> bool:
    from ....read.lines import is_complete

    return is_complete(frag)


_UUID_ONLY = None


def _uuid_decoder():
    """A msgspec decoder of a record's top-level `uuid` alone (every other field skipped, not
    built: a full parse of each line was 0.63 of a cold census's 1.05 s over a store of forks)."""
    global _UUID_ONLY
    if _UUID_ONLY is None:
        import msgspec

        class _Uuid(msgspec.Struct):
            uuid: Any = None

        _UUID_ONLY = (msgspec.json.Decoder(_Uuid), (msgspec.DecodeError, msgspec.ValidationError))
    return _UUID_ONLY


def _uuids(path) -> list[tuple[str, int, int]]:
    """(uuid, line, offset) of every uuid-bearing record, in file order. The lines holding
    `"uuid"` are found in the file's bytes (read/needles.candidate_spans: stringzilla), numbered by
    counting the newlines between them, and each one's top-level uuid decoded alone; a line the
    uuid-only decoder cannot read (not an object, NULs, not JSON as it stands) is parsed by the
    reading rules (read/lines.parse_line), as every line was: its answer is that parse's. Where the
    decoder reads a line, the full parse gives the same top-level `uuid` (the last of duplicated
    keys, like orjson; bytes that are not UTF-8 elsewhere in the line are what parse_line replaces).
    A final line with no newline counts only when it is complete JSON (read/lines.iter_lines)."""
    import stringzilla as sz

    from ....read.lines import keep_tail, open_scan
    from ....read.needles import candidate_spans

    dec, errs = _uuid_decoder()
    decode = dec.decode
    out: list[tuple[str, int, int]] = []
    try:
        with open_scan(path) as m:
            buf = m.buf
            size = len(buf)
            mv = buf if isinstance(buf, bytes) else memoryview(buf)
            try:
                no, at = 1, 0
                for a, b in candidate_spans(buf, ['"uuid"'], False):
                    no += sz.count(mv, b"\n", at, a)
                    at = a
                    raw = bytes(mv[a:b])
                    if b == size and not keep_tail(raw, None, True):
                        break  # a torn final line (a write in progress): not a record yet
                    try:
                        u = decode(raw).uuid
                    except errs:
                        o = parse_line(raw)
                        u = o.get("uuid") if isinstance(o, dict) else None
                    if isinstance(u, str) and u:
                        out.append((u, no, a))
            finally:
                if isinstance(mv, memoryview):
                    mv.release()  # the mapping can close
    except OSError:
        return []
    return out


def _seq(s, build: bool, index_off: str | None) -> list[tuple[str, int, int]]:
    """`_uuids` of session `s`'s transcript, from its index where the index answers (no line
    parsed: a store of resumed and forked sessions had every family member parsed on every
    run), else read from the file. `build`: a transcript with no usable index is indexed first."""
    from ..cache import lanes as IL

    got = IL.uuid_seq(s.path, getattr(s, "index_off", None) or index_off, build)
    return got if got is not None else _uuids(s.path)


def _record_ts(path, uuid: str) -> str | None:
    """The `timestamp` of the record carrying `uuid` among the head's lines (HEAD_LINES), read in
    growing windows like `read_head` (a head, never the whole file)."""
    needle = b'"uuid":"' + uuid.encode() + b'"'
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        want = 16 << 10
        while True:
            data = os.pread(fd, min(want, size), 0)
            i = data.find(needle)
            if i >= 0:
                a = data.rfind(b"\n", 0, i) + 1
                b = data.find(b"\n", i)
                if b >= 0 or len(data) >= size:
                    o = parse_line(data[a:b if b >= 0 else len(data)])
                    ts = o.get("timestamp") if o and o.get("uuid") == uuid else None
                    return ts if isinstance(ts, str) else None
            if len(data) >= size or data.count(b"\n") >= HEAD_LINES:
                return None
            want *= 4
    except OSError:
        return None
    finally:
        os.close(fd)


def _epoch(ts: str) -> float | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(ts[:-1] + "+00:00" if ts.endswith("Z") else ts).timestamp()
    except ValueError:
        return None


_WINDOW = 16 << 20
"""roots_of searches a mapping this many bytes at a time (the pages it passed are released)."""


def roots_of(path, among: frozenset[str] | set[str] | None = None) -> frozenset[str]:
    """The uuids of a transcript's records that have no parent, in one read of the file: only the
    lines holding ``"parentUuid":null`` are parsed (the client writes the key compactly; a record
    whose JSON says so another way is not a root here, so the join below can only miss, never
    invent, a family). `among`: only these uuids are asked about -- a line holding none of their
    bytes is not parsed (the answer is the roots among them). Mapped, not copied: a large
    transcript's bytes are searched in place. Unreadable: empty."""
    needle = b'"parentUuid":null'
    out: set[str] = set()
    keys = [u.encode() for u in among] if among is not None else None
    if keys is not None and not keys:
        return frozenset()
    try:
        import stringzilla as sz

        from ....read.lines import Releaser, open_map

        with open_map(path) as m:
            buf = m.buf
            size = len(buf)
            rel = Releaser(buf)  # a large transcript's pages go behind the search (bounded RSS)
            with memoryview(buf) as mv:
                sv = sz.Str(mv)  # SIMD: half the CPU of bytes.find over a store (read/needles.py)
                find, rfind = sv.find, sv.rfind
                pos = 0
                while pos < size:
                    i = find(needle, pos, min(size, pos + _WINDOW + len(needle)))
                    if i < 0:
                        pos += _WINDOW
                        rel.passed(pos)
                        continue
                    a = rfind(b"\n", 0, i) + 1
                    e = find(b"\n", i, size)
                    e = size if e < 0 else e
                    line = bytes(mv[a:e])
                    if keys is None or any(k in line for k in keys):
                        o = parse_line(line)
                        if o and o.get("parentUuid") is None and isinstance(o.get("uuid"), str) and o["uuid"]:
                            out.add(o["uuid"])
                    pos = e
                    rel.passed(a)
                del sv, find, rfind
    except (OSError, ValueError):
        return frozenset()
    if among is not None:
        out &= set(among)
    return frozenset(out)


def _roots(s, keys: set[str], index_off: str | None) -> frozenset[str]:
    """The roots among `keys` of session `s`'s transcript: from its index where it answers
    (providers/claude/cache/lanes.py `roots`: kept there once read), else read from the file (only the lines
    holding one of the keys parsed)."""
    from ..cache import lanes as IL

    off = getattr(s, "index_off", None) or index_off

    def read():
        got = IL.roots(s.path, off)
        return got & keys if got is not None else roots_of(s.path, keys)

    return _remembered("roots", s.path, (frozenset(keys), off), read)


def _join_rerooted(fams: dict, index_off: str | None = None) -> None:
    """A fork of a session that was rewound to before its first prompt copies the live branch,
    whose first record is a later root of the parent (the prompt typed after the rewind has no
    parent), not the parent's first record (measured: tests/realclient/scenarios_robust.py
    `robust_rewind_root_fork`). A session alone in its family whose first root is a root of a
    sibling of its project directory that was being written when that record was (the sibling's
    first line no later, its last write no earlier) joins the sibling's family. Each sibling that
    could be such a parent for some candidate is read once (`roots_of`), whatever the number of
    candidates (it was read once per candidate: quadratic in a project dir's sessions, 94,524
    reads and 21 s for one warm `stats` over 2,382 transcripts in 24 dirs)."""
    by_dir: dict[str, list[tuple[str, tuple[str, str, object]]]] = {}
    for key, members in fams.items():
        for m in members:
            by_dir.setdefault(str(m[2].project_dir), []).append((key, m))
    for d, entries in by_dir.items():
        if len(entries) < 2:
            continue
        cands: list[tuple[str, tuple, float]] = []
        for key, m in entries:
            if len(fams.get(key, ())) != 1:
                continue
            t0s = _remembered("ts", m[2].path, key, lambda: _record_ts(m[2].path, key))
            t0 = _epoch(t0s) if t0s else None
            if t0 is not None:
                cands.append((key, m, t0))
        if not cands:
            continue
        from bisect import bisect_left, bisect_right

        t0s_sorted = sorted((c[2], c[1][1]) for c in cands)
        times = [t for t, _sid in t0s_sorted]
        lo, hi = times[0], times[-1]
        parents: list[tuple[str, tuple, float, float]] = []
        for pkey, pm in entries:
            p0 = _epoch(pm[0])
            if p0 is None or p0 > hi:
                continue
            try:
                mt = os.stat(pm[2].path).st_mtime
            except OSError:
                continue
            if mt < lo - 1.0:
                continue
            # read only a sibling that was being written when some OTHER candidate's first record
            # was (p0 <= t0 <= mt + 1, the test below): the rest cannot be anyone's parent
            a, b = bisect_left(times, p0), bisect_right(times, mt + 1.0)
            if not any(t0s_sorted[j][1] != pm[1] for j in range(a, b)):
                continue
            parents.append((pkey, pm, p0, mt))
        if not parents:
            continue
        owner: dict[str, list[tuple[str, tuple, float, float]]] = {}
        keys = {c[0] for c in cands}
        for p in parents:
            for u in _roots(p[1][2], keys, index_off):
                owner.setdefault(u, []).append(p)
        for key, (ts, sid, s), t0 in cands:
            for pkey, (pts, psid, ps), p0, mt in owner.get(key, ()):
                if psid == sid or p0 > t0 or mt < t0 - 1.0 or pkey not in fams or key not in fams:
                    continue
                fams[pkey].append((ts, sid, s))
                del fams[key]
                break


def find_forks(sessions: Iterable, build: bool = False, index_off: str | None = None) -> dict[str, Fork]:
    """Fork session id -> its Fork, among `sessions` (Session objects; main lanes only). The
    uuids of a family's members come from their index where it answers (`build`: indexed first
    where it does not; `index_off`: why the index is off, for sessions that do not say). With the
    index on, the whole answer is kept per data root under the digest of every transcript's stat
    identity (providers/claude/cache/forks.py): over unchanged transcripts it is read back, no
    head, root or uuid sequence read again."""
    sessions = list(sessions)
    from ....index import config

    if config.why_off(index_off) is not None or any(getattr(s, "index_off", None) for s in sessions):
        return _find_forks(sessions, build, index_off)
    from ..cache import forks as keep

    key = keep.digest(sessions)
    if key is not None:
        got = keep.get(*key)
        if got is not None:
            try:
                return {t[0]: Fork(*t) for t in got}
            except TypeError:  # a kept row of another shape: found again below
                pass
    out = _find_forks(sessions, build, index_off)
    if key is not None:
        keep.put(*key, [(f.session_id, f.path, f.parent_session_id, f.parent_path, f.at_line, f.at_uuid,
                         f.copied_lines, f.copied_offsets) for f in out.values()])
    return out


def _find_forks(sessions: list, build: bool, index_off: str | None) -> dict[str, Fork]:
    # keyed by the first uuid alone: a fork run from another directory (`claude --resume <id>
    # --fork-session` from a subdirectory) is written under that directory's project dir
    # (measured: tests/realclient/scenarios_usage.py `usage_fork_elsewhere`); uuids are unique
    fams: dict[str, list[tuple[str, object, str]]] = {}
    for s in sessions:
        u, ts = _head(s.path)
        if u is None or ts is None:
            continue
        fams.setdefault(u, []).append((ts, s.session_id, s))
    _join_rerooted(fams, index_off)
    out: dict[str, Fork] = {}
    for members in fams.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda m: (m[0], m[1]))
        seqs = {sid: _seq(s, build, index_off) for _ts, sid, s in members}
        sets = {sid: {u: ln for u, ln, _o in seq} for sid, seq in seqs.items()}
        for i, (ts, sid, s) in enumerate(members):
            if i == 0 or ts == members[0][0]:
                continue  # the original (or a tie: no direction to tell)
            best = None
            for _pts, pid, ps in members[:i]:
                have = sets[pid]
                k = 0
                for u, _ln, _o in seqs[sid]:
                    if u not in have:
                        break
                    k += 1
                if k and (best is None or k >= best[0]):
                    best = (k, pid, ps)
            if best is None:
                continue
            k, pid, ps = best
            have = sets[pid]
            at_uuid = seqs[sid][k - 1][0]
            copied = {ln: have[u] for u, ln, _o in seqs[sid] if u in have}
            offsets = frozenset(o for u, _ln, o in seqs[sid] if u in have)
            out[sid] = Fork(sid, str(s.path), pid, str(ps.path), have.get(at_uuid), at_uuid, copied, offsets)
    return out


def forks_in_scope(scope) -> dict[str, Fork]:
    """The forks among the scope's sessions whose parent is in the scope too (their copies are
    counted once, on the parent)."""
    forks = find_forks(scope.sessions)
    ids = {s.session_id for s in scope.sessions}
    return {k: f for k, f in forks.items() if f.parent_session_id in ids}


def lineage_for(sessions: list, build: bool = False, index_off: str | None = None) -> dict[str, Fork]:
    """Forks among `sessions` and their siblings (every session of their project directories), so a
    fork shows its parent even when the parent is not in the answer. `build`: find_forks's;
    `index_off`: why the index is off (else the first session's that says so)."""
    from ..discover import sessions_in

    dirs = {str(s.project_dir): s.project_dir for s in sessions}
    sib: dict[str, object] = {}
    for d in dirs.values():
        for s in sessions_in(d, []):
            sib.setdefault(s.session_id, s)
    for s in sessions:
        sib.setdefault(s.session_id, s)
    wanted = {s.session_id for s in sessions}
    off = index_off or next((s.index_off for s in sessions if getattr(s, "index_off", None)), None)
    forks = find_forks(sib.values(), build, off)
    return {k: f for k, f in forks.items() if k in wanted or f.parent_session_id in wanted}


def copy_offsets(scope) -> dict[str, frozenset[int]]:
    """transcript path -> byte offsets of its records that copy a record of an in-scope parent."""
    return {os.fspath(f.path): f.copied_offsets for f in forks_in_scope(scope).values()}


def dir_copy_offsets(sessions, index_off: str | None = None) -> dict[str, frozenset[int]]:
    """`copy_offsets` for in-scope sessions given as (session id, transcript path) pairs (search
    passes those of one project directory and its related ones: providers/claude/search/scan.py
    `related_dirs`); `index_off`: why the index is off for this answer (then every family member's
    uuids are read from its file)."""
    class _S:
        __slots__ = ("session_id", "path", "project_dir", "index_off")

        def __init__(self, sid: str, path: str):
            self.session_id, self.path = sid, path
            self.project_dir = os.path.dirname(path)
            self.index_off = index_off

    ss = [_S(sid, p) for sid, p in sessions]
    ids = {s.session_id for s in ss}
    return {os.fspath(f.path): f.copied_offsets for f in find_forks(ss, False, index_off).values()
            if f.parent_session_id in ids}
