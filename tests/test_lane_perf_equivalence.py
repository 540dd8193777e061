"""The streaming `stats` census (no per-record entries; optional two-process split) must equal
the census computed from a full `LaneIndex`, on every lane of real-client transcripts: line
types, labels (drafts relabelled `user.unsent`), survival counts, replays, turns, tokens,
thinking tags, omissions, and the ORDER of every counter (text output sorts ties by it)."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from sessionsift.providers.claude import stats as S
from sessionsift.providers.claude.discover import Lane
from sessionsift.providers.claude.model.lane import LaneIndex
from sessionsift.read import lines as L

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
CRASH = sorted((EXAMPLES / "crash").glob("*.jsonl"))


def _lane(path: Path) -> Lane:
    return Lane(path, path.stem, "main", "main")


def census(ls: S.LaneStats) -> dict:
    """Every field of a LaneStats, dicts as item lists so that key order is compared too."""
    out = {}
    for f in dataclasses.fields(ls):
        if f.name == "lane":
            continue
        v = getattr(ls, f.name)
        if f.name == "read":
            v = dataclasses.asdict(v)
        if isinstance(v, dict):
            v = [(k, list(x.items()) if isinstance(x, dict) else x) for k, x in v.items()]
        out[f.name] = v
    return out


def transcripts(home: Path) -> list[Path]:
    return sorted(p for p in (home / "projects").rglob("*.jsonl"))


def assert_equivalent(path: Path) -> dict:
    lane = _lane(path)
    ref = census(S.lane_stats_indexed(lane))
    assert census(S.lane_stats(lane, parallel=False)) == ref, path
    return ref


def split_census(path: Path, split: int) -> dict:
    """The census of `path` read as two parts [0, split) + [split, size), merged."""
    with L.open_map(path) as m:
        a = S._scan(m.buf, 0, split, path, False)
        b = S._scan(m.buf, split, len(m.buf), path, False)
    S._merge(a, b)
    a.read.files = 1
    return census(S._finish(_lane(path), a))


def boundaries(path: Path, limit: int = 40) -> list[int]:
    data = path.read_bytes()
    cuts = [i + 1 for i, b in enumerate(data) if b == 0x0A and i + 1 < len(data)]
    if len(cuts) > limit:
        cuts = sorted(random.Random(len(data)).sample(cuts, limit))
    return cuts


# -- the committed real-client corpus ------------------------------------------------------


def test_every_lane_of_the_committed_corpus(realclient_examples):
    paths = transcripts(realclient_examples.root / "claude-home")
    assert len(paths) >= 8  # main lanes of the 8 scenarios plus subagent lanes
    seen_survival = set()
    turns = 0
    for p in paths:
        ref = assert_equivalent(p)
        seen_survival |= {k for k, _ in ref["survival"]}
        turns += ref["turns"]
    # the corpus exercises the survival rules, not only empty counters
    assert "live" in seen_survival and turns > 0


def test_newest_client_corpus_when_present():
    paths = _newest()
    if not paths:
        pytest.skip("examples/newest-client holds no transcripts")
    for p in paths:
        assert_equivalent(p)


@pytest.mark.parametrize("path", CRASH, ids=[p.stem for p in CRASH])
def test_crash_artefacts(path):
    ref = assert_equivalent(path)
    om = dict(ref["read"])
    # each artefact is damaged: the census must report it, identically on both paths
    assert (om["malformed_lines"] or om["zero_filled_lines"] or om["invalid_utf8_lines"]
            or om["torn_tail_bytes"])


def test_strict_fails_the_same(tmp_path):
    bad = next(p for p in CRASH if p.stem == "nul_run_inside_line")
    with pytest.raises(Exception) as a:
        S.lane_stats_indexed(_lane(bad), strict=True)
    with pytest.raises(Exception) as b:
        S.lane_stats(_lane(bad), strict=True)
    assert type(a.value) is type(b.value) and str(a.value) == str(b.value)


def test_live_realclient_corpus(realclient_corpus):
    paths = sorted({p for r in realclient_corpus for p in transcripts(r.config_dir)})
    assert paths
    for p in paths:
        assert_equivalent(p)


# -- the two-process split: any line boundary gives the same census -------------------------


def _newest() -> list[Path]:
    return sorted(p for p in (EXAMPLES / "newest-client").rglob("*.jsonl")
                  if p.parent.parent.name == "projects" or "subagents" in p.parts)


def _split_sources() -> list[Path]:
    srcs = transcripts(EXAMPLES / "claude-home")
    # the largest main lanes (most records, compactions, subagent spawns), all crash artefacts,
    # and the newest client's lanes (parallel tool calls continued across the cut)
    return sorted(srcs, key=lambda p: -p.stat().st_size)[:4] + CRASH + _newest()


@pytest.mark.parametrize("path", _split_sources(), ids=lambda p: p.stem[:24])
def test_split_at_line_boundaries(path):
    whole = census(S.lane_stats(_lane(path), parallel=False))
    for cut in boundaries(path):
        assert split_census(path, cut) == whole, (path, cut)


def test_forked_worker_path(monkeypatch):
    """The real fork + pipe path (lowered size threshold) equals the one-process reading."""
    path = max(transcripts(EXAMPLES / "claude-home"), key=lambda p: p.stat().st_size)
    whole = census(S.lane_stats(_lane(path), parallel=False))
    monkeypatch.setattr(S, "PARALLEL_MIN_BYTES", 0)
    assert S._split_point(L.open_map(path).buf, path.stat().st_size) is not None
    assert census(S.lane_stats(_lane(path))) == whole


def test_failed_worker_falls_back_to_one_process(monkeypatch):
    """A worker that cannot send its part (here: pickling fails in the child) costs time, not
    results: the second half is read again in-process."""
    path = max(transcripts(EXAMPLES / "claude-home"), key=lambda p: p.stat().st_size)
    whole = census(S.lane_stats(_lane(path), parallel=False))
    monkeypatch.setattr(S, "PARALLEL_MIN_BYTES", 0)

    class Boom:
        HIGHEST_PROTOCOL = 5
        loads = staticmethod(lambda data: pytest.fail("nothing to unpickle from a failed worker"))

        @staticmethod
        def dumps(*_a, **_k):
            raise RuntimeError("worker failure")

    from sessionsift.read import fanout  # the forked worker stats uses

    monkeypatch.setattr(fanout, "pickle", Boom)
    assert census(S.lane_stats(_lane(path))) == whole


def test_many_lanes_shared_with_a_worker(monkeypatch, tmp_path):
    """`stats` over many lanes gives a worker the second half of the lanes: same rows, same
    order, same problems as one process."""
    from sessionsift.providers.claude.discover import resolve_targets

    scope = resolve_targets([], str(EXAMPLES / "claude-home"), None)
    one = S.stats(scope)
    monkeypatch.setattr(S, "PARALLEL_MIN_BYTES", 0)
    lanes = [ln for s in scope.sessions for ln in s.lanes(True)]
    assert len(lanes) > 2 and S._can_fork()
    started = []

    class Counted(S.Worker):
        def __init__(self, job):
            started.append(job)
            super().__init__(job)

    monkeypatch.setattr(S, "Worker", Counted)
    two = S.stats(scope)
    assert started  # the worker did run
    assert [census(x) for x in two.lanes] == [census(x) for x in one.lanes]
    assert [x.lane for x in two.lanes] == [x.lane for x in one.lanes]
    assert two.problems == one.problems


# -- shapes the client writes only on crashes/resumes, made by editing real transcripts -----


def _mutants(tmp_path: Path, n: int = 40) -> list[Path]:
    """Hand-made edits of REAL transcripts: replayed lines (resume re-writes), missing lines,
    swapped lines (a turn's first assistant record above its prompt), truncated lines, dangling
    parents, blank lines, concatenated sessions. The real client cannot be made to produce
    these on demand offline, so they are derived from its records here."""
    srcs = transcripts(EXAMPLES / "claude-home")
    rng = random.Random(20261130)
    out = []
    for k in range(n):
        lines = rng.choice(srcs).read_bytes().split(b"\n")
        if rng.random() < 0.5:
            lines += rng.choice(srcs).read_bytes().split(b"\n")
        for _ in range(rng.randrange(1, 6)):
            m = len(lines)
            if m < 3:
                break
            i = rng.randrange(m)
            op = rng.randrange(6)
            if op == 0:
                lines.insert(rng.randrange(m), lines[i])
            elif op == 1:
                del lines[i]
            elif op == 2:
                j = rng.randrange(m)
                lines[i], lines[j] = lines[j], lines[i]
            elif op == 3:
                lines[i] = lines[i][: len(lines[i]) // 2]
            elif op == 4:
                lines[i] = lines[i].replace(b'"parentUuid":"', b'"parentUuid":"x', 1)
            else:
                lines.insert(i, b"")
        p = tmp_path / f"m{k}.jsonl"
        p.write_bytes(b"\n".join(lines))
        out.append(p)
    return out


def test_mutated_real_transcripts(tmp_path):
    drafts = replays = 0
    for p in _mutants(tmp_path):
        ref = assert_equivalent(p)
        drafts += dict(ref["labels"]).get("user.unsent", 0)
        replays += ref["replayed_lines"]
        cuts = boundaries(p, limit=6)
        for cut in cuts:
            assert split_census(p, cut) == ref, (p, cut)
    assert replays > 0  # the mutants do exercise replays


def test_lane_index_uses_the_skeleton_survival():
    """LaneIndex entries and the census agree record by record on survival and replays."""
    path = max(transcripts(EXAMPLES / "claude-home"), key=lambda p: p.stat().st_size)
    idx = LaneIndex.build(_lane(path))
    ls = S.lane_stats(_lane(path), parallel=False)
    from collections import Counter

    assert Counter(e.survival for e in idx.entries if e.survival) == ls.survival
    assert sum(1 for e in idx.entries if e.replay_of is not None) == ls.replayed_lines
    assert idx.turns == ls.turns
    assert all(idx.entries[i].uuid == u for u, i in idx.by_uuid.items())


# -- framing in batches equals line-by-line framing -----------------------------------------


@pytest.mark.parametrize("views", [False, True], ids=["copies", "views"])
@pytest.mark.parametrize("batch", [64, 1000, 1 << 22])
@pytest.mark.parametrize("path", CRASH, ids=[p.stem for p in CRASH])
def test_batch_framing_equals_iter_lines(path, batch, views, monkeypatch):
    monkeypatch.setattr(L, "BATCH_BYTES", batch)
    st1, st2 = L.ReadStats(), L.ReadStats()
    one = [ln.raw for ln in L.iter_lines(path, stats=st1)]
    with L.open_map(path) as m:
        two = [bytes(raw) for b in L.iter_line_batches(m.buf, 0, len(m.buf), st2, views=views) for raw in b]
    assert one == two
    assert (st1.lines, st1.torn_tail_bytes, st1.zero_filled_lines) == (st2.lines, st2.torn_tail_bytes, st2.zero_filled_lines)


def test_census_scan_runs_without_the_collector_and_restores_it(monkeypatch):
    import gc

    from sessionsift.providers.claude import stats as S

    seen = []
    real = S._scan

    def spy(*a, **k):
        seen.append(gc.isenabled())
        return real(*a, **k)

    monkeypatch.setattr(S, "_scan", spy)
    data = next((Path(__file__).resolve().parents[1] / "examples" / "claude-home").rglob("*.jsonl")).read_bytes()
    assert gc.isenabled()
    S.scan_part(data, 0, len(data), "x.jsonl", parallel=False)
    assert seen == [False] and gc.isenabled()

    def boom(*a, **k):
        raise RuntimeError("x")

    monkeypatch.setattr(S, "_scan", boom)
    with pytest.raises(RuntimeError):
        S.scan_part(data, 0, len(data), "x.jsonl", parallel=False)
    assert gc.isenabled()
