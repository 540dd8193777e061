"""Decode a Claude Code record into only what the census reads (providers/claude/lanescan.py `_scan`): msgspec
Structs skip the bulky fields (assistant text, tool inputs, tool-result content, toolUseResult
payloads) without building them, then a small dict with the same keys and values the census
reads is built, so `classify`, `opens_turn`, `_tool_blocks`, `_count_thinking` and the columns run
unchanged on it.

What is left out, and why that cannot change an answer:
- an assistant block's `text`/`thinking`/tool `input`: no census rule reads them, except the
  `input` of a SendMessage call (kept, decoded);
- a tool result's `content`: read only for the rejection and answered-question marker phrasings
  (providers/claude/model/record.py); it is decoded when its bytes could hold one (a marker's ASCII bytes, or any
  `\\u` escape that could spell one), else replaced by "" (which holds none);
- `toolUseResult`: decoded (in the same pass as the record, like `attachment`) through a Struct
  that keeps `answers` and `response` (all `is_answered_auq` reads); another JSON type stays that
  type (a str, a list of Raw items...), null stays None.
A line that does not decode this way (not an object, a value of an unexpected shape, JSON orjson
would read differently) returns None: the caller parses it as before. tests/test_projected.py holds
the census of every real transcript (and damaged and reserialised copies) equal both ways.
"""

from __future__ import annotations

from typing import Any, Union

import msgspec
from msgspec import Raw, Struct

_RN = Raw(b"null")
"""The default of every Raw field: an absent field IS this object (a present null is another)."""

from . import record as R

try:
    from stringzilla import Str as _sz
except ImportError:  # pragma: no cover - a dependency; bytes work too
    def _sz(m):  # noqa: E306
        return bytes(m)

_MARKERS = (b"The user ", b"nswered", b"\\u")
"""Bytes one of which a tool result's JSON holds when its text can start with a marker phrasing
(record.py REJECTION_MARKER, AUQ_ANSWER_MARKERS: "The user ..." or "...answered...", or any of
them spelled with a \\u escape)."""
assert all(any(n.decode() in m for n in _MARKERS[:2]) for m in (R.REJECTION_MARKER, *R.AUQ_ANSWER_MARKERS))
_I64_MIN, _U64_MAX = -(1 << 63), (1 << 64) - 1


class _Block(Struct):
    type: Any = None
    id: Any = None
    name: Any = None
    signature: Any = None
    tool_use_id: Any = None
    is_error: Any = None
    text: Raw = _RN
    input: Raw = _RN
    content: Raw = _RN


class _Usage(Struct):
    input_tokens: Any = None
    output_tokens: Any = None
    cache_read_input_tokens: Any = None
    cache_creation_input_tokens: Any = None


class _Msg(Struct):
    id: Any = None
    model: Any = None
    stop_reason: Any = None
    usage: Any = None
    content: Union[list[_Block], str, None] = None


class _TUR(Struct):
    answers: Any = None
    response: Any = None


class _Att(Struct):
    type: Any = None
    commandMode: Any = None
    origin: Any = None
    prompt: Any = None


class _Rec(Struct):
    type: Any = None
    uuid: Any = None
    parentUuid: Any = None
    logicalParentUuid: Any = None
    isMeta: Any = None
    isCompactSummary: Any = None
    subtype: Any = None
    timestamp: Any = None
    cwd: Any = None
    operation: Any = None
    message: Union[_Msg, None, msgspec.UnsetType] = msgspec.UNSET
    attachment: Union[_Att, None, msgspec.UnsetType] = msgspec.UNSET
    """Typed (not a Raw decoded again): an attachment that is not an object or null fails the
    record's decode, which then takes the full parse."""
    toolUseResult: Union[_TUR, str, list[Raw], int, float, bool, None, msgspec.UnsetType] = msgspec.UNSET
    """Only `answers`/`response` of an object are read (`R.is_answered_auq`); another JSON type
    stays that type (a list's items Raw); UNSET when absent."""
    origin: Raw = _RN
    content: Raw = _RN
    snapshot: Raw = _RN


