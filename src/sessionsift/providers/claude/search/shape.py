"""Claude Code's record shapes read from a transcript line's bytes (search's byte prefilter for
its lanes): the structural needles of each label, the record type and tool-result carrier read
from a line's first (or last) bytes, so most lines outside a selection are never parsed.

Structural needles are bare values (`"user"`), never compact `"key":"value"` pairs, so a line
reserialised with spaces after the colon is still found (NECESSITY only, search/needles.py)."""

from __future__ import annotations

import re
from typing import Iterable

# --- structural needles for label selection --------------------------------------------------

_LEAF_NEEDLES: dict[str, tuple[str, ...]] = {
    "user.queued": ("queue-operation",),
    "harness.compaction.boundary": ('"system"',),
    "harness.meta.turn-duration": ('"system"',),
    "harness.meta.away-summary": ('"system"',),
    "harness.meta.stop-hooks": ('"system"',),
    "harness.meta.system": ('"system"',),
    "harness.meta.attachment": ('"attachment"',),
    "harness.meta.hook": ('"attachment"', '"user"'),
    "harness.meta.snapshot": ("file-history-",),
    "agent.message": ('"assistant"',),
    "agent.thinking": ('"assistant"',),
    "agent.thinking.narration": ('"assistant"',),
    "agent.tool.use": ('"assistant"',),
    "agent.communication.sent": ('"assistant"',),
    "agent.communication.signal": ('"assistant"', '"user"'),
}


def label_needles(leaves: Iterable[str] | None, unlabelled_conversation: bool) -> list[str] | None:
    """Bare-value needles one of which every line carrying a selected leaf contains.

    Every record of a leaf not listed above is a `type:"user"` line (so contains `"user"`)."""
    if leaves is None:
        return None
    out: set[str] = set()
    for leaf in leaves:
        out.update(_LEAF_NEEDLES.get(leaf, ('"user"',)))
    if unlabelled_conversation:
        out.update(('"user"', '"assistant"'))
    return sorted(out) if out else []


# --- record shape from the line's first bytes -----------------------------------------------
#
# Claude Code writes each record as compact JSON whose first keys are short scalars
# (`{"parentUuid":"...","isSidechain":false,"promptId":"...","type":"user","message":{...`).
# These anchored patterns read that prefix with the stdlib `re` directly on the mapping (no copy,
# ~1 us a line). They only ever consume TOP-LEVEL scalar pairs, so a `"type"` they reach is the
# record's own type, never a nested one. A line that does not fit (reserialised with spaces,
# another key order, an escape inside a leading string) simply does not match and is parsed as
# before: a miss costs speed, never a result. The one thing they cannot see is a DUPLICATE key
# later in the line (no JSON serialiser writes one from an object); such a line is out of scope.

_STR = rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
_SCALAR = rb'(?:' + _STR + rb'|null|true|false|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)'
_KEY = rb'"[A-Za-z_][A-Za-z0-9_]*":'
_FLAT_OBJ = rb'\{(?:' + _KEY + _SCALAR + rb'(?:,' + _KEY + _SCALAR + rb')*)?\}'
_TAIL_VALUE = rb'(?:' + _SCALAR + rb'|\[(?:' + _FLAT_OBJ + rb'(?:,' + _FLAT_OBJ + rb')*)?\])'
_PAIR = rb'"[A-Za-z_][A-Za-z0-9_]*":' + _SCALAR + rb','
# Pairs are matched atomically `(?>...)`: a scalar pair lexes one way only, and not backtracking
# into it makes a line that does not fit fail in ~1 us instead of ~2 us.

HEAD_TYPE = re.compile(rb'\{(?>' + _PAIR + rb')*?"type":"([A-Za-z0-9_-]+)"[,}]')
"""The record's top-level `type`, when only scalar pairs precede it."""

CARRIER_REST = re.compile(
    rb'(?>' + _PAIR + rb')*?"message":\{"role":"user","content":\[\{(?:"tool_use_id":"([^"\\\n]*)",)?'
    rb'"type":"tool_result"')
"""Matched right after HEAD_TYPE's `"type":"user",`: the top-level `message` (after scalar pairs
only) has a `content` list starting with a `tool_result` block - a tool-result carrier, which
`classify` gives only CARRIER_LEAVES, never `user.message`. Group 1: that block's `tool_use_id`
when it comes first in the block."""

CARRIER_LEAVES = frozenset({"harness.compaction.summary", "user.answer", "user.rejection", "agent.tool.result"})

# Which leaves `classify` can give a record of each type (providers/claude/model/record.py; checked on the corpus
# by tests/test_search_fast.py). Every other leaf comes from `type:"user"` records.
_TYPE_LEAVES = {
    "assistant": frozenset({"agent.message", "agent.thinking", "agent.thinking.narration", "agent.tool.use",
                            "agent.communication.sent", "agent.communication.signal"}),
    "system": frozenset({"harness.compaction.boundary", "harness.meta.turn-duration", "harness.meta.away-summary",
                         "harness.meta.stop-hooks", "harness.meta.system"}),
    "attachment": frozenset({"harness.meta.hook", "harness.meta.attachment"}),
    "file-history-snapshot": frozenset({"harness.meta.snapshot"}),
    "file-history-delta": frozenset({"harness.meta.snapshot"}),
    "queue-operation": frozenset({"user.queued"}),
}


