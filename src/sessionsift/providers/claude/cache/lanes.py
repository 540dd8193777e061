"""The index of one Claude Code transcript (a lane): built from the same streaming census that
`stats` runs (providers/claude/stats.py `_scan`), so an answer from the index IS the scan's answer.

Sections of a lane's index file (store.py):
- ``part``: the unfinished census part of the covered bytes [0, end) - counters and the survival
  skeleton - so an append is scanned alone and merged onto it (`_merge`: the same merge the
  two-process split uses);
- ``cols``: per-record columns (core.stats.Cols): line, offset, length, record kind and labels,
  timestamp, tool calls and results, model, attachment kind;
- ``stats``: the finished census of [0, end) (absent when bytes after ``end`` existed: a torn
  tail is held, never indexed, and its census is taken at each reading);
- ``final``: survival per record and the draft slots (user.unsent) of the finished census;
- ``turns`` (added on first need, store.py keeps it with the same identity): the turn number,
  final opener flag and survival of every record as `LaneIndex` computes them.

`LaneView.get(lane)` returns the index of a lane when it can be trusted for the file as it is now,
updating it first when the file only grew (only the new bytes are parsed); `build` (re)indexes it
from scratch. Whatever cannot be trusted is never used: it is rebuilt or the lane is scanned.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field
from pathlib import Path

from .. import stats as S
from ..discover import Lane
from ....read.lines import open_map
from ....index import config, store
from . import codec

KIND = "claude"
PROGRESS = None
"""A progress.Progress the lanes read through `census_one` report to (set by the CLI)."""


@dataclass
class Outcome:
    """How one lane's answer was obtained (for the summary's `index` field and the text note)."""

    how: str
    """"index" (answered from a fresh index), "appended" (the index took the new bytes first),
    "built" (indexed now, from scratch), "scanned" (no index used: see `why`)."""
    why: str | None = None


def _end_of(buf, start: int, size: int) -> int:
    """Just after the last newline of buf[start:size), or `start` when there is none."""
    if size <= start:
        return start
    nl = buf.rfind(b"\n", start, size)
    return nl + 1 if nl >= 0 else start


def _open(lane: Lane) -> tuple[store.IndexFile | None, os.stat_result, str]:
    p = os.fspath(lane.path)
    st = os.stat(p)
    ab = os.fsencode(store.abspath(p))
    f = store.IndexFile.open(store.index_str(KIND, ab), KIND, p, ab)
    if f is None:
        return None, st, "absent"
    try:
        return f, st, store.judge(lane.path, f.identity, st)
    except OSError:
        return None, st, "absent"


def _write(lane: Lane, buf, end: int, st: os.stat_result, sections: dict) -> None:
    try:
        store.write(store.index_path(KIND, lane.path), KIND, str(lane.path),
                    store.identity_of(st, end, store.fingerprints(buf, end)), sections)
    except (OSError, ValueError):
        pass  # an unwritable cache (or an unencodable value) costs speed next time, never a result


def final_obj(part: "S.Part", path=None) -> dict:
    """What search needs of the finished census, per record kind (docs/index.md): how many records
    carry each (kind, final labels) pair - drafts relabelled user.unsent -, the unknown-type
    records by which label needles their lines hold, whether any parent has two user.message
    children (search relabels only then), and the survival code and draft slots."""
    from collections import Counter

    c = part.cols
    drafts = set(part.drafts)
    pairs: Counter = Counter()
    keys = list(c.kid)
    for slot, k in enumerate(c.key):
        pairs[(k, slot in drafts)] += 1
    unknown: Counter = Counter()
    for slot, m in c.mask.items():
        unknown[(keys[c.key[slot]][0], m)] += 1
    parents = Counter(par for _s, par in part.sk.drafts)
    return {
        "pairs": [[k, d, n] for (k, d), n in pairs.items()],
        "unknown": [[t, m, n] for (t, m), n in unknown.items()],
        "umsg_multi": any(v > 1 for v in parents.values()),
        "state": bytes(part.state or b""), "drafts": sorted(drafts),
        "head": list(_head(path)) if path is not None else None,
    }


def _head(path) -> tuple:
    from ..model.lineage import read_head

    return read_head(path)


def census_one(lane: Lane, strict: bool, parallel: bool) -> "S.LaneStats | S.Problem":
    """`core.stats.stats(census=...)`: a lane's census through its index; the outcome rides on the
    result as `.indexed` (an Outcome)."""
    try:
        ls, how = lane_stats(lane, strict, parallel)
    except OSError as exc:
        return S.Problem(str(lane.path), exc.strerror or str(exc))
    ls.indexed = how
    if PROGRESS is not None:
        PROGRESS.step(ls.read.bytes, how.how in ("built", "appended"))
    return ls


FORK_STATS = "forkstats.1"
"""The section holding a fork's census without its copies (stats.lane_stats_indexed), with the
digest of the copied lines it left out."""


def fork_stats(lane: Lane, strict: bool = False, copies: frozenset[int] | None = None) -> S.LaneStats:
    """`stats.lane_stats_indexed(lane, copies=copies)` -- a fork's census without the records it
    copies from an in-scope parent, which parses the whole transcript --, kept in the lane's index
    with the digest of `copies`: read from it while the index is fresh, covers the whole file and
    the copied lines are the same (a warm `stats` on a store of forks parsed every fork on every
    run); computed and stored otherwise. `strict` or the index off: computed, nothing kept."""
    copies = copies or frozenset()
    if strict or config.why_off(lane.index_off) is not None:
        return S.lane_stats_indexed(lane, strict=strict, copies=copies)
    try:
        f, st, verdict = _open(lane)
    except OSError:
        f = None
    whole = f is not None and verdict == store.FRESH and f.identity.end == st.st_size
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover
        from hashlib import blake2b
    key = blake2b(array("Q", sorted(copies)).tobytes(), digest_size=16).hexdigest()
    if whole and f is not None:
        o = f.section(FORK_STATS)
        if isinstance(o, dict) and o.get("copies") == key and isinstance(o.get("stats"), dict):
            return codec.stats_from(o["stats"], lane)
    ls = S.lane_stats_indexed(lane, strict=False, copies=copies)
    if whole and f is not None:
        try:
            st2 = os.stat(lane.path)
            if (st2.st_ino, st2.st_size, st2.st_mtime_ns, st2.st_ctime_ns) == (
                    st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns):  # the bytes read are the indexed ones
                f.with_section(FORK_STATS, {"copies": key, "stats": codec.stats_obj(ls)}, KIND, os.fspath(lane.path))
        except (OSError, ValueError):
            pass  # an unwritable cache costs speed next time, never a result
    return ls


census_one.fork_stats = fork_stats  # type: ignore[attr-defined]
"""stats.stats asks the census it is given for its forks' census too (a provider imports no index)."""


