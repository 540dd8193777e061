"""The streaming line scanner of Claude Code's lane census (`stats.lane_stats`): one pass over a
lane's bytes into a `Part` (counters plus the survival skeleton; `Cols`, the per-record columns an
index keeps), the fast paths for the common record shapes, and how two parts of one file merge.
`stats.py` runs it (in one or two processes) and finishes each part into a `LaneStats`."""

from __future__ import annotations

import traceback
from array import array
from collections import Counter
from typing import TYPE_CHECKING, Any

import orjson

from .model import record as R
from .model.known import KNOWN_TYPES
from .model.lane import CONV_OPEN, F_CONV, LaneIndex, Skeleton, conv_state, skeleton_flags
from ...read.lines import Line, ReadStats, iter_line_batches, parse_numbered

if TYPE_CHECKING:
    from .stats import LaneStats

USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def _tool_blocks(obj: dict, no: int, uses: dict, errs: dict) -> None:
    """Record the tool_use blocks (assistant) or errored tool_results (user) of one record."""
    m = obj.get("message")
    c = m.get("content") if type(m) is dict else None
    if type(c) is not list:
        return
    if obj.get("type") == "assistant":
        for i, b in enumerate(c):
            if type(b) is dict and b.get("type") == "tool_use":
                bid = b.get("id")
                k = bid if type(bid) is str and bid else (no, i)
                if k not in uses:
                    nm = b.get("name")
                    uses[k] = nm if type(nm) is str else "(no name)"
    else:
        for i, b in enumerate(c):
            if type(b) is dict and b.get("type") == "tool_result" and b.get("is_error") is True:
                tid = b.get("tool_use_id")
                errs[tid if type(tid) is str and tid else (no, i)] = None


def _count_thinking(ls: "LaneStats | Part", obj: dict) -> None:
    """Thinking vs narration blocks by the signature's tag (NAR-002, NAR-006)."""
    for b in R.blocks_of(obj):
        if b.get("type") not in ("thinking", "redacted_thinking"):
            continue
        _count_tag(ls, b.get("signature"))


def _count_tag(ls: "LaneStats | Part", sig) -> None:
    """Count one thinking block by its signature's tag."""
    tag = R.signature_tag(sig) if isinstance(sig, str) and sig else None
    if tag == "narration":
        ls.narration_blocks += 1
    else:
        ls.thinking_blocks += 1
        if tag is None:
            ls.untagged_thinking_blocks += 1
        elif tag != "thinking":
            ls.unknown_thinking_tags[tag] += 1


_UMSG = "user.message"


class Cols:
    """Per-record columns an index keeps (sessionsift/index), filled by `_scan(cols=True)`: one
    entry per skeleton slot (a record), in file order. What search censuses and turn context
    need without re-parsing; the rest of a record is re-read from its bytes (offset, length)."""

    __slots__ = ("no", "off", "ln", "key", "ts", "uses", "res", "model", "att", "mask", "kid", "cwd", "snap",
                 "last_cwd")

    def __init__(self) -> None:
        self.no = array("I")
        """Line number."""
        self.off = array("Q")
        """Byte offset of the line."""
        self.ln = array("I")
        """Length of the line (without its newline)."""
        self.key = array("I")
        """Combo id (type, system subtype, attachment kind, labels before draft relabelling):
        the position of the key in `kid`."""
        self.ts: list = []
        """The record's top-level `timestamp` when a string, else None."""
        self.uses: dict[int, list] = {}
        """slot -> [(id, name)] of an assistant record's tool_use blocks, values as written."""
        self.res: dict[int, list] = {}
        """slot -> [tool_use_id] of a user record's tool_result blocks, values as written."""
        self.model: dict[int, str] = {}
        """slot -> message.model of an assistant record (a string)."""
        self.att: dict[int, str] = {}
        """slot -> attachment kind (`R.attachment_kind`), for every record that has one."""
        self.mask: dict[int, int] = {}
        """slot -> which LABEL_NEEDLES the line holds, for records of a type outside KNOWN_TYPES
        (what a search counts as not searched depends on which lines held its needles)."""
        self.kid: dict[tuple, int] = {}
        self.cwd: dict[int, str] = {}
        """slot -> `cwd`, where the last non-empty cwd among the records files/recover read
        (CWD_TYPES) changes: the working directory a tool call without its own is taken in."""
        self.snap: dict[int, str] = {}
        """slot -> `snapshot.timestamp` of a record with no top-level timestamp (the instant a lane
        view gives a file-history snapshot)."""
        self.last_cwd: str | None = None


