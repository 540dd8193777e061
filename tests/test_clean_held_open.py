"""A writer holding ANY file open loses nothing (issue 24, item 6's fault injection widened from
one transcript to every file): on copies of the real-client samples (examples/: Claude Code,
Codex CLI, Gemini CLI), a process holds open, round by round, every regular file of the corpus
(transcripts, subagent lanes, file-history blobs, a Codex rollout and its .zst sibling, the
clients' own indexes) while `clean capture --apply` runs; then it writes a line into each. Every
session whose footprint holds a held file is blocked (file_held_open, naming the holder's pid and
the file), every other eligible one is removed, each held file is at its path with its bytes and
the late line, and no other file is lost. And a writer that opens the transcript at EACH step of
a capture (after the scan proved the session idle) is seen before anything is unlinked.

HAND-MADE: the holder (a Python process opening the files O_APPEND and writing one JSON line
when told): no client can be made to hold a chosen file open at a chosen instant."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.clean import activity as A
from sessionsift.clean import apply as AP
from sessionsift.clean import capture as C
from sessionsift.clean.archive import Archive, archive_dir
from sessionsift.clean.restore import verify
from sessionsift.clean.scan import scan
from sessionsift.providers.scope import RootRequest, survey
from sessionsift.worktrees import procs as P
from tests.clean_util import corpus, losses, snapshot

FILES = (".claude", ".codex", ".gemini")
ROUNDS = 6
LATE = b'{"type":"user","timestamp":"2026-12-01T00:00:00.000Z","message":{"content":"late"}}\n'
FIG = {"held": 0, "rounds": 0, "sessions_blocked": 0, "sessions_removed": 0, "steps": 0, "lost": 0}

HOLDER = """
import os, sys
fds = [os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600) for p in sys.argv[1:]]
sys.stdout.write("open\\n"); sys.stdout.flush()
sys.stdin.readline()            # the test says when: after the capture ran
for fd in fds:
    os.write(fd, %r)
    os.close(fd)