def lane_stats(lane: Lane, strict: bool = False, parallel: bool = True) -> tuple[S.LaneStats, Outcome]:
    """The census of one lane, from its index when fresh, else scanned (and indexed as it is
    scanned). Equal to `core.stats.lane_stats(lane)` in every field."""
    why = config.why_off(lane.index_off)
    if why is not None or strict:
        return S.lane_stats(lane, strict=strict, parallel=parallel), Outcome("scanned", why or "--strict")
    f, st, verdict = _open(lane)
    if f is not None and verdict == store.FRESH and f.identity.end == st.st_size:
        o = f.section("stats")
        if o is not None:
            ls = codec.stats_from(o, lane)
            # what the data root's kept censuses take (KeptCensus.put): this stat, this section
            ls.kept_obj = [[st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns], o]  # type: ignore[attr-defined]
            return ls, Outcome("index")
    base = None
    start = 0
    if f is not None and verdict in (store.FRESH, store.GROWN):
        po, co = f.section("part"), f.section("cols")
        if po is not None and co is not None:
            base = codec.part_from(po)
            base.cols = codec.cols_from(co)
            start = f.identity.end
    with open_map(lane.path) as m:
        buf = m.buf
        size = len(buf)
        st = os.stat(lane.path) if size != st.st_size else st
        end = _end_of(buf, start, size)
        if base is None or end > start:
            new = S.scan_part(buf, start, end, lane.path, parallel=parallel, cols=True)
            if base is None:
                base = new
            else:
                S._merge(base, new)
        tail = S._scan(buf, end, size, lane.path, False) if size > end else None
        outcome = Outcome("index" if start == end and start > 0 else ("appended" if start else "built"))
        sections = {"part": codec.part_obj(base), "cols": codec.cols_obj(base.cols)}
        rewrite = f is None or verdict != store.FRESH or end != start
        if tail is not None:
            S._merge(base, tail)
        base.read.files = 1
        ls = S._finish(lane, base)
        if tail is None:
            sections["stats"] = so = codec.stats_obj(ls)
            sections["final"] = final_obj(base, lane.path)
            if rewrite:
                # kept by the data root at once (KeptCensus.put), under the stat the index is
                # written with (taken before the read: a write since moves its ctime), so the
                # next `stats` is already answered from it rather than writing it then
                ls.kept_obj = [[st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns], so]  # type: ignore[attr-defined]
        if rewrite:
            _write(lane, buf, end, st, sections)
    return ls, outcome


