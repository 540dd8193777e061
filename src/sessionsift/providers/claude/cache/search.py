"""`search` from the index: censuses (an empty pattern: `-c`, `--count-by ...`) answered from the
per-record kinds and labels the index keeps, and the draft relabelling of hits found by a scan,
without re-parsing the transcript.

The answer is the scan's (providers/claude/search/scan.py `scan_lane`), rule for rule: a record is a hit when
`passes` accepts its kind and labels (before draft relabelling) and it lies in the time window;
when the scan would relabel (a hit labelled user.message, and either a pattern needle or a parent
with two user.message children) the hit takes its final labels and is kept only if they are still
selected; candidate lines matter only for what the summary says was not searched (records of
unknown types holding a label needle). tests/test_index_search.py holds every query equal to the
scan on the real-client corpora.

A lane is answered here only when its index is fresh (or was just brought up to date by reading
the appended bytes), covers the whole file, and the file has no damaged line (malformed,
zero-filled, invalid UTF-8: the scan counts those among the lines it parses, which depends on
the bytes) - otherwise None, and the lane is scanned.
"""

from __future__ import annotations

import bisect
from array import array
from collections import Counter
from dataclasses import dataclass, field

from ..lanescan import LABEL_NEEDLES, Cols
from ..model.known import KNOWN_TYPES
from ..discover import Lane
from ....index import config, store
from . import codec, lanes as L

from .shapes import CENSUS_BY, per_record, usable  # noqa: F401 - where they are used from


@dataclass
class View:
    """What one search reads of a lane's index."""

    lane: Lane
    ident: store.Identity
    pairs: list
    """[(pre key, is draft, count)] with pre key = (type, subtype, attachment kind, labels)."""
    unknown: list
    umsg_multi: bool
    drafts: set
    state: bytes
    read: list
    keys: list = field(default_factory=list)
    cols: Cols | None = None
    how: str = "index"
    head: tuple | None = None
    """(first uuid, first timestamp) of the transcript (providers/claude/model/lineage.py `_head`)."""


def _damaged(read: list) -> bool:
    # ReadStats as codec.read_obj: malformed lines, zero-filled, invalid utf-8, torn tail, non-object
    return bool(read[5]) or bool(read[6]) or bool(read[7]) or bool(read[8]) or bool(read[9])


NOT_INDEXED = "not indexed yet"
CHANGED = "changed since it was indexed"


def view(lane: Lane, with_cols: bool) -> tuple[View | None, str | None]:
    """The lane's index for a search (updated first if the file only grew), or (None, why)."""
    if config.why_off(lane.index_off) is not None:
        return None, config.why_off(lane.index_off)
    try:
        f, st, verdict = L._open(lane)
    except OSError as exc:
        return None, exc.strerror or str(exc)
    how = "index"
    if f is None or verdict == store.STALE:
        return None, NOT_INDEXED if f is None else CHANGED
    if verdict == store.GROWN or f.identity.end != st.st_size:
        if f.identity.end == st.st_size or verdict == store.GROWN:
            try:
                L.lane_stats(lane)
            except OSError as exc:
                return None, exc.strerror or str(exc)
            f, st, verdict = L._open(lane)
            how = "appended"
        if f is None or verdict != store.FRESH or f.identity.end != st.st_size:
            return None, "a torn final line (a write in progress)"
    fin = f.section("final")
    so = f.section("stats")
    if fin is None or so is None:
        return None, "index incomplete"
    if _damaged(so["read"]):
        return None, "damaged lines (malformed, zero-filled or invalid UTF-8)"
    v = View(lane, f.identity, [(k, d, n) for k, d, n in fin["pairs"]], fin["unknown"], fin["umsg_multi"],
             set(fin["drafts"]), fin["state"], so["read"], how=how)
    v.head = tuple(fin["head"]) if fin.get("head") else None
    co = f.section("cols")
    if co is None:
        return None, "index incomplete"
    v.cols = codec.cols_from(co) if with_cols else None
    v.keys = list(v.cols.kid) if v.cols is not None else [codec._combo_from(k) for k in co["kid"]]
    return v, None


def _needle_bits(p) -> int | None:
    """Which LABEL_NEEDLES make a line a candidate (None: every line is one)."""
    if p.label_needles is None:
        return None
    bits = 0
    for n in p.label_needles:
        bits |= 1 << LABEL_NEEDLES.index(n)
    return bits


