"""MEANING at lane level: one pass over a transcript builds an index of its records with their
labels, their survival on the conversation chain, and their turn numbers.

Survival (each rule's claim in docs/claims.md):
- the leaf is the last uuid-bearing record in file order; walking `parentUuid` from it gives the
  live chain (REC-033); at a compaction boundary (`parentUuid` null) `logicalParentUuid` rejoins
  the older chain, and everything reached that way is `pre-cut` (CMP-003, CMP-017);
- a record off the chain that is not a conversation child (tool-result carriers, isMeta records,
  attachments, system lines: MISC-006) inherits the state of its parent;
- any other off-chain record is `abandoned` (rewound past, or a superseded draft); a genuine
  user record that is abandoned, has a later same-parent user sibling and was never answered (no
  assistant record descends from it through non-assistant records) is a draft: `user.unsent`
  (TURN-022). An answered one was delivered and then rewound past: it keeps `user.message`
  (abandoned);
- a replayed copy of a uuid (a later line with a uuid already seen) resolves to the earlier line
  and is flagged `replay_of`; replays open no turn;
- a record whose parent uuid appears nowhere in the file, after an OMITTED line (zero-filled or
  malformed: a crash destroyed a record there), is BRIDGED across the omission to the last
  uuid-bearing record before it (the record the destroyed one most likely followed), so the chain,
  survival and turns stay whole; each bridge is declared (`ReadStats.bridges`: the record's line,
  the omitted line, the line bridged to). When the conversation before the omission had ended its
  turn (last conversation record an assistant reply that called no tool), the destroyed record
  was the next turn's opener: the first bridged record opens that turn in its place
  (`inferred_opener`).
Turn numbers count the turn openers that are not abandoned and not replays, in file order, so
every command that speaks of "turn N" means the same records.

One implementation: these rules run on a `Skeleton` (one slot per record: uuid -> slot dict,
parent slots in an int array, a flag byte), which `LaneIndex.build` fills next to its entries and
the streaming `stats` census fills without keeping any entry (providers/claude/stats.py; the two are held
equal by tests/test_lane_perf_equivalence.py).
"""

from __future__ import annotations

import os
import sys
from array import array
from dataclasses import dataclass, field
from bisect import bisect_left, bisect_right
from typing import Iterator, Literal

import orjson

from ..discover import Lane
from ....read.lines import ReadStats, Releaser, iter_lines, open_map, parse_numbered
from . import record as R
from .lanecols import HAS_UUID, OPENER, SURV_SHIFT, Columns, Entries

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
    bridged_to: int | None = None
    """Line of the record this one was bridged to: its parent lay in an omitted line."""


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
        subtype=sys.intern(obj["subtype"]) if isinstance(obj.get("subtype"), str) else None,
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
        e.stop_reason = sys.intern(m["stop_reason"]) if isinstance(m.get("stop_reason"), str) else None
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
        k = R.attachment_kind(obj)
        e.attachment = sys.intern(k) if k is not None else None
    return e


# -- the survival skeleton: one implementation for LaneIndex and the streaming `stats` -------

F_UUID = 1
"""The record carries a uuid (only these have a survival state)."""
F_REPLAY = 2
"""A later line with a uuid already seen (resolves to its first line)."""
F_CONV = 4
"""A conversation child (an assistant record, or a user record whose first label is genuine
prose, an answer, a rejection, an inbound message or a slash command): off the chain it is
abandoned, it does not inherit."""
F_OPENER = 8
"""The record opens a turn (before draft relabelling)."""
F_PEMPTY = 16
"""`parentUuid` is the empty string: looked up on the chain walk, ignored when inheriting."""
F_LEMPTY = 32
"""`logicalParentUuid` is the empty string (same treatment)."""
F_ASST = 64
"""An assistant record (an answer: a prompt it descends from was delivered)."""

LIVE, ABANDONED, PRECUT = 1, 2, 3
SURVIVAL_NAMES: tuple[Survival | None, ...] = (None, "live", "abandoned", "pre-cut")
_BUSY = 9
_NONE, _DANGLING = -1, -2

CONV_NONE, CONV_ENDED, CONV_OPEN = 0, 1, 2
"""Conversation state after a record (for bridging): no conversation record yet; an assistant
reply that called no tool (the turn ended); anything else (a prompt, a tool call, a result)."""


