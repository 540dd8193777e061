"""status / wait / whoami / agents for Crush, on databases built by Crush's OWN code.

Crush cannot run here (tests/crush/vendor/SOURCE.md): each session is written through its schema
and queries (tests/crush/crushdb.py) in the order ``internal/agent/agent.go`` writes a turn -- the
assistant message created empty at the step's start, a tool call added as it streams in
(``Finished: true`` at ``OnToolCall``), each tool's result created as its own ``tool`` message while
the step runs (``OnToolResult``), the ``finish`` part appended at ``OnStepFinish`` -- and the
data-dir lock is taken the way ``internal/db/datadirlock.go`` takes it (``lock.TryFile``: an
exclusive non-blocking ``flock`` on ``<data dir>/crush.lock``, then ``writeOwnerInfo``'s JSON), by a
helper process standing in for the crush process (ended by its pid). Nothing here is a record no
Crush could write; the records are made by its code, not typed in.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.crush import crushdb as c

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "sessionsift"]

# internal/lock/lock_unix.go tryLockFile + internal/db/datadirlock.go writeOwnerInfo, in Python
LOCKER = textwrap.dedent("""
    import fcntl, json, os, sys, time
    path = sys.argv[1]
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with open(path, "w") as fh:
        fh.write(json.dumps({"pid": os.getpid(), "version": "v0.0.0-test",
                             "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=2) + "\\n")
    print("locked", flush=True)
    sys.stdin.read()
""")


class Project:
    """One Crush project: its global data dir (projects.json) and its .crush/crush.db."""

    def __init__(self, base: Path):
        self.global_dir = base / "crush-home"
        self.path = base / "proj"
        self.data_dir = self.path / ".crush"
        self.path.mkdir(parents=True)
        self.global_dir.mkdir(parents=True)
        (self.global_dir / "projects.json").write_text(json.dumps({"projects": [
            {"path": str(self.path), "data_dir": str(self.data_dir), "last_accessed": "2026-12-01T00:00:00Z"}]}))
        self.con = c.create_db(self.data_dir)
        self.k = c.Crush(self.con)
        self.locker: subprocess.Popen | None = None

    def lock(self) -> int:
        self.locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(self.data_dir / "crush.lock")],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.locker.stdout.readline().strip() == "locked"
        return self.locker.pid

    def unlock_by_kill(self) -> None:
        assert self.locker is not None
        os.kill(self.locker.pid, signal.SIGKILL)
        self.locker.wait()

    def close(self) -> None:
        if self.locker is not None and self.locker.poll() is None:
            self.locker.kill()
            self.locker.wait()


@pytest.fixture
def proj(tmp_path):
    p = Project(tmp_path)
    yield p
    p.close()


def step_with_call(p: Project, sid: str, cid: str, name: str, inp: dict) -> c.Message:
    """agent.go: the step's assistant message, then OnToolCall (the call, Finished: true)."""
    m = p.k.create_message(sid, "assistant", [])
    m.parts.append(c.tool_call(cid, name, inp, finished=True))
    p.k.update_message(m)
    return m


def tool_done(p: Project, sid: str, m: c.Message, cid: str, name: str, out: str) -> None:
    """OnToolResult (a tool message), then OnStepFinish (finish tool_use on the step's message)."""
    p.k.create_message(sid, "tool", [c.tool_result(cid, name, out)])
    m.parts.append(c.finish("tool_use", p.k.now()))
    p.k.update_message(m)


def final_step(p: Project, sid: str, text: str, reason: str = "end_turn") -> None:
    m = p.k.create_message(sid, "assistant", [])
    m.parts.append(c.text(text))
    m.parts.append(c.finish(reason, p.k.now()))
    p.k.update_message(m)


def status(p: Project, *args: str) -> tuple[int, list[dict]]:
    r = subprocess.run(CLI + ["status", *args, "--crush-home", str(p.global_dir), "--format", "json"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    return r.returncode, [json.loads(x) for x in r.stdout.splitlines()]


def row_of(rows: list[dict], sid: str) -> dict:
    return next(r for r in rows if r["kind"] == "session" and r["session_id"] == sid)


def ev(row: dict, surface: str) -> dict:
    return next(e for e in row["evidence"] if e["surface"] == surface)


def test_a_tool_running_under_a_held_lock_is_running_then_stale_dead_when_the_owner_dies(proj):
    sid = proj.k.create_session("Build")
    proj.k.create_message(sid, "user", [c.text("run the build")])
    pid = proj.lock()
    step_with_call(proj, sid, "call_1", "bash", {"command": "make", "description": "build"})
    code, rows = status(proj)
    row = row_of(rows, sid)
    assert code == 0 and row["verdict"] == "running", row["reason"]
    assert ev(row, "messages")["pending"] == [{"call_id": "call_1", "name": "bash"}]
    lock = ev(row, "data-dir lock")
    assert lock["pids"] == [pid] and lock["recorded"]["pid"] == pid
    assert row["owner_ended"] is False and row["turn_ended"] is False
    proj.unlock_by_kill()  # the kernel drops the flock; the file stays (datadirlock.go never unlinks it)
    code, rows = status(proj)
    row = row_of(rows, sid)
    assert (row["verdict"], row["settled"], row["owner_ended"]) == ("stale-dead", "mid-tool", True), row["reason"]
    assert ev(row, "data-dir lock")["pids"] == [] and (proj.data_dir / "crush.lock").exists()


def test_an_ended_turn_is_idle_eot_and_a_canceled_one_is_an_interrupt(proj):
    sid = proj.k.create_session("Ended")
    proj.k.create_message(sid, "user", [c.text("list")])
    m = step_with_call(proj, sid, "call_1", "bash", {"command": "ls"})
    code, rows = status(proj)
    assert row_of(rows, sid)["verdict"] == "stale-dead"  # no lock file, no crush process: nothing can write it
    assert "no crush process works in this project" in row_of(rows, sid)["reason"]
    tool_done(proj, sid, m, "call_1", "bash", "a\nb")
    code, rows = status(proj)
    assert row_of(rows, sid)["verdict"] == "stale-dead"  # the results are in; the next step never came
    assert ev(row_of(rows, sid), "messages")["value"].startswith("awaiting-model")
    final_step(proj, sid, "Two files.")
    sid2 = proj.k.create_session("Canceled")
    proj.k.create_message(sid2, "user", [c.text("wait")])
    final_step(proj, sid2, "", "canceled")  # agent.go: AddFinish(FinishReasonCanceled, "User canceled request")
    code, rows = status(proj)
    assert code == 0
    assert (row_of(rows, sid)["verdict"], row_of(rows, sid)["turn_ended"]) == ("idle-eot", True)
    r2 = row_of(rows, sid2)
    assert r2["verdict"] == "idle-eot" and ev(r2, "messages")["value"].startswith("interrupted")


def test_wait_for_stop_returns_when_the_turn_ends(proj):
    sid = proj.k.create_session("Wait")
    proj.k.create_message(sid, "user", [c.text("build")])
    proj.lock()
    m = step_with_call(proj, sid, "call_1", "bash", {"command": "make"})
    w = subprocess.Popen(CLI + ["wait", sid, "--for", "stop", "--timeout", "120", "--crush-home", str(proj.global_dir),
                                "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert "wait: ready: baselines taken" in w.stderr.readline()
        assert w.poll() is None
        tool_done(proj, sid, m, "call_1", "bash", "built")
        final_step(proj, sid, "Built.")
        out, _err = w.communicate(timeout=120)
    finally:
        if w.poll() is None:
            w.kill()
    rows = [json.loads(x) for x in out.splitlines()]
    assert w.returncode == 0 and rows[-1]["satisfied"] is True
    assert row_of(rows, sid)["verdict"] == "idle-eot"


def test_agents_join_a_task_session_to_its_call_and_whoami_says_what_crush_exports(proj):
    from sessionsift.live.whoami import whoami
    from sessionsift.providers.scope import RootRequest, select, survey

    sid = proj.k.create_session("Delegate")
    proj.k.create_message(sid, "user", [c.text("delegate")])
    m = step_with_call(proj, sid, "call_a", "agent", {"prompt": "write sub.txt"})
    child = proj.k.create_task_session(m.id, "call_a", sid, "write sub.txt")  # session.CreateTaskSession
    proj.k.create_message(child, "user", [c.text("write sub.txt")])
    final_step(proj, child, "sub.txt written.")
    tool_done(proj, sid, m, "call_a", "agent", "sub.txt written.")
    final_step(proj, sid, "Delegated.")
    r = subprocess.run(CLI + ["agents", sid, "--crush-home", str(proj.global_dir), "--format", "json"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    (a,) = [x for x in rows if x["kind"] == "agent"]
    assert r.returncode == 0 and (a["session_id"], a["parent_session_id"]) == (child, sid)
    assert (a["join"], a["spawn"]["tool_name"], a["spawn"]["tool_use_id"]) == (
        "session id <message id>$$<call id>", "agent", "call_a")
    assert (a["description"], a["status"], a["returned"]) == ("write sub.txt", "completed", "sub.txt written.")

    sel = select(survey(RootRequest(roots={"crush": str(proj.global_dir)})), [])
    w = whoami({"CRUSH": "1", "AGENT": "crush", "AI_AGENT": "crush"}, sel)  # shell.go CrushEnvMarkers
    assert w.answer is None and [x.claim.provider for x in w.claims] == ["crush"]
    assert "cannot tell" in w.claims[0].claim.note
    w = whoami({"CRUSH": "1", "CRUSH_SESSION_ID": sid}, sel)  # hooks/input.go: a hook command's environment
    assert w.answer is not None and (w.answer.claim.session_id, w.answer.claim.source) == (sid, "CRUSH_SESSION_ID")
    assert w.answer.transcript == str(proj.data_dir / "crush.db")
