"""`LaneIndex` holds its records in columns (providers/claude/model/lanecols.py) and makes each `Entry` when asked
for. Every field read from the record must come back exactly as `entry_from` reads it from the
line, on every JSON Lines file in examples/ (both Claude Code clients, subagent lanes, the crash
artefacts, the other clients' logs) and on hand-made values no client writes but a damaged or foreign file can hold
(stated below); the access paths (by line, by offset, by uuid with its replays, by turn) must
agree with a plain scan of the entries."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path


from sessionsift.providers.claude.discover import Lane
from sessionsift.providers.claude.model.lane import LaneIndex, entry_from
from sessionsift.read.lines import iter_lines, parse_line

EX = Path(__file__).resolve().parent.parent / "examples"
RAW = ("no", "offset", "length", "type", "subtype", "uuid", "parent", "logical_parent", "timestamp", "is_meta",
       "msg_id", "model", "stop_reason", "tool_use_ids", "tool_result_ids", "tool_names", "attachment", "usage",
       "is_compact_summary")
"""The fields `entry_from` reads straight from the record (labels, opener, survival, turn,
replay_of and bridged_to are the lane's derivations: held by the survival/turn tests)."""


def _files() -> list[Path]:
    fs = sorted(EX.rglob("*.jsonl"))  # every JSON Lines file there: foreign ones must round-trip too
    assert len(fs) >= 50
    return fs


def _check(path: Path) -> int:
    idx = LaneIndex.build(Lane(path, path.stem, "main", "main"))
    want = []
    for line in iter_lines(path):
        obj = parse_line(line.raw)
        if isinstance(obj, dict):
            want.append(entry_from(obj, line.no, line.offset, len(line.raw)))
    got = list(idx.entries)
    assert len(got) == len(want) == len(idx.entries), path
    for g, w in zip(got, want):
        for f in RAW:
            assert getattr(g, f) == getattr(w, f) and type(getattr(g, f)) is type(getattr(w, f)), (path, g.no, f)
        assert g.labels[1:] == w.labels[1:] and g.labels[:1] in (w.labels[:1], ("user.unsent",))
    for i, e in enumerate(got):
        assert idx.entries[i] == e and idx.entries[i - len(got)] == e
        assert idx.entry_at_line(e.no) == e and idx.entry_at_offset(e.offset) == e
        if e.uuid is not None:
            assert idx.entries_with_uuid(e.uuid) == [x for x in got if x.uuid == e.uuid]
    for t in [None, *range(-1, idx.turns + 2)]:
        assert idx.turn_entries(t) == [e for e in got if e.turn == t]
    assert idx.turns == sum(1 for e in got if e.opener and e.replay_of is None and e.survival != "abandoned")
    if got:
        a, b = got[0].no, got[len(got) // 2].no
        assert idx.entries_in_lines(a, b) == [e for e in got if a <= e.no <= b]
        assert idx.entries[1:3] == got[1:3]
        assert idx.entry_at_offset(got[-1].offset + 1) is None
    assert idx.entry_at_line(10**9) is None
    _check_light(idx, got)
    _check_facts(idx, got)
    return len(got)


def _check_facts(idx: LaneIndex, got: list) -> None:
    """files' `LaneFacts` taken straight from the columns equal the per-record path's and the
    entries' line, turn and timestamp."""
    from sessionsift.providers.claude.files.events import LaneFacts

    fast = LaneFacts(idx)
    slow = LaneFacts(stats=idx.stats, load=lambda: LaneFacts._parts(idx))
    def t(f):
        return (f.no, f.turn, f.timestamp)

    fe, se = [t(f) for f in fast.entries], [t(f) for f in slow.entries]
    assert fe == se and len(fe) == len(got)
    for f, e in zip(fe, got):
        assert f == (e.no, e.turn, e.timestamp or None)
        assert t(fast.entry_at_line(e.no)) == f


_LIGHT = ("no", "offset", "length", "type", "subtype", "attachment", "tool_use_ids", "tool_result_ids",
          "timestamp", "turn", "survival")


def _check_light(idx: LaneIndex, got: list) -> None:
    """`Columns.light` (files' cold read) yields exactly the records the `Entry` filter it replaced
    picked, with the same field values."""
    from sessionsift.providers.claude.files.events import _WANT_ATT, _WANT_TYPES

    for pick in (lambda k: k[0] in _WANT_TYPES or k[5] in _WANT_ATT, lambda k: False, lambda k: True):
        light = list(idx.columns.light(pick))
        want = [e for e in got if e.tool_use_ids or e.tool_result_ids
                or pick((e.type, e.subtype, e.labels, e.model, e.stop_reason, e.attachment, e.tool_names))]
        assert len(light) == len(want)
        for g, w in zip(light, want):
            for f in _LIGHT:
                assert getattr(g, f) == getattr(w, f) and type(getattr(g, f)) is type(getattr(w, f)), (g.no, f)


def test_every_real_record_round_trips():
    assert sum(_check(p) for p in _files()) > 1000


def _write(path: Path, recs: list) -> None:
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" if not isinstance(r, bytes) else r for r in recs))


def test_values_no_client_writes_round_trip(tmp_path):
    """Hand-made: a damaged or foreign transcript can hold any JSON where a client writes a uuid,
    an id or a token count (upper-case, empty or non-uuid ids, a NUL inside a tool id, counts that
    are booleans or beyond 64 bits, timestamps with non-ASCII, a parent naming a later record or
    none). The columns must give each back as written."""
    U = "0b0f2c1e-3a4d-4e5f-8a9b-0c1d2e3f4a5b"
    recs = [
        {"type": "user", "uuid": U, "parentUuid": None, "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "hello"}},
        {"type": "assistant", "uuid": U.upper(), "parentUuid": U, "timestamp": "２０２６ – Ω",
         "message": {"id": "msg_ü", "model": "m", "stop_reason": "tool_use",
                     "usage": {"input_tokens": True, "output_tokens": 1 << 70, "cache_read_input_tokens": -5},
                     "content": [{"type": "tool_use", "id": "a\x00b", "name": "Bash", "input": {}},
                                 {"type": "tool_use", "id": "plain", "name": "Read", "input": {}}]}},
        {"type": "user", "uuid": "", "parentUuid": U.upper(), "timestamp": 5,
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a\x00b", "content": "x"}]}},
        {"type": "user", "uuid": "not-a-uuid", "parentUuid": "later-one", "logicalParentUuid": "",
         "message": {"role": "user", "content": "again"}},
        {"type": "system", "subtype": "x", "parentUuid": U},
        {"type": "assistant", "uuid": "later-one", "parentUuid": "", "message": {"id": "m2", "usage": {}, "content": []}},
        {"type": "user", "uuid": U, "parentUuid": None, "message": {"role": "user", "content": "hello"}},
        b"{not json\n",
        {"type": "queue-operation", "operation": "enqueue"},
    ]
    p = tmp_path / "s.jsonl"
    _write(p, recs)
    assert _check(p) == 8
    idx = LaneIndex.build(Lane(p, "s", "main", "main"))
    es = list(idx.entries)
    assert es[1].usage[0] is True and es[1].usage[2:] == (-5, None)  # (a count past 64 bits: as the parser reads it)
    assert es[1].tool_use_ids == ("a\x00b", "plain") and es[2].tool_result_ids == ("a\x00b",)
    assert es[2].uuid == "" and es[3].uuid == "not-a-uuid" and es[1].uuid == U.upper()
    assert es[5].usage == (None, None, None, None) and es[4].usage is None
    assert es[6].replay_of == es[0].no and idx.entries_with_uuid(U) == [es[0], es[6]]
    assert dataclasses.asdict(es[3])["logical_parent"] == ""


def test_columns_cost_less_than_objects():
    """What the columns are for: a record costs a few dozen bytes of buffers, not an object each
    (sizes of the buffers themselves, not timed)."""
    import sys

    big = max(_files(), key=lambda p: p.stat().st_size)
    idx = LaneIndex.build(Lane(big, big.stem, "main", "main"))
    c = idx.columns
    n = len(c)
    buffers = sum(sys.getsizeof(getattr(c, a)) for a in ("no", "off", "ln", "kind", "fl", "turn", "rep", "uid", "par",
                                                          "ts_data", "ts_ends"))
    assert n > 50 and buffers / n < 120
