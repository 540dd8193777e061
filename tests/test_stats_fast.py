"""The `stats` cold path's cheaper pieces (providers/claude/stats.py, providers/claude/model/projected.py, read/lines.py) must
count exactly what the reference readings count: the full `LaneIndex` census, the orjson-only
scan (`lanescan.PROJECT = False`) and the census of two halves merged at every line boundary."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from sessionsift.providers.claude import stats as S
from sessionsift.providers.claude import lanescan as LS
from tests.test_lane_perf_equivalence import _lane, boundaries, census, split_census
from tests.test_projected import REAL, _both


def _real(kind: str) -> list[dict]:
    rows = [orjson.loads(l) for p in REAL for l in p.read_bytes().split(b"\n") if l.strip()]
    return [o for o in rows if isinstance(o, dict) and o.get("type") == kind]


def _all_ways(path: Path) -> dict:
    """The census of `path`, asserted equal on every reading; returned for further checks."""
    _both(path)
    ref = census(S.lane_stats_indexed(_lane(path)))
    assert census(S.lane_stats(_lane(path), parallel=False)) == ref
    for cut in boundaries(path, limit=60):
        assert split_census(path, cut) == ref, cut
    return ref


def test_messages_without_an_id_merge_by_line(tmp_path):
    """Assistant records whose message has no id are keyed by their line ("line:N"), and a
    message id spelled "line:N" merges with that line's (hand-made: no client writes an
    id-less message or such an id; a damaged or foreign transcript could). Held equal on every
    reading, also with the halves cut anywhere (the second half's line keys are shifted)."""
    o = next(o for o in _real("assistant") if isinstance(o.get("message"), dict))
    m = o["message"]
    out = []
    for i in range(12):
        msg = {**m, "usage": {"input_tokens": 10 + i, "output_tokens": i}}
        if i % 3 == 0:
            msg = {k: v for k, v in msg.items() if k != "id"}
        elif i % 3 == 1:
            msg["id"] = f"line:{len(out)}"  # the line before: an id-less message's key
        else:
            msg["id"] = "shared"
        out.append({**o, "message": msg, "uuid": f"u{i}", "parentUuid": f"u{i - 1}" if i else None})
    p = tmp_path / "noid.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in out) + "\n")
    ref = _all_ways(p)
    assert ref["messages_by_model"] and ref["tokens"]


import pytest  # noqa: E402

from sessionsift.read import lines as L  # noqa: E402
from tests.test_lane_perf_equivalence import CRASH  # noqa: E402


@pytest.mark.parametrize("splitter", ["stringzilla", "find-loop"])
@pytest.mark.parametrize("batch", [64, 1 << 22])
def test_view_batches_with_and_without_stringzilla(batch, splitter, monkeypatch):
    """Lines as stringzilla Str views and as memoryviews found one newline at a time are the lines
    `iter_lines` frames, with the same counts, on every crash artefact and real transcript."""
    monkeypatch.setattr(L, "BATCH_BYTES", batch)
    if splitter == "find-loop":
        monkeypatch.setattr(L, "_sz_split", lambda: None)
    kinds = set()
    for path in CRASH + REAL[:6]:
        st1, st2 = L.ReadStats(), L.ReadStats()
        one = [ln.raw for ln in L.iter_lines(path, stats=st1)]
        with L.open_map(path) as m:
            two = []
            for b in L.iter_line_batches(m.buf, 0, len(m.buf), st2, views=True):
                kinds.update(type(raw).__name__ for raw in b)
                two += [bytes(raw) for raw in b]
            del b
        assert one == two, path
        assert (st1.lines, st1.torn_tail_bytes, st1.zero_filled_lines) == (st2.lines, st2.torn_tail_bytes,
                                                                         st2.zero_filled_lines)
    view, other = ("Str", "memoryview") if splitter == "stringzilla" else ("memoryview", "Str")
    assert view in kinds and other not in kinds  # (a final fragment is a bytes copy)


def _taken(monkeypatch, path: Path) -> list[bool]:
    """What the user-record fast path answered per user record of `path` (True: counted there)."""
    seen: list[bool] = []
    real = LS._UserFast.__call__

    def spy(self, r, no):
        out = real(self, r, no)
        seen.append(out)
        return out

    monkeypatch.setattr(LS._UserFast, "__call__", spy)
    S.lane_stats(_lane(path), parallel=False)
    monkeypatch.undo()
    return seen


def test_user_tool_results_read_from_their_struct(tmp_path, monkeypatch):
    """User records carrying tool results are counted from their Struct (providers/claude/stats.py
    `_UserFast`): every real user record, then copies with the shapes its rules must read as the
    dict rules do (hand-made: no client writes an is_error that is not a bool, a result without a
    tool_use_id or with a numeric one, a toolUseResult that is a list, a number, null, an empty or
    non-object `answers`, a blank `response`, a compact summary or meta record carrying results,
    or an attachment that is a string on a user record; a damaged or foreign transcript could) and
    results whose text carries a marker phrasing, plain or \\u-escaped (sent back to the dict
    path), held equal to the full parse, the LaneIndex census and every cut."""
    rows = _real("user")
    res = [o for o in rows if isinstance(o.get("message"), dict) and isinstance(o["message"].get("content"), list)
           and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in o["message"]["content"])]
    assert res and len(res) < len(rows)  # real prompts (string content) are in the corpus too
    out = list(rows)
    for i, o in enumerate(res[:60]):
        m = o["message"]
        tr = next(b for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
        tid = tr.get("tool_use_id")
        shapes = [
            ({"message": {**m, "content": [{**tr, "is_error": True}]}}),
            ({"message": {**m, "content": [{**tr, "is_error": 1, "tool_use_id": f"{tid}-1"},
                                           {**tr, "is_error": "yes", "tool_use_id": f"{tid}-2"}]}}),
            ({"message": {**m, "content": [{k: v for k, v in tr.items() if k != "tool_use_id"} | {"is_error": True},
                                           {**tr, "tool_use_id": 7, "is_error": True},
                                           {**tr, "tool_use_id": "", "is_error": True}]}}),
            ({"toolUseResult": {"answers": {"q": "a"}}}),
            ({"toolUseResult": {"answers": {}, "response": "  typed  "}}),
            ({"toolUseResult": {"answers": {}}}),
            ({"toolUseResult": {"answers": [1], "response": "   "}}),
            ({"toolUseResult": {"answers": {"q": "a"}}, "message": {**m, "content": [{**tr, "is_error": True}]}}),
            ({"toolUseResult": [{"type": "text", "text": "x"}]}),
            ({"toolUseResult": 5}),
            ({"toolUseResult": None}),
            ({"toolUseResult": "Error: no"}),
            ({"toolUseResult": True}),
            ({"isCompactSummary": True}),
            ({"isMeta": True}),
            ({"attachment": "text"}),
            ({"message": {**m, "content": [{**tr, "content": "The user doesn't want to proceed with this tool use. "
                                            "To tell you how to proceed, the user said: no"}]}}),
            ({"message": {**m, "content": [{**tr, "content": "The user answered: yes"}]}, "toolUseResult": None}),
            ({"message": {**m, "content": [{**tr, "content": [{"type": "text", "text": "Your questions have been "
                                                               "answered: ok"}]}]}}),
            ({"message": {**m, "content": [{"type": "text", "text": "hi"}, {**tr, "content": None}]}}),
            ({"message": {**m, "content": [{**tr, "content": "\u00e9t\u00e9 \u001b[0m"}]}}),
            ({"message": {**m, "content": [{**tr, "type": 5}]}}),
            ({"message": {**m, "content": [tr, {"type": "tool_result", "tool_use_id": tid}]}}),
        ]
        for j, extra in enumerate(shapes):
            out.append({**o, **extra, "uuid": f"mutant-{i}-{j}"})
        out.append({**o, "type": "user-v2", "uuid": f"unknown-{i}"})  # an unknown kind: passes through, counted
    # a line lost after a meta result that followed a finished turn: whether the record after it,
    # bridged across the loss, opens a turn depends on the meta record leaving the turn ended
    a = next(x for x in _real("assistant") if isinstance(x.get("message"), dict)
             and x["message"].get("stop_reason") == "end_turn")
    # (and before them, on the same live chain, a question answered through its toolUseResult: a
    # turn opener)
    plain = {**res[0], "message": {**res[0]["message"], "content": [
        {"type": "tool_result", "tool_use_id": "toolu_q", "content": "ok"}]}}
    out += [{**a, "uuid": "chain-a", "parentUuid": None},
            {**plain, "uuid": "chain-answer", "parentUuid": "chain-a", "toolUseResult": {"answers": {"q": "a"}}},
            {**a, "uuid": "end-a", "parentUuid": "chain-answer"},
            {**plain, "uuid": "meta-r", "parentUuid": "end-a", "isMeta": True},
            {**plain, "uuid": "after-loss", "parentUuid": "lost-record", "isMeta": False}]
    p = tmp_path / "u.jsonl"
    # json.dumps escapes non-ASCII as \\u: those results go back to the dict path
    text = [json.dumps(x, ensure_ascii=i % 2 == 0) for i, x in enumerate(out)]
    p.write_text("\n".join(text[:-1] + ['{"type":"user","uuid":"lost-rec'] + text[-1:]) + "\n")
    ref = _all_ways(p)
    assert dict(ref["read"])["malformed_lines"] and dict(ref["read"])["bridges"]
    assert dict(ref["unknown_line_types"])["user-v2"] == min(len(res), 60)
    taken = _taken(monkeypatch, p)
    assert taken.count(True) >= len(res) // 2 and False in taken  # both paths ran
    for path in REAL:
        _all_ways(path) if path.stat().st_size < 400_000 else _both(path)
    assert any(_taken(monkeypatch, path).count(True) for path in REAL)


def _tokens_reference(ls, per_msg) -> None:
    """The per-message token sums as first written (one message at a time): the reference
    `S._tokens` (grouped by model) is held to."""
    from collections import Counter

    carried: dict = {}
    for (model, _mid), fields in per_msg.items():
        ls.messages_by_model[model] += 1
        agg = ls.tokens.setdefault(model, {})
        seen = carried.setdefault(model, Counter())
        for f, v in fields.items():
            agg[f] = agg.get(f, 0) + v
            seen[f] += 1
    for model, n in ls.messages_by_model.items():
        miss = {f: n - carried[model][f] for f in S.USAGE_FIELDS if carried[model][f] < n}
        if miss:
            ls.tokens_missing[model] = miss


def test_token_sums_grouped_by_model_equal_the_per_message_sums():
    """Random messages (hand-made: field subsets in any order, as lines of one message merge
    them, bools and zeros, models without any usage) give the same sums, counts, missing fields
    and the same order of models and of fields."""
    import random

    rng = random.Random(16)
    for trial in range(300):
        per_msg = {}
        for i in range(rng.randrange(0, 40)):
            model = rng.choice(["m1", "m2", "(unknown model)", "m3"])
            fields = rng.sample(S.USAGE_FIELDS, rng.randrange(0, 5))
            per_msg[(model, f"id{i}" if rng.random() < 0.8 else i)] = {
                f: rng.choice([0, 1, True, 10 ** rng.randrange(1, 12)]) for f in fields}
        a = S.LaneStats(None, None)
        b = S.LaneStats(None, None)
        S._tokens(a, per_msg)
        _tokens_reference(b, per_msg)
        for got, want in ((a.tokens, b.tokens), (a.tokens_missing, b.tokens_missing),
                          (a.messages_by_model, b.messages_by_model)):
            assert [(k, list(v.items()) if isinstance(v, dict) else v) for k, v in got.items()] == \
                [(k, list(v.items()) if isinstance(v, dict) else v) for k, v in want.items()], trial
