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
import os
import shutil
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest

from sessionsift.providers.claude.discover import resolve_targets
from sessionsift.providers.claude.cache import lanes as IL
from sessionsift.read.lines import iter_lines
from sessionsift.search import Query
from sessionsift.providers.claude.search import lanes as A

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
    run = A.lane_search(q, scope, use_index=use_index)
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
    # no index yet: the first census indexes each lane as it reads it (no `index update`), and
    # answers from what it built; every later one from the index
    seen = _compare(home, qs)
    assert seen["built"] == len(A.lanes_of(resolve_targets([], home), True)) and not seen[None], seen
    seen = _compare(home, qs)
    assert seen["index"] > 0 and not seen[None] and not seen["built"], seen  # every census lane from the index


@pytest.mark.parametrize("home", HOMES, ids=["2.1.258", "2.1.332"])
def test_counted_pattern_hits_take_their_labels_from_the_index(home, monkeypatch):
    from sessionsift.providers.claude.search import scan

    # where no hit can be a draft the bytes say so and no label is taken at all
    # (test_search_drafts.py); here the lane view decides, from the index
    monkeypatch.setattr(scan, "DRAFTS_FROM_BYTES", False)
    _index_all(home)
    seen = _compare(home, COUNTED_PATTERNS)
    assert seen["index"] > 0


def test_the_corpora_hold_what_the_census_must_get_right():
    """Drafts (relabelled user.unsent), replays, unknown record types and carriers are in the
    corpora, so the equality above covers them."""
    from sessionsift.providers.claude.cache import search as IS

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
    # not taken from the summary: its index file is gone, so the census indexes it again as it reads it
    assert got[3]["built"] == 1 and got[3]["index"] == len(ref[2]) - 1 and not got[3][None]


# -- whole answers kept per data root (index/answers.py) -------------------------------------


def _census(q: Query, home: Path, use_index: bool):
    """`SearchRun.census()` as the CLI calls it: (merged counts, summary without cost fields)."""
    run = A.lane_search(q, resolve_targets([], home), use_index=use_index)
    counts = run.census()
    sm = dataclasses.asdict(run.summary)
    for k in ("records_parsed", "shape_skipped", "shape_counted", "index_counts", "index_why"):
        sm.pop(k)
    return counts, sm, dict(run.summary.index_counts)


def _replayed(monkeypatch, q: Query, home: Path):
    """The census answered whole from the kept answer (no transcript's outcome computed)."""
    def no(*_a, **_k):
        raise AssertionError("answered per transcript, not from the kept answer")

    with monkeypatch.context() as m:
        m.setattr(A.LaneRun, "outcomes", no)
        return _census(q, home, True)


@pytest.mark.parametrize("home", HOMES, ids=["2.1.258", "2.1.332"])
def test_a_kept_whole_answer_equals_the_scan(home, monkeypatch):
    """Every census shape (each count_by, selections, gated kinds, windows, no subagents): the
    answer kept after a run from the index is replayed whole, and equals the scan's."""
    _index_all(home)
    for q in queries(home)[::3]:
        ref = _census(q, home, False)
        first = _census(q, home, True)  # per transcript from the index, then kept
        assert first[:2] == ref[:2], q
        got = _replayed(monkeypatch, q, home)
        assert got[:2] == ref[:2] and got[2] == first[2], q