class _Snap(Struct):
    timestamp: Any = None


_DEC = msgspec.json.Decoder(_Rec)
_ANY = msgspec.json.Decoder()
_SNAP = msgspec.json.Decoder(Union[_Snap, None])
_UNSET = msgspec.UNSET
_ERR = (msgspec.DecodeError, msgspec.ValidationError)
_NULL = b"null"
_ABSENT = object()


def _int(v):
    """A JSON integer as orjson gives it (outside int64..uint64: a float)."""
    if type(v) is int and not (_I64_MIN <= v <= _U64_MAX):
        return float(v)
    return v


def _val(raw: Raw):
    return None if raw == _NULL else _ANY.decode(raw)


def project(raw: bytes) -> dict | None:
    """The census view of one line, or None (parse it in full instead)."""
    r = decode(raw)
    return None if r is None else project_struct(r)


def decode(raw: bytes) -> "_Rec | None":
    """The top-level Struct of one line, or None (parse it in full instead)."""
    try:
        return _DEC.decode(raw)
    except _ERR:
        return None


def attachment_type(r: _Rec):
    """`R.attachment_kind` of a decoded record without building its dict: the attachment's
    `type` when a string, else None."""
    a = r.attachment
    if a is None or a is _UNSET:
        return None
    t = a.type
    return t if type(t) is str else None


def project_struct(r: _Rec) -> dict | None:
    """The census view of a decoded line (`decode`), or None (parse it in full instead)."""
    t = r.type
    o = {"type": t, "uuid": r.uuid, "parentUuid": r.parentUuid, "logicalParentUuid": r.logicalParentUuid,
         "isMeta": r.isMeta, "isCompactSummary": r.isCompactSummary, "subtype": r.subtype,
         "timestamp": r.timestamp, "cwd": r.cwd, "operation": r.operation}
    try:
        m = r.message
        if m is not None and m is not msgspec.UNSET:
            u = m.usage
            if type(u) is dict:
                u = {k: _int(v) for k, v in u.items()}
            c = m.content
            o["message"] = {"id": m.id, "model": m.model, "stop_reason": m.stop_reason, "usage": u,
                            "content": _content(c, t) if type(c) is list else c}
        elif m is None:
            o["message"] = None
        a = r.attachment
        if a is not _UNSET:
            o["attachment"] = a if a is None else {"type": a.type, "commandMode": a.commandMode,
                                                  "origin": a.origin, "prompt": a.prompt}
        if r.origin is not _RN:
            o["origin"] = _ANY.decode(r.origin)
        if r.content is not _RN:
            o["content"] = _ANY.decode(r.content)
        tur = r.toolUseResult
        if tur is not _UNSET:
            if type(tur) is _TUR:
                tur = {"answers": tur.answers, "response": tur.response}
            o["toolUseResult"] = tur
        if r.snapshot is not _RN and r.timestamp is None:
            sn = _SNAP.decode(r.snapshot)
            if sn is not None:
                o["snapshot"] = {"timestamp": sn.timestamp}
    except _ERR:
        return None
    return o


def _content(c: list, t) -> list:
    out = []
    user = t == "user"
    for b in c:
        bt = b.type
        d = {"type": bt, "id": b.id, "name": b.name, "signature": b.signature, "tool_use_id": b.tool_use_id,
             "is_error": b.is_error}
        if user and b.text is not _RN:
            d["text"] = _ANY.decode(b.text)
        if bt == "tool_use":
            if b.name == "SendMessage" and b.input is not _RN:
                d["input"] = _ANY.decode(b.input)
        elif bt == "tool_result" and b.content is not _RN:
            cb = _sz(memoryview(b.content))
            d["content"] = _ANY.decode(b.content) if (cb.find(_MARKERS[0]) >= 0 or cb.find(_MARKERS[1]) >= 0
                                                      or cb.find(_MARKERS[2]) >= 0) else ""
        out.append(d)
    return out
