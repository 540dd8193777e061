"""The age and activity gates on copies of real sessions (examples/, written by the real clients
offline) where the world is made to disagree with what a bounded read would guess: a last record
longer than any tail window, a writer holding a file open, clients launched every way they are
launched. Each hand-made part is said beside it."""
from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from sessionsift.clean import activity as A
from sessionsift.clean.scan import scan
from sessionsift.providers.scope import RootRequest, survey
from sessionsift.worktrees import procs as P
from tests.clean_util import corpus

SUB = "23ad8bf1-66ec-5135-af96-82f74ddb4db0"   # Claude Code: transcript + two subagent lanes
PROJ = "projects/-tmp-ssift-rc-subagents-work"


@pytest.fixture
def no_agents(monkeypatch):
    """An empty process table: these age tests must not depend on another engineer's client."""
    monkeypatch.setattr(A.P, "snapshot", lambda: P.ProcTable())


def _verdict(home: Path, sid: str, older: str, data: Path):
    rep = scan(survey(RootRequest(home=str(home))), older_than=older, data=data)
    return next(v for v in rep.verdicts if v.session_id == sid)


def test_a_last_record_longer_than_the_tail_window_does_not_make_a_fresh_session_old(tmp_path, no_agents):
    """The client writes one more assistant record, 300 KB long, ten seconds ago, then its
    `last-prompt` line (as 2.1.258 ends every turn). HAND-MADE from the transcript's own last
    assistant record (its text made long, its instant set): records that long are what a client
    writes for big outputs, but no offline run gives one at a chosen instant. Its subagent lanes
    are a day older. The session is seconds old, not a day."""
    home = corpus(tmp_path / "h", (".claude",))
    t = home / ".claude" / PROJ / f"{SUB}.jsonl"
    lines = t.read_bytes().splitlines()
    last = json.loads(next(l for l in reversed(lines) if b'"type":"assistant"' in l))
    fresh = datetime.now(timezone.utc) - timedelta(seconds=10)
    last["timestamp"] = fresh.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    last["message"]["content"] = [{"type": "text", "text": "x" * 300_000}]
    tail = next(l for l in reversed(lines) if b'"type":"last-prompt"' in l)
    with open(t, "ab") as f:
        f.write(json.dumps(last).encode() + b"\n" + tail + b"\n")
    v = _verdict(home, SUB, "1h", tmp_path / "d")
    g = v.gates["age"]
    assert not g.proven and g.reason == "younger_than_threshold", (g.reason, g.detail, v.last_at)
    assert abs((datetime.fromisoformat(v.last_at.replace("Z", "+00:00")) - fresh).total_seconds()) < 1


WRITER = """
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
sys.stdout.write("open\\n"); sys.stdout.flush()
sys.stdin.readline()            # the test says when: after the capture ran
os.write(fd, b'{"type":"user","timestamp":"2026-12-01T00:00:00.000Z","message":{"content":"late"}}\\n')
os.close(fd)
"""


def test_a_writer_holding_a_file_open_blocks_its_session_and_loses_nothing(tmp_path, no_agents):
    """A process that keeps the transcript open (as a client does between writes) and writes after
    the capture ran: it is named and the session is not removed; once it is gone, it is."""
    import subprocess
    import sys

    from sessionsift.clean import apply as AP

    home = corpus(tmp_path / "h", (".claude",))
    t = home / ".claude" / PROJ / f"{SUB}.jsonl"
    data = tmp_path / "d"
    w = subprocess.Popen([sys.executable, "-c", WRITER, str(t)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    try:
        assert w.stdout.readline() == "open\n"
        rep = scan(survey(RootRequest(home=str(home))), older_than="1m", waive_kept=True, data=data)
        v = next(x for x in rep.verdicts if x.session_id == SUB)
        g = v.gates["activity"]
        assert (g.proven, g.reason) == (False, "file_held_open"), (g.reason, g.detail)
        assert g.evidence[0]["pid"] == w.pid and g.evidence[0]["path"] == str(t)
        assert v.blocked_by == "live"
        oc = AP.run(rep, "capture", (SUB,), apply=True)
        assert [r.status for r in oc.results] == []
        w.stdin.write("go\n")
        w.stdin.flush()
        assert w.wait(timeout=60) == 0
    finally:
        w.kill()
        w.wait()
    assert t.read_bytes().endswith(b'"content":"late"}}\n')
    rep = scan(survey(RootRequest(home=str(home))), older_than="1m", waive_kept=True, data=data)
    oc = AP.run(rep, "capture", (SUB,), apply=True)
    assert [r.status for r in oc.results] == ["removed"]


def test_a_writer_that_opens_the_file_after_the_scan_is_seen_before_the_move(tmp_path, no_agents):
    """The writer opens the transcript after the scan proved the session idle, before the capture
    moves it: the deleting component looks again right before it moves anything and aborts."""
    import subprocess
    import sys

    from sessionsift.clean import apply as AP
    from sessionsift.clean import capture as C

    home = corpus(tmp_path / "h", (".claude",))
    t = home / ".claude" / PROJ / f"{SUB}.jsonl"
    before = t.read_bytes()
    data = tmp_path / "d"
    rep = scan(survey(RootRequest(home=str(home))), older_than="1m", waive_kept=True, data=data)
    held = []

    def fault(name):
        if name == "ledger" and not held:  # the capture entry is written; the move is next
            p = subprocess.Popen([sys.executable, "-c", WRITER, str(t)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
            assert p.stdout.readline() == "open\n"
            held.append(p)

    C.FAULT = fault
    try:
        oc = AP.run(rep, "capture", (SUB,), apply=True)
    finally:
        C.FAULT = None
        for p in held:
            p.stdin.write("go\n")
            p.stdin.flush()
            p.wait(timeout=60)
    (r,) = oc.results
    assert r.status == "aborted" and str(held[0].pid) in r.reason, r.to_json()
    assert t.read_bytes().startswith(before) and t.read_bytes().endswith(b'"content":"late"}}\n')


def test_an_unreadable_part_of_the_footprint_makes_the_size_a_lower_bound_and_says_so(tmp_path, no_agents,
                                                                                        monkeypatch):
    """HAND-MADE fault: these tests run as root, which lists every directory, so one folder of
    the session's footprint (its subagents folder) is made unlistable by injecting the error
    into the scan's listdir. Before: the size silently left the folder out (a smaller size, no
    note, no problem)."""
    from sessionsift.clean import scan as SC

    home = corpus(tmp_path / "h", (".claude",))
    whole = _verdict(home, SUB, "1m", tmp_path / "d")
    assert whole.size_note is None and whole.size and whole.size > 0
    sub = str(home / ".claude" / PROJ / SUB)
    assert os.path.isdir(sub)
    real = os.listdir

    def listdir(p):
        if os.fspath(p) == sub:
            raise PermissionError(13, "Permission denied")
        return real(p)

    monkeypatch.setattr(SC.os, "listdir", listdir)
    v = _verdict(home, SUB, "1m", tmp_path / "d")
    assert v.size < whole.size
    assert v.size_note == f"lower bound: 1 entry of the footprint could not be read ({sub}: Permission denied)"
    assert v.size_note in v.problems