CWD_TYPES = frozenset(("user", "assistant", "system", "attachment", "file-history-snapshot", "file-history-delta"))
"""The record types whose `cwd` providers/claude/files/events.py follows."""

LABEL_NEEDLES = ('"user"', '"assistant"', '"system"', '"attachment"', "queue-operation", "file-history-")
"""Every structural needle search's label selection can use (search/prefilter.py _LEAF_NEEDLES)."""
_NEEDLE_BYTES = tuple(n.encode() for n in LABEL_NEEDLES)


class Part:
    """What one reading of a contiguous run of lines yields; parts of one file are merged in
    file order with `_merge`."""

    def __init__(self) -> None:
        self.cols: Cols | None = None
        """Per-record columns (only when an index is being built)."""
        self.state: bytearray | None = None
        """Survival codes per slot, set by `_finish`."""
        self.drafts: list[int] = []
        """Slots relabelled user.unsent, set by `_finish`."""
        self.read = ReadStats()
        self.sk = Skeleton()
        self.combos: dict[tuple, int] = {}
        """(type, system subtype, attachment kind, labels) -> records, in order of first line."""
        self.first: dict[tuple, int] = {}
        """combo -> slot of its first record."""
        self.umsg: list[tuple[int, tuple[str, ...]]] = []
        """(slot, labels) of user records labelled user.message (draft relabelling moves some)."""
        self.per_msg: dict[tuple[str, str | int], dict[str, int]] = {}
        """(model, message id | line number) -> usage fields (max over the message's lines)."""
        self.narration_blocks = 0
        self.thinking_blocks = 0
        self.untagged_thinking_blocks = 0
        self.unknown_thinking_tags: Counter = Counter()
        self.head_assistant: tuple[int, str | None, str | None] | None = None
        """(slot, parentUuid, message id) of the first assistant record of a part that starts
        mid-file, whose continuation test needs the previous part's last assistant record."""
        self.last_assistant: tuple[str | None, str | None] | None = None
        """(uuid, message id) of the part's last assistant record (None: it has none)."""
        self.uses: dict = {}
        """tool_use id (or (line, block#) without one) -> tool name, in order of first call."""
        self.errs: dict = {}
        """ids of tool_results the client marked is_error (an ordered set)."""
        self.asst = array("i")
        """slots of assistant records."""
        self.prompt_slots = array("i")
        """slots of user records carrying user.message (drafts included)."""
        self.queued_slots = array("i")
        """slots of queued_command attachments delivering a typed prompt (R.is_queued_prompt)."""


_OPENER_FIRST = frozenset(("user.message", "user.answer", "user.rejection", "agent.communication.inbox",
                           "agent.communication.signal", "harness.command.invocation",
                           "harness.schedule.wakeup"))


def _may_open(labels: tuple[str, ...]) -> bool:
    """False when `R.opens_turn` is False for these labels whatever the record (a cheap gate;
    the equivalence tests hold it to `opens_turn`)."""
    return labels[0] in _OPENER_FIRST or labels[0].startswith("harness.notification.")


def _scan(buf, start: int, end: int, path, strict: bool, cols: bool = False) -> Part:
    try:
        return _scan_lines(buf, start, end, path, strict, cols)
    except BaseException as exc:
        # the lines are views of the mapping (iter_line_batches views=True): the frames of a
        # traceback must not hold one, or closing the mapping fails over this exception
        traceback.clear_frames(exc.__traceback__)
        raise