def census_lane(p, pos: int, lane: Lane, why: list):
    """The LaneOutcome of a census query on one lane from its index, or None (then scan it; the
    reason is appended to `why`). A census reads every record, so a transcript with no index, or
    one rewritten since it was indexed, is indexed now as it is read (the normal path: no separate
    `index update`; one streaming pass, the one `stats` takes) and answered from that index
    (`from_index` "built")."""
    from ..search.scan import copies_of

    skip = copies_of(p, lane)
    cols = skip is not None or per_record(p)
    v, reason = view(lane, cols)
    if v is None and reason in (NOT_INDEXED, CHANGED):
        try:
            _ls, how = L.lane_stats(lane)
        except OSError as exc:
            why.append(exc.strerror or str(exc))
            return None
        if how.how == "built":
            v, reason = view(lane, cols)
            if v is not None:
                v.how = "built"
    if v is None:
        why.append(reason or "no index")
        return None
    out = census_from_view(p, pos, lane, v, skip)
    if not cols:
        v.cols, v.state, v.drafts = None, b"", set()
        out.view = v  # for the root summary (summary.py), sent back by a worker
    return out


_PASSING: dict = {}


def _passing(p, keys: list) -> list[bool]:
    """`passes` of each kind in `keys` (one table for a whole data root: computed once). Keyed on
    what `passes` reads of the plan (its allowed labels, default surface, hook attachments), not on
    the plan object's id: a later plan can get a freed one's id (serve makes one per search in one
    process). The table is held by its entry (so its id names it while the entry lives)."""
    from ..search.plan import passes

    k = (p.record_allowed, p.default_surface, p.hook_attachments, "harness.meta.hook" in p.allowed,
         id(keys), len(keys))
    r = _PASSING.get(k)
    if r is None or r[0] is not keys:
        if len(_PASSING) > 64:
            _PASSING.clear()
        r = _PASSING[k] = (keys, [passes(p, {"type": key[0]}, list(key[3])) for key in keys])
    return r[1]


def census_from_view(p, pos: int, lane: Lane, v: View, skip: frozenset[int] | None = None):
    """`skip`: byte offsets of the records a fork copies from its parent (search/scan.py
    `copies_of`): hits there are counted once, on the original, as the scan does (read per record
    from the columns; `copies_skipped` says how many)."""
    from ..search.plan import in_window
    from ..search.types import LaneOutcome

    cb = p.query.count_by
    out = LaneOutcome(pos=pos)
    out.bytes = v.ident.end
    out.lines = v.read[2] if p.query.count_lines else None
    out.indexed = True
    out.from_index = v.how
    bits = _needle_bits(p)
    for t, mask, n in v.unknown:
        if bits is None or mask & bits:
            k = t if isinstance(t, str) else "(no type)"
            out.unknown_type_lines[k] = out.unknown_type_lines.get(k, 0) + n
    keys = v.keys
    passing = _passing(p, keys)
    # the scan relabels drafts when a hit is labelled user.message and either the pattern had a
    # needle (not every user record was looked at) or some parent has two user.message children
    relabel_any = p.needles is not None or v.umsg_multi or "user.message" not in p.allowed
    allowed = p.allowed

    def kept(key: tuple, draft: bool, relabel: bool) -> bool:
        if not relabel:
            return True
        labels = ("user.unsent",) + tuple(key[3][1:]) if draft else key[3]
        return key[0] == "attachment" or any(l in allowed for l in labels) or (p.default_surface and not labels)

    c: Counter = Counter()
    hits = 0
    if skip is None and not per_record(p):
        relabel = relabel_any and any(passing[k] and keys[k][3][:1] == ("user.message",) and n for k, _d, n in v.pairs)
        for kid, draft, n in v.pairs:
            key = keys[kid]
            if not passing[kid] or not kept(key, draft, relabel):
                continue
            hits += n
            if cb == "label":
                labels = ("user.unsent",) + tuple(key[3][1:]) if relabel and draft else tuple(key[3])
                for l in labels:
                    if l in allowed:
                        c[l] += n
                if not labels:
                    c["(unlabelled)"] += n
    else:
        hits = _per_record(p, v, keys, passing, kept, relabel_any, c, out, in_window, skip)
    out.hit_count = hits
    if cb == "session" and hits:
        c[lane.session_id] += hits
    elif cb == "project" and hits:
        from ..search.scan import project_of

        c[lane.path.parent.name if not lane.is_subagent else project_of(lane)] += hits
    if cb not in (None, "total"):
        out.counts = dict(c)
    return out


