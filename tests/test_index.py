"""The persistent index (issue 16, docs/index.md) answers exactly what a scan answers.

Real transcripts only: every Claude Code lane of the committed real-client corpora (2.1.258 and
2.1.332) and the crash artefacts (examples/crash), indexed, read back from the index, grown by
appending the real file's own lines in pieces, truncated, rewritten, torn mid-line, and with a
corrupted index file. The reference is always the plain scan of the file as it is at that moment.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.providers.claude import stats as S
from sessionsift.providers.claude.discover import Lane
from sessionsift.index import config, store
from sessionsift.providers.claude.cache import lanes as IL
from tests.test_lane_perf_equivalence import census

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
HOMES = [EXAMPLES / "claude-home", EXAMPLES / "newest-client" / "2.1.332" / "claude-home"]
REAL = sorted(p for h in HOMES for p in (h / "projects").rglob("*.jsonl"))
CRASH = sorted((EXAMPLES / "crash").glob("*.jsonl"))


def _lane(p: Path) -> Lane:
    return Lane(p, p.stem, "main", "main")


def _scan(p: Path) -> dict:
    return census(S.lane_stats(_lane(p), parallel=False))


def _indexed(p: Path) -> tuple[dict, str]:
    ls, how = IL.lane_stats(_lane(p))
    return census(ls), how.how


def test_the_corpora_are_there():
    assert len(REAL) >= 16 and len(CRASH) >= 8


@pytest.mark.parametrize("path", REAL + CRASH, ids=lambda p: f"{p.parent.name[-24:]}/{p.name[:12]}")
def test_index_answers_equal_the_scan(path):
    ref = _scan(path)
    got, how = _indexed(path)
    assert how == "built" and got == ref
    got, how = _indexed(path)
    assert how == "index" and got == ref  # answered from the stored census
    f = store.IndexFile.open(store.index_path(IL.KIND, path), IL.KIND, str(path))
    assert f is not None and f.identity.end == path.stat().st_size or path.read_bytes()[-1:] != b"\n"


def _cuts(data: bytes, k: int) -> list[int]:
    """k cut points spread over the file, each just after a newline, plus one mid-line."""
    nls = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    pick = sorted({nls[(j * len(nls)) // (k + 1)] for j in range(1, k + 1)}) if nls else []
    mid = (pick[0] + 5) if pick and pick[0] + 5 < len(data) else None
    return sorted(set(pick + ([mid] if mid else [])))


@pytest.mark.parametrize("path", REAL[::2] + CRASH, ids=lambda p: p.name[:12])
def test_growth_in_pieces_reads_only_the_new_bytes(path, tmp_path):
    """The real file written in pieces (as a client appends): each run takes in only the new
    bytes (a cut inside a line is a torn tail: held, never indexed) and equals the scan."""
    data = path.read_bytes()
    dest = tmp_path / path.name
    dest.write_bytes(b"")
    prev = 0
    hows = []
    for cut in _cuts(data, 4) + [len(data)]:
        with open(dest, "ab") as f:
            f.write(data[prev:cut])
        prev = cut
        got, how = _indexed(dest)
        hows.append(how)
        assert got == _scan(dest), (cut, how)
    assert "appended" in hows and hows.count("built") == 1, hows


@pytest.mark.parametrize("path", REAL[1::3], ids=lambda p: p.name[:12])
def test_truncation_rewrite_and_replacement_rebuild(path, tmp_path):
    data = path.read_bytes()
    dest = tmp_path / path.name
    dest.write_bytes(data)
    assert _indexed(dest)[1] == "built"
    lines = data.split(b"\n")
    cases = [
        ("truncated", data[: len(data) // 2]),
        ("rewritten, same length", data[:-40] + bytes(reversed(data[-40:-1])) + data[-1:]),
        ("line dropped mid-file", b"\n".join(lines[:3] + lines[4:])),
        ("lines reordered", b"\n".join(lines[1:3] + lines[:1] + lines[3:])),
    ]
    for name, content in cases:
        dest.write_bytes(data)
        _indexed(dest)
        dest.write_bytes(content)
        got, how = _indexed(dest)
        assert how == "built", name
        assert got == _scan(dest), name
    # replaced by another file (rotation: a new inode at the same path)
    other = REAL[0] if REAL[0] != path else REAL[1]
    dest.write_bytes(data)
    _indexed(dest)
    repl = tmp_path / "other"
    repl.write_bytes(other.read_bytes())
    os.replace(repl, dest)
    got, how = _indexed(dest)
    assert how == "built" and got == _scan(dest)


def test_copies_are_detected(tmp_path):
    """`cp -p` of another transcript over an indexed one (same inode, the source's mtime) is
    stale; a copy of an indexed transcript to a new path is indexed there on its own (the index
    is per path), and the original's index stays fresh."""
    a, b = REAL[0], REAL[1]
    dest = tmp_path / a.name
    dest.write_bytes(a.read_bytes())
    assert _indexed(dest)[1] == "built"
    ino = dest.stat().st_ino
    shutil.copy2(b, dest)
    assert dest.stat().st_ino == ino
    got, how = _indexed(dest)
    assert how == "built" and got == _scan(dest) == _scan(b)
    twin = tmp_path / "copied" / a.name
    twin.parent.mkdir()
    shutil.copy2(dest, twin)
    got, how = _indexed(twin)
    assert how == "built" and got == _scan(twin)
    assert _indexed(dest)[1] == "index"


def test_a_torn_tail_is_held_and_taken_in_once_complete(tmp_path):
    """A client appending while we index: the partial line is held (as the reader does) and read
    when it is complete; nothing is lost or counted twice."""
    src = max(REAL, key=lambda p: p.stat().st_size)
    data = src.read_bytes()
    nls = [i for i, b in enumerate(data) if b == 0x0A]
    a = nls[len(nls) // 2] + 1
    b = nls[len(nls) // 2 + 1] + 1
    dest = tmp_path / src.name
    dest.write_bytes(data[: a + (b - a) // 2])  # mid-line
    got, how = _indexed(dest)
    assert how == "built" and got == _scan(dest)
    assert dict(got["read"])["torn_tail_bytes"] > 0
    got, how = _indexed(dest)  # unchanged: the held tail is read again, the rest from the index
    assert got == _scan(dest)
    with open(dest, "ab") as f:
        f.write(data[a + (b - a) // 2:])
    got, how = _indexed(dest)
    assert how == "appended" and got == _scan(dest) == census(S.lane_stats(_lane(src), parallel=False))


def test_a_corrupt_or_foreign_index_is_never_trusted(tmp_path):
    src = REAL[0]
    dest = tmp_path / src.name
    dest.write_bytes(src.read_bytes())
    ref = _scan(dest)
    _indexed(dest)
    idx = store.index_path(IL.KIND, dest)
    raw = bytearray(idx.read_bytes())
    for where in (len(raw) - 3, len(raw) // 2, 14):  # a section, the middle, the header
        bad = bytearray(raw)
        bad[where] ^= 0xFF
        idx.write_bytes(bytes(bad))
        got, how = _indexed(dest)
        assert got == ref and how in ("built", "index"), where
        if how == "index":  # the flipped byte was in a section this answer did not read
            continue
    idx.write_bytes(raw[: len(raw) // 3])  # torn index file
    got, how = _indexed(dest)
    assert how == "built" and got == ref
    # an index file of another transcript at this one's name
    other = tmp_path / "other.jsonl"
    other.write_bytes(REAL[1].read_bytes())
    _indexed(other)
    os.replace(store.index_path(IL.KIND, other), idx)
    got, how = _indexed(dest)
    assert how == "built" and got == ref


def test_a_damaged_header_or_another_interpreters_file_is_absent(tmp_path, monkeypatch):
    """Nothing is unmarshalled before its digest checks: a flip of any byte before the first
    section (magic, length, digest, header) makes the file absent, and so does a file written by
    another Python version (marshal's format is the interpreter's)."""
    src = REAL[0]
    dest = tmp_path / src.name
    dest.write_bytes(src.read_bytes())
    _indexed(dest)
    idx = store.index_path(IL.KIND, dest)
    raw = idx.read_bytes()
    good = store.IndexFile.open(idx, IL.KIND, str(dest))
    assert good is not None and good.base > store._HEAD
    for where in range(good.base):
        bad = bytearray(raw)
        bad[where] ^= 0x01
        idx.write_bytes(bytes(bad))
        assert store.IndexFile.open(idx, IL.KIND, str(dest)) is None, where
    idx.write_bytes(raw)
    assert store.IndexFile.open(idx, IL.KIND, str(dest)) is not None
    monkeypatch.setattr(store, "_PY", "2.7/0")
    assert store.IndexFile.open(idx, IL.KIND, str(dest)) is None
    got, how = _indexed(dest)
    assert how == "built" and got == _scan(dest)


def test_the_index_is_private_and_outside_the_data_root(tmp_path):
    src = REAL[0]
    dest = tmp_path / src.name
    dest.write_bytes(src.read_bytes())
    _indexed(dest)
    idx = store.index_path(IL.KIND, dest)
    assert stat.S_IMODE(idx.stat().st_mode) == 0o600
    p = idx.parent
    while p != store.cache_dir().parent:
        assert stat.S_IMODE(p.stat().st_mode) == 0o700, p
        p = p.parent
    assert not store.usable_for(store.cache_dir().parent)  # an index dir inside a data root: off
    assert store.usable_for(tmp_path)


def test_no_index_env_scans(monkeypatch, tmp_path):
    src = REAL[0]
    monkeypatch.setenv("SESSIONSIFT_NO_INDEX", "1")
    ls, how = IL.lane_stats(_lane(src))
    assert how.how == "scanned" and census(ls) == _scan(src)
    assert not store.index_path(IL.KIND, src).exists()


# -- the CLI ------------------------------------------------------------------------------------


def _cli(*args: str, env_extra: dict | None = None) -> list[dict]:
    env = dict(os.environ, **(env_extra or {}))
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--format", "json"], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    return [json.loads(x) for x in p.stdout.splitlines()]


def _without_index(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "index"} for r in rows]


@pytest.mark.parametrize("home", HOMES, ids=["2.1.258", "2.1.332"])
def test_stats_cli_same_with_and_without_the_index(home):
    scan = _cli("stats", "--claude-home", str(home), "--no-index")
    assert scan[-1]["index"]["enabled"] is False
    built = _cli("stats", "--claude-home", str(home))
    again = _cli("stats", "--claude-home", str(home))
    assert built[-1]["index"]["built"] > 0 and again[-1]["index"]["from_index"] == built[-1]["index"]["built"]
    assert _without_index(built) == _without_index(scan) == _without_index(again)


def test_index_status_update_clear(tmp_path):
    home = tmp_path / "claude"
    proj = home / "projects" / "-p"
    proj.mkdir(parents=True)
    srcs = REAL[:3]
    for s in srcs:
        (proj / s.name).write_bytes(s.read_bytes())
    st = _cli("index", "status", "--claude-home", str(home))
    assert st[-1]["states"]["absent"] == 3
    up = _cli("index", "update", "--claude-home", str(home))
    assert up[-1]["index"]["built"] == 3 and [r["how"] for r in up if r["kind"] == "lane"] == ["built"] * 3
    with open(proj / srcs[0].name, "ab") as f:
        f.write(srcs[1].read_bytes())
    st = _cli("index", "status", "--claude-home", str(home))
    assert st[-1]["states"] == {"fresh": 2, "grown": 1, "stale": 0, "absent": 0, "unreadable": 0}
    up = _cli("index", "update", "--claude-home", str(home))
    assert sorted(r["how"] for r in up if r["kind"] == "lane") == ["appended", "index", "index"]
    _cli("files", "--claude-home", str(home))  # writes the data root's file-events summary
    _cli("search", "", "-c", "--claude-home", str(home))  # and its census summary and kept answer
    # (files and the census both ask which sessions are forks: the families are kept too)
    cl = _cli("index", "clear", "--claude-home", str(home))
    assert sorted(r["summary"] for r in cl if r["kind"] == "root_summary") == ["answers", "census", "files", "forks"]
    assert cl[-1]["removed"] == 7
    assert _cli("index", "status", "--claude-home", str(home))[-1]["states"]["absent"] == 3
    again = _cli("files", "--claude-home", str(home))
    assert again[-1]["index"]["built"] == 3, again[-1]  # nothing answered from a summary left behind


@pytest.mark.parametrize("p", ["/a/b.jsonl", "/", "//a/b", "/a//b", "/a/./b", "/a/../b", "/a/b/", "/a/.", "/a/..",
                               "a/b", ".", "", "/a/.b/..c", "/a/b\x1b[31m", "/a/ b/c.jsonl", "/a/b/.."])
def test_the_fast_abspath_is_abspath(p):
    assert store.abspath(p) == os.path.abspath(p)


def test_index_status_totals_are_unknown_when_a_lane_is_unreadable(tmp_path, monkeypatch, capsys):
    """A lane whose stat fails between discovery and `index status` (made here by failing
    os.stat for that one real transcript: no client produces the race on demand) has no size:
    the summary's byte totals are null, not the sum of the readable ones."""
    from sessionsift.cli import main

    home = tmp_path / "claude"
    proj = home / "projects" / "-p"
    proj.mkdir(parents=True)
    for s in REAL[:2]:
        (proj / s.name).write_bytes(s.read_bytes())
    gone = str(proj / REAL[1].name)
    real_stat = IL.os.stat

    def stat(p, *a, **k):
        if os.fspath(p) == gone:
            raise PermissionError(13, "Permission denied", gone)
        return real_stat(p, *a, **k)

    monkeypatch.setattr(IL.os, "stat", stat)
    with pytest.raises(SystemExit):
        main(["index", "status", "--claude-home", str(home), "--format", "json"])
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    summ = rows[-1]
    assert summ["states"]["unreadable"] == 1 and summ["states"]["absent"] == 1
    assert summ["bytes"] is None and summ["covered_bytes"] is None and summ["index_bytes"] is None
    lane = next(r for r in rows if r.get("kind") == "lane" and r["state"] == "absent")
    assert lane["size"] == REAL[0].stat().st_size  # the readable lane still reports its own
