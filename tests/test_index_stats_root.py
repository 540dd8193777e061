"""The data root's kept lane censuses (providers/claude/cache/lanes.py KeptCensus, docs/index.md
"stats, again"): a warm `stats` answers every unchanged lane from one file per data root, and any
transcript that changed since -- appended, rewritten in place with its mtime put back, replaced by
another file, removed -- is never answered from it: the warm answer equals the index-off reading.

Data: the real Claude Code client's transcripts under examples/claude-home (2.1.258), copied to a
temp dir. The append is the real file's own second half written back onto its first half (what the
client did when it wrote it). The in-place rewrite is hand-made: no client rewrites a transcript in
place and sets its mtime back; one model name in its last record becomes another of the same length,
in the last 4 KiB, where the per-transcript index fingerprints (an edit elsewhere is the documented
blind spot of that index, docs/index.md "Fresh, grown, stale", not of this one)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from sessionsift.index import store
from sessionsift.providers.claude.cache import lanes as IL
from sessionsift.providers.claude.discover import Lane

REPO = Path(__file__).resolve().parent.parent
HOME = REPO / "examples" / "claude-home"
TODOS = "-tmp-ssift-rc-todos-work/934337bf-5048-5090-a52a-998dd6ed05bb.jsonl"
TASKS = "-tmp-ssift-rc-tasks-work/8a2b4883-a16f-5667-848e-18629d1e62ce.jsonl"
MONITOR = "-tmp-ssift-rc-monitor-work/ad2202fb-a9ab-5f02-acac-62c7b6dd6413.jsonl"


def _stats(home: Path, *extra: str, fmt: str = "json") -> tuple[str, list[dict]]:
    p = subprocess.run([sys.executable, "-m", "sessionsift", "stats", "--claude-home", str(home), *extra,
                        "--format", fmt], capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout, [json.loads(x) for x in p.stdout.splitlines()] if fmt == "json" else []


def _without_index(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "index"} for r in rows]


def _main_lanes(home: Path) -> list[Lane]:
    return [Lane(p, p.stem, "main", "main") for p in sorted((home / "projects").glob("*/*.jsonl"))]


def _kept(home: Path) -> set[str]:
    """The transcripts (relative to projects/) the data root's kept censuses answer now."""
    lanes = _main_lanes(home)
    got = IL.KeptCensus.get(lanes, False)
    return {str(ln.path.relative_to(home / "projects")) for ln in lanes if id(ln) in got}


def _warm(home: Path) -> list[dict]:
    """Two runs with the index (the first brings every lane's index up to date, the second keeps
    them in the data root's file), then the answer a third gives."""
    _stats(home)
    _stats(home)
    return _stats(home)[1]


def test_a_warm_stats_is_answered_from_the_root_and_equals_the_reading(tmp_path):
    home = tmp_path / "claude-home"
    shutil.copytree(HOME, home)
    warm = _warm(home)
    assert store.index_path(IL.STATS_ROOT, str(home)).is_file()
    assert _kept(home) == {str(p.relative_to(home / "projects")) for p in (home / "projects").glob("*/*.jsonl")}
    lanes = [r for r in warm if r.get("kind") == "lane"]
    assert len(lanes) == 10 and warm[-1]["index"]["from_index"] == 10 and warm[-1]["index"]["built"] == 0
    off = _stats(home, "--no-index")[1]
    assert _without_index(warm) == _without_index(off)
    text_warm, _ = _stats(home, fmt="text")
    text_off, _ = _stats(home, "--no-index", fmt="text")
    assert [ln for ln in text_warm.splitlines() if "index" not in ln] == \
        [ln for ln in text_off.splitlines() if "index" not in ln]