def uuid_seq(path, index_off: str | None = None, build: bool = False) -> list[tuple[str, int, int]] | None:
    """(uuid, line, offset) of every uuid-bearing record of the transcript at `path`, in file
    order - what lineage (providers/claude/model/lineage.py `_uuids`) reads to tell forks apart -
    from its index when the index is fresh and covers the whole file: no line is parsed (the
    skeleton's uuid slots and replays, the columns' line numbers and offsets). `build`: a
    transcript with no usable index is indexed first (one census pass, kept for every later
    answer). None: the index is off, or not usable (then the caller reads the file)."""
    if config.why_off(index_off) is not None:
        return None
    lane = Lane(Path(path), "", "main", "main", index_off=index_off)
    for attempt in (0, 1):
        try:
            f, st, verdict = _open(lane)
        except OSError:
            return None
        if f is not None and verdict == store.FRESH and f.identity.end == st.st_size:
            po, co = f.section("part"), f.section("cols")
            if po is not None and co is not None:
                return _seq_from(po["sk"], co)
        if attempt or not build:
            return None
        try:
            _ls, how = lane_stats(lane)
        except OSError:
            return None
        if how.how == "scanned":
            return None
    return None


ROOTS = "roots.1"
"""The section holding `lineage.roots_of`'s answer for the bytes the index covers (its rule's
version in the name: a change of the rule renames it, so an older answer is never read)."""


def roots(path, index_off: str | None = None) -> frozenset[str] | None:
    """`lineage.roots_of(path)` (the uuids of the transcript's records with no parent), kept in
    the transcript's index: read from it when the index is fresh and covers the whole file,
    computed once and stored there otherwise (a warm `stats` read every transcript of a project
    dir again for it on every run). None: the index is off or has no fresh entry for the file
    (then the caller reads the file)."""
    if config.why_off(index_off) is not None:
        return None
    lane = Lane(Path(path), "", "main", "main", index_off=index_off)
    try:
        f, st, verdict = _open(lane)
    except OSError:
        return None
    if f is None or verdict != store.FRESH or f.identity.end != st.st_size:
        return None
    got = f.section(ROOTS)
    if isinstance(got, list):
        return frozenset(got)
    from ..model import lineage

    r = lineage.roots_of(path)
    try:
        st2 = os.stat(path)
        if (st2.st_ino, st2.st_size, st2.st_mtime_ns, st2.st_ctime_ns) == (
                st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns):  # the bytes read are the indexed ones
            f.with_section(ROOTS, sorted(r), KIND, os.fspath(path))
    except (OSError, ValueError):
        pass  # an unwritable cache costs speed next time, never a result
    return r


def _seq_from(sk: dict, co: dict) -> list[tuple[str, int, int]]:
    names: dict[int, str] = dict(zip(array("i", sk["first"]), sk["uuids"])) if sk["uuids"] else {}
    for slot, first in sk["replay"]:
        names[slot] = names[first]
    no, off = array("I", co["no"]), array("Q", co["off"])
    return [(names[i], no[i], off[i]) for i in sorted(names)]


@dataclass
class State:
    state: str
    """"fresh", "grown", "stale", "absent" or "unreadable"."""
    size: int | None = None
    covered: int | None = None
    index_bytes: int | None = None
    why: str | None = None


