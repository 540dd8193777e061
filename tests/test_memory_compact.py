"""Bounded memory (issue 16, review finding 14) must not change an answer. The compact forms and
the page releases are held equal to the plain reading on every real-client lane (examples/, both
client versions), the crash artefacts (examples/crash) and damaged copies of the real lanes
(zero-filled, malformed and torn lines made here from the real bytes: no client writes them on
purpose, a crash does). Nothing here measures memory (benchmarks/memory.py prints that)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionsift.discover import Lane
from sessionsift.model import lane as LM
from sessionsift.read import lines as L

REPO = Path(__file__).resolve().parent.parent
EX = REPO / "examples"


def real_lanes() -> list[Path]:
    out = sorted((EX / "claude-home" / "projects").rglob("*.jsonl"))
    out += sorted((EX / "newest-client").rglob("claude-home/projects/**/*.jsonl"))
    return [p for p in out if p.name != "journal.jsonl"]


CRASH = sorted((EX / "crash").glob("*.jsonl"))


def damaged(src: Path, dest: Path) -> list[Path]:
    """Three damaged copies of a real lane: a record zero-filled, a record cut in half (malformed),
    the final record torn."""
    data = src.read_bytes()
    lines = data.split(b"\n")
    mid = len(lines) // 2
    out = []
    z = list(lines)
    z[mid] = b"\x00" * len(z[mid])
    m = list(lines)
    m[mid] = m[mid][: len(m[mid]) // 2]
    for name, body in (("zero", b"\n".join(z)), ("malformed", b"\n".join(m)),
                       ("torn", data.rstrip(b"\n")[:-7])):
        p = dest / f"{src.stem}-{name}.jsonl"
        p.write_bytes(body)
        out.append(p)
    return out


def _lane(p: Path) -> Lane:
    return Lane(p, p.stem, "main", "main")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[Path]:
    lanes = real_lanes()
    assert len(lanes) >= 10, "the committed real-client corpus is missing"
    d = tmp_path_factory.mktemp("damaged")
    out = lanes + CRASH
    for p in lanes:
        out += damaged(p, d)
    return out


def test_load_many_releasing_pages_reads_every_record_unchanged(corpus, monkeypatch):
    """The pages read are released behind the reader every page (instead of every 4 MB here, so
    every lane of the corpus releases): each record re-read equals a plain read at its offset."""
    monkeypatch.setattr(L, "BATCH_BYTES", L.PAGE)
    released = []
    real = L.release
    monkeypatch.setattr(L, "release", lambda buf, lo, hi: (released.append((lo, hi)), real(buf, lo, hi)))
    for p in corpus:
        idx = LM.LaneIndex.build(_lane(p))
        got = list(idx.load_many(idx.entries))
        assert [e.no for e, _ in got] == [e.no for e in idx.entries]
        for e, obj in got:
            assert obj == LM.load_at(p, e.offset, e.length), (p, e.no)
    assert any(hi - lo >= L.PAGE for lo, hi in released)  # pages were let go mid-reading


def test_release_keeps_the_mapping_readable(tmp_path):
    """A released range reads back the same bytes (the pages come back from the file)."""
    p = tmp_path / "f.jsonl"
    src = real_lanes()[0].read_bytes()
    p.write_bytes(src * (1 + 3 * L.PAGE // max(1, len(src))))
    with L.open_map(p) as m:
        before = bytes(m.buf[:])
        L.release(m.buf, 0, len(m.buf))
        L.release(m.buf, 5, len(m.buf) - 5)
        assert bytes(m.buf[:]) == before
    L.release(b"abc", 0, 3)  # bytes: nothing to release