def conv_state(t: str | None, is_meta: bool, stop_reason: str | None) -> int:
    """The conversation state a record leaves (CONV_NONE: the record does not change it)."""
    if t == "assistant":
        return CONV_ENDED if stop_reason is not None and stop_reason != "tool_use" else CONV_OPEN
    if t == "user" and not is_meta:
        return CONV_OPEN
    return CONV_NONE


_CONVERSATION_CHILD_FIRST = frozenset(("user.message", "user.answer", "user.rejection",
                                       "agent.communication.inbox", "harness.command.invocation"))


def skeleton_flags(t: str | None, labels: tuple[str, ...] | list[str], opener: bool,
                   continues_message: bool = False) -> int:
    """The flags of one record that survival and turn counting read (uuid/replay set by `add`).

    `continues_message`: an assistant record whose parent is the previous assistant record of the
    same API message (`message.id`): parallel tool calls are written one record per block, chained.
    It was sent whichever tool result the conversation continued from (2.1.332 writes results in
    completion order and continues from the last one written), so it inherits its parent's
    survival instead of counting as an abandoned conversation child."""
    f = F_OPENER if opener else 0
    if t == "assistant":
        f |= F_ASST
    if (t == "assistant" and not continues_message) or (t == "user" and labels and labels[0] in _CONVERSATION_CHILD_FIRST):
        f |= F_CONV
    return f