def test_an_append_a_rewrite_with_the_mtime_put_back_and_a_replacement_are_read_again(tmp_path):
    home = tmp_path / "claude-home"
    shutil.copytree(HOME, home)
    proj = home / "projects"
    grown, edited, replaced = proj / TASKS, proj / TODOS, proj / MONITOR
    full = grown.read_bytes()
    lines = full.splitlines(keepends=True)
    grown.write_bytes(b"".join(lines[:len(lines) // 2]))  # the client's file as it was mid-session
    _warm(home)
    assert {TASKS, TODOS, MONITOR} <= _kept(home)

    grown.write_bytes(full)  # the client's later lines appended
    b = edited.read_bytes()
    st = edited.stat()
    i = b.rfind(b'"model":"claude-opus-5"')
    assert i >= len(b) - 4096  # inside the fingerprinted tail (see the module's docstring)
    with open(edited, "r+b") as f:  # in place: same inode, same size
        f.seek(i + len(b'"model":"claude-opus-'))
        f.write(b"6")
    os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (edited.stat().st_size, edited.stat().st_mtime_ns, edited.stat().st_ino) == (
        st.st_size, st.st_mtime_ns, st.st_ino)
    other = proj / TASKS  # another transcript of the store moved over the path, its mtime put back
    rst = replaced.stat()
    tmp = replaced.with_suffix(".new")
    shutil.copyfile(other, tmp)
    os.replace(tmp, replaced)
    os.utime(replaced, ns=(rst.st_atime_ns, rst.st_mtime_ns))

    assert {TASKS, TODOS, MONITOR} & _kept(home) == set()
    warm = _stats(home)[1]
    off = _stats(home, "--no-index")[1]
    assert _without_index(warm) == _without_index(off)
    assert "claude-opus-6" in json.dumps(off)
    assert "claude-opus-6" in json.dumps(warm)  # the edit is read (the kept entry says claude-opus-5 only)
    # and the next warm run keeps them anew
    again = _stats(home)[1]
    assert _without_index(again) == _without_index(off)
    assert {TASKS, TODOS, MONITOR} <= _kept(home)


def test_a_removed_transcript_leaves_the_root_at_the_next_write(tmp_path):
    home = tmp_path / "claude-home"
    shutil.copytree(HOME, home)
    _warm(home)
    gone = home / "projects" / TODOS
    gone.unlink()
    (home / "projects" / TASKS).write_bytes((home / "projects" / TASKS).read_bytes())  # one lane to keep anew
    warm = _stats(home)[1]  # the rewritten lane read again, its index rebuilt and kept at once
    assert _without_index(warm) == _without_index(_stats(home, "--no-index")[1])
    f = store.IndexFile.open(store.index_path(IL.STATS_ROOT, str(home)), IL.STATS_ROOT, str(home))
    assert f is not None
    kept = f.section("lanes")["lanes"]
    st = (home / "projects" / TASKS).stat()
    assert str(gone) not in kept  # dropped at this write
    assert kept[str(home / "projects" / TASKS)][0] == [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    assert TASKS in _kept(home)
    again = _stats(home)[1]  # answered from the kept census
    assert _without_index(again) == _without_index(warm)


def test_strict_and_the_index_off_never_read_the_root(tmp_path):
    home = tmp_path / "claude-home"
    shutil.copytree(HOME, home)
    _warm(home)
    lanes = _main_lanes(home)
    assert IL.KeptCensus.get(lanes, True) == {}
    off = [Lane(ln.path, ln.session_id, "main", "main", index_off="--no-index") for ln in lanes]
    assert IL.KeptCensus.get(off, False) == {}
    assert len(IL.KeptCensus.get(lanes, False)) == len(lanes)


def test_responses_held_twice_are_counted_once_from_the_kept_answers(tmp_path):
    """A transcript copied whole under another session id (hand-made: the copy of a resumed
    session's records, with the same first record and instant, so lineage finds no direction and
    both are plain lanes): its responses are held twice, and dedupe_messages decodes the kept
    per-message usage to count each once, as the reading does."""
    home = tmp_path / "claude-home"
    shutil.copytree(HOME, home)
    src = home / "projects" / TODOS
    shutil.copyfile(src, src.with_name("00000000-0000-4000-8000-000000000001.jsonl"))
    warm = _warm(home)
    assert len(_kept(home)) == 9
    off = _stats(home, "--no-index")[1]
    assert _without_index(warm) == _without_index(off)
    copied = [r for r in warm if r.get("kind") == "lane" and r.get("messages_copied")]
    assert len(copied) == 1 and copied[0]["messages_copied"] > 0
