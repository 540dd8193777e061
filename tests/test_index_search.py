"""`search` from the index (sessionsift/index/search.py) answers exactly what the scan answers.

On the real-client corpora (2.1.258 and 2.1.332, with their drafts, replays, carriers, unknown
record types and subagent lanes), a reserialised copy (no byte shape fits it: every census lane is
still answered from the index, and must agree), and a home holding the crash artefacts (damaged
lines: those lanes must be scanned, and still agree). Every census the index can answer, with
selections, gated kinds, time windows; pattern searches counted with -c take their hits' final
labels from the index. Cost fields (records parsed, lines skipped by shape) describe the work
done and are not compared.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest

from sessionsift.discover import resolve_targets
from sessionsift.index import lanes as IL
from sessionsift.read.lines import iter_lines
from sessionsift.search import Query
from sessionsift.search import api as A

ROOT = Path(__file__).resolve().parent.parent
HOMES = [ROOT / "examples" / "claude-home", ROOT / "examples" / "newest-client" / "2.1.332" / "claude-home"]


def _instants(home: Path) -> list[datetime]:
    out = []
    for f in sorted(home.rglob("*.jsonl")):
        for ln in iter_lines(f):
            try:
                ts = orjson.loads(ln.raw).get("timestamp")
            except orjson.JSONDecodeError:
                continue
            if isinstance(ts, str):
                out.append(datetime.fromisoformat(ts.replace("Z", "+00:00")))
    return sorted(out)


def queries(home: Path) -> list[Query]:
    ts = _instants(home)
    mid = ts[len(ts) // 2] if ts else datetime(2026, 1, 1, tzinfo=timezone.utc)
    late = ts[(3 * len(ts)) // 4] if ts else mid
    qs = []
    for cb in ("total", "label", "session", "project", "model", "tool", "attachment", "day"):
        qs += [
            Query(patterns=("",), count_by=cb),
            Query(patterns=("",), include=("user.message",), count_by=cb),
            Query(patterns=("",), include=("user.unsent",), count_by=cb),
            Query(patterns=("",), include=("user",), count_by=cb),
            Query(patterns=("",), include=("agent.tool.result",), count_by=cb),
            Query(patterns=("",), include=("agent.tool.use", "agent.message"), count_by=cb),
            Query(patterns=("",), include=("harness",), exclude=("harness.meta",), count_by=cb),
            Query(patterns=("",), attachments=True, count_by=cb),
            Query(patterns=("",), additional_context=True, include=("harness.meta.hook",), count_by=cb),
            Query(patterns=("",), include=("harness.meta.snapshot", "user.queued", "harness.meta.system"),
                  count_by=cb),
            Query(patterns=("",), since=mid, count_by=cb),
            Query(patterns=("",), include=("user.message", "agent.tool.result"), until=late, count_by=cb),
            Query(patterns=("",), subagents=False, count_by=cb),
        ]
    return qs


COUNTED_PATTERNS = [  # hits found by the scan, final labels from the index (-c / --count-by)
    Query(patterns=("P1",), count_by="total"),
    Query(patterns=("the",), count_by="label"),
    Query(patterns=("file",), ignore_case=True, count_by="tool"),
    Query(patterns=("P1",), include=("user",), count_by="label"),
    Query(patterns=("P[0-9]",), include=("user.unsent", "user.message"), count_by="label"),
    Query(patterns=("tool_use_id",), count_by="session"),
]


def _run(q: Query, home: Path, use_index: bool):
    scope = resolve_targets([], home)
    run = A.search(q, scope, use_index=use_index)
    counts: dict = {}
    per_lane = []
    for lane, o in run.outcomes():
        A.merge_counts(q.count_by or "total", counts, o.counts)
        per_lane.append((str(lane.path.relative_to(home)), o.hit_count, o.from_index))
    sm = dataclasses.asdict(run.summary)
    for k in ("records_parsed", "shape_skipped", "shape_counted", "index_counts", "index_why"):
        sm.pop(k)
    return counts, sm, [x[:2] for x in per_lane], Counter(x[2] for x in per_lane), run.summary


def _index_all(home: Path) -> None:
    scope = resolve_targets([], home)
    for lane in A.lanes_of(scope, True):
        IL.lane_stats(lane)


def _compare(home: Path, qs: list[Query]) -> Counter:
    seen: Counter = Counter()
    for q in qs:
        ref = _run(q, home, False)
        got = _run(q, home, True)
        assert got[:3] == ref[:3], (home.name, q)
        seen.update(got[3])
    return seen


@pytest.mark.parametrize("home", HOMES, ids=["2.1.258", "2.1.332"])
def test_census_from_the_index_equals_the_scan(home):
    qs = queries(home)
    seen = _compare(home, qs)  # no index yet: scanned (a relabelling scan indexes its lane as it goes)
    assert seen[None] > 0
    _index_all(home)
    seen = _compare(home, qs)
    assert seen["index"] > 0 and not seen[None], seen  # every census lane from the index


@pytest.mark.parametrize("home", HOMES, ids=["2.1.258", "2.1.332"])
def test_counted_pattern_hits_take_their_labels_from_the_index(home):
    _index_all(home)
    seen = _compare(home, COUNTED_PATTERNS)
    assert seen["index"] > 0


def test_the_corpora_hold_what_the_census_must_get_right():
    """Drafts (relabelled user.unsent), replays, unknown record types and carriers are in the
    corpora, so the equality above covers them."""
    from sessionsift.index import search as IS

    drafts = unknown = 0
    for home in HOMES:
        _index_all(home)
        for lane in A.lanes_of(resolve_targets([], home), True):
            v, _ = IS.view(lane, False)
            assert v is not None, lane.path
            drafts += len(v.drafts)
            unknown += sum(n for _t, _m, n in v.unknown)
    assert unknown > 0  # drafts: tests/test_census_realclient.py (census_recall)


@pytest.fixture(scope="module")
def reserialised(tmp_path_factory) -> Path:
    """examples/claude-home with every line rewritten by `json.dumps` (spaces after colons,
    non-ASCII as \\uXXXX): hand-made on purpose (a jq/editor round-trip writes this; the client never
    does) so that no byte-shape fast path of the scan fits."""
    src = HOMES[0]
    dest = tmp_path_factory.mktemp("reser") / "claude-home"
    for f in sorted(src.rglob("*.jsonl")):
        out = dest / f.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(orjson.loads(l.raw), ensure_ascii=True) for l in iter_lines(f) if l.raw.strip()]
        out.write_text("\n".join(lines) + "\n")
    return dest


def test_reserialised_copy(reserialised):
    qs = queries(reserialised)[::3]
    _index_all(reserialised)
    seen = _compare(reserialised, qs + COUNTED_PATTERNS)
    assert seen["index"] > 0


def test_crash_artefacts_are_scanned_and_agree(tmp_path):
    home = tmp_path / "claude"
    proj = home / "projects" / "-crash"
    proj.mkdir(parents=True)
    crash = sorted((ROOT / "examples" / "crash").glob("*.jsonl"))
    for i, f in enumerate(crash):
        shutil.copy(f, proj / f"{i:08d}-0000-4000-8000-000000000000.jsonl")
    _index_all(home)
    qs = queries(home)[::2]
    seen = _compare(home, qs)
    assert seen[None] > 0  # damaged lanes scanned
    got = _run(Query(patterns=("",), count_by="total"), home, True)
    assert got[4].index_why and any("damaged" in k or "torn" in k for k in got[4].index_why)


def test_a_grown_lane_is_updated_then_answered(tmp_path):
    src = HOMES[1]
    home = tmp_path / "claude"
    shutil.copytree(src, home)
    _index_all(home)
    main = max((home / "projects").rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    data = main.read_bytes()
    half = data.rfind(b"\n", 0, len(data) // 2) + 1
    main.write_bytes(data[:half])
    _index_all(home)  # rebuilt for the truncated file
    with open(main, "ab") as f:
        f.write(data[half:])
    q = Query(patterns=("",), include=("user.message",), count_by="label")
    got = _run(q, home, True)
    assert got[3]["appended"] == 1
    assert got[:3] == _run(q, home, False)[:3]


@pytest.mark.parametrize("use_index", [False, True])
def test_unsent_alone_counts_only_drafts(use_index):
    """`-t user.unsent` selects drafts only: on the committed corpora (no draft) it counts 0, with
    or without the index (the scan used to skip relabelling when no draft was possible and
    counted every user.message as a hit)."""
    for home in HOMES:
        if use_index:
            _index_all(home)
        got = _run(Query(patterns=("",), include=("user.unsent",), count_by="total"), home, use_index)
        assert got[1]["hits"] == 0
        msg = _run(Query(patterns=("",), include=("user.unsent", "user.message"), count_by="total"), home, use_index)
        assert msg[1]["hits"] > 0


def test_the_root_summary_answers_alone_and_only_while_files_are_unchanged(tmp_path):
    """After one census the data root's summary (index/summary.py) answers the next by itself (a
    stat per transcript); a transcript that changed is not taken from it."""
    from sessionsift.index import store

    home = tmp_path / "claude"
    shutil.copytree(HOMES[1], home)
    _index_all(home)
    q = Query(patterns=("",), include=("user.message", "agent.tool.use"), count_by="label")
    ref = _run(q, home, False)
    first = _run(q, home, True)
    assert first[:3] == ref[:3]
    for p in (store.root_dir() / "claude").rglob("*.idx"):
        p.unlink()  # only the root summary is left
    got = _run(q, home, True)
    assert got[:3] == ref[:3] and got[3]["index"] == len(ref[2])
    main = max((home / "projects").rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    with open(main, "ab") as f:
        f.write(main.read_bytes().split(b"\n")[0] + b"\n")  # a real line appended (a replay)
    got = _run(q, home, True)
    assert got[:3] == _run(q, home, False)[:3]
    assert got[3][None] == 1 and got[3]["index"] == len(ref[2]) - 1