def type_leaves() -> dict[str, frozenset[str]]:
    """type -> the leaves `classify` can give it (any other type: none)."""
    from ..model.labels import LEAVES

    others = set().union(*(v for k, v in _TYPE_LEAVES.items()))
    user = frozenset(l.path for l in LEAVES if l.path not in others) | {"harness.meta.hook", "agent.communication.signal"}
    return {**_TYPE_LEAVES, "user": user}

ASSISTANT_HEAD = re.compile(
    rb'\{(?>' + _PAIR + rb')*?"message":\{(?>' + _PAIR + rb')*?"content":\[\{"type":"([a-z_]+)"'
    rb'(?:,"id":"([^"\\\n]*)","name":"([^"\\\n]*)")?')
"""A top-level `message` object whose `content` list starts with a block of type group 1 (and
for a `tool_use` first block, its id and name). Whether the record is an assistant record is read
by `record_type` (from the line's END: Claude Code writes `message` before `type` there)."""

TOOL_USE_BLOCK = b'"type":"tool_use"'
RECORD_START = b'{"parentUuid":'


def one_record(raw: bytes) -> bool:
    """Guard before COUNTING a line as a hit from its bytes: the shape patterns read a valid JSON
    line exactly, but a damaged one (a NUL run from a crash, a torn record with the next record
    appended on the same physical line) would be a malformed line to the parse, not a hit. Claude
    Code's user/assistant records start with `{"parentUuid":`; a line holding NUL bytes or that
    key more than once is parsed instead. (Skipping a line is safe without this: a line that is
    not valid JSON is never a hit either.)"""
    return raw.startswith(RECORD_START) and b"\x00" not in raw and raw.count(b'"parentUuid":') == 1
TOOL_USE_ID = b'"tool_use_id"'

TAIL_TYPE_KEY = b',"type":"'
TAIL_TYPE = re.compile(rb',"type":"([A-Za-z0-9_-]+)"(?:,' + _KEY + _TAIL_VALUE + rb')*\}')
"""Matched (fullmatch) at the LAST `,"type":"` of a line: the record's top-level type when only
whole pairs follow it up to the line's closing brace - scalars, or arrays of flat objects such as
2.1.332's `"rendered":[{"content":"..."}]` (Claude Code writes `type` after a nested
`message`/`attachment` object). Everything after the key is then consumed balanced, so the key
sits at depth 1. Anything else (a nested object closing, whitespace) and the line is parsed."""


_TYPE_VALUE = re.compile(rb'[A-Za-z0-9_-]+')


def line_shape(buf, s: int, e: int) -> tuple[str | None, bool, str | None]:
    """(top-level type or None, is a tool-result carrier, the carrier's first tool_use_id or None)
    of the line buf[s:e], read from its bytes; (None, False, None) when they do not show it (then
    the line is parsed). For the type:

    1. HEAD_TYPE (only scalar pairs before the key; also tells a carrier);
    2. the LAST `,"type":"` when no `{`, `}`, `[` or `]` byte lies between it and the line's final
       `}`: no container opens or closes after the key, so the key belongs to the object that final
       brace closes - the record itself; and a record appended after a torn one on the same
       physical line (it starts with `{`) cannot hide there (`find`s, no regex);
    3. TAIL_TYPE (arrays of flat objects after the key, 2.1.332's `rendered`)."""
    m = HEAD_TYPE.match(buf, s, e)
    if m is not None:
        t = m.group(1).decode("ascii")
        if t == "user" and (c := CARRIER_REST.match(buf, m.end(), e)) is not None:
            tid = c.group(1)
            if tid is not None:
                try:
                    return t, True, tid.decode("utf-8")
                except UnicodeDecodeError:
                    pass
            return t, True, None
        return t, False, None
    if e - s > 2 and buf[e - 1] == 125:  # '}'
        j = buf.rfind(TAIL_TYPE_KEY, s, e)
        if j < 0:
            return None, False, None
        v = j + len(TAIL_TYPE_KEY)
        if all(buf.find(c, v, e - 1) < 0 for c in (b"}", b"]", b"{", b"[")):
            q = buf.find(b'"', v, e)
            if q > v and buf[q + 1] in (44, 125) and _TYPE_VALUE.fullmatch(buf, v, q):  # ',' '}'
                return buf[v:q].decode("ascii"), False, None
            return None, False, None
        m = TAIL_TYPE.fullmatch(buf, j, e)
        if m is not None:
            return m.group(1).decode("ascii"), False, None
    return None, False, None


def record_type(buf, s: int, e: int) -> str | None:
    """The top-level `type` of the line buf[s:e] from its bytes (None = not shown): line_shape."""
    return line_shape(buf, s, e)[0]
