"""Turn numbers, final labels and survival of every record, from a lane's index - computed by
`LaneIndex`'s own code (`_survive`, `_number_turns`) run on entries rebuilt from the index's
skeleton and columns, so they are the lane view's, exactly (tests/test_index_turns.py holds them
equal record by record on every real lane). Computed on first need and kept in the index file
(section ``turns``) for the file as it is; an append computes them again.
"""

from __future__ import annotations

from array import array

from ..discover import Lane
from ..model.lane import F_LEMPTY, F_OPENER, F_PEMPTY, F_UUID, Entry, LaneIndex, Skeleton
from ..model.lanecols import OPENER, SURV_SHIFT
from . import codec

SECTION = "turns.2"
"""The section's name carries its rules' version: a change of the turn rules renames it, so an
index written before is derived again, never read stale (2: a queue-operation line joins the turn
of the opener below it)."""

SURVIVAL_CODE = {None: 0, "live": 1, "abandoned": 2, "pre-cut": 3}
SURVIVAL_NAME = (None, "live", "abandoned", "pre-cut")


def entries_of(lane: Lane, sk: Skeleton, cols) -> LaneIndex:
    """A LaneIndex whose entries carry what survival and turn numbering read (line, offset,
    length, type, uuid, parent and logical parent as written, labels, timestamp, opener), rebuilt
    from the UNFINISHED skeleton of the lane's census and its columns; then derived by LaneIndex."""
    n = len(sk.flags)
    uuid_of: list[str | None] = [None] * n
    for u, s in sk.index.items():
        uuid_of[s] = u
    for r, f in sk.replay.items():
        uuid_of[r] = uuid_of[f]
    pend_parent: dict[int, str] = {}
    pend_logical: dict[int, str] = {}
    for slot, which, u in sk.pending:
        (pend_parent if which == 0 else pend_logical)[slot] = u
    keys = list(cols.kid)
    ents = []
    flags = sk.flags
    for i in range(n):
        f = flags[i]
        key = keys[cols.key[i]]
        uuid = uuid_of[i] if f & F_UUID else None
        parent = logical = None
        if uuid is not None:
            p = sk.parent[i]
            if p >= 0:
                parent = uuid_of[p]
            elif i in pend_parent:
                parent = pend_parent[i]
            elif f & F_PEMPTY:
                parent = ""
            lp = sk.logical.get(i)
            if lp is not None:
                logical = uuid_of[lp] if lp >= 0 else pend_logical.get(i, "" if f & F_LEMPTY else None)
        ents.append(Entry(cols.no[i], cols.off[i], cols.ln[i], key[0], key[1], uuid, parent, logical, key[3],
                          cols.ts[i], bool(f & F_OPENER), False))
    idx = LaneIndex(lane, ents)
    idx._survive(sk)
    idx._number_turns()
    return idx


def derive(lane: Lane, part_obj: dict, cols) -> dict:
    """The ``turns`` section: per record its turn (-1: none), survival code, final opener flag and
    whether it is a draft (user.unsent), plus the bridged lines."""
    sk = codec.skeleton_from(part_obj["sk"])
    idx = entries_of(lane, sk, cols)
    c = idx.columns  # read in columns (providers/claude/model/lanecols.py): the survival code is the flag's top bits
    unsent = {k for k, kind in enumerate(c.kinds) if kind[2][:1] == ("user.unsent",)}
    return {
        "turn": array("i", c.turn).tobytes(),
        "survival": bytes(b >> SURV_SHIFT for b in c.fl),
        "opener": c.fl.translate(_OPENER_TABLE),
        "unsent": [i for i, k in enumerate(c.kind) if k in unsent],
        "bridged": [[i, c.bridged[i]] for i in sorted(c.bridged)],
        "replay": [[i, r] for i, r in enumerate(c.rep) if r >= 0],
    }


_OPENER_TABLE = bytes(1 if b & OPENER else 0 for b in range(256))


class Turns:
    """The ``turns`` section, decoded."""

    def __init__(self, o: dict):
        self.turn = array("i")
        self.turn.frombytes(o["turn"])
        self.survival = o["survival"]
        self.opener = o["opener"]
        self.unsent = set(o["unsent"])
        self.bridged = dict(o["bridged"])
        self.replay = dict(o["replay"])

    def turn_of(self, i: int) -> int | None:
        t = self.turn[i]
        return None if t < 0 else t

    def survival_of(self, i: int) -> str | None:
        return SURVIVAL_NAME[self.survival[i]]