def _scan_lines(buf, start: int, end: int, path, strict: bool, cols: bool = False) -> Part:
    part = Part()
    C = part.cols = Cols() if cols else None
    off = start
    st = part.read
    st.bytes += end - start
    sk = part.sk
    add = sk.add
    combos, first, umsg, per_msg = part.combos, part.first, part.umsg, part.per_msg
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    P = _projected()
    classify, opens, attachment_kind = R.classify, R.opens_turn, R.attachment_kind
    labels_cache: dict[tuple[str, ...], bool] = {}
    prev_assistant: tuple[str | None, str | None] | None = (None, None) if start == 0 else None
    no = 0
    if P is not None:
        decode, decode_errors = P._DEC.decode, P._ERR
        project, att_t = P.project_struct, P._Att
        msg_t = P._Msg
        user_fast = _UserFast(part, P)
    # records whose labels are fixed by (type, system subtype, attachment type): per such type,
    # subtype and attachment type, [combo key, skeleton flags, records, first slot] (counted into
    # `combos` after the scan), or False when such a record could open a turn (full path)
    type_keys: dict = {}
    sys_keys: dict = {}
    att_keys: dict = {}
    kf: Any  # [combo key, flags, records, first slot] or False
    key: tuple
    fast = 0  # records counted on the fast paths
    at = 0
    slow = _SLOW_TYPES if C is None else _ALL_SLOW
    for batch in iter_line_batches(buf, start, end, st, views=C is None):
        for raw in batch:
            no += 1
            if C is not None:
                at = off
                off += len(raw) + 1
            obj = None
            if P is not None:
                try:  # = P.decode, inline
                    r = decode(raw)
                except decode_errors:
                    r = None
                if r is not None:
                    t = r.type
                    if type(t) is str and t not in slow:
                        # a record whose labels are fixed by (type, system subtype, attachment type):
                        # no dict, no classify (_fast_key holds the table to classify itself)
                        if t == "system":
                            sub = r.subtype
                            if type(sub) is not str:
                                sub = None
                            kf = sys_keys.get(sub)
                            if kf is None:
                                kf = sys_keys[sub] = _fast_key((t, sub, None))
                        elif t == "attachment":
                            a = r.attachment  # = P.attachment_type, inline
                            if type(a) is att_t:
                                a = a.type
                                if type(a) is not str:
                                    a = None
                            else:  # absent or null
                                a = None
                            kf = att_keys.get(a)
                            if kf is None:
                                kf = att_keys[a] = _fast_key((t, None, a)) if a != "queued_command" else False
                        elif t == "queue-operation" and r.operation == "enqueue":
                            kf = False
                        else:
                            kf = type_keys.get(t)
                            if kf is None:
                                kf = type_keys[t] = _fast_key((t, None, None))
                        if kf is not False:
                            fast += 1
                            uuid = r.uuid
                            parent = r.parentUuid
                            logical = r.logicalParentUuid
                            slot = add(uuid if type(uuid) is str else None,
                                       parent if type(parent) is str else None,
                                       logical if type(logical) is str else None, kf[1], no)
                            if kf[2]:
                                kf[2] += 1
                            else:
                                kf[2] = 1
                                kf[3] = slot
                            continue
                    elif t == "assistant" and C is None:
                        pa = _assistant(part, r, no, prev_assistant, msg_t)
                        if pa is not None:
                            fast += 1
                            prev_assistant = pa
                            continue
                    elif t == "user" and C is None and user_fast(r, no):
                        fast += 1
                        continue
                    obj = project(r)
            if obj is None:
                try:
                    obj = loads(raw if C is not None else memoryview(raw))  # a Str view: orjson takes buffers
                except decode_error:
                    obj = None
            if type(obj) is dict:
                st.records += 1
            else:  # blank, NULs, invalid UTF-8, not an object: the exact reading rules
                lost = len(st.malformed_lines), st.zero_filled_lines
                obj = parse_numbered(Line(no, 0, bytes(raw)), path, st, strict)
                if (len(st.malformed_lines), st.zero_filled_lines) != lost:
                    sk.omit(no)  # a record may have been destroyed here (bridging: providers/claude/model/lane.py)
                if obj is None:
                    continue
            t = obj.get("type")
            if type(t) is not str:
                t = None
            lab = classify(obj)
            if lab:
                labels = tuple(lab)
                may_open = labels_cache.get(labels)
                if may_open is None:
                    may_open = labels_cache[labels] = _may_open(labels)
                opener = may_open and opens(obj, labels)
            else:
                labels = ()
                opener = False
            uuid = obj.get("uuid")
            if type(uuid) is not str:
                uuid = None
            parent = obj.get("parentUuid")
            if type(parent) is not str:
                parent = None
            logical = obj.get("logicalParentUuid")
            cont = False
            if t == "assistant":
                m = obj.get("message")
                if type(m) is not dict:
                    m = None
                mid = m.get("id") if m is not None else None
                if type(mid) is not str:
                    mid = None
                # the same continuation rule as LaneIndex.build (parallel tool calls)
                if prev_assistant is None:
                    part.head_assistant = (len(sk), parent, mid)
                else:
                    cont = mid is not None and parent is not None and (parent, mid) == prev_assistant
                prev_assistant = (uuid, mid)
            slot = add(uuid, parent, logical if type(logical) is str else None,
                       skeleton_flags(t, labels, opener, cont), no)
            if t == "assistant":
                key = (t, None, None, labels)
                sr = m.get("stop_reason") if m is not None else None
                sk.conv = conv_state(t, False, sr if type(sr) is str else None)
                part.asst.append(slot)
                if m is not None:
                    _tool_blocks(obj, no, part.uses, part.errs)
                    _usage_into(per_msg, m.get("model"), mid or no, m.get("usage"))
                if "agent.thinking" in labels or "agent.thinking.narration" in labels:
                    _count_thinking(part, obj)
            elif t == "user":
                key = (t, None, None, labels)
                if not obj.get("isMeta"):
                    sk.conv = 2  # CONV_OPEN
                _tool_blocks(obj, no, part.uses, part.errs)
                if labels and labels[0] == _UMSG:
                    umsg.append((slot, labels))
                    if parent is not None:
                        sk.add_draft_candidate(slot, parent)
                if _UMSG in labels:
                    part.prompt_slots.append(slot)
            elif t == "system":
                sub = obj.get("subtype")
                key = (t, sub if type(sub) is str else None, None, labels)
            elif t == "attachment":
                key = (t, None, attachment_kind(obj), labels)
                if key[2] == "queued_command" and R.is_queued_prompt(obj):
                    part.queued_slots.append(slot)
            else:
                key = (t, None, None, labels)
            c = combos.get(key)
            if c is None:
                combos[key] = 1
                first[key] = slot
            else:
                combos[key] = c + 1
            if C is not None:
                _collect(C, slot, no, at, raw, obj, t, key)
    if prev_assistant is not None:
        part.last_assistant = prev_assistant
    st.records += fast
    _fold_fast(part, (type_keys, sys_keys, att_keys))
    return part


