"""Plain-data forms (marshal-able: lists, dicts, bytes, str, numbers) of what an index
keeps: the unfinished census part of a transcript (`providers.claude.lanescan.Part`: counters plus the survival
`Skeleton`, so an append can be merged onto it), its per-record columns (`core.stats.Cols`) and the
finished census (`core.stats.LaneStats`). Each `*_from` inverts its `*_obj` exactly: counters keep
their insertion order (text output sorts ties by it), tuples come back as tuples."""

from __future__ import annotations

from array import array
from collections import Counter

from ..lanescan import Cols, Part
from ..stats import LaneStats
from ..model.lane import Skeleton
from ....read.lines import ReadStats


def _arr(code: str, b: bytes) -> array:
    a = array(code)
    a.frombytes(b)
    return a


def _key_obj(k):
    """A uses/errs key: a tool_use id (str) or (line, block#)."""
    return list(k) if type(k) is tuple else k


def _key_from(k):
    return tuple(k) if type(k) is list else k


def _mid_from(m):
    return m


# -- ReadStats ----------------------------------------------------------------------------------


def read_obj(r: ReadStats) -> list:
    return [r.files, r.bytes, r.lines, r.blank_lines, r.records, list(r.malformed_lines), r.zero_filled_lines,
            r.invalid_utf8_lines, r.torn_tail_bytes, r.non_object_lines, [list(b) for b in r.bridges]]


def read_from(o: list) -> ReadStats:
    r = ReadStats(*o[:5])
    r.malformed_lines = list(o[5])
    r.zero_filled_lines, r.invalid_utf8_lines, r.torn_tail_bytes, r.non_object_lines = o[6:10]
    r.bridges = [tuple(b) for b in o[10]]
    return r


# -- Skeleton (unfinished) ----------------------------------------------------------------------


def skeleton_obj(sk: Skeleton) -> dict:
    return {
        "uuids": list(sk.index), "first": array("i", sk.index.values()).tobytes(),
        "parent": sk.parent.tobytes(), "flags": bytes(sk.flags),
        "logical": [[k, v] for k, v in sk.logical.items()], "replay": [[k, v] for k, v in sk.replay.items()],
        "pending": [list(p) for p in sk.pending], "drafts": [list(d) for d in sk.drafts],
        "last": sk.last, "last_line": sk.last_line, "conv": sk.conv,
        "omits": [list(o) for o in sk.omits], "lines": [[k, v] for k, v in sk.lines.items()],
        "bridges": [list(b) for b in sk.bridges],
    }


def skeleton_from(o: dict) -> Skeleton:
    sk = Skeleton()
    first = _arr("i", o["first"])
    sk.index = dict(zip(o["uuids"], first))
    sk.parent = _arr("i", o["parent"])
    sk.flags = bytearray(o["flags"])
    sk.logical = {k: v for k, v in o["logical"]}
    sk.replay = {k: v for k, v in o["replay"]}
    sk.pending = [tuple(p) for p in o["pending"]]
    sk.drafts = [tuple(d) for d in o["drafts"]]
    sk.last, sk.last_line, sk.conv = o["last"], o["last_line"], o["conv"]
    sk.omits = [tuple(x) for x in o["omits"]]
    sk.lines = {k: v for k, v in o["lines"]}
    sk.bridges = [tuple(b) for b in o["bridges"]]
    return sk


# -- the census part ----------------------------------------------------------------------------


def _combo_obj(k: tuple) -> list:
    t, sub, att, labels = k
    return [t, sub, att, list(labels)]


def _combo_from(o: list) -> tuple:
    return (o[0], o[1], o[2], tuple(o[3]))


def part_obj(p: Part) -> dict:
    return {
        "read": read_obj(p.read), "sk": skeleton_obj(p.sk),
        "combos": [[_combo_obj(k), c, p.first[k]] for k, c in p.combos.items()],
        "umsg": [[s, list(l)] for s, l in p.umsg],
        "per_msg": [[m, mid, f] for (m, mid), f in p.per_msg.items()],
        "think": [p.narration_blocks, p.thinking_blocks, p.untagged_thinking_blocks,
                  [[k, v] for k, v in p.unknown_thinking_tags.items()]],
        "head_assistant": list(p.head_assistant) if p.head_assistant is not None else None,
        "last_assistant": list(p.last_assistant) if p.last_assistant is not None else None,
        "uses": [[_key_obj(k), v] for k, v in p.uses.items()],
        "errs": [_key_obj(k) for k in p.errs],
        "asst": p.asst.tobytes(), "prompts": p.prompt_slots.tobytes(), "queued": p.queued_slots.tobytes(),
    }


