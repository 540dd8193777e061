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
    ents = idx.entries
    return {
        "turn": array("i", (-1 if e.turn is None else e.turn for e in ents)).tobytes(),
        "survival": bytes(SURVIVAL_CODE[e.survival] for e in ents),
        "opener": bytes(1 if e.opener else 0 for e in ents),
        "unsent": [i for i, e in enumerate(ents) if e.labels[:1] == ("user.unsent",)],
        "bridged": [[i, e.bridged_to] for i, e in enumerate(ents) if e.bridged_to is not None],
        "replay": [[i, e.replay_of] for i, e in enumerate(ents) if e.replay_of is not None],
    }


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
