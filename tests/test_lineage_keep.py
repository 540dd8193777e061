"""The families `find_forks` finds are kept per data root (providers/claude/cache/forks.py) under
the digest of every transcript's stat identity: over unchanged transcripts the answer is read back
with no head, root or uuid sequence read (a warm `stats` over 4,766 small transcripts spent 0.7 of
2.6 s finding them again), and any change to a transcript - an append, a rewrite at the same size
with its mtime put back, a removal, a new session - finds them again, equal to the answer with the
index off. Data: benchmarks/shared_ids.py's store (originals made of real Claude Code records from
examples/, each forked twice the way `claude --resume --fork-session` writes a fork)."""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import shared_ids  # noqa: E402

from sessionsift.providers.claude.cache import forks as keep  # noqa: E402
from sessionsift.providers.claude.discover import sessions_in  # noqa: E402
from sessionsift.providers.claude.model import lineage  # noqa: E402


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return shared_ids.build(tmp_path_factory.mktemp("keep") / "forks", 2, 2)


def _sessions(root: Path) -> list:
    out = []
    for d in sorted((root / "projects").iterdir()):
        out += sessions_in(d, [])
    return out


def _counting(monkeypatch) -> Counter:
    calls: Counter = Counter()
    for name in ("_head", "_seq", "roots_of", "_record_ts"):
        real = getattr(lineage, name)

        def counted(*a, _real=real, _name=name, **k):
            calls[_name] += 1
            return _real(*a, **k)

        monkeypatch.setattr(lineage, name, counted)
    return calls


def _truth(sessions, monkeypatch) -> dict:
    with monkeypatch.context() as m:
        m.setenv("SESSIONSIFT_NO_INDEX", "1")
        m.setattr(keep, "get", lambda *a: pytest.fail("the kept answer was read with the index off"))
        m.setattr(keep, "put", lambda *a: pytest.fail("an answer was kept with the index off"))
        return lineage.find_forks(sessions)


def _copy(store: Path, dest: Path) -> Path:
    import shutil

    shutil.copytree(store, dest)
    return dest


def test_an_unchanged_store_reads_no_transcript_and_answers_as_with_the_index_off(store, tmp_path, monkeypatch):
    root = _copy(store, tmp_path / "s")
    sessions = _sessions(root)
    assert len(sessions) == 6
    truth = _truth(sessions, monkeypatch)
    assert len(truth) == 4 and {f.copied_records > 0 for f in truth.values()} == {True}
    first = lineage.find_forks(sessions)
    assert first == truth
    calls = _counting(monkeypatch)
    again = lineage.find_forks(_sessions(root))
    assert again == truth
    assert calls == Counter()  # before: every session's head and each family's uuid sequences again


@pytest.mark.parametrize("change", ["append", "same_size_rewrite", "remove_fork", "new_session"])
def test_a_changed_transcript_finds_the_families_again(store, tmp_path, monkeypatch, change):
    root = _copy(store, tmp_path / "s")
    sessions = _sessions(root)
    truth = _truth(sessions, monkeypatch)
    assert lineage.find_forks(sessions) == truth  # kept
    fork = sorted(truth.values(), key=lambda f: f.path)[0]
    p = Path(fork.path)
    if change == "append":
        # a record of the parent's, copied again: one more copied record
        line = next(ln for ln in Path(fork.parent_path).read_bytes().splitlines(keepends=True) if b'"uuid":"' in ln)
        with open(p, "ab") as fh:
            fh.write(line)
    elif change == "same_size_rewrite":
        # the fork's first copied record's uuid changed, one byte, size and mtime as they were:
        # it no longer shares its parent's chain from the root (the ctime tells the write)
        st = p.stat()
        data = p.read_bytes()
        parent_first = fork.at_uuid.encode()
        i = data.index(b'"uuid":"') + len(b'"uuid":"')
        flipped = data[:i] + (b"0" if data[i:i + 1] != b"0" else b"1") + data[i + 1:]
        assert len(flipped) == len(data) and parent_first
        p.write_bytes(flipped)
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif change == "remove_fork":
        p.unlink()
    else:
        (p.parent / "0a0a0a0a-0000-4000-8000-000000000000.jsonl").write_bytes(p.read_bytes())
    changed = _sessions(root)
    expect = _truth(changed, monkeypatch)
    assert expect != truth  # the change matters to the answer
    calls = _counting(monkeypatch)
    assert lineage.find_forks(changed) == expect
    assert calls["_head"] == len(changed)  # found again, not read back
