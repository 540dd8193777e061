"""Nothing is ever lost: the capture is crashed at EVERY step (a hook that raises at step k) and
killed with a real SIGKILL at many points (a subprocess killing itself at step k, and killed from
outside at timed points); after each crash every file of the corpus is either at its path with its
bytes or verified in the archive under an authenticated manifest entry, and a re-run finishes the
job. A client appending during capture aborts that session and loses no byte.

Corpora are copies of the real-client samples (examples/); "lost" is judged by tests/clean_util.py
against a snapshot of every file taken before the run, never through sessionsift's own model."""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sessionsift.clean import activity as A
from sessionsift.clean import apply as AP
from sessionsift.clean import capture as C
from sessionsift.clean.archive import Archive, archive_dir
from sessionsift.clean.restore import verify
from sessionsift.clean.scan import scan
from sessionsift.providers.scope import RootRequest, survey
from tests.clean_util import corpus, losses, snapshot

REPO = Path(__file__).resolve().parents[1]
SUB = "23ad8bf1-66ec-5135-af96-82f74ddb4db0"   # Claude: transcript + <sid>/subagents (a folder)
INTER = "dd7270d6-d04e-5744-ab2f-2e9ad4fab464"  # Claude: transcript + file-history/<sid>/
SMALL = (SUB, INTER, "01a230e8-d707-7100-98b0-f4c88875e4d7")  # + a Codex rollout with its .zst sibling
FILES = (".claude", ".codex", ".gemini")

RUNS = {"crashes": 0, "losses": 0, "raise": 0, "kill9_at_step": 0, "kill9_timed": 0, "short_write": 0, "enospc": 0}


@pytest.fixture(autouse=True)
def _no_foreign_agents(monkeypatch):
    """These tests exercise the capture protocol, not the activity gate (test_clean_activity.py):
    the machine's other agents (another engineer's Codex or Claude run in /tmp/ssift-rc/...) must
    not change which sessions are eligible, so the process table the gate sees is empty."""
    from sessionsift.worktrees import procs as P

    monkeypatch.setattr(A.P, "snapshot", lambda: P.ProcTable())


class Crash(BaseException):
    """Not an Exception: nothing in the code under test may catch it."""


def _capture(home: Path, data: Path, targets=()):
    sv = survey(RootRequest(home=str(home)))
    rec = AP.recover(data, AP.scan_roots(sv))  # as `clean capture --apply` does, before its scan
    if rec:
        sv = survey(RootRequest(home=str(home)))
    rep = scan(sv, older_than="1m", waive_kept=True, data=data)
    return AP.run(rep, "capture", tuple(targets), apply=True, recovered=rec)


def _leftovers(home: Path) -> list[str]:
    return [os.path.join(d, n) for d, ds, fs in os.walk(home) for n in ds + fs if ".ssift-" in n]


def _rel(home: Path) -> set[str]:
    return {os.path.relpath(p, home) for p in snapshot(home)}


def _finished(home: Path, data: Path, reference: set[str]) -> None:
    """What a completed run leaves: exactly the reference run's surviving files, no hidden or
    conflict entries, every manifest line and object verified."""
    assert _rel(home) == reference
    assert _leftovers(home) == []
    checks, m = verify(Archive(archive_dir(data)))
    assert checks and all(c.ok for c in checks), [c.to_json() for c in checks if not c.ok]
    from sessionsift.clean.restore import status_of

    assert "interrupted" not in {status_of(m, c) for c in m.captures()}


@pytest.fixture(scope="module")
def small_reference(tmp_path_factory):
    """The small corpus run once without faults: how many steps a run takes, what survives."""
    from sessionsift.worktrees import procs as P

    t = tmp_path_factory.mktemp("ref")
    home = corpus(t / "h", FILES)
    calls = []
    C.FAULT = calls.append
    try:
        with pytest.MonkeyPatch.context() as mp:  # a module fixture runs before the autouse one
            mp.setattr(A.P, "snapshot", lambda: P.ProcTable())
            oc = _capture(home, t / "d", SMALL)
    finally:
        C.FAULT = None
    assert [r.status for r in oc.results] == ["removed"] * 3
    return len(calls), _rel(home), calls


def test_a_raise_at_every_step_loses_nothing_and_a_rerun_finishes(tmp_path, small_reference):
    n, reference, names = small_reference
    assert n > 30 and {"stream_chunk", "manifest", "hidden", "hidden_verified", "unlink_begin", "unlinked",
                       "removed"} <= set(names)
    for k in range(n):
        home = corpus(tmp_path / f"h{k}", FILES)
        data = tmp_path / f"d{k}"
        before = snapshot(home)
        count = [0]

        def fault(name, k=k):
            count[0] += 1
            if count[0] == k + 1:
                raise Crash(name)

        C.FAULT = fault
        try:
            with pytest.raises(Crash):
                _capture(home, data, SMALL)
        finally:
            C.FAULT = None
        RUNS["crashes"] += 1
        RUNS["raise"] += 1
        lost = losses(before, home, data)
        RUNS["losses"] += len(lost)
        assert lost == [], f"crash at step {k} ({names[k]}): lost {lost}"
        _capture(home, data, SMALL)  # the re-run finishes the job
        assert losses(before, home, data) == []
        _finished(home, data, reference)


