"""MEANING at lane level: one pass over a transcript builds an index of its records with their
labels, their survival on the conversation chain, and their turn numbers.

Survival (REC-033, TURN-022..024, CMP-003, CMP-017, REC-091):
- the leaf is the last uuid-bearing record in file order; walking `parentUuid` from it gives the
  live chain; at a compaction boundary (`parentUuid` null) `logicalParentUuid` rejoins the older
  chain, and everything reached that way is `pre-cut`;
- a record off the chain that is not a conversation child (tool-result carriers, isMeta records,
  attachments, system lines: MISC-006) inherits the state of its parent;
- any other off-chain record is `abandoned` (rewound past, or a superseded draft); a genuine
  user record that is abandoned and has a later same-parent user sibling is a draft: `user.unsent`;
- a replayed copy of a uuid (a later line with a uuid already seen) resolves to the earlier line
  and is flagged `replay_of`; replays open no turn.
Turn numbers count the turn openers that are not abandoned and not replays, in file order, so
every command that speaks of "turn N" means the same records.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Iterator, Literal

import orjson

from ..discover import Lane
from ..read.lines import ReadStats, iter_lines, open_map, parse_numbered
from . import record as R

Survival = Literal["live", "abandoned", "pre-cut"]


@dataclass(slots=True)
class Entry:
    no: int
    offset: int
    length: int
    type: str | None
    subtype: str | None
    uuid: str | None
    parent: str | None
    logical_parent: str | None
    labels: tuple[str, ...]
    timestamp: str | None
    opener: bool
    is_meta: bool
    msg_id: str | None = None
    model: str | None = None
    stop_reason: str | None = None
    tool_use_ids: tuple[str, ...] = ()
    tool_result_ids: tuple[str, ...] = ()
    tool_names: tuple[str, ...] = ()
    attachment: str | None = None
    usage: tuple[int | None, int | None, int | None, int | None] | None = None
    """(input, output, cache_read, cache_creation) tokens as written; None = no usage object."""
    survival: Survival | None = None
    turn: int | None = None
    replay_of: int | None = None
    is_compact_summary: bool = False


_CONVERSATION_TYPES = ("user", "assistant")


def _is_conversation_child(e: Entry) -> bool:
    if e.type == "assistant":
        return True
    if e.type == "user" and e.labels:
        return e.labels[0] in ("user.message", "user.answer", "user.rejection",
                               "agent.communication.inbox", "harness.command.invocation")
    return False


_LABELS: dict[tuple[str, ...], tuple[str, ...]] = {}


def _intern_labels(t: tuple[str, ...]) -> tuple[str, ...]:
    return _LABELS.setdefault(t, t)


def entry_from(obj: dict, no: int, offset: int, length: int) -> Entry:
    labels = _intern_labels(tuple(R.classify(obj)))
    t = obj.get("type") if isinstance(obj.get("type"), str) else None
    if t is not None:
        t = sys.intern(t)
    ts = obj.get("timestamp")
    if not isinstance(ts, str):
        snap = obj.get("snapshot")
        ts = snap.get("timestamp") if isinstance(snap, dict) and isinstance(snap.get("timestamp"), str) else None
    e = Entry(
        no=no,
        offset=offset,
        length=length,
        type=t,
        subtype=obj.get("subtype") if isinstance(obj.get("subtype"), str) else None,
        uuid=obj.get("uuid") if isinstance(obj.get("uuid"), str) else None,
        parent=obj.get("parentUuid") if isinstance(obj.get("parentUuid"), str) else None,
        logical_parent=obj.get("logicalParentUuid") if isinstance(obj.get("logicalParentUuid"), str) else None,
        labels=labels,
        timestamp=ts,
        opener=R.opens_turn(obj, labels),
        is_meta=bool(obj.get("isMeta")),
        is_compact_summary=bool(obj.get("isCompactSummary")),
    )
    if t == "assistant":
        m = R.get_message(obj) or {}
        e.msg_id = m.get("id") if isinstance(m.get("id"), str) else None
        e.model = sys.intern(m["model"]) if isinstance(m.get("model"), str) else None
        e.stop_reason = m.get("stop_reason") if isinstance(m.get("stop_reason"), str) else None
        u = m.get("usage")
        if isinstance(u, dict):
            e.usage = tuple(v if isinstance(v, int) else None for v in (
                u.get("input_tokens"), u.get("output_tokens"),
                u.get("cache_read_input_tokens"), u.get("cache_creation_input_tokens")))
        tus = R.tool_uses(obj)
        e.tool_use_ids = tuple(str(b.get("id")) for b in tus if b.get("id"))
        e.tool_names = tuple(str(b.get("name")) for b in tus if b.get("name"))
    elif t == "user":
        e.tool_result_ids = tuple(str(b.get("tool_use_id")) for b in R.tool_results(obj) if b.get("tool_use_id"))
    elif t == "attachment":
        e.attachment = R.attachment_kind(obj)
    return e


@dataclass
class LaneIndex:
    lane: Lane
    entries: list[Entry] = field(default_factory=list)
    stats: ReadStats = field(default_factory=ReadStats)
    by_uuid: dict[str, int] = field(default_factory=dict)
    """uuid -> index in `entries` of its FIRST line."""
    size: int = 0

    @classmethod
    def build(cls, lane: Lane, strict: bool = False) -> "LaneIndex":
        idx = cls(lane)
        st = idx.stats
        for line in iter_lines(lane.path, stats=st):
            obj = parse_numbered(line, lane.path, st, strict)
            if obj is None:
                continue
            idx.entries.append(entry_from(obj, line.no, line.offset, len(line.raw)))
        idx.size = st.bytes
        idx._survive()
        idx._number_turns()
        return idx

    # -- survival ----------------------------------------------------------------------------

    def _survive(self) -> None:
        by_uuid = self.by_uuid
        for i, e in enumerate(self.entries):
            if e.uuid is None:
                continue
            if e.uuid in by_uuid:
                e.replay_of = self.entries[by_uuid[e.uuid]].no
            else:
                by_uuid[e.uuid] = i
        leaf = None
        for e in reversed(self.entries):
            if e.uuid is not None:
                leaf = by_uuid[e.uuid]
                break
        state: dict[int, Survival] = {}
        crossed = False
        cur = leaf
        guard = 0
        while cur is not None and cur not in state and guard <= len(self.entries):
            guard += 1
            e = self.entries[cur]
            state[cur] = "pre-cut" if crossed else "live"
            nxt = e.parent
            if nxt is None and e.logical_parent is not None:
                crossed = True
                nxt = e.logical_parent
            cur = by_uuid.get(nxt) if nxt is not None else None
        # off-chain records
        for i, e in enumerate(self.entries):
            if e.uuid is None:
                continue
            j = by_uuid[e.uuid]
            if j != i:
                continue
            self._resolve(j, state, 0)
        for i, e in enumerate(self.entries):
            if e.uuid is None:
                continue
            e.survival = state.get(by_uuid[e.uuid])
        # drafts: abandoned genuine user records with a later same-parent user sibling
        siblings: dict[str, list[int]] = {}
        for i, e in enumerate(self.entries):
            if e.type == "user" and e.parent is not None and e.replay_of is None and e.labels[:1] == ("user.message",):
                siblings.setdefault(e.parent, []).append(i)
        for group in siblings.values():
            if len(group) < 2:
                continue
            for i in group[:-1]:
                e = self.entries[i]
                if e.survival == "abandoned":
                    e.labels = ("user.unsent",) + e.labels[1:]
                    e.opener = False

    def _resolve(self, i: int, state: dict[int, Survival], depth: int) -> Survival:
        if i in state:
            return state[i]
        e = self.entries[i]
        if depth > 10000:
            state[i] = "abandoned"
            return "abandoned"
        if _is_conversation_child(e):
            state[i] = "abandoned"
            return "abandoned"
        p = self.by_uuid.get(e.parent) if e.parent else None
        if p is None and e.logical_parent:
            p = self.by_uuid.get(e.logical_parent)
        if p is None:
            # a root that is not on the chain: a record of a superseded conversation
            state[i] = "abandoned"
            return "abandoned"
        s = self._resolve(p, state, depth + 1)
        state[i] = s
        return s

    def _number_turns(self) -> None:
        """Openers are numbered in file order; every other record joins the turn of its nearest
        opener ancestor on the parentUuid chain (the client can write a turn's first assistant
        record on the line ABOVE its prompt), falling back to file order when it has no
        resolvable parent."""
        ents = self.entries
        num: dict[int, int] = {}
        n = 0
        for i, e in enumerate(ents):
            if e.opener and e.replay_of is None and e.survival != "abandoned":
                n += 1
                num[i] = n
        file_order: list[int | None] = []
        cur: int | None = None
        for i in range(len(ents)):
            if i in num:
                cur = num[i]
            file_order.append(cur)
        memo: dict[int, int | None] = {}
        by_uuid = self.by_uuid
        for i, e in enumerate(ents):
            if i in memo:
                continue
            path: list[int] = []
            j: int | None = i
            found: int | None = None
            resolved = False
            seen: set[int] = set()
            while j is not None and j not in seen:
                seen.add(j)
                if j in memo:
                    found, resolved = memo[j], True
                    break
                if j in num:
                    found, resolved = num[j], True
                    memo[j] = found
                    break
                path.append(j)
                ej = ents[j]
                if ej.uuid is None:
                    break
                p = ej.parent or ej.logical_parent
                if ej.replay_of is not None:
                    p = ents[by_uuid[ej.uuid]].parent or ents[by_uuid[ej.uuid]].logical_parent
                j = by_uuid.get(p) if p is not None else None
                if p is None:
                    resolved = True  # a root with no opener above it: before the first turn
                    found = None
            for k in path:
                if resolved:
                    memo[k] = found if (found is not None or ents[k].uuid is not None) else file_order[k]
                else:
                    memo[k] = file_order[k]
        for i, e in enumerate(ents):
            t = memo.get(i, file_order[i])
            if e.uuid is None:
                t = file_order[i]
            e.turn = t

    # -- access ------------------------------------------------------------------------------

    @property
    def turns(self) -> int:
        """How many turns the lane has (openers that are neither abandoned nor replays)."""
        return sum(1 for e in self.entries if e.opener and e.replay_of is None and e.survival != "abandoned")

    def entry_at_line(self, no: int) -> Entry | None:
        lo, hi = 0, len(self.entries)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.entries[mid].no < no:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self.entries) and self.entries[lo].no == no:
            return self.entries[lo]
        return None

    def turn_entries(self, turn: int) -> list[Entry]:
        return [e for e in self.entries if e.turn == turn]

    def load(self, e: Entry) -> dict:
        """Re-read one record's full object from disk by its offset."""
        return load_at(self.lane.path, e.offset, e.length)

    def load_many(self, es: list[Entry]) -> Iterator[tuple[Entry, dict]]:
        with open_map(self.lane.path) as m:
            for e in es:
                raw = bytes(m.buf[e.offset : e.offset + e.length])
                yield e, _loads(raw)


def _loads(raw: bytes) -> dict:
    from ..read.lines import parse_line

    obj = parse_line(raw)
    return obj if obj is not None else {}


def load_at(path: str | os.PathLike[str], offset: int, length: int) -> dict:
    with open(path, "rb") as f:
        f.seek(offset)
        return _loads(f.read(length))