def part_from(o: dict) -> Part:
    p = Part()
    p.read = read_from(o["read"])
    p.sk = skeleton_from(o["sk"])
    for k, c, f in o["combos"]:
        key = _combo_from(k)
        p.combos[key] = c
        p.first[key] = f
    p.umsg = [(s, tuple(l)) for s, l in o["umsg"]]
    p.per_msg = {(m, mid): dict(f) for m, mid, f in o["per_msg"]}
    p.narration_blocks, p.thinking_blocks, p.untagged_thinking_blocks = o["think"][:3]
    p.unknown_thinking_tags = Counter({k: v for k, v in o["think"][3]})
    p.head_assistant = tuple(o["head_assistant"]) if o["head_assistant"] is not None else None
    p.last_assistant = tuple(o["last_assistant"]) if o["last_assistant"] is not None else None
    p.uses = {_key_from(k): v for k, v in o["uses"]}
    p.errs = {_key_from(k): None for k in o["errs"]}
    p.asst = _arr("i", o["asst"])
    p.prompt_slots = _arr("i", o["prompts"])
    p.queued_slots = _arr("i", o["queued"])
    return p


# -- per-record columns -------------------------------------------------------------------------


def _pairs(d: dict) -> list:
    return [[k, v] for k, v in d.items()]


def cols_obj(c: Cols) -> dict:
    return {
        "no": c.no.tobytes(), "off": c.off.tobytes(), "ln": c.ln.tobytes(), "key": c.key.tobytes(),
        "ts": c.ts, "uses": [[k, [list(u) for u in v]] for k, v in c.uses.items()], "res": _pairs(c.res),
        "model": _pairs(c.model), "att": _pairs(c.att), "mask": _pairs(c.mask),
        "kid": [_combo_obj(k) for k in c.kid], "cwd": _pairs(c.cwd), "snap": _pairs(c.snap),
        "last_cwd": c.last_cwd,
    }


def cols_from(o: dict) -> Cols:
    c = Cols()
    c.no = _arr("I", o["no"])
    c.off = _arr("Q", o["off"])
    c.ln = _arr("I", o["ln"])
    c.key = _arr("I", o["key"])
    c.ts = o["ts"]
    c.uses = {k: [tuple(u) for u in v] for k, v in o["uses"]}
    c.res = {k: v for k, v in o["res"]}
    c.model = {k: v for k, v in o["model"]}
    c.att = {k: v for k, v in o["att"]}
    c.mask = {k: v for k, v in o["mask"]}
    c.kid = {_combo_from(k): i for i, k in enumerate(o["kid"])}
    c.cwd = {k: v for k, v in o["cwd"]}
    c.snap = {k: v for k, v in o["snap"]}
    c.last_cwd = o["last_cwd"]
    return c


# -- the finished census ------------------------------------------------------------------------

_COUNTERS = ("line_types", "system_subtypes", "attachment_kinds", "labels", "survival", "messages_by_model",
             "unknown_thinking_tags", "unknown_line_types", "tool_calls", "tool_errors")
_INTS = ("unlabelled", "turns", "compactions", "replayed_lines", "narration_blocks", "thinking_blocks",
         "untagged_thinking_blocks", "copied_records")


def stats_obj(ls: LaneStats) -> dict:
    o: dict = {"read": read_obj(ls.read)}
    for f in _COUNTERS:
        o[f] = _pairs(getattr(ls, f))
    for f in _INTS:
        o[f] = getattr(ls, f)
    o["tokens"] = [[m, _pairs(d)] for m, d in ls.tokens.items()]
    o["tokens_missing"] = [[m, _pairs(d)] for m, d in ls.tokens_missing.items()]
    o["prompts"] = _pairs(ls.prompts)
    o["per_msg"] = [[m, k, _pairs(d)] for (m, k), d in ls.per_msg.items()]
    return o


def _counter(pairs: list) -> Counter:
    """Counter(dict(pairs)), in the pairs' order, without Counter.update's per-call Mapping check
    (a warm `stats` over 4,766 lanes built 48,000 of them)."""
    c: Counter = _NEW(Counter)
    _UPDATE(c, pairs)
    return c


_NEW = dict.__new__
_UPDATE = dict.update


def stats_from(o: dict, lane) -> LaneStats:
    ls = LaneStats(lane, read_from(o["read"]))
    d = ls.__dict__
    for f in _COUNTERS:
        d[f] = _counter(o[f])
    for f in _INTS:
        d[f] = o[f]
    ls.tokens = {m: dict(d) for m, d in o["tokens"]}
    ls.tokens_missing = {m: dict(d) for m, d in o["tokens_missing"]}
    ls.prompts = dict(o["prompts"])
    ls.per_msg = {(m, k): dict(d) for m, k, d in o["per_msg"]}
    return ls
