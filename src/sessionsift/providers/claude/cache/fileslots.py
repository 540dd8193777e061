"""The ``fev`` section of a lane's index: which records carry file events, and what `files` and
`recover` read of each without re-parsing it (providers/claude/files/events.py `lane_events_indexed`).

Derived once from the ``cols``, ``turns`` and ``stats`` sections (a pure function of them: the
same picks `lane_events_indexed` made from them before this section existed) and kept in the index
file for the file as it is (store.py `with_section`: an append or rewrite of the transcript writes
a new index without it, so it is derived again). Deriving a lane's file-event facts
(providers/claude/files/facts.py, kept in the data root's summary: providers/claude/cache/filesummary.py) then reads only the
records this section lists, by offset, and `recover` reads again from it the records of the
events that name its file; every record's columns and turn numbers are read only when a question
needs them (`recover --at`: providers/claude/files/events.py `LaneFacts` loads them lazily).

Per picked record (file order): slot, line, offset, length, (type, subtype, attachment kind),
timestamp (a file-history snapshot's own instant when the record has none), turn (-1: none),
survival code, tool_use ids, tool_result ids (string lists packed into one string: `_pack`). Per lane: the working-directory runs (slot where
the cwd changes, and its value), the reading's counts (`ReadStats`).
"""

from __future__ import annotations

from array import array

def derive(cols, turns, read: list, call_tools: frozenset, attachments: frozenset) -> dict:
    """The section, from the decoded columns (core.stats.Cols), turns (providers/claude/cache/turns.py Turns) and
    the stats section's ``read``: the records of `call_tools` calls (and their results), of
    `attachments` kinds and file-history lines. The two sets are kept in the section: another
    version's choice is derived again (`FileSlots.matches`)."""
    keys = list(cols.kid)
    call_ids: set[str] = set()
    pick: list[int] = []
    for i, k in enumerate(cols.key):
        t, _sub, att, _labels = keys[k]
        if t == "assistant":
            u = cols.uses.get(i)
            if u and any(x for x, _n in u) and any(isinstance(n, str) and n in call_tools for _x, n in u):
                pick.append(i)
                call_ids.update(str(x) for x, n in u if isinstance(n, str) and n in call_tools)
        elif t == "user":
            r = cols.res.get(i)
            if r and any(r) and any(str(x) in call_ids for x in r):
                pick.append(i)
        elif t in ("file-history-snapshot", "file-history-delta") or (t == "attachment" and att in attachments):
            pick.append(i)
    kinds: dict[tuple, int] = {}
    kind = array("I")
    for i in pick:
        t, sub, att, _labels = keys[cols.key[i]]
        kind.append(kinds.setdefault((t, sub, att if t == "attachment" else None), len(kinds)))
    cw_slots = sorted(cols.cwd)
    return {
        "slot": array("I", pick).tobytes(),
        "no": array("I", (cols.no[i] for i in pick)).tobytes(),
        "off": array("Q", (cols.off[i] for i in pick)).tobytes(),
        "ln": array("I", (cols.ln[i] for i in pick)).tobytes(),
        "kinds": [list(k) for k in kinds], "kind": kind.tobytes(),
        "ts": _pack([cols.ts[i] if cols.ts[i] is not None else cols.snap.get(i) for i in pick]),
        "turn": array("i", (turns.turn[i] for i in pick)).tobytes(),
        "surv": bytes(turns.survival[i] for i in pick),
        "uses": _pack_ids([[str(x) for x, _n in cols.uses.get(i, ()) if x] for i in pick]),
        "res": _pack_ids([[str(x) for x in cols.res.get(i, ()) if x] for i in pick]),
        "cw_slots": cw_slots, "cw_vals": _pack([cols.cwd[s] for s in cw_slots]),
        "read": read, "tools": sorted(call_tools), "atts": sorted(attachments),
    }


# Lists of strings are kept as one string joined by NUL (None as a lone SOH): unmarshalling one
# string and splitting it costs a tenth of unmarshalling the list. A list holding a string with
# either character (JSON can carry \u0000) is kept as the list.
_SEP, _NONE, _SUB = "\x00", "\x01", "\x01"


def _pack(xs: list) -> "str | list":
    if any(x is not None and (_SEP in x or x == _NONE) for x in xs):
        return xs
    return _SEP.join(_NONE if x is None else x for x in xs)


def _unpack(o, n: int) -> list:
    if isinstance(o, list):
        return o
    if n == 0:
        return []
    return [None if x == _NONE else x for x in o.split(_SEP)]


def _pack_ids(rows: list[list[str]]) -> "str | list":
    """Per record its ids joined by SOH, the records joined by NUL (an empty id: kept as lists)."""
    if any(not x or _SEP in x or _SUB in x for r in rows for x in r):
        return rows
    return _SEP.join(_SUB.join(r) for r in rows)


def _unpack_ids(o, n: int) -> list[tuple]:
    if isinstance(o, list):
        return [tuple(r) for r in o]
    if n == 0:
        return []
    return [tuple(x.split(_SUB)) if x else () for x in o.split(_SEP)]


def _arr(code: str, b: bytes) -> array:
    a = array(code)
    a.frombytes(b)
    return a


class FileSlots:
    """The section, decoded."""

    __slots__ = ("slot", "no", "off", "ln", "kinds", "kind", "ts", "turn", "surv", "uses", "res", "cw_slots",
                 "cw_vals", "read", "tools", "atts", "obj")

    def __init__(self, o: dict):
        self.obj = o
        """The section as stored (providers/claude/cache/filesummary.py keeps a copy)."""
        self.slot, self.no = _arr("I", o["slot"]), _arr("I", o["no"])
        self.off, self.ln = _arr("Q", o["off"]), _arr("I", o["ln"])
        self.kinds = [tuple(k) for k in o["kinds"]]
        self.kind = _arr("I", o["kind"])
        n = len(self.slot)
        self.ts, self.turn, self.surv = _unpack(o["ts"], n), _arr("i", o["turn"]), o["surv"]
        self.uses, self.res = _unpack_ids(o["uses"], n), _unpack_ids(o["res"], n)
        self.cw_slots = o["cw_slots"]
        self.cw_vals = _unpack(o["cw_vals"], len(self.cw_slots))
        self.read = o["read"]
        self.tools, self.atts = o["tools"], o["atts"]
        if not (len(self.no) == len(self.off) == len(self.ln) == len(self.kind) == len(self.ts) == len(self.turn)
                == len(self.surv) == len(self.uses) == len(self.res) == n) or len(self.cw_slots) != len(self.cw_vals):
            raise ValueError("fev section: columns of unequal length")

    def matches(self, call_tools: frozenset, attachments: frozenset) -> bool:
        return self.tools == sorted(call_tools) and self.atts == sorted(attachments)