KILLER = """
import os, signal, sys
from sessionsift.clean import activity as A, capture as C
from sessionsift.worktrees import procs as P
A.P.snapshot = lambda: P.ProcTable()  # as _no_foreign_agents
k = int(sys.argv[1]); n = [0]
def fault(name):
    n[0] += 1
    if n[0] == k:
        os.kill(os.getpid(), signal.SIGKILL)
C.FAULT = fault if k > 0 else None
from sessionsift.cli import main
main(sys.argv[2:])
"""


def _sub(k: int, home: Path, data: Path, out: bool = False) -> subprocess.Popen:
    args = ["clean", "capture", "--apply", "--waive-kept", "--older-than", "1m", "--home", str(home),
            "--data-dir", str(data)]
    return subprocess.Popen([sys.executable, "-c", KILLER, str(k), *args], cwd=REPO,
                            stdout=subprocess.PIPE if out else subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_kill_9_at_many_points_loses_nothing_and_a_rerun_finishes(tmp_path):
    # reference: the full file-based corpus, one clean run, counting its steps
    ref = corpus(tmp_path / "ref", FILES)
    calls = []
    C.FAULT = calls.append
    try:
        oc = _capture(ref, tmp_path / "dref")
    finally:
        C.FAULT = None
    assert oc.results and {r.status for r in oc.results} == {"removed"}
    reference_left = _rel(ref)
    total = len(calls)
    points = sorted({max(1, total * i // 24) for i in range(1, 25)} | {calls.index("manifest") + 1,
                                                                      calls.index("hidden") + 1,
                                                                      calls.index("unlink_begin") + 1})

    def one(k: int) -> tuple[int, list[str], int]:
        home = corpus(tmp_path / f"k{k}", FILES)
        data = tmp_path / f"kd{k}"
        before = snapshot(home)
        p = _sub(k, home, data)
        _, err = p.communicate(timeout=300)
        assert p.returncode == -signal.SIGKILL, (k, p.returncode, err[-500:])
        lost = losses(before, home, data)
        r = _sub(0, home, data, out=True)
        out2, err2 = r.communicate(timeout=300)
        assert r.returncode == 0, err2[-800:]
        lost2 = losses(before, home, data)
        left = _rel(home)
        assert left == reference_left, (k, sorted(left ^ reference_left)[:5], out2[-3000:])
        assert _leftovers(home) == []
        return k, lost + lost2, len(before)

    with ThreadPoolExecutor(3) as ex:
        res = list(ex.map(one, points))
    for k, lost, _ in res:
        RUNS["crashes"] += 1
        RUNS["kill9_at_step"] += 1
        RUNS["losses"] += len(lost)
        assert lost == [], f"SIGKILL at step {k}: lost {lost}"
    assert len(res) >= 20


SYSCALL_KILLER = """
import os, signal, sys
from sessionsift.clean import activity as A
from sessionsift.worktrees import procs as P
A.P.snapshot = lambda: P.ProcTable()  # as _no_foreign_agents
k = int(sys.argv[1]); n = [0]
def counted(f):
    def g(*a, **kw):
        n[0] += 1
        if n[0] == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return f(*a, **kw)
    return g
for name in ("fsync", "replace", "rename", "unlink", "link", "mkdir", "rmdir", "truncate", "ftruncate"):
    setattr(os, name, counted(getattr(os, name)))
import atexit
atexit.register(lambda: sys.stderr.write(f"\\nSYSCALLS {n[0]}\\n"))
from sessionsift.cli import main
main(sys.argv[2:])
"""


def _sys(k: int, home: Path, data: Path) -> subprocess.Popen:
    args = ["clean", "capture", "--apply", "--waive-kept", "--older-than", "1m", "--home", str(home),
            "--data-dir", str(data)]
    return subprocess.Popen([sys.executable, "-c", SYSCALL_KILLER, str(k), *args], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_kill_9_between_durable_operations_inside_steps(tmp_path):
    """SIGKILL just before the k-th durable file operation (fsync, rename/replace, unlink, link,
    mkdir, rmdir, truncate) of a run, at points spread over all of them: points inside a step,
    between the steps the step kills hit, chosen by count, not by time."""
    home0 = corpus(tmp_path / "t0", FILES)
    p = _sys(0, home0, tmp_path / "td0")
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err[-800:]
    total = int(err.rsplit("SYSCALLS ", 1)[1].split()[0])
    assert total >= 20
    points = sorted({max(1, total * i // 10) for i in range(1, 10)})

    def one(k: int):
        home = corpus(tmp_path / f"t{k}", FILES)
        data = tmp_path / f"td{k}"
        before = snapshot(home)
        p = _sys(k, home, data)
        _, err = p.communicate(timeout=300)
        assert p.returncode == -signal.SIGKILL, (k, p.returncode, err[-500:])
        lost = losses(before, home, data)
        r = _sub(0, home, data)
        r.communicate(timeout=300)
        assert r.returncode == 0
        assert _leftovers(home) == []
        return lost + losses(before, home, data)

    with ThreadPoolExecutor(3) as ex:
        res = list(ex.map(one, points))
    for lost in res:
        RUNS["crashes"] += 1
        RUNS["kill9_timed"] += 1
        RUNS["losses"] += len(lost)
        assert lost == []


def _transcript(home: Path) -> Path:
    return home / ".claude/projects/-tmp-ssift-rc-subagents-work" / f"{SUB}.jsonl"


def test_an_append_during_capture_aborts_the_session_and_loses_no_byte(tmp_path):
    line = b'{"type":"user","timestamp":"2026-11-30T06:00:00.000Z","message":{"content":"late"}}\n'
    for at in ("stored", "verified"):
        home = corpus(tmp_path / at, (".claude",))
        t = _transcript(home)
        orig = t.read_bytes()

        def fault(name, at=at, t=t):
            if name == at:
                with open(t, "ab") as f:  # a client appends one line, open-append-close
                    f.write(line)

        C.FAULT = fault
        try:
            oc = _capture(home, tmp_path / f"d-{at}", (SUB,))
        finally:
            C.FAULT = None
        (r,) = oc.results
        assert r.status == "aborted" and "appending" in r.reason, r.to_json()
        assert t.read_bytes() == orig + line
        assert _leftovers(home) == []


def test_an_append_through_an_open_descriptor_after_the_move_is_put_back(tmp_path):
    """A client holding the transcript open (O_APPEND) writes after it was moved to its hidden
    sibling: the second verification sees it, and every entry goes back under its own name."""
    home = corpus(tmp_path / "h", (".claude",))
    t = _transcript(home)
    orig = t.read_bytes()
    fd = os.open(t, os.O_WRONLY | os.O_APPEND)
    line = b'{"type":"assistant","timestamp":"2026-11-30T06:00:01.000Z"}\n'

    done = []

    def fault(name):
        if name == "hidden" and not done:  # right after the transcript (the first entry) moved
            os.write(fd, line)
            done.append(1)

    C.FAULT = fault
    try:
        oc = _capture(home, tmp_path / "d", (SUB,))
    finally:
        C.FAULT = None
        os.close(fd)
    (r,) = oc.results
    assert r.status == "rolled-back", r.to_json()
    assert t.read_bytes() == orig + line
    assert (t.parent / SUB / "subagents").is_dir(), "the whole footprint is back, not half of it"
    assert _leftovers(home) == []


# where in a capture the client appends a line to the transcript -> the capture's outcome: before
# the manifest the change is seen (aborted); after it, before the unlink, the capture is rolled back;
# once the file is hidden the client's append creates a new file at the path (the removed bytes are
# in the verified archive, the new line in the new file)
APPEND_AT = {"inventory": "aborted", "stream_chunk": "aborted", "object_stored": "aborted", "stored": "aborted",
             "verified": "aborted", "restat": "aborted", "manifest": "rolled-back", "ledger": "rolled-back",
             "hidden": "removed", "hidden_verified": "removed", "unlink_begin": "removed", "removed": "removed"}


@pytest.mark.parametrize("at", sorted(APPEND_AT))
def test_a_client_appending_during_the_capture_loses_no_byte(tmp_path, at):
    """Hand-made append (a progress line) written by the capture's own step hook at one step, so the
    append provably lands inside the capture window at a known point (no thread, no sleep)."""
    home = corpus(tmp_path / "h", (".claude",))
    t = _transcript(home)
    orig = t.read_bytes()
    line = b'{"type":"progress","n":1}\n'
    made = []

    def fault(name):
        if name == at and not made:
            with open(t, "ab") as f:
                f.write(line)
            made.append(name)

    C.FAULT = fault
    try:
        oc = _capture(home, tmp_path / "d", (SUB,))
    finally:
        C.FAULT = None
    (r,) = oc.results
    assert made == [at] and r.status == APPEND_AT[at], r.to_json()
    data = t.read_bytes()
    if r.status == "removed":
        assert data == line  # the new file the client's append made; the rest is in the archive
        checks, _m = verify(Archive(archive_dir(tmp_path / "d")))
        assert checks and all(c.ok for c in checks), [c.to_json() for c in checks if not c.ok]
    else:
        assert data == orig + line  # untouched but for the client's own line


def _manifest_writes(monkeypatch, fault):
    """Route every os.write to the archive's manifest through ``fault(fd, data, real_write)``: an
    injected short write or error exactly where the disk would give one."""
    real = os.write

    def write(fd, data):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if target.endswith("/archive/manifest.jsonl"):
            return fault(fd, bytes(data), real)
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)


@pytest.mark.parametrize("freed", [False, True], ids=["disk-stays-full", "space-freed-after"])
def test_a_short_write_of_the_capture_line_loses_nothing(tmp_path, monkeypatch, freed):
    """The disk fills while the manifest's capture line is written: the write is short (as a full
    disk gives it). Then either every later write fails (ENOSPC) or space comes back. Neither
    may move a file before its capture entry is whole and authenticated, and a re-run with space
    leaves every file at its path or verified in the archive."""
    home = corpus(tmp_path / "h", (".claude",))
    data = tmp_path / "d"
    before = snapshot(home)
    seen = {"short": 0}

    def fault(fd, data, real):
        if b'"type":"capture"' in data and not seen["short"]:
            seen["short"] = 1
            RUNS["short_write"] += 1
            return real(fd, data[:len(data) // 2])
        if seen["short"] and not freed:
            RUNS["enospc"] += 1
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    _manifest_writes(monkeypatch, fault)
    oc = _capture(home, data, (SUB,))
    monkeypatch.undo()
    assert seen["short"] == 1
    (r,) = oc.results
    assert r.status == ("removed" if freed else "failed"), r.to_json()
    lost = losses(before, home, data)
    RUNS["losses"] += len(lost)
    assert lost == []
    _capture(home, data, (SUB,))  # with space: finishes the job
    assert losses(before, home, data) == [] and _leftovers(home) == []
    checks, _m = verify(Archive(archive_dir(data)))
    assert checks and all(c.ok for c in checks), [c.to_json() for c in checks if not c.ok]


@pytest.mark.parametrize("manifest", ["torn", "deleted"])
def test_recovery_finds_every_hidden_entry_whatever_the_manifest_says(tmp_path, manifest):
    """A run crashed right after the session's entries were moved to their hidden siblings, and
    its capture line is then torn (the disk's doing) or the manifest is gone: discovery cannot
    see the hidden entries and no manifest entry names them. `clean scan` names each as a problem,
    and the next apply run puts every one back under its own name."""
    home = corpus(tmp_path / "h", (".claude",))
    data = tmp_path / "d"
    before = snapshot(home)
    n = [0]

    def fault(name):
        if name == "hidden":
            n[0] += 1
            if n[0] == 2:  # both top-level entries (transcript, its folder) are hidden now
                raise Crash(name)

    C.FAULT = fault
    try:
        with pytest.raises(Crash):
            _capture(home, data, (SUB,))
    finally:
        C.FAULT = None
    RUNS["crashes"] += 1
    man = data / "archive/manifest.jsonl"
    if manifest == "torn":
        lines = man.read_bytes().split(b"\n")
        i = next(k for k, l in enumerate(lines) if b'"type":"capture"' in l)
        lines[i] = lines[i][: len(lines[i]) // 2]
        man.write_bytes(b"\n".join(lines))
    else:
        man.unlink()
    assert len(_leftovers(home)) == 2
    rep = scan(survey(RootRequest(home=str(home))), older_than="1m", data=data)
    hidden = [p for p, why in rep.problems if ".ssift-del-" in p]
    assert sorted(hidden) == sorted(_leftovers(home)), rep.problems
    assert SUB not in {v.session_id for v in rep.verdicts}
    sv = survey(RootRequest(home=str(home)))
    rec = AP.recover(data, AP.scan_roots(sv))
    assert [r.status for r in rec] == ["rolled-back", "rolled-back"], [r.to_json() for r in rec]
    assert _leftovers(home) == [] and snapshot(home) == before
    lost = losses(before, home, data)
    RUNS["losses"] += len(lost)
    assert lost == []


def test_figures(capsys):
    """Prints the crash figures for the report (the sweeps above run first in this module)."""
    with capsys.disabled():
        print(f"\nclean fault injection: {RUNS['crashes']} crashes injected ({RUNS['raise']} raises, one at every "
              f"step of the small corpus; {RUNS['kill9_at_step']} SIGKILLs at steps and {RUNS['kill9_timed']} between durable "
              f"operations of the full file-based corpus), {RUNS['losses']} files lost")
    assert RUNS["losses"] == 0
