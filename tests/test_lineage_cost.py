"""Fork detection reads each transcript of a project dir at most once whatever the number of
sessions in it: the join of rerooted forks read every sibling once PER candidate (quadratic: 94,524
reads, 21 s of a warm `stats` over 2,382 transcripts in 24 dirs, benchmarks/speed.py). Data: 30
copies of a real 2.1.258 transcript (examples/claude-home) with every id remapped, as the
benchmarks build their stores; none is a fork of another, and every file's mtime is now, so each
is a candidate parent of every other by time."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from _corpus_util import remap_ids  # noqa: E402

from sessionsift.providers.claude.discover import sessions_in  # noqa: E402
from sessionsift.providers.claude.model import lineage  # noqa: E402


def test_each_sibling_is_read_at_most_once_and_no_fork_is_invented(tmp_path, monkeypatch):
    src = max((p for p in (REPO / "examples" / "claude-home" / "projects").glob("*/*.jsonl")),
              key=lambda p: p.stat().st_size)
    data = src.read_bytes()
    proj = tmp_path / "projects" / "-work"
    proj.mkdir(parents=True)
    import uuid as U

    for i in range(30):
        sid = str(U.uuid5(U.NAMESPACE_URL, f"copy{i}"))
        (proj / f"{sid}.jsonl").write_bytes(remap_ids(data, f"copy{i}").replace(
            src.stem.encode(), sid.encode()))
    reads: Counter = Counter()
    real = lineage.roots_of

    def counted(path, among=None):
        reads[str(path)] += 1
        return real(path, among)

    monkeypatch.setattr(lineage, "roots_of", counted)
    sessions = sessions_in(proj, [])
    assert len(sessions) == 30
    assert lineage.find_forks(sessions) == {}
    assert reads and max(reads.values()) == 1 and len(reads) <= 30


def test_a_sibling_written_before_or_after_every_other_session_started_is_not_read(tmp_path, monkeypatch):
    """A sibling can be a rerooted fork's parent only if it was being written when that fork's
    first record was; sessions one after another (each copy's records moved to a day of its own,
    its mtime its last record's, as a client leaves it) read none: the join used to read every
    sibling whose window met the earliest and latest candidates of the directory (30 here)."""
    import os
    import re
    import uuid as U
    from datetime import datetime

    src = max((p for p in (REPO / "examples" / "claude-home" / "projects").glob("*/*.jsonl")),
              key=lambda p: p.stat().st_size)
    data = src.read_bytes()
    assert set(re.findall(rb'"timestamp":"(\d{4}-\d\d-\d\d)T', data)) == {b"2026-11-30"}
    proj = tmp_path / "projects" / "-work"
    proj.mkdir(parents=True)
    for i in range(30):
        sid = str(U.uuid5(U.NAMESPACE_URL, f"day{i}"))
        day = f"2026-10-{i + 1:02d}T".encode()
        d = remap_ids(data, f"day{i}").replace(src.stem.encode(), sid.encode()).replace(b"2026-11-30T", day)
        p = proj / f"{sid}.jsonl"
        p.write_bytes(d)
        last = max(re.findall(rb'"timestamp":"([^"]+)"', d)).decode()
        t = datetime.fromisoformat(last.replace("Z", "+00:00")).timestamp()
        os.utime(p, (t, t))
    reads: Counter = Counter()
    real = lineage.roots_of
    monkeypatch.setattr(lineage, "roots_of", lambda path, among=None: reads.update([str(path)]) or real(path, among))
    sessions = sessions_in(proj, [])
    assert len(sessions) == 30
    assert lineage.find_forks(sessions) == {}
    assert reads == Counter()


def test_a_warm_run_takes_each_siblings_roots_from_its_index(tmp_path, monkeypatch):
    """The roots a sibling holds are kept in its index once read: a warm `stats` read every
    transcript of a project dir again for them on every run (benchmarks/large_sessions.py)."""
    import uuid as U

    from sessionsift.providers.claude.cache import lanes as IL
    from sessionsift.providers.claude.discover import Lane

    src = max((p for p in (REPO / "examples" / "claude-home" / "projects").glob("*/*.jsonl")),
              key=lambda p: p.stat().st_size)
    data = src.read_bytes()
    proj = tmp_path / "projects" / "-work"
    proj.mkdir(parents=True)
    for i in range(6):
        sid = str(U.uuid5(U.NAMESPACE_URL, f"warm{i}"))
        (proj / f"{sid}.jsonl").write_bytes(remap_ids(data, f"warm{i}").replace(src.stem.encode(), sid.encode()))
    sessions = sessions_in(proj, [])
    for s in sessions:
        IL.lane_stats(Lane(s.path, s.session_id, "main", "main"))
    truth = {str(s.path): lineage.roots_of(s.path) for s in sessions}
    reads: Counter = Counter()
    real = lineage.roots_of

    def counted(path, among=None):
        reads[str(path)] += 1
        return real(path, among)

    monkeypatch.setattr(lineage, "roots_of", counted)
    assert lineage.find_forks(sessions) == {}
    assert sorted(reads) == sorted(truth) and set(reads.values()) == {1}  # read once, kept
    assert {str(s.path): IL.roots(s.path) for s in sessions} == truth
    reads.clear()
    assert lineage.find_forks(sessions) == {}
    assert reads == Counter()  # before: every sibling read again


def _uuids_by_full_parse(path) -> list[tuple[str, int, int]]:
    """What lineage._uuids answered before it decoded the uuid alone: every line parsed by the
    reading rules (read/lines.parse_line)."""
    from sessionsift.read.lines import iter_lines, parse_line

    out = []
    for line in iter_lines(path):
        if b'"uuid"' not in line.raw:
            continue
        o = parse_line(line.raw)
        if o and isinstance(o.get("uuid"), str) and o["uuid"]:
            out.append((o["uuid"], line.no, line.offset))
    return out


@pytest.mark.parametrize("mapped", [False, True])
def test_the_uuid_sequence_equals_the_full_parse_on_every_sample(monkeypatch, mapped):
    """lineage._uuids (a cold census's fork detection) finds the lines holding `"uuid"` in the
    file's bytes and decodes each record's top-level uuid alone: on every committed transcript of
    every agent's samples - the crash artefacts too (NUL runs, a torn final line, invalid UTF-8
    inside a string, destroyed records) - read whole or mapped (a file over SCAN_WHOLE), the
    sequence (uuid, line number, offset) equals the one a full parse of each line gives."""
    from sessionsift.providers.claude.model import lineage
    from sessionsift.read import lines

    if mapped:
        monkeypatch.setattr(lines, "SCAN_WHOLE", 0)

    paths = sorted(p for p in (REPO / "examples").rglob("*.jsonl") if p.is_file())
    crash = [p for p in paths if p.parent.name == "crash"]
    assert len(crash) >= 8 and len(paths) > 60
    seen = 0
    for p in paths:
        got = lineage._uuids(p)
        assert got == _uuids_by_full_parse(p), p
        seen += len(got)
    assert seen > 800  # 847 records with a uuid