class Skeleton:
    """The record graph of one lane in compact form: one slot per record (in file order), the
    uuid -> first-slot dict, parent slots in an int array, one byte of flags per slot. Enough to
    compute survival, drafts and the turn count without keeping the records."""

    __slots__ = ("index", "parent", "flags", "logical", "replay", "pending", "drafts", "last", "last_line",
                 "conv", "omits", "lines", "bridges")

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        """uuid -> slot of its FIRST line."""
        self.parent = array("i")
        """slot of the parent's first line; -1 no parent, -2 a uuid not (yet) seen."""
        self.flags = bytearray()
        self.logical: dict[int, int] = {}
        """slot -> slot of its logicalParentUuid (-2 unresolved), for records that carry one."""
        self.replay: dict[int, int] = {}
        """replay slot -> slot of the first line with that uuid."""
        self.pending: list[tuple[int, int, str]] = []
        """(slot, 0 parent | 1 logical, uuid) references to uuids not seen when added."""
        self.drafts: list[tuple[int, str]] = []
        """Draft candidates in file order: (slot, parentUuid) of user records labelled
        user.message with a parent (replays are skipped when the drafts are computed)."""
        self.last = -1
        """slot of the last uuid-bearing record."""
        self.last_line = 0
        """its line number."""
        self.conv = CONV_NONE
        """The conversation state after the records added so far (set by the caller)."""
        self.omits: list[tuple[int, int, int, int, int]] = []
        """Omitted lines: (slots before it, last uuid slot before it (-1 none), that slot's line,
        the omitted line's number, the conversation state before it)."""
        self.lines: dict[int, int] = {}
        """slot -> line, for slots whose parent reference was pending (bridge candidates)."""
        self.bridges: list[tuple[int, int, int, int, bool]] = []
        """(slot, its line, omitted line, bridged-to line, inferred opener), set by `finish`."""

    def __len__(self) -> int:
        return len(self.flags)

    def add(self, uuid: str | None, parent: str | None, logical: str | None, flags: int, line: int = 0) -> int:
        """Append one record; `parent`/`logical` are the string values (None when not strings)."""
        fl = self.flags
        n = len(fl)
        if uuid is None:
            self.parent.append(_NONE)
            fl.append(flags)
            return n
        flags |= F_UUID
        index = self.index
        first = index.setdefault(uuid, n)
        if first != n:
            self.replay[n] = first
            flags |= F_REPLAY
        self.last = n
        self.last_line = line
        if parent is None:
            self.parent.append(_NONE)
        else:
            if not parent:
                flags |= F_PEMPTY
            p = index.get(parent)  # = self._ref(n, 0, parent), inline
            if p is None:
                self.pending.append((n, 0, parent))
                self.lines[n] = line
                p = _DANGLING
            self.parent.append(p)
        if logical is not None:
            if not logical:
                flags |= F_LEMPTY
            self.logical[n] = self._ref(n, 1, logical)
        fl.append(flags)
        return n

    def _ref(self, n: int, which: int, uuid: str) -> int:
        """The slot a reference from slot `n` points at, or -2 (resolved later by `finish`)."""
        p = self.index.get(uuid)
        if p is None:
            self.pending.append((n, which, uuid))
            return _DANGLING
        return p

    def omit(self, line: int) -> None:
        """A line no reading could take in (zero-filled or malformed) at this point of the file."""
        self.omits.append((len(self.flags), self.last, self.last_line, line, self.conv))

    def add_draft_candidate(self, slot: int, parent: str) -> None:
        self.drafts.append((slot, parent))

    def extend(self, other: "Skeleton", line_off: int = 0) -> None:
        """Append `other`, the skeleton of the lines that FOLLOW this one's in the same file
        (`line_off`: how many lines precede `other`'s first one)."""
        off = len(self.flags)
        n = len(other.flags)
        g = array("i", range(off, off + n))  # other's slot -> global slot of its uuid's first line
        flags = other.flags
        index = self.index
        replay = self.replay
        for u, j in other.index.items():
            first = index.setdefault(u, off + j)
            if first != off + j:
                g[j] = first
                flags[j] |= F_REPLAY
                replay[off + j] = first
        for j, f in other.replay.items():
            g[j] = g[f]
            replay[off + j] = g[f]
        self.parent.extend([g[p] if p >= 0 else p for p in other.parent])
        self.flags += flags
        for j, p in other.logical.items():
            self.logical[off + j] = g[p] if p >= 0 else p
        self.pending += [(off + j, w, u) for j, w, u in other.pending]
        self.drafts += [(off + j, u) for j, u in other.drafts]
        self.lines.update({off + j: ln + line_off for j, ln in other.lines.items()})
        for pos, last, last_line, line, conv in other.omits:
            if last < 0:
                last, last_line = self.last, self.last_line
            else:
                last, last_line = last + off, last_line + line_off
            self.omits.append((pos + off, last, last_line, line + line_off, conv or self.conv))
        if other.last >= 0:
            self.last = off + other.last
            self.last_line = other.last_line + line_off
        if other.conv:
            self.conv = other.conv

    def finish(self) -> None:
        """Resolve references to uuids that appeared later in the file; bridge the parent
        references that resolve nowhere across the omitted line before them (module docstring)."""
        index = self.index
        bridged: dict[str, int] = {}  # missing uuid -> omission it was bridged across
        opened: set[int] = set()
        for n, which, u in self.pending:
            p = index.get(u)
            if p is None:
                if which == 0 and self.omits:
                    self._bridge(n, u, bridged, opened)
                continue
            if which == 0:
                self.parent[n] = p
            else:
                self.logical[n] = p
        self.pending = []

    def _bridge(self, n: int, missing: str, bridged: dict[str, int], opened: set[int]) -> None:
        import bisect

        k = bridged.get(missing)
        if k is None:
            k = bisect.bisect_right([o[0] for o in self.omits], n) - 1
            if k < 0:
                return
            bridged[missing] = k
        _pos, target, target_line, line, conv = self.omits[k]
        if target < 0 or target == n:
            return
        self.parent[n] = target
        opener = conv == CONV_ENDED and k not in opened and not self.flags[n] & F_OPENER
        if opener:
            opened.add(k)
            self.flags[n] |= F_OPENER
        self.bridges.append((n, self.lines.get(n, 0), line, target_line, opener))

    def survive(self) -> bytearray:
        """Survival code (LIVE/ABANDONED/PRECUT; 0 = no uuid) of every slot; rules in the module
        docstring."""
        n = len(self.flags)
        state = bytearray(n)
        parent, flags, logical = self.parent, self.flags, self.logical
        leaf = self.replay.get(self.last, self.last)
        crossed = False
        cur = leaf
        while cur >= 0 and not state[cur]:
            state[cur] = PRECUT if crossed else LIVE
            p = parent[cur]
            if p == _NONE:
                lp = logical.get(cur)
                if lp is not None:
                    crossed = True
                    p = lp
            cur = p
        # off-chain records inherit from their parent unless they are conversation children
        for i, f in enumerate(flags):
            if f & (F_UUID | F_REPLAY) != F_UUID or state[i]:
                continue
            if f & F_CONV:
                state[i] = ABANDONED
                continue
            p = parent[i] if not f & F_PEMPTY else _NONE
            if p >= 0:
                s = state[p]
                if s and s != _BUSY:  # the usual case: the parent was resolved before
                    state[i] = s
                    continue
            path = []
            j = i
            while True:
                s = state[j]
                if s == _BUSY or len(path) > 10000:
                    res = ABANDONED  # a cycle or an absurdly deep chain
                    break
                if s:
                    res = s
                    break
                path.append(j)
                state[j] = _BUSY
                fj = flags[j]
                if fj & F_CONV:
                    res = ABANDONED
                    break
                p = parent[j] if not fj & F_PEMPTY else _NONE
                if p < 0:
                    lp = logical.get(j, _NONE)
                    p = lp if not fj & F_LEMPTY else _NONE
                if p < 0:
                    res = ABANDONED  # a root off the chain: a superseded conversation
                    break
                j = p
            for k in path:
                state[k] = res
        for r, f in self.replay.items():
            state[r] = state[f]
        return state

    def draft_slots(self, state: bytearray) -> list[int]:
        """Abandoned genuine user records with a later same-parent sibling that nothing answered:
        `user.unsent` (a rewound prompt the model had answered is no draft)."""
        groups: dict[str, list[int]] = {}
        flags = self.flags
        for slot, parent in self.drafts:
            if not flags[slot] & F_REPLAY:
                groups.setdefault(parent, []).append(slot)
        cands = {slot for group in groups.values() for slot in group[:-1] if state[slot] == ABANDONED}
        if not cands:
            return []
        answered = self._answered(cands)
        return sorted(cands - answered)

    def _answered(self, cands: set[int]) -> set[int]:
        """The candidate slots an assistant record descends from, through non-assistant records
        (at most 256 steps each: the walk is linear overall)."""
        parent, flags = self.parent, self.flags
        out: set[int] = set()
        for a in _positions(flags, F_ASST, F_ASST):
            p = parent[a]
            steps = 0
            while p >= 0 and steps < 256:
                if p in cands:
                    out.add(p)
                    break
                if flags[p] & F_ASST:
                    break
                p = parent[p]
                steps += 1
        return out

    def turn_count(self, state: bytearray) -> int:
        """Openers that are neither abandoned nor replays (drafts are abandoned)."""
        return sum(1 for i in _positions(self.flags, F_OPENER | F_REPLAY, F_OPENER) if state[i] != ABANDONED)