def _fold_fast(part: "Part", tables) -> None:
    """Count the fast paths' records into `part.combos`, which stays in order of first slot."""
    combos, first = part.combos, part.first
    added = False
    for table in tables:
        for kf in table.values():
            if kf is False or not kf[2]:
                continue
            key, _flags, n, slot = kf
            added = True
            c = combos.get(key)
            if c is None:
                combos[key] = n
                first[key] = slot
            else:
                combos[key] = c + n
                if slot < first[key]:
                    first[key] = slot
    if added:
        part.combos = dict(sorted(combos.items(), key=lambda kv: first[kv[0]]))


PROJECT = True
"""Decode records through providers/claude/model/projected.py (only the fields the census reads; off: orjson for
every line - the reference the tests hold it to)."""

_SLOW_TYPES = frozenset(("user", "assistant"))
"""Record types whose labels need more than the type: read through the projected dict."""
_ALL_SLOW = type("_All", (), {"__contains__": lambda self, t: True})()
"""Every type (an index build collects per-record columns from the dict)."""


def _projected():
    if not PROJECT:
        return None
    from .model import projected

    return projected


_I64_MIN, _U64_MAX = -(1 << 63), (1 << 64) - 1


def _usage_into(per_msg: dict, model, key, u) -> None:
    """One API message's usage into ``per_msg[(model, message id or line)]``: per field the
    largest integer any copy of the message wrote (streamed copies repeat and grow it); an
    assistant record that names a model but carries no usage still makes its message known.
    The one rule for the orjson and the msgspec readings: an integer past 64 bits is a float to
    orjson (projected._int), so it is not counted on either."""
    if type(u) is not dict:
        if type(model) is str and model:
            per_msg.setdefault((model, key), {})  # an API message that lacks usage
        return
    mk = (model if type(model) is str and model else "(unknown model)", key)
    cur = per_msg.get(mk)
    if cur is None:
        cur = per_msg[mk] = {}
    for f in USAGE_FIELDS:
        v = u.get(f)
        if isinstance(v, int) and _I64_MIN <= v <= _U64_MAX:
            c0 = cur.get(f)
            if c0 is None or v > c0:  # = max(cur.get(f, v), v)
                cur[f] = v
