"""Turn numbers, survival, openers, drafts, replays and bridges derived from a lane's index
(sessionsift/index/turns.py) equal the lane view's (`LaneIndex.build`), record by record, on every
real-client lane, the crash artefacts and hand-damaged copies of real transcripts
(tests/test_lane_perf_equivalence.py `_mutants`: replays, dropped and swapped lines, dangling
parents - what the client cannot be made to write offline)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionsift.providers.claude.discover import Lane
from sessionsift.index import store
from sessionsift.providers.claude.cache import codec, lanes as IL, turns as T
from sessionsift.providers.claude.model.lane import LaneIndex
from tests.test_lane_perf_equivalence import _mutants

ROOT = Path(__file__).resolve().parent.parent
HOMES = [ROOT / "examples" / "claude-home", ROOT / "examples" / "newest-client" / "2.1.332" / "claude-home"]
PATHS = sorted(p for h in HOMES for p in (h / "projects").rglob("*.jsonl")) + sorted(
    (ROOT / "examples" / "crash").glob("*.jsonl"))


def _check(path: Path) -> tuple[int, int, int]:
    lane = Lane(path, path.stem, "main", "main")
    IL.lane_stats(lane)
    f = store.IndexFile.open(store.index_path(IL.KIND, path), IL.KIND, str(path))
    got = T.Turns(T.derive(lane, f.section("part"), codec.cols_from(f.section("cols"))))
    ref = LaneIndex.build(lane)
    assert len(ref.entries) == len(got.turn)
    for i, e in enumerate(ref.entries):
        assert (got.turn_of(i), got.survival_of(i), bool(got.opener[i]), i in got.unsent,
                got.bridged.get(i), got.replay.get(i)) == (
            e.turn, e.survival, e.opener, e.labels[:1] == ("user.unsent",), e.bridged_to, e.replay_of), (path, i)
    return len(got.bridged), len(got.replay), max([t for t in got.turn] + [0])


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name[:14])
def test_turns_from_the_index_equal_the_lane_view(path):
    _check(path)


def test_damaged_copies(tmp_path):
    bridged = replays = 0
    for p in _mutants(tmp_path, n=40):
        if not p.read_bytes().endswith(b"\n"):  # the index covers whole lines (a torn tail is read apart)
            with open(p, "ab") as f:
                f.write(b"\n")
        b, r, _t = _check(p)
        bridged += b
        replays += r
    assert replays > 0


def test_a_turns_section_written_under_older_rules_is_not_read(tmp_path):
    """An index written before queue-operation lines joined the turn of the prompt below them
    holds the old numbers. MUTATED INDEX (not a transcript): a copy of the real 2.1.332
    files_basic session indexed, then its turns stored the old way under the section's old name,
    as an index from before would hold it. The turns read back are today's."""
    src = next((ROOT / "examples" / "newest-client" / "2.1.332" / "claude-home" / "projects").glob(
        "*files-basic*/8414eb07-*.jsonl"))
    dest = tmp_path / src.name
    dest.write_bytes(src.read_bytes())
    lane = Lane(dest, dest.stem, "main", "main")
    IL.lane_stats(lane)
    path = store.index_path(IL.KIND, dest)
    f = store.IndexFile.open(path, IL.KIND, str(dest))
    cols = codec.cols_from(f.section("cols"))
    now = LaneIndex.build(lane)
    queue = [i for i, e in enumerate(now.entries) if e.type == "queue-operation"]
    assert [now.entries[i].turn for i in queue] == [1, 1, 2, 2, 3, 3]
    old = T.derive(lane, f.section("part"), cols)
    stale = T.Turns(old).turn
    for i, t in zip(queue, [-1, -1, 1, 1, 2, 2]):  # what the file-order rule gave them
        stale[i] = t
    old["turn"] = stale.tobytes()
    f.with_section("turns", old, IL.KIND, str(dest))
    f = store.IndexFile.open(path, IL.KIND, str(dest))
    got = IL.turns_of(lane, f, cols)
    assert [got.turn_of(i) for i in queue] == [1, 1, 2, 2, 3, 3]
    assert [got.turn_of(i) for i in range(len(now.entries))] == [e.turn for e in now.entries]