def test_a_census_read_by_several_workers_is_kept_too(tmp_path, monkeypatch):
    """A census whose transcripts were read by forked workers (a store past PARALLEL_MIN_BYTES:
    every store of forks in benchmarks/ issue 25) was never kept (only one-process runs were), so
    every later run read each transcript's index again. Kept with how many read it: the replay
    equals the scan and says the same `workers` as the run it replays."""
    home = _home(tmp_path)
    monkeypatch.setattr(A, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(A, "MIN_BATCH_BYTES", 1)
    monkeypatch.setattr(A.os, "cpu_count", lambda: 2)
    # per-record censuses: the root summary answers none of them, so each lane is read by a worker
    for q in [Query(patterns=("",), count_by=cb) for cb in ("day", "model", "tool", "attachment")]:
        ref = _census(q, home, False)
        run = A.lane_search(q, resolve_targets([], home), use_index=True)
        counts = run.census()
        assert run.workers == 2 and counts == ref[0], q
        again = A.lane_search(q, resolve_targets([], home), use_index=True)
        with monkeypatch.context() as m:
            m.setattr(A.LaneRun, "outcomes", lambda *_a, **_k: (_ for _ in ()).throw(AssertionError("not kept")))
            assert again.census() == ref[0], q
        assert again.workers == 2 and dataclasses.asdict(again.summary) == dataclasses.asdict(run.summary), q


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "claude"
    shutil.copytree(HOMES[1], home)
    _index_all(home)
    return home


CENSUS = [Query(patterns=("",), include=("user.message",), count_by="total"),
          Query(patterns=("",), count_by="label"), Query(patterns=("",), count_by="session"),
          Query(patterns=("",), include=("agent.tool.use",), count_by="tool")]


def _keep_all(home: Path, monkeypatch) -> list:
    out = []
    for q in CENSUS:
        ref = _census(q, home, False)
        assert _census(q, home, True)[:2] == ref[:2]
        assert _replayed(monkeypatch, q, home)[:2] == ref[:2]
        out.append(ref)
    return out


def _after_change(home: Path, monkeypatch, before: list) -> None:
    """After a change to the store no kept answer is replayed; each equals the scan of the
    store as it is now, and is kept again for the next run."""
    changed = False
    for q, old in zip(CENSUS, before):
        ref = _census(q, home, False)
        changed |= ref[:2] != old[:2]
        with pytest.raises(AssertionError, match="per transcript"):
            _replayed(monkeypatch, q, home)
        assert _census(q, home, True)[:2] == ref[:2]
    _index_all(home)  # `index update`: an added transcript is indexed, the changed ones are fresh
    for q in CENSUS:
        ref = _census(q, home, False)
        assert _census(q, home, True)[:2] == ref[:2]  # every transcript from the index: kept
        assert _replayed(monkeypatch, q, home)[:2] == ref[:2]
    assert changed  # the change made a difference the kept answers would have hidden


def _user_lines(p: Path) -> list[int]:
    lines = p.read_bytes().split(b"\n")
    return [i for i, ln in enumerate(lines) if b'"type":"user"' in ln]


def _biggest(home: Path) -> Path:
    return max((home / "projects").glob("*/*.jsonl"), key=lambda p: len(_user_lines(p)))


def test_a_kept_answer_is_not_used_after_a_transcript_grew(tmp_path, monkeypatch):
    home = _home(tmp_path)
    before = _keep_all(home, monkeypatch)
    main = _biggest(home)
    lines = main.read_bytes().split(b"\n")
    with open(main, "ab") as f:
        f.write(lines[_user_lines(main)[0]] + b"\n")  # a real user line appended (a replay)
    _after_change(home, monkeypatch, before)


def test_a_kept_answer_is_not_used_after_a_truncation(tmp_path, monkeypatch):
    home = _home(tmp_path)
    before = _keep_all(home, monkeypatch)
    main = _biggest(home)
    data = main.read_bytes()
    main.write_bytes(data[:data.rfind(b"\n", 0, len(data) // 2) + 1])
    _after_change(home, monkeypatch, before)


def _same_size_rewrite(main: Path) -> bytes:
    """The transcript's bytes with one user record's type changed, same length (unknown type)."""
    data = main.read_bytes()
    at = data.find(b'"type":"user"')
    assert at >= 0
    return data[:at] + b'"type":"usex"' + data[at + len(b'"type":"user"'):]


def test_a_kept_answer_is_not_used_after_a_same_size_rewrite_with_the_old_mtime(tmp_path, monkeypatch):
    home = _home(tmp_path)
    before = _keep_all(home, monkeypatch)
    main = _biggest(home)
    st = main.stat()
    new = _same_size_rewrite(main)
    with open(main, "r+b") as f:  # in place: same inode, same size; mtime set back below
        f.write(new)
    os.utime(main, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert main.stat().st_ino == st.st_ino and main.stat().st_size == st.st_size
    _after_change(home, monkeypatch, before)


def test_a_kept_answer_is_not_used_after_a_replacement(tmp_path, monkeypatch):
    home = _home(tmp_path)
    before = _keep_all(home, monkeypatch)
    main = _biggest(home)
    st = main.stat()
    tmp = main.with_suffix(".tmp")
    tmp.write_bytes(_same_size_rewrite(main))
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, main)  # another inode over the path, same size and mtime
    _after_change(home, monkeypatch, before)


def test_a_kept_answer_is_not_used_after_a_transcript_was_removed(tmp_path, monkeypatch):
    home = _home(tmp_path)
    before = _keep_all(home, monkeypatch)
    _biggest(home).unlink()
    _after_change(home, monkeypatch, before)


def test_a_kept_answer_is_not_used_after_a_subagent_lane_was_removed(tmp_path, monkeypatch):
    home = _home(tmp_path)
    lanes = sorted((home / "projects").rglob("subagents/*.jsonl"), key=lambda p: -len(_user_lines(p)))
    assert lanes and _user_lines(lanes[0])
    before = _keep_all(home, monkeypatch)
    lanes[0].unlink()
    _after_change(home, monkeypatch, before)


def test_a_kept_answer_is_not_used_after_a_transcript_was_added(tmp_path, monkeypatch):
    home = _home(tmp_path)
    before = _keep_all(home, monkeypatch)
    have = {p.name for p in (home / "projects").rglob("*.jsonl")}
    src = max((p for p in (HOMES[0] / "projects").glob("*/*.jsonl") if p.name not in have),
              key=lambda p: len(_user_lines(p)))  # a session of the other corpus (its own uuids: no fork)
    assert _user_lines(src)
    dest = _biggest(home).parent / src.name
    shutil.copy(src, dest)
    _after_change(home, monkeypatch, before)


def test_a_kept_answer_is_not_used_with_the_index_off(tmp_path, monkeypatch):
    home = _home(tmp_path)
    _keep_all(home, monkeypatch)
    monkeypatch.setenv("SESSIONSIFT_NO_INDEX", "1")
    with pytest.raises(AssertionError, match="per transcript"):
        _replayed(monkeypatch, CENSUS[0], home)


def test_the_cli_census_replays_the_same_output(tmp_path):
    """`search '' -t user.message --count` (text and JSON): the run that keeps the answer, the run
    that replays it and a --no-index scan print the same (the JSON's `index` field aside)."""
    from click.testing import CliRunner

    from sessionsift.cli.app import cli

    home = _home(tmp_path)
    for fmt in ("text", "json"):
        for args in (["-t", "user.message", "--count"], ["--count-by", "label"], ["-T", "harness", "--count-by", "project"]):
            argv = ["search", "", *args, "--claude-home", str(home), "--format", fmt]
            outs = [CliRunner().invoke(cli, argv) for _ in range(3)]
            scan = CliRunner().invoke(cli, [*argv, "--no-index"])
            assert all(o.exit_code == 0 for o in outs + [scan]), [o.output for o in outs + [scan]]
            assert outs[0].output == outs[1].output == outs[2].output
            if fmt == "json":
                rows = [[json.loads(x) for x in o.output.splitlines()] for o in (outs[2], scan)]
                for r in rows:
                    for k in ("index", "records_parsed", "shape_skipped", "shape_counted"):  # cost fields
                        r[-1].pop(k)
                assert rows[0] == rows[1]
            else:
                assert [l for l in outs[2].output.splitlines() if not l.startswith("index:")] == \
                    [l for l in scan.output.splitlines() if not l.startswith("index:")]


def test_a_census_indexes_what_it_reads_and_its_second_run_is_answered_from_it(tmp_path, monkeypatch):
    """Issue 25: a census is the normal path to the index - the first `search '' -c` over a store
    never indexed builds each transcript's index as it reads it (summary `index.built`, nothing
    scanned without it), the second answers every transcript from it, and both print the counts
    of a --no-index scan (the JSON's cost fields aside)."""
    from click.testing import CliRunner

    from sessionsift.cli.app import cli

    home = tmp_path / "claude"
    shutil.copytree(HOMES[1], home)
    monkeypatch.setenv("SESSIONSIFT_INDEX_DIR", str(tmp_path / "index"))
    lanes = len(A.lanes_of(resolve_targets([], home), True))
    argv = ["search", "", "-t", "user.message", "--count", "--claude-home", str(home), "--format", "json"]
    runs = [[json.loads(x) for x in CliRunner().invoke(cli, a).output.splitlines()]
            for a in (argv, argv, [*argv, "--no-index"])]
    first, second, scan = (r[-1]["index"] for r in runs)
    assert (first["built"], first["scanned"], first["from_index"], first["scanned_why"]) == (lanes, 0, 0, None)
    assert (second["built"], second["scanned"], second["from_index"]) == (0, 0, lanes)
    assert scan["scanned"] == lanes
    for r in runs:
        for k in ("index", "records_parsed", "shape_skipped", "shape_counted"):
            r[-1].pop(k)
    assert runs[0] == runs[1] == runs[2]