_THINKING = ("thinking", "redacted_thinking")


def _assistant(part: Part, r, no: int, prev, msg_t):
    """The census of one assistant record read from its Struct (providers/claude/model/projected.py `_Rec`)
    exactly as `_scan` reads its projected dict: the labels `R.classify` gives, the skeleton slot,
    tool calls, usage and thinking tags. Returns the (uuid, message id) the next record's
    continuation test needs, or None when a block needs the dict (a SendMessage call: its input
    decides its label) -- nothing is counted then."""
    m = r.message
    blocks: Any
    if type(m) is not msg_t:  # null or absent
        m = None
        blocks = ()
    else:
        blocks = m.content
        if type(blocks) is not list:
            blocks = ()
    labs: list[str] = []
    for b in blocks:  # = R.classify on an assistant record
        bt = b.type
        if bt == "text":
            lab = "agent.message"
        elif bt in _THINKING:
            sig = b.signature
            lab = "agent.thinking.narration" if isinstance(sig, str) and sig and R.is_narration(sig) else "agent.thinking"
        elif bt == "tool_use":
            if "agent.tool.use" not in labs:
                labs.append("agent.tool.use")
            name = b.name
            if isinstance(name, str) and name in R.SPAWN_TOOLS:
                lab = "agent.communication.sent"
            elif name == "SendMessage":
                return None
            else:
                continue
        else:
            continue
        if lab not in labs:
            labs.append(lab)
    labels = tuple(labs)  # never an opener: an assistant record opens no turn
    uuid = r.uuid
    if type(uuid) is not str:
        uuid = None
    parent = r.parentUuid
    if type(parent) is not str:
        parent = None
    logical = r.logicalParentUuid
    mid = m.id if m is not None else None
    if type(mid) is not str:
        mid = None
    sk = part.sk
    cont = False
    if prev is None:
        part.head_assistant = (len(sk), parent, mid)
    else:
        cont = mid is not None and parent is not None and (parent, mid) == prev
    slot = sk.add(uuid, parent, logical if type(logical) is str else None,
                  skeleton_flags("assistant", labels, False, cont), no)
    key = ("assistant", None, None, labels)
    sr = m.stop_reason if m is not None else None
    sk.conv = conv_state("assistant", False, sr if type(sr) is str else None)
    part.asst.append(slot)
    if m is not None:
        uses = part.uses
        for i, b in enumerate(blocks):  # = _tool_blocks
            if b.type == "tool_use":
                bid = b.id
                k = bid if type(bid) is str and bid else (no, i)
                if k not in uses:
                    nm = b.name
                    uses[k] = nm if type(nm) is str else "(no name)"
        _usage_into(part.per_msg, m.model, mid or no, m.usage)
    if "agent.thinking" in labels or "agent.thinking.narration" in labels:
        for b in blocks:  # = _count_thinking
            if b.type in _THINKING:
                _count_tag(part, b.signature)
    combos = part.combos
    c = combos.get(key)
    if c is None:
        combos[key] = 1
        part.first[key] = slot
    else:
        combos[key] = c + 1
    return (uuid, mid)