def _per_record(p, v: View, keys, passing, kept, relabel_any: bool, c: Counter, out, in_window,
                skip: frozenset[int] | None = None) -> int:
    from ....timefmt import parse_ts

    cols = v.cols
    assert cols is not None  # a per-record census opens its view with the columns
    cb = p.query.count_by
    drafts = v.drafts
    found = []
    for slot, kid in enumerate(cols.key):
        if not passing[kid]:
            continue
        ts = cols.ts[slot]
        win = in_window(p, ts)
        if win is None:
            out.undated_skipped += 1
            continue
        if win:
            found.append(slot)
    relabel = relabel_any and any(keys[cols.key[s]][3][:1] == ("user.message",) for s in found)
    names_last = names_zip = None
    want = "assistant" if p.tool_count == "calls" else "user"
    hits = 0
    for slot in found:
        key = keys[cols.key[slot]]
        if not kept(key, slot in drafts, relabel):
            continue
        if skip and cols.off[slot] in skip:
            out.copies_skipped += 1
            continue
        hits += 1
        t = key[0]
        if cb == "label":
            labels = ("user.unsent",) + tuple(key[3][1:]) if relabel and slot in drafts else key[3]
            for l in labels:
                if l in p.allowed:
                    c[l] += 1
            if not labels:
                c["(unlabelled)"] += 1
        elif cb == "model":
            if t == "assistant":
                c[cols.model.get(slot)] += 1
        elif cb == "attachment":
            a = cols.att.get(slot)
            if a is not None:
                c[a] += 1
        elif cb == "day":
            d = parse_ts(cols.ts[slot])
            c[d.astimezone().strftime("%Y-%m-%d") if d else None] += 1
        elif cb == "tool" and t == want:
            if t == "assistant":
                for _i, n in cols.uses.get(slot, ()):
                    if n is not None:
                        c[str(n)] += 1
            else:
                ids = [str(i) for i in cols.res.get(slot, ())]
                if relabel:
                    if names_zip is None:
                        names_zip = _names_zip(cols)
                    for i in ids:
                        if i in names_zip:
                            c[names_zip[i]] += 1
                else:
                    if names_last is None:
                        names_last = {str(i): str(n) for u in cols.uses.values() for i, n in u if i}
                    seen: list[str] = []
                    for i in ids:
                        nm = names_last.get(i)
                        if nm is not None and nm not in seen:
                            seen.append(nm)
                    for nm in seen:
                        c[nm] += 1
    return hits


def _names_zip(cols: Cols) -> dict[str, str]:
    """tool_use id -> name as LaneIndex pairs them (ids with an id, names with a name, zipped)."""
    out: dict[str, str] = {}
    for u in cols.uses.values():
        ids = [str(i) for i, _n in u if i]
        names = [str(n) for _i, n in u if n]
        for i, n in zip(ids, names):
            out[i] = n
    return out


# -- relabelling hits found by a scan ------------------------------------------------------------


def relabel_hits(p, lane: Lane, hits: list) -> bool:
    """search/api.py `_apply_index` for a query that needs no turn context: each hit takes its
    final labels (drafts: user.unsent) and is dropped when they are no longer selected; result
    carriers name their calls' tools. False when the index cannot answer (then the caller builds
    the lane view)."""
    v, _why = view(lane, True)
    if v is None:
        return False
    cols = v.cols
    offs = cols.off
    names = _names_zip(cols)
    keep = []
    for h in hits:
        i = bisect.bisect_left(offs, h.offset)
        if i < len(offs) and offs[i] == h.offset:
            key = v.keys[cols.key[i]]
            labels = list(key[3])
            if i in v.drafts:
                labels = ["user.unsent"] + labels[1:]
            h.labels = labels
            h.survival = _SURVIVAL[v.state[i]] if i < len(v.state) else None
            if h.type != "attachment" and not any(l in p.allowed for l in h.labels) and not (
                    p.default_surface and not h.labels):
                continue
        if h.type == "user":
            h.tool_names = [names.get(i, i) for i in h.tool_names if i in names]
        keep.append(h)
    hits[:] = keep
    return True


_SURVIVAL = (None, "live", "abandoned", "pre-cut")