def _positions(flags: bytearray, mask: int, want: int) -> Iterator[int]:
    """Slots whose `flags & mask == want`, found by C-level scans (most slots are skipped)."""
    table = bytes(1 if b & mask == want else 0 for b in range(256))
    hits = flags.translate(table)
    find = hits.find
    i = find(1)
    while i >= 0:
        yield i
        i = find(1, i + 1)


class LaneIndex:
    """Every record of one lane: labels, survival, turn, where it is in the file. Held in columns
    (providers/claude/model/lanecols.py: ~150 bytes a record, not ~600 as one `Entry` object each); `entries` makes
    the `Entry` of a record when it is asked for."""

    def __init__(self, lane: Lane, entries: list[Entry] | None = None, stats: ReadStats | None = None,
                 by_uuid: dict[str, int] | None = None, size: int = 0) -> None:
        self.lane = lane
        self.stats = stats if stats is not None else ReadStats()
        self.by_uuid: dict[str, int] = by_uuid if by_uuid is not None else {}
        """uuid -> slot (index in `entries`) of its FIRST line."""
        self.size = size
        self._c = Columns()
        for e in entries or ():
            self._c.add(e, -2)

    @property
    def entries(self) -> Entries:
        """The records in file order, as `Entry` objects made on access (a Sequence)."""
        return Entries(self._c)

    @property
    def columns(self) -> Columns:
        return self._c

    @classmethod
    def build(cls, lane: Lane, strict: bool = False) -> "LaneIndex":
        idx = cls(lane)
        st = idx.stats
        sk = Skeleton()
        cols = idx._c
        prev_assistant: tuple[str | None, str | None] = (None, None)  # (uuid, message.id)
        for line in iter_lines(lane.path, stats=st):
            lost = len(st.malformed_lines), st.zero_filled_lines
            obj = parse_numbered(line, lane.path, st, strict)
            if (len(st.malformed_lines), st.zero_filled_lines) != lost:
                sk.omit(line.no)  # a record may have been destroyed here
            if obj is None:
                continue
            e = entry_from(obj, line.no, line.offset, len(line.raw))
            cont = False
            if e.type == "assistant":
                cont = e.msg_id is not None and e.parent is not None and (e.parent, e.msg_id) == prev_assistant
                prev_assistant = (e.uuid, e.msg_id)
            slot = sk.add(e.uuid, e.parent, e.logical_parent, skeleton_flags(e.type, e.labels, e.opener, cont),
                          line.no)
            c = conv_state(e.type, e.is_meta, e.stop_reason)
            if c:
                sk.conv = c
            p = sk.parent[slot] if e.uuid is not None else -2
            if e.type == "user" and e.parent is not None and e.labels[:1] == ("user.message",):
                sk.add_draft_candidate(slot, e.parent)
            cols.add(e, p if 0 <= p < slot else -2)
        idx.size = st.bytes
        idx._survive(sk)
        idx._number_turns()
        return idx

    # -- survival ----------------------------------------------------------------------------

    def _survive(self, sk: "Skeleton") -> None:
        sk.finish()
        state = sk.survive()
        c = self._c
        flags = sk.flags
        for i in _positions(flags, F_UUID, F_UUID):
            c.set_survival(i, state[i])
        for r, f in sk.replay.items():
            c.rep[r] = c.no[f]
        for slot in sk.draft_slots(state):
            labels = c.kinds[c.kind[slot]][2]
            c.relabel(slot, _intern_labels(("user.unsent",) + labels[1:]))
            c.fl[slot] &= ~OPENER & 0xFF
        for slot, _line, _omitted, target_line, opener in sk.bridges:
            c.bridged[slot] = target_line
            if opener:
                c.fl[slot] |= OPENER
        self.stats.bridges = [(ln, om, tl, op) for _s, ln, om, tl, op in sk.bridges]
        self.by_uuid = sk.index

    def _pref(self, i: int) -> tuple[bool, int | None]:
        """(whether `parent or logical_parent` is None, the slot `by_uuid` gives for it)."""
        c = self._c
        p = c.par[i]
        if p >= 0:
            if not c.odd_uuid or c.odd_uuid.get(p) != "":
                return False, p
        elif p == -2:
            s = c.par_str[i]
            if s:
                return False, self.by_uuid.get(s)
        lg = c.logical.get(i) if c.logical else None
        if lg is None:
            return True, None
        return False, self.by_uuid.get(lg)

    def opener_slots(self) -> Iterator[int]:
        return self._openers()

    def _openers(self) -> Iterator[int]:
        """Slots of the turn openers that are neither replays nor abandoned, in file order."""
        c = self._c
        fl, rep = c.fl, c.rep
        ab = 2 << SURV_SHIFT
        for i in _positions(fl, OPENER, OPENER):
            if rep[i] < 0 and fl[i] & (3 << SURV_SHIFT) != ab:
                yield i

    def _number_turns(self) -> None:
        """Openers are numbered in file order; every other record joins the turn of its nearest
        opener ancestor on the parentUuid chain (the client can write a turn's first assistant
        record on the line ABOVE its prompt), falling back to file order when it has no
        resolvable parent."""
        c = self._c
        n = len(c)
        fl, rep = c.fl, c.rep
        num: dict[int, int] = {}
        for k, i in enumerate(self._openers(), 1):
            num[i] = k
        file_order = array("i", bytes(4 * n))  # -1: none
        cur = -1
        for i in range(n):
            if i in num:
                cur = num[i]
            file_order[i] = cur
        UNSET = -3
        memo = array("i", [UNSET]) * n  # -1: None
        by_uuid = self.by_uuid
        bridged = c.bridged
        for i in range(n):
            if memo[i] != UNSET:
                continue
            path: list[int] = []
            j: int | None = i
            found = -1
            resolved = False
            seen: set[int] = set()
            while j is not None and j not in seen:
                seen.add(j)
                m = memo[j]
                if m != UNSET:
                    found, resolved = m, True
                    break
                t = num.get(j)
                if t is not None:
                    found, resolved = t, True
                    memo[j] = found
                    break
                path.append(j)
                if not fl[j] & HAS_UUID:
                    break
                src = j
                if rep[j] >= 0:
                    src = by_uuid[c.uuid(j)]
                none, nxt = self._pref(src)
                jj = j
                j = nxt
                if j is None and bridged:
                    bt = bridged.get(jj)
                    if bt is not None:
                        j = self._line_index(bt)
                if none:
                    resolved = True  # a root with no opener above it: before the first turn
                    found = -1
            for k in path:
                if resolved:
                    memo[k] = found if (found != -1 or fl[k] & HAS_UUID) else file_order[k]
                else:
                    memo[k] = file_order[k]
        # A queue-operation line carries no uuid and no join key (QT-001, QT-004); the client
        # writes the enqueue/dequeue of a prompt on the lines just above the user record it
        # becomes, so one whose next uuid-bearing record is a numbered opener belongs to that
        # opener's turn (the file-order fallback would hand it to the previous turn, or none).
        queued: dict[int, int] = {}
        nxt_t: int | None = None
        kinds, kind = c.kinds, c.kind
        for i in range(n - 1, -1, -1):
            if fl[i] & HAS_UUID:
                nxt_t = num.get(i)
            elif nxt_t is not None and kinds[kind[i]][0] == "queue-operation":
                queued[i] = nxt_t
        turn = c.turn
        for i in range(n):
            if not fl[i] & HAS_UUID:
                turn[i] = queued.get(i, file_order[i])
            else:
                turn[i] = memo[i]

    def _line_index(self, no: int) -> int | None:
        nos = self._c.no
        lo = bisect_left(nos, no)
        return lo if lo < len(nos) and nos[lo] == no else None

    # -- access ------------------------------------------------------------------------------

    @property
    def turns(self) -> int:
        """How many turns the lane has (openers that are neither abandoned nor replays)."""
        return sum(1 for _ in self._openers())

    def entry_at_line(self, no: int) -> Entry | None:
        i = self._line_index(no)
        return self._c.entry(i) if i is not None else None

    def entry_at_offset(self, offset: int) -> Entry | None:
        """The record that starts at byte `offset`, if one does."""
        offs = self._c.off
        i = bisect_left(offs, offset)
        return self._c.entry(i) if i < len(offs) and offs[i] == offset else None

    def entries_in_lines(self, a: int, b: int) -> list[Entry]:
        """The records on lines a..b, in file order."""
        nos = self._c.no
        return [self._c.entry(i) for i in range(bisect_left(nos, a), bisect_right(nos, b))]

    def entries_with_uuid(self, uuid: str) -> list[Entry]:
        """The record with that uuid and its replays, in file order."""
        first = self.by_uuid.get(uuid)
        if first is None:
            return []
        c = self._c
        no = c.no[first]
        return [c.entry(first)] + [c.entry(i) for i, r in enumerate(c.rep) if r == no and i != first
                                   and c.uuid(i) == uuid]

    def slots_where(self, mask: int, want: int) -> Iterator[int]:
        """Slots whose flag byte (providers/claude/model/lanecols.py) has `flags & mask == want`."""
        return _positions(self._c.fl, mask, want)

    def turn_entries(self, turn: int | None) -> list[Entry]:
        c = self._c
        if turn is None:
            code = -1  # the records of no turn
        elif type(turn) is int and turn >= 0:
            code = turn
        else:
            return [e for e in self.entries if e.turn == turn]
        return [c.entry(i) for i, t in enumerate(c.turn) if t == code]

    def load(self, e: Entry) -> dict:
        """Re-read one record's full object from disk by its offset."""
        return load_at(self.lane.path, e.offset, e.length)

    def load_many(self, es: list[Entry]) -> Iterator[tuple[Entry, dict]]:
        """(entry, its record re-read by offset) for each of `es`; the pages read are released
        behind the reader (entries in file order: the mapping does not stay resident)."""
        with open_map(self.lane.path) as m:
            buf = m.buf
            rel = Releaser(buf)
            for e in es:
                raw = bytes(buf[e.offset : e.offset + e.length])
                rel.passed(e.offset)
                yield e, _loads(raw)


def _loads(raw: bytes) -> dict:
    from ....read.lines import parse_line

    obj = parse_line(raw)
    return obj if obj is not None else {}


def load_at(path: str | os.PathLike[str], offset: int, length: int) -> dict:
    with open(path, "rb") as f:
        f.seek(offset)
        return _loads(f.read(length))