class _UserFast:
    """The census of a user record that carries tool results, read from its Struct exactly as
    `_scan` reads its projected dict (`R.classify`'s tool-result labels, `opens_turn`, the skeleton
    slot, errored results). Called with (record, line): True when counted; False (nothing
    counted) for any other user record (string or text content, a compact summary) and for one
    whose result content could hold a marker phrasing (providers/claude/model/projected.py _MARKERS): those take
    the dict path."""

    __slots__ = ("part", "msg_t", "tur_t", "raw_null", "sz", "markers", "flags")

    def __init__(self, part: "Part", P) -> None:
        self.part = part
        self.msg_t, self.tur_t, self.raw_null, self.sz, self.markers = P._Msg, P._TUR, P._RN, P._sz, P._MARKERS
        self.flags: dict[tuple, int] = {}

    def __call__(self, r, no: int) -> bool:
        m = r.message
        if type(m) is not self.msg_t or r.isCompactSummary:
            return False
        blocks = m.content
        if type(blocks) is not list:
            return False
        tur = r.toolUseResult
        answers = None  # whether a non-errored result is an answer (R.is_answered_auq), computed once
        labs: list[str] = []
        raw_null, sz = self.raw_null, self.sz
        m0, m1, m2 = self.markers
        for b in blocks:
            if b.type != "tool_result":
                continue
            c = b.content
            if c is not raw_null:
                cb = sz(memoryview(c))
                if cb.find(m0) >= 0 or cb.find(m1) >= 0 or cb.find(m2) >= 0:
                    return False  # its text could start with a marker: the dict path decodes it
            # no marker in its text: an answer only by its toolUseResult, never a typed rejection
            if b.is_error:
                lab = "agent.tool.result"
            else:
                if answers is None:
                    answers = False
                    if type(tur) is self.tur_t:
                        a = tur.answers
                        if type(a) is dict and a:
                            answers = True
                        else:
                            rs = tur.response
                            answers = isinstance(rs, str) and bool(rs.strip())
                lab = "user.answer" if answers else "agent.tool.result"
            if lab not in labs:
                labs.append(lab)
        if not labs:
            return False
        part = self.part
        labels = tuple(labs)
        flags = self.flags.get(labels)
        if flags is None:  # an answer opens a turn (R.opens_turn on a user record)
            flags = self.flags[labels] = skeleton_flags("user", labels, labels[0] == "user.answer", False)
        uuid = r.uuid
        parent = r.parentUuid
        logical = r.logicalParentUuid
        sk = part.sk
        slot = sk.add(uuid if type(uuid) is str else None, parent if type(parent) is str else None,
                      logical if type(logical) is str else None, flags, no)
        if not r.isMeta:
            sk.conv = CONV_OPEN
        errs = part.errs
        for i, b in enumerate(blocks):  # = _tool_blocks
            if b.is_error is True and b.type == "tool_result":
                tid = b.tool_use_id
                errs[tid if type(tid) is str and tid else (no, i)] = None
        key = ("user", None, None, labels)
        combos = part.combos
        c = combos.get(key)
        if c is None:
            combos[key] = 1
            part.first[key] = slot
        else:
            combos[key] = c + 1
        return True


def _fast_key(fk: tuple):
    """(combo key, skeleton flags) of a record of type `fk[0]` whose only fields `R.classify`
    reads are its system subtype `fk[1]` and attachment type `fk[2]` (str or None; a queue
    operation that is not an enqueue): classify itself labels a record holding just those.
    False when such a record could open a turn (then it takes the full path). As a list
    [key, flags, records counted, first slot] (`_scan_lines` counts into it)."""
    t, sub, att = fk
    probe = {"type": t, "subtype": sub, "attachment": {"type": att}, "operation": None}
    labels = tuple(R.classify(probe))
    if labels and _may_open(labels):
        return False
    key = (t, sub if t == "system" else None, att if t == "attachment" else None, labels)
    return [key, skeleton_flags(t, labels, False, False), 0, -1]


def _collect(C: Cols, slot: int, no: int, at: int, raw: bytes, obj: dict, t: str | None, key: tuple) -> None:
    kid = C.kid.get(key)
    if kid is None:
        kid = C.kid[key] = len(C.kid)
    C.no.append(no)
    C.off.append(at)
    C.ln.append(len(raw))
    C.key.append(kid)
    ts = obj.get("timestamp")
    C.ts.append(ts if type(ts) is str else None)
    if type(ts) is not str:
        sn = obj.get("snapshot")
        if type(sn) is dict and type(sn.get("timestamp")) is str:
            C.snap[slot] = sn["timestamp"]
    if t in CWD_TYPES:
        cw = obj.get("cwd")
        if type(cw) is str and cw and cw != C.last_cwd:
            C.cwd[slot] = C.last_cwd = cw
    a = obj.get("attachment")
    if type(a) is dict and type(a.get("type")) is str:
        C.att[slot] = a["type"]
    if t == "assistant":
        m = obj.get("message")
        if type(m) is dict:
            md = m.get("model")
            if type(md) is str:
                C.model[slot] = md
            c = m.get("content")
            if type(c) is list:
                u = [(b.get("id"), b.get("name")) for b in c if type(b) is dict and b.get("type") == "tool_use"]
                if u:
                    C.uses[slot] = u
    elif t == "user":
        m = obj.get("message")
        c = m.get("content") if type(m) is dict else None
        if type(c) is list:
            r = [b.get("tool_use_id") for b in c if type(b) is dict and b.get("type") == "tool_result"]
            if r:
                C.res[slot] = r
    if t not in KNOWN_TYPES:
        C.mask[slot] = sum(1 << i for i, n in enumerate(_NEEDLE_BYTES) if n in raw)


