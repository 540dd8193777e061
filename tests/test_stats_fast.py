"""The `stats` cold path's cheaper pieces (core/stats.py, model/projected.py, read/lines.py) must
count exactly what the reference readings count: the full `LaneIndex` census, the orjson-only
scan (`S.PROJECT = False`) and the census of two halves merged at every line boundary."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from sessionsift.core import stats as S
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
