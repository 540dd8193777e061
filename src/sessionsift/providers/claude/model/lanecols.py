"""The records of a `LaneIndex` in columns (memory bounded whatever the transcript):
per record a few machine words and bytes instead of an `Entry` object and its strings.

- line, offset, length: ``array('q')``; turn and replay_of: ``array('i')`` (-1: none);
- one flag byte (opener, isMeta, isCompactSummary, uuid present, timestamp none, usage none,
  survival in the top two bits);
- type, subtype, labels, model, stop_reason, attachment kind and tool names as ONE code into a
  table of the distinct combinations (a lane has a few hundred);
- the uuid as 16 bytes when it is a canonical lower-case uuid (any other string is kept as is,
  by record); the parent as the record slot its uuid names (a string only when it named no earlier
  record);
- timestamps as UTF-8 in one buffer with end offsets; message ids, tool ids and usage (four
  ``array('q')``) only for the records that carry them, by slot.

`Entry` objects are made on access (`Entries`), one per record asked for, and let go by the caller;
they are equal to the ones the object-per-record index held (tests/test_lane_columns.py).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import Iterator, Sequence

OPENER, META, COMPACT, HAS_UUID, TS_NONE, USAGE_NONE = 1, 2, 4, 8, 16, 32
SURV_SHIFT = 6
_NOINT = -(1 << 63)
_SEP = "\x00"


class SparseStrCol:
    """Strings of SOME records (the rest have none): the slots in ``keys`` (ascending), UTF-8 in one
    buffer with end offsets."""

    __slots__ = ("keys", "data", "ends")

    def __init__(self) -> None:
        self.keys = array("q")
        self.data = bytearray()
        self.ends = array("q")

    def add(self, i: int, s: str) -> None:
        self.keys.append(i)
        self.data += s.encode("utf-8", "surrogatepass")
        self.ends.append(len(self.data))

    def get(self, i: int) -> str | None:
        keys = self.keys
        k = bisect_left(keys, i)
        if k == len(keys) or keys[k] != i:
            return None
        a = self.ends[k - 1] if k else 0
        return self.data[a:self.ends[k]].decode("utf-8", "surrogatepass")


def pack_uuid(u: str) -> bytes | None:
    """16 bytes for a canonical lower-case uuid string (exactly recoverable), else None."""
    if len(u) != 36 or u[8] != "-" or u[13] != "-" or u[18] != "-" or u[23] != "-" or u.count("-") != 4:
        return None
    try:
        b = bytes.fromhex(u.replace("-", ""))
    except ValueError:
        return None
    # 16 bytes from 32 characters: all hex digits (fromhex skips whitespace: fewer bytes)
    return b if len(b) == 16 and u == u.lower() else None


def unpack_uuid(b: bytes) -> str:
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_ZERO16 = bytes(16)


class Columns:
    __slots__ = ("no", "off", "ln", "kind", "kinds", "kind_code", "fl", "turn", "rep", "uid", "odd_uuid",
                 "par", "par_str", "logical", "ts_data", "ts_ends", "msg", "tuse", "tres", "odd_tools", "usage_keys",
                 "usage", "odd_usage",
                 "bridged")

    def __init__(self) -> None:
        self.no, self.off, self.ln = array("q"), array("q"), array("q")
        self.kind = array("I")
        self.kinds: list[tuple] = []
        """(type, subtype, labels, model, stop_reason, attachment, tool_names) by code."""
        self.kind_code: dict[tuple, int] = {}
        self.fl = bytearray()
        self.turn = array("i")
        self.rep = array("i")
        self.uid = bytearray()
        self.odd_uuid: dict[int, str] = {}
        self.par = array("i")
        """slot of the record the parent uuid names (first line); -1 no parent; -2: `par_str`."""
        self.par_str: dict[int, str] = {}
        self.logical: dict[int, str] = {}
        self.ts_data = bytearray()
        self.ts_ends = array("q")
        self.msg, self.tuse, self.tres = SparseStrCol(), SparseStrCol(), SparseStrCol()
        self.odd_tools: dict[tuple[int, int], tuple[str, ...]] = {}
        self.usage_keys = array("q")
        self.usage = tuple(array("q") for _ in range(4))
        self.odd_usage: dict[int, tuple] = {}
        self.bridged: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.no)

    def code(self, k: tuple) -> int:
        c = self.kind_code.get(k)
        if c is None:
            c = self.kind_code[k] = len(self.kinds)
            self.kinds.append(k)
        return c

    def add(self, e, parent_slot: int) -> None:
        """Append one entry (an `Entry`); `parent_slot`: the slot its parent uuid names, or -2."""
        i = len(self.no)
        self.no.append(e.no)
        self.off.append(e.offset)
        self.ln.append(e.length)
        k = (e.type, e.subtype, e.labels, e.model, e.stop_reason, e.attachment, e.tool_names)
        c = self.kind_code.get(k)
        if c is None:
            c = self.kind_code[k] = len(self.kinds)
            self.kinds.append(k)
        self.kind.append(c)
        f = (OPENER if e.opener else 0) | (META if e.is_meta else 0) | (COMPACT if e.is_compact_summary else 0)
        u = e.uuid
        if u is not None:
            f |= HAS_UUID
            b = pack_uuid(u)
            if b is None:
                self.odd_uuid[i] = u
                b = _ZERO16
            self.uid += b
        else:
            self.uid += _ZERO16
        p = e.parent
        if p is None:
            self.par.append(-1)
        elif parent_slot >= 0:
            self.par.append(parent_slot)
        else:
            self.par.append(-2)
            self.par_str[i] = p
        if e.logical_parent is not None:
            self.logical[i] = e.logical_parent
        t = e.timestamp
        if t is None:
            f |= TS_NONE
        else:
            self.ts_data += t.encode("utf-8", "surrogatepass")
        self.ts_ends.append(len(self.ts_data))
        if e.msg_id is not None:
            self.msg.add(i, e.msg_id)
        if e.tool_use_ids:
            self._tools(0, self.tuse, i, e.tool_use_ids)
        if e.tool_result_ids:
            self._tools(1, self.tres, i, e.tool_result_ids)
        us = e.usage
        if us is None:
            f |= USAGE_NONE
        elif all(v is None or (type(v) is int and _NOINT < v < (1 << 63)) for v in us):
            self.usage_keys.append(i)
            for a, v in zip(self.usage, us):
                a.append(_NOINT if v is None else v)
        else:
            self.odd_usage[i] = us
        if e.survival is not None:
            f |= _SURV_CODE[e.survival] << SURV_SHIFT
        self.fl.append(f)
        self.turn.append(-1 if e.turn is None else e.turn)
        self.rep.append(-1 if e.replay_of is None else e.replay_of)
        if e.bridged_to is not None:
            self.bridged[i] = e.bridged_to

    def _tools(self, w: int, col: SparseStrCol, i: int, ids: tuple[str, ...]) -> None:
        if any(_SEP in t for t in ids):
            self.odd_tools[(w, i)] = ids
        else:
            col.add(i, _SEP.join(ids))

    def timestamp(self, i: int) -> str | None:
        if self.fl[i] & TS_NONE:
            return None
        ends = self.ts_ends
        a = ends[i - 1] if i else 0
        return self.ts_data[a:ends[i]].decode("utf-8", "surrogatepass")

    def uuid(self, i: int) -> str | None:
        if not self.fl[i] & HAS_UUID:
            return None
        o = self.odd_uuid.get(i) if self.odd_uuid else None
        if o is not None:
            return o
        return unpack_uuid(bytes(self.uid[16 * i:16 * i + 16]))

    def parent(self, i: int) -> str | None:
        p = self.par[i]
        if p >= 0:
            return self.uuid(p)
        if p == -1:
            return None
        return self.par_str[i]

    def tool_use_slots(self) -> Iterator[int]:
        """Slots of the records with tool_use ids, in file order."""
        if not self.odd_tools:
            return iter(self.tuse.keys)
        odd = [i for w, i in self.odd_tools if w == 0]
        return iter(sorted(set(self.tuse.keys) | set(odd)))

    def tools(self, w: int, i: int) -> tuple[str, ...]:
        s = (self.tuse if w == 0 else self.tres).get(i)
        if s is None:
            return self.odd_tools.get((w, i), ()) if self.odd_tools else ()
        return tuple(s.split(_SEP))

    def usage_of(self, i: int):
        if self.fl[i] & USAGE_NONE:
            return None
        keys = self.usage_keys
        k = bisect_left(keys, i)
        if k < len(keys) and keys[k] == i:
            return tuple(None if a[k] == _NOINT else a[k] for a in self.usage)
        return self.odd_usage[i]

    def survival(self, i: int):
        return _SURV_NAMES[self.fl[i] >> SURV_SHIFT]

    def set_survival(self, i: int, code: int) -> None:
        self.fl[i] = (self.fl[i] & ((1 << SURV_SHIFT) - 1)) | (code << SURV_SHIFT)

    def relabel(self, i: int, labels: tuple) -> None:
        k = self.kinds[self.kind[i]]
        self.kind[i] = self.code((k[0], k[1], labels) + k[3:])

    def type_of(self, i: int) -> str | None:
        return self.kinds[self.kind[i]][0]

    def entry(self, i: int):
        from .lane import Entry

        k = self.kinds[self.kind[i]]
        f = self.fl[i]
        t, r = self.turn[i], self.rep[i]
        return Entry(self.no[i], self.off[i], self.ln[i], k[0], k[1], self.uuid(i), self.parent(i),
                     self.logical.get(i) if self.logical else None, k[2],
                     self.timestamp(i), bool(f & OPENER), bool(f & META),
                     self.msg.get(i), k[3], k[4], self.tools(0, i), self.tools(1, i), k[6], k[5],
                     self.usage_of(i), _SURV_NAMES[f >> SURV_SHIFT], None if t < 0 else t,
                     None if r < 0 else r, bool(f & COMPACT), self.bridged.get(i) if self.bridged else None)


    def light(self, want_kind) -> Iterator["Light"]:
        """`Light` views of the records whose kind (the `kinds` tuple) passes `want_kind` or that
        carry tool_use/tool_result ids, in file order: the fields a reader of every record's
        kind, line, place, time, turn and survival needs, without the uuids, parent, message id
        and usage an `Entry` decodes (files' cold read of every lane)."""
        kinds, kind, fl, turn = self.kinds, self.kind, self.fl, self.turn
        ok = [bool(want_kind(k)) for k in kinds]
        tooled = set(self.tuse.keys)
        tooled.update(self.tres.keys)
        tooled.update(i for _w, i in self.odd_tools)
        no, off, ln, tools, timestamp = self.no, self.off, self.ln, self.tools, self.timestamp
        for i in range(len(no)):
            c = kind[i]
            has = i in tooled
            if not (has or ok[c]):
                continue
            k = kinds[c]
            t = turn[i]
            yield Light(no[i], off[i], ln[i], k[0], k[1], k[5],
                        tools(0, i) if has else (), tools(1, i) if has else (),
                        timestamp(i), None if t < 0 else t, _SURV_NAMES[fl[i] >> SURV_SHIFT])


class Light:
    """Some fields of one record's `Entry` (`Columns.light`), equal to the `Entry`'s."""

    __slots__ = ("no", "offset", "length", "type", "subtype", "attachment", "tool_use_ids",
                 "tool_result_ids", "timestamp", "turn", "survival")

    def __init__(self, no, offset, length, type, subtype, attachment, tool_use_ids, tool_result_ids,
                 timestamp, turn, survival) -> None:
        self.no, self.offset, self.length = no, offset, length
        self.type, self.subtype, self.attachment = type, subtype, attachment
        self.tool_use_ids, self.tool_result_ids = tool_use_ids, tool_result_ids
        self.timestamp, self.turn, self.survival = timestamp, turn, survival


_SURV_NAMES = (None, "live", "abandoned", "pre-cut")
_SURV_CODE = {"live": 1, "abandoned": 2, "pre-cut": 3}


class Entries(Sequence):
    """The records as `Entry` objects, each made when asked for (not kept)."""

    __slots__ = ("_c",)

    def __init__(self, c: Columns) -> None:
        self._c = c

    def __len__(self) -> int:
        return len(self._c.no)

    def __getitem__(self, i):
        n = len(self._c.no)
        if isinstance(i, slice):
            return [self._c.entry(j) for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("entry index out of range")
        return self._c.entry(i)

    def __iter__(self) -> Iterator:
        entry = self._c.entry
        for i in range(len(self._c.no)):
            yield entry(i)

    def __bool__(self) -> bool:
        return len(self._c.no) > 0