def _merge(a: Part, b: Part) -> None:
    """Append part `b` (the lines that follow `a`'s in the same file) to `a`."""
    lines, slots = a.read.lines, len(a.sk)
    ra, rb = a.read, b.read
    ra.bytes += rb.bytes
    ra.lines += rb.lines
    ra.blank_lines += rb.blank_lines
    ra.records += rb.records
    ra.malformed_lines += [n + lines for n in rb.malformed_lines]
    ra.zero_filled_lines += rb.zero_filled_lines
    ra.invalid_utf8_lines += rb.invalid_utf8_lines
    ra.torn_tail_bytes += rb.torn_tail_bytes
    ra.non_object_lines += rb.non_object_lines
    if b.head_assistant is not None:
        slot, parent, mid = b.head_assistant
        prev = a.last_assistant if a.last_assistant is not None else (None, None)
        if mid is not None and parent is not None and (parent, mid) == prev:
            b.sk.flags[slot] &= ~F_CONV
    if b.last_assistant is not None:
        a.last_assistant = b.last_assistant
    a.sk.extend(b.sk, lines)
    for key, c in b.combos.items():
        if key in a.combos:
            a.combos[key] += c
        else:
            a.combos[key] = c
            a.first[key] = b.first[key] + slots
    a.umsg += [(s + slots, labels) for s, labels in b.umsg]
    apm = a.per_msg
    for k, fields in b.per_msg.items():
        k1 = k[1]
        if type(k1) is int:  # a line number (no message id): shifted past `a`'s lines
            k = (k[0], k1 + lines)
        cur = apm.get(k)
        if cur is None:
            apm[k] = dict(fields)
        else:
            for f, v in fields.items():
                c0 = cur.get(f)
                if c0 is None or v > c0:  # = max(cur.get(f, v), v)
                    cur[f] = v
    for u, nm in b.uses.items():  # a tool_use id, or (line, block) for a block without one
        a.uses.setdefault((u[0] + lines, u[1]) if type(u) is tuple else u, nm)
    for e in b.errs:
        a.errs[(e[0] + lines, e[1]) if type(e) is tuple else e] = None
    for mine, theirs in ((a.asst, b.asst), (a.prompt_slots, b.prompt_slots), (a.queued_slots, b.queued_slots)):
        mine.extend(x + slots for x in theirs)
    a.narration_blocks += b.narration_blocks
    a.thinking_blocks += b.thinking_blocks
    a.untagged_thinking_blocks += b.untagged_thinking_blocks
    a.unknown_thinking_tags.update(b.unknown_thinking_tags)
    if a.cols is not None and b.cols is not None:
        _merge_cols(a.cols, b.cols, lines, slots)
    else:
        a.cols = None


def _merge_cols(a: Cols, b: Cols, lines: int, slots: int) -> None:
    remap = [a.kid.setdefault(k, len(a.kid)) for k in b.kid]
    a.no.extend(n + lines for n in b.no)
    a.off.extend(b.off)
    a.ln.extend(b.ln)
    a.key.extend(remap[k] for k in b.key)
    a.ts += b.ts
    pairs: tuple[tuple[dict, dict], ...] = ((a.uses, b.uses), (a.res, b.res), (a.model, b.model), (a.att, b.att),
                                            (a.mask, b.mask), (a.cwd, b.cwd), (a.snap, b.snap))
    for mine, theirs in pairs:
        for k, v in theirs.items():
            mine[k + slots] = v
    if b.last_cwd is not None:
        a.last_cwd = b.last_cwd
