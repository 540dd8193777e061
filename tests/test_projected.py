"""The census decodes records through providers/claude/model/projected.py (msgspec Structs that skip the bulky
fields) - it must count exactly what a full orjson parse counts: every field of the census on
every real-client transcript, the crash artefacts, damaged copies, a reserialised copy, and a copy
whose tool results spell every ASCII letter as a \\u escape (hand-made: no client writes that, a
serialiser could; the marker phrasings must still be found)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
import pytest

from sessionsift.providers.claude import stats as S
from sessionsift.providers.claude import lanescan as L
from sessionsift.providers.claude.discover import Lane
from sessionsift.providers.claude.model import projected as P, record as R
from tests.test_lane_perf_equivalence import _mutants, census

ROOT = Path(__file__).resolve().parent.parent
REAL = sorted(p for h in (ROOT / "examples" / "claude-home", ROOT / "examples" / "newest-client" / "2.1.332" / "claude-home")
              for p in (h / "projects").rglob("*.jsonl"))
CRASH = sorted((ROOT / "examples" / "crash").glob("*.jsonl"))


def _both(path: Path) -> None:
    lane = Lane(path, path.stem, "main", "main")
    old = L.PROJECT
    try:
        L.PROJECT = False
        ref = census(S.lane_stats(lane, parallel=False))
        L.PROJECT = True
        got = census(S.lane_stats(lane, parallel=False))
    finally:
        L.PROJECT = old
    assert got == ref, path


@pytest.mark.parametrize("path", REAL + CRASH, ids=lambda p: p.name[:14])
def test_real_transcripts(path):
    _both(path)


def test_damaged_copies(tmp_path):
    for p in _mutants(tmp_path, n=30):
        _both(p)


def _rewrite(src: Path, dest: Path, fn) -> Path:
    out = []
    for raw in src.read_bytes().split(b"\n"):
        if raw.strip():
            out.append(fn(orjson.loads(raw)))
    dest.write_text("\n".join(out) + "\n")
    return dest


def _esc_results(o) -> str:
    import copy

    o = copy.deepcopy(o)
    marks = []
    m = o.get("message") if isinstance(o, dict) else None
    for b in (m.get("content") if isinstance(m, dict) and isinstance(m.get("content"), list) else []):
        if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("content"), str):
            marks.append(b["content"])
            b["content"] = "\x00MARK%d\x00" % (len(marks) - 1)
    s = json.dumps(o)
    for i, text in enumerate(marks):
        esc = "".join("\\u%04x" % ord(c) if c.isascii() and c.isalpha() else json.dumps(c)[1:-1] for c in text)
        s = s.replace(json.dumps("\x00MARK%d\x00" % i), '"' + esc + '"')
    return s


def test_reserialised_and_escaped_copies(tmp_path):
    for i, p in enumerate(REAL):
        _both(_rewrite(p, tmp_path / f"r{i}.jsonl", lambda o: json.dumps(o, ensure_ascii=True)))
        _both(_rewrite(p, tmp_path / f"e{i}.jsonl", _esc_results))


def test_what_falls_back_to_a_full_parse():
    """Shapes the Structs do not take are read by orjson (the same answer, more slowly)."""
    line = next(l for p in REAL for l in p.read_bytes().split(b"\n") if b'"type":"assistant"' in l)
    o = orjson.loads(line)
    assert P.project(line) is not None
    for bad in ({**o, "message": "text"}, {**o, "message": {**o["message"], "content": ["a string block"]}},
                {**o, "attachment": "text"}, [o]):
        assert P.project(orjson.dumps(bad)) is None
    big = orjson.dumps({**o, "message": {**o["message"], "usage": {"input_tokens": 987654321}}}).replace(
        b"987654321", str(1 << 70).encode())
    pr = P.project(big)  # orjson reads an integer past 64 bits as a float: so must the projection
    want = orjson.loads(big)["message"]["usage"]["input_tokens"]
    assert type(want) is float and (pr is None or type(pr["message"]["usage"]["input_tokens"]) is float)
    assert R.classify(P.project(line)) == R.classify(o)


def test_records_labelled_from_their_type_alone(tmp_path):
    """The census reads records other than user/assistant from their Struct (type, system subtype,
    attachment type) without a dict: every real non-conversation record, then each one with its
    subtype/attachment/operation replaced by the shapes that table must not be fooled by
    (hand-made: a string or list attachment, a numeric subtype, a hook or queued_command
    attachment, an enqueue; no client writes the damaged ones, a torn rewrite could), held equal to
    the full parse."""
    rows = [orjson.loads(l) for p in REAL for l in p.read_bytes().split(b"\n") if l.strip()]
    rows = [o for o in rows if isinstance(o, dict) and o.get("type") not in ("user", "assistant")]
    assert {"system", "attachment", "queue-operation"} <= {o.get("type") for o in rows}
    out = list(rows)
    for i, o in enumerate(rows[:200]):
        for j, (k, v) in enumerate( (("attachment", "text"), ("attachment", [1]), ("attachment", None),
                     ("attachment", {"type": "hook_additional_context"}), ("attachment", {"type": 7}),
                     ("attachment", {"type": "queued_command", "prompt": "hi"}), ("subtype", 3),
                     ("subtype", "compact_boundary"), ("operation", "enqueue"), ("content", "typed"),
                     ("type", "system"), ("type", "attachment"), ("type", "queue-operation"), ("type", 5))):
            out.append({**o, k: v, "uuid": f"mutant-{i}-{j}"})  # not a replay: counted
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"\n".join(orjson.dumps(o) for o in out) + b"\n")
    _both(p)


def test_assistant_records_read_from_their_struct(tmp_path):
    """Assistant records are counted from their Struct (providers/claude/stats.py `_assistant`): every real
    one, then copies with the shapes its rules must read as the dict rules do (hand-made: no
    client writes a null message, a string or absent content, a usage that is not an object or
    holds a bool or an integer past 64 bits, blocks without ids or names or with a numeric id, narration and
    unknown signature tags, or a SendMessage that signals; the last is sent back to the dict), held equal to the full parse."""
    from tests.test_claims_classification import signature  # the protobuf layout NAR-002 measured

    rows = [orjson.loads(l) for p in REAL for l in p.read_bytes().split(b"\n") if l.strip()]
    rows = [o for o in rows if isinstance(o, dict) and o.get("type") == "assistant"
            and isinstance(o.get("message"), dict)]
    assert rows
    out = list(rows)
    tu = {"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {}}
    for i, o in enumerate(rows[:100]):
        m = o["message"]
        for j, msg in enumerate((None, {**m, "content": "text"}, {k: v for k, v in m.items() if k != "content"},
                                 {**m, "usage": [1]}, {**m, "usage": {"input_tokens": True, "output_tokens": 1 << 70}},
                                 {**m, "id": None, "stop_reason": 3, "model": ""},
                                 {**m, "content": [{"type": "tool_use", "name": 5}, {"type": "tool_use"},
                                                   {"type": "tool_use", "id": 7}, tu, tu]},
                                 {**m, "content": [{"type": "tool_use", "id": f"s{i}", "name": "SendMessage",
                                                    "input": {"type": "shutdown_request"}}]},
                                 {**m, "content": [{"type": "thinking", "signature": 5}, {"type": ["x"]},
                                                   {"type": "redacted_thinking", "signature": "QUJD"}]},
                                 {**m, "content": [{"type": "thinking", "signature": signature([b"narration"])[0]},
                                                   {"type": "thinking", "signature": signature([b"other"])[0]}]})):
            out.append({**o, "message": msg, "uuid": f"mutant-{i}-{j}"})
        out.append({k: v for k, v in o.items() if k != "message"} | {"uuid": f"bare-{i}"})
    p = tmp_path / "a.jsonl"
    p.write_text("\n".join(json.dumps(o) for o in out) + "\n")  # json: integers past 64 bits too
    _both(p)