def state(lane: Lane) -> State:
    """What the index holds for a lane now (reads only its header and a few fingerprinted bytes)."""
    dest = store.index_path(KIND, lane.path)
    try:
        st = os.stat(lane.path)
    except OSError as exc:
        return State("unreadable", why=exc.strerror or str(exc))
    f = store.IndexFile.open(dest, KIND, str(lane.path))
    if f is None:
        why = "no index file" if not dest.exists() else "index file not trusted (corrupt or of another version)"
        return State("absent", st.st_size, 0, None, why)
    try:
        v = store.judge(lane.path, f.identity, st)
    except OSError as exc:
        return State("unreadable", st.st_size, why=exc.strerror or str(exc))
    try:
        ib = dest.stat().st_size
    except OSError:
        ib = None
    why = {store.GROWN: f"{st.st_size - f.identity.end} bytes appended since",
           store.STALE: "the covered bytes changed (rewritten, truncated or replaced)"}.get(v)
    if v == store.FRESH and f.identity.end < st.st_size:
        why = f"{st.st_size - f.identity.end} bytes after the last newline (a torn tail) are read each time"
    return State(v, st.st_size, f.identity.end if v != store.STALE else 0, ib, why)


def remove(lane: Lane) -> int | None:
    """Remove a lane's index file; its size, or None when there was none."""
    dest = store.index_path(KIND, lane.path)
    try:
        n = dest.stat().st_size
        dest.unlink()
        return n
    except OSError:
        return None


def turns_of(lane: Lane, f: "store.IndexFile", cols, store_it: bool = True) -> "object | None":
    """The lane's turns section (providers/claude/cache/turns.py), derived and stored on first need (unless
    `store_it` is False: the caller stores it with others); None when the index cannot give it.
    `.derived` on the result: it was derived now."""
    from . import turns as T

    o = f.section(T.SECTION)
    derived = o is None
    if o is None:
        po = f.section("part")
        if po is None:
            return None
        o = T.derive(lane, po, cols)
        if store_it:
            try:
                f.with_section(T.SECTION, o, KIND, str(lane.path))
            except (OSError, ValueError):
                pass
    try:
        t = T.Turns(o)
    except (KeyError, TypeError, ValueError):
        return None
    t.derived = o if derived else None
    return t


def file_slots(lane: Lane, f: "store.IndexFile", call_tools: frozenset, attachments: frozenset):
    """The lane's ``fev`` section (providers/claude/cache/fileslots.py) decoded, derived and stored on first need
    (with the turns section when that was derived too: one rewrite); None when the index cannot
    give it."""
    from . import fileslots as FS

    o = f.section("fev")
    if o is not None:
        try:
            fs = FS.FileSlots(o)
            if fs.matches(call_tools, attachments):
                return fs
        except (KeyError, TypeError, ValueError):
            pass
    so, co = f.section("stats"), f.section("cols")
    if so is None or co is None:
        return None
    cols = codec.cols_from(co)
    turns = turns_of(lane, f, cols, store_it=False)
    if turns is None:
        return None
    o = FS.derive(cols, turns, so["read"], call_tools, attachments)
    add = {"fev": o}
    if turns.derived is not None:
        from .turns import SECTION

        add[SECTION] = turns.derived
    try:
        f.with_sections(add, KIND, str(lane.path))
    except (OSError, ValueError):
        pass
    try:
        return FS.FileSlots(o)
    except (KeyError, TypeError, ValueError):
        return None


STATS_ROOT = "claude-stats"
"""One file per data root with the finished census (the ``stats`` section) of each of its lanes
answered from a fresh per-lane index, so a warm `stats` over thousands of small transcripts opens
one index file, not one per transcript (4,766 opens and header checks were 0.7 of a warm 1.3 s).

Per lane (keyed by its absolute path): the transcript's (device, inode, size, mtime, ctime) when
its per-lane index was fresh and covered the whole file, and that index's ``stats`` section as
stored (its per-message usage, which only `dedupe_messages` reads and only when a response is held
twice, as marshal bytes decoded then, beside the message ids). An entry is given back only while a stat of the transcript gives exactly those five (ctime
cannot be set back by user space: an append, a rewrite with the mtime put back, a file moved over
the path all change it), and only under the digest of the code that derives and decodes the census
(stats.py, lanescan.py, codec.py, this module): any other lane is read from its own index as
before, and kept here afterwards. Off with the index and with --strict."""

_STATS_CODE: list[bytes] = []