""" % LATE


@pytest.fixture(autouse=True)
def _no_foreign_agents(monkeypatch):
    """The activity gate's process table is empty (another engineer's client on this machine
    decides nothing); the open-file check reads the real /proc/*/fd."""
    monkeypatch.setattr(A.P, "snapshot", lambda: P.ProcTable())


def _hold(paths: list[str]) -> subprocess.Popen:
    h = subprocess.Popen([sys.executable, "-c", HOLDER, *paths], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    assert h.stdout is not None and h.stdout.readline() == "open\n"
    return h


def _release(h: subprocess.Popen) -> None:
    assert h.stdin is not None
    h.stdin.write("go\n")
    h.stdin.flush()
    assert h.wait(timeout=60) == 0


def _covers(footprint: list[str], path: str) -> bool:
    return any(path == f or path.startswith(f.rstrip(os.sep) + os.sep) for f in footprint)


@pytest.mark.parametrize("r", range(ROUNDS))
def test_a_writer_holding_any_file_of_the_corpus_blocks_its_session_and_loses_nothing(tmp_path, r):
    home = corpus(tmp_path / "h", FILES)
    data = tmp_path / "d"
    before = snapshot(home)
    held = sorted(before)[r::ROUNDS]
    h = _hold(held)
    try:
        rep = scan(survey(RootRequest(home=str(home))), older_than="1m", waive_kept=True, data=data)
        want = {v.session_id for v in rep.verdicts if any(_covers(v.footprint, p) for p in held)}
        # (a subagent session inside a held main session's folder is not itself held: it may go alone)
        got = {}
        for v in rep.verdicts:
            g = v.gates["activity"]
            if g.reason == "file_held_open":
                got[v.session_id] = g
        assert set(got) == want, (sorted(set(got) ^ want), r)
        for sid, g in got.items():
            assert {e["pid"] for e in g.evidence} == {h.pid}, g.evidence
            # the footprint entry holding it: the file, or the folder it is in (a file-history dir)
            assert all(any(_covers([e["path"]], p) for p in held) for e in g.evidence), g.evidence
        eligible = {v.session_id for v in rep.verdicts if v.eligible}
        assert not eligible & want
        oc = AP.run(rep, "capture", (), apply=True)
        done = {x.session_id: x.status for x in oc.results}
        assert not set(done) & want, done
    finally:
        _release(h)
    for p in held:
        b = Path(p).read_bytes()
        assert b.endswith(LATE) and before[p] == snapshot_one(b[: -len(LATE)]), p
    rest = {p: v for p, v in before.items() if p not in held}
    lost = losses(rest, home, data)
    assert lost == []
    removed = [s for s, st in done.items() if st == "removed"]
    assert removed and set(done.values()) == {"removed"}, done
    checks, _m = verify(Archive(archive_dir(data)))
    assert checks and all(c.ok for c in checks)
    FIG["held"] += len(held)
    FIG["rounds"] += 1
    FIG["sessions_blocked"] += len(want)
    FIG["sessions_removed"] += len(removed)
    FIG["lost"] += len(lost)


def snapshot_one(b: bytes) -> str:
    import hashlib

    return hashlib.sha256(b).hexdigest()


SUB = "23ad8bf1-66ec-5135-af96-82f74ddb4db0"   # Claude Code: transcript + two subagent lanes
PROJ = "projects/-tmp-ssift-rc-subagents-work"


def _steps(tmp_path_factory) -> list[str]:
    t = tmp_path_factory.mktemp("steps")
    home = corpus(t / "h", (".claude",))
    names: list[str] = []
    C.FAULT = names.append
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(A.P, "snapshot", lambda: P.ProcTable())
            rep = scan(survey(RootRequest(home=str(home))), older_than="1m", waive_kept=True, data=t / "d")
            oc = AP.run(rep, "capture", (SUB,), apply=True)
    finally:
        C.FAULT = None
    assert [x.status for x in oc.results] == ["removed"]
    return list(dict.fromkeys(names))


@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    return _steps(tmp_path_factory)


def test_a_writer_opening_the_transcript_at_each_step_of_a_capture_loses_nothing(tmp_path, steps):
    """The holder opens the transcript (O_APPEND|O_CREAT, as a client does) at the first time the
    capture reaches each step. Before the entries move it holds the very file: the capture aborts
    or puts everything back, and its later line is in the file. Once the transcript is at its
    hidden name, its path is free: the holder creates a new file there (its line alone), and the
    removed bytes are verified in the archive."""
    assert len(steps) >= 10 and "hidden" in steps and "unlink_begin" in steps
    moved = steps.index("hidden")
    for i, step in enumerate(steps):
        home = corpus(tmp_path / f"h{i}", (".claude",))
        data = tmp_path / f"d{i}"
        t = home / ".claude" / PROJ / f"{SUB}.jsonl"
        before = snapshot(home)
        orig = t.read_bytes()
        rep = scan(survey(RootRequest(home=str(home))), older_than="1m", waive_kept=True, data=data)
        hs: list[subprocess.Popen] = []

        def fault(name, step=step, t=t, hs=hs):
            if name == step and not hs:
                hs.append(_hold([str(t)]))

        C.FAULT = fault
        try:
            oc = AP.run(rep, "capture", (SUB,), apply=True)
        finally:
            C.FAULT = None
            for h in hs:
                _release(h)
        assert len(hs) == 1, step
        (res,) = oc.results
        after = t.read_bytes()
        if i < moved:
            assert res.status in ("aborted", "rolled-back"), (step, res.to_json())
            assert after == orig + LATE, step
        else:
            assert res.status == "removed" and after == LATE, (step, res.to_json())
            checks, _m = verify(Archive(archive_dir(data)))
            assert checks and all(c.ok for c in checks), step
        lost = losses({p: v for p, v in before.items() if p != str(t)}, home, data)
        assert lost == [], (step, lost)
        assert not [n for d, ds, fs in os.walk(home) for n in ds + fs if ".ssift-" in n], step
        FIG["steps"] += 1
        FIG["lost"] += len(lost)


def test_figures(capsys):
    with capsys.disabled():
        print(f"\nclean held-open writers: {FIG['held']} files held open over {FIG['rounds']} rounds of the "
              f"file-based corpus ({FIG['sessions_blocked']} sessions blocked, {FIG['sessions_removed']} removed "
              f"around them), a writer opening the transcript at each of {FIG['steps']} capture steps; "
              f"{FIG['lost']} files lost, 0 late writes lost")
    assert FIG["lost"] == 0