def _stats_code() -> bytes:
    if not _STATS_CODE:
        h = store.blake2b(digest_size=16)
        h.update(store.VERSION.to_bytes(4, "little"))
        here = Path(__file__).resolve().parent
        for p in (here.parent / "stats.py", here.parent / "lanescan.py", here / "codec.py", Path(__file__).resolve()):
            h.update(p.read_bytes())
        _STATS_CODE.append(h.digest())
    return _STATS_CODE[0]


def _root_of(lanes: list[Lane]) -> str | None:
    """The data root the lanes' entries are kept under (ROOT/projects/<dir>/<id>.jsonl: the first
    main lane's); an answer over several roots is kept there too, each entry naming its path."""
    for ln in lanes:
        if not ln.is_subagent:
            return os.path.dirname(os.path.dirname(os.path.dirname(store.abspath(os.fspath(ln.path)))))
    return None


def _marshal():
    import marshal

    return marshal


def _msgs_loader(blob: bytes):
    """What gives a kept lane's per_msg when dedupe_messages needs it (codec.stats_from's form)."""
    def load() -> dict:
        return {(m, k): dict(d) for m, k, d in _marshal().loads(blob)}
    return load


class KeptCensus:
    """`stats.stats` asks the census it is given for `kept`: the lanes it can answer from the data
    root's kept censuses (`get`), and afterwards keeps what the others gave (`put`)."""

    @staticmethod
    def get(lanes: list[Lane], strict: bool) -> dict[int, S.LaneStats]:
        """{id(lane): census} of the lanes whose kept entry matches a stat of their transcript now."""
        if strict or not lanes or any(config.why_off(ln.index_off) is not None for ln in lanes):
            return {}
        root = _root_of(lanes)
        if root is None:
            return {}
        f = store.IndexFile.open(store.index_path(STATS_ROOT, root), STATS_ROOT, root)
        o = f.section("lanes") if f is not None else None
        if not isinstance(o, dict) or o.get("code") != _stats_code() or not isinstance(o.get("lanes"), dict):
            return {}
        ents = o["lanes"]
        out: dict[int, S.LaneStats] = {}
        for ln in lanes:
            p = store.abspath(os.fspath(ln.path))
            e = ents.get(p)
            if e is None:
                continue
            try:
                st = os.stat(p)
            except OSError:
                continue
            if e[0] != [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]:
                continue
            try:
                o = e[1]
                o["per_msg"] = []
                ls = codec.stats_from(o, ln)
                ls.per_msg_later = (e[3], _msgs_loader(e[2]))
            except (KeyError, TypeError, ValueError, IndexError):
                continue
            ls.indexed = Outcome("index")  # type: ignore[attr-defined]
            if PROGRESS is not None:
                PROGRESS.step(ls.read.bytes, False)
            out[id(ln)] = ls
        return out

    @staticmethod
    def put(lanes: list[Lane], done: dict) -> None:
        """Keep the census of each lane answered now from a fresh whole-file index (`kept_obj`
        on its result), beside the entries of lanes not asked this time whose transcript is still
        there; nothing is written when no lane brought a new entry."""
        new = {}
        for ln in lanes:
            k = getattr(done.get(id(ln)), "kept_obj", None)
            if k is not None:
                ident, o = k
                rest = {f: v for f, v in o.items() if f != "per_msg"}
                new[store.abspath(os.fspath(ln.path))] = [ident, rest, _marshal().dumps(o["per_msg"]),
                                                          [str(mid) for _m, mid, _f in o["per_msg"]]]
        if not new:
            return
        root = _root_of(lanes)
        if root is None:
            return
        dest = store.index_path(STATS_ROOT, root)
        f = store.IndexFile.open(dest, STATS_ROOT, root)
        o = f.section("lanes") if f is not None else None
        ents: dict = {}
        if isinstance(o, dict) and o.get("code") == _stats_code() and isinstance(o.get("lanes"), dict):
            ents = {p: e for p, e in o["lanes"].items() if p not in new and os.path.exists(p)}
        ents.update(new)
        try:
            st = os.stat(root)
            store.write(dest, STATS_ROOT, root, store.identity_of(st, 0, ()),
                        {"lanes": {"code": _stats_code(), "lanes": ents}})
        except (OSError, ValueError):
            pass  # an unwritable cache costs speed next time, never a result


census_one.kept = KeptCensus  # type: ignore[attr-defined]
