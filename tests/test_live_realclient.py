"""status / wait / agents against the REAL Claude Code client (tests/realclient harness).

Skips with the exact missing prerequisite (not root / no unshare / no npm ...) but FAILS under
CI=true. Each scenario runs once per session (session-scoped fixtures)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.providers.claude.discover import resolve_targets
from sessionsift.providers.claude.live.agents import topology
from sessionsift.providers.claude.live.verdict import assess
from tests.realclient.common.host import poll as _poll
from tests.realclient.common.host import prereq as _prereq
from tests.realclient import scenarios_live as L

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "sessionsift"]


@pytest.fixture(scope="session")
def live_root(tmp_path_factory):
    return tmp_path_factory.mktemp("live-rc")


def _session(cfg: Path, sid: str):
    scope = resolve_targets([sid], cfg)
    assert len(scope.sessions) == 1
    return scope.sessions[0]


def _run(name: str, root: Path) -> dict:
    """Run a scenario to completion with this module's launcher; return its ground truth."""
    p = _prereq(L.start, name, root)
    try:
        p.wait(timeout=240)
    finally:
        L.stop(p)
    assert p.returncode == 0, (root / f"{name}.live-runner.log").read_text()[-3000:]
    return json.loads((root / name / "ground-truth.json").read_text())


def _cli(*args, env=None):
    return subprocess.run(CLI + list(args), capture_output=True, text=True, cwd=REPO, env=env, timeout=120)


def _rows(stdout: str) -> list[dict]:
    return [json.loads(l) for l in stdout.splitlines() if l.strip()]


def test_busy_session_is_running_then_sigkill_is_stale_dead(live_root):
    p = _prereq(L.start, "live_hold", live_root)
    P = L.paths("live_hold", live_root)
    try:
        # the foreground `sleep 20` is on disk and unreturned; the registry row says busy
        _poll(lambda: P["transcript"].exists() and b"sleep 20" in P["transcript"].read_bytes(), 120,
              "the held Bash tool_use")
        sess = _session(P["config"], P["session_id"])
        v = _poll(lambda: (lambda v: v if any(e["surface"] == "registry" and e.get("status") == "busy"
                                              for e in v.evidence) else None)(assess(sess, P["config"])),
                  15, "registry status busy")
        assert v.verdict == "running", v.reason
        reg = [e for e in v.evidence if e["surface"] == "registry" and e.get("pid")]
        assert reg and reg[0]["status"] == "busy" and reg[0]["proc_start"]
        pid_ev = next(e for e in v.evidence if e["surface"] == "pid")
        assert pid_ev["state"] == "alive" and pid_ev["reuse_guard"] == "matched", pid_ev
        tail = next(e for e in v.evidence if e["surface"] == "tail")
        assert [x["name"] for x in tail["pending"]] == ["Bash"]
        assert any("not proof of still running" in n for n in v.notes)
        # SIGKILL the client: the row survives (REG-013), the pid probe retires it
        pid = reg[0]["pid"]
        os.kill(pid, signal.SIGKILL)
        _poll(lambda: not Path(f"/proc/{pid}").exists() or
              Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] in "ZX", 10, "the client to die")
        r = _cli("status", P["session_id"], "--claude-home", str(P["config"]), "--format", "json")
        assert r.returncode == 0, r.stderr
        row = next(x for x in _rows(r.stdout) if x["kind"] == "session")
        assert row["verdict"] == "stale-dead"
        assert row["settled"] == "mid-tool"
        assert any(e["surface"] == "pid" and e["state"] == "dead" for e in row["evidence"])
        assert any(e["surface"] == "registry" and e.get("status") == "busy" for e in row["evidence"])
    finally:
        L.stop(p)


def test_wait_until_stop_times_out_then_returns_at_turn_end(live_root):
    p = _prereq(L.start, "live_wait", live_root)
    P = L.paths("live_wait", live_root)
    try:
        _poll(lambda: P["transcript"].exists() and b'"tool_use_id"' in P["transcript"].read_bytes(), 120,
              "the Bash result (the delayed final turn is next)")
        home = ["--claude-home", str(P["config"])]
        r = _cli("wait", P["session_id"], "--until", "stop", "--timeout", "1", "--format", "json", *home)
        assert r.returncode == 124, (r.returncode, r.stderr)
        assert "ready: baselines taken" in r.stderr
        summ = _rows(r.stdout)[-1]
        assert summ["kind"] == "summary" and summ["timed_out"] is True
        assert _rows(r.stdout)[1]["verdict"] == "running"
        assert b"Finished after the pause." not in P["transcript"].read_bytes()
        r = _cli("wait", P["session_id"], "--until", "stop", "--timeout", "60", "--format", "json", *home)
        assert r.returncode == 0, (r.returncode, r.stdout[-2000:], r.stderr)
        assert b"Finished after the pause." in P["transcript"].read_bytes()
        rows = _rows(r.stdout)
        assert rows[1]["verdict"] in ("idle-eot", "stale-dead") and rows[-1]["satisfied"] is True
    finally:
        L.stop(p)


def test_background_open_then_completed(live_root):
    from tests.realclient.runner import run_scenario

    gt = _prereq(run_scenario, "bash_background", live_root)
    cfg = Path(gt["config_dir"])
    v = assess(_session(cfg, gt["session_id"]), cfg)
    assert v.verdict == "idle-background-open", v.reason
    expected_open = {b["tool_use_id"] for b in gt["background_tasks"] if not b["expected_completed"]}
    expected_done = {b["tool_use_id"] for b in gt["background_tasks"] if b["expected_completed"]}
    assert {t.tool_use_id for t in v.open_background} == expected_open
    t = v.open_background[0]
    assert t.kind == "shell" and "sleep 600" in t.command and t.launched_at and t.output_file
    closed = [t for t in v.background if t.state == "closed"]
    assert {t.tool_use_id for t in closed} == expected_done
    assert closed[0].status == "completed" and "queue-operation" in closed[0].carriers

    gt2 = _run("live_bg_done", live_root)
    cfg2 = Path(gt2["config_dir"])
    v2 = assess(_session(cfg2, gt2["session_id"]), cfg2)
    assert v2.verdict == "idle-eot", v2.reason
    assert len(v2.background) == 1 and v2.background[0].state == "closed"
    assert v2.background[0].kind == "shell" and v2.background[0].task_id


def test_agents_joined_to_spawning_calls(live_root):
    from tests.realclient.runner import run_scenario

    gt = _prereq(run_scenario, "subagents", live_root)
    cfg = Path(gt["config_dir"])
    nodes = topology(_session(cfg, gt["session_id"]))
    want = {s["tool_use_id"]: s for s in gt["subagents"]}
    assert {n.spawn.tool_use_id for n in nodes} == set(want)
    for n in nodes:
        s = want[n.spawn.tool_use_id]
        assert n.join == "meta.json toolUseId"
        assert n.spawn.tool_name == "Agent" and n.parent_lane == "main"
        assert n.status == "completed"
        assert n.spawn.timestamp <= n.started_at <= n.ended_at
        if s["run_in_background"]:
            assert n.returned_via == "async-child-tail" and n.returned == "input.txt has 3 lines."
        else:
            assert n.returned_via == "sync-tool-result" and n.returned == "Wrote summary.txt (3 lines)."
    r = _cli("agents", gt["session_id"], "--claude-home", str(cfg), "--tree", "--with-files", "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = [x for x in _rows(r.stdout) if x["kind"] == "agent"]
    sync = next(x for x in rows if not x["spawn"]["async"])
    assert any(f.endswith("summary.txt") for f in sync["files"])


def test_whoami_inside_the_clients_bash_tool_names_its_session(live_root):
    """`sessionsift whoami` run by the real client's own Bash tool: $CLAUDE_CODE_SESSION_ID names the
    session, and its transcript is found under the client's CLAUDE_CONFIG_DIR."""
    gt = _run("live_whoami", live_root)
    P = L.paths("live_whoami", live_root)
    rows = [json.loads(x) for x in (live_root / "live_whoami" / "work" / "whoami.json").read_text().splitlines()]
    w = next(r for r in rows if r["kind"] == "whoami")
    assert (w["session_id"], w["provider"], w["source"]) == (P["session_id"], "claude-code", "CLAUDE_CODE_SESSION_ID")
    assert w["transcript"] == str(P["transcript"]) and rows[-1]["known"] is True
    assert gt["session_id"] == P["session_id"]


def test_a_permission_prompt_is_waiting_then_wait_returns_once_answered(live_root):
    """The interactive client without --dangerously-skip-permissions asks to approve a Write; the harness answers
    the TUI dialog only once the test releases gate `approve`. Meanwhile its registry row says
    status=waiting, waitingFor 'permission prompt' (measured with 2.1.258): the session is `waiting`,
    `wait --for human` holds at once, and `wait --for stop`, started before the answer, returns once the
    client has written the file and ended its turn."""
    from tests.realclient.common import gate

    p = _prereq(L.start, "live_permission", live_root)
    P = L.paths("live_permission", live_root)
    s_dir = live_root / "live_permission"
    home = ["--claude-home", str(P["config"])]
    try:
        _poll(lambda: P["transcript"].exists() and b"approved.txt" in P["transcript"].read_bytes(), 120,
              "the Write tool_use awaiting approval")

        def waiting():
            r = _cli("status", P["session_id"], "--format", "json", *home)
            row = next(x for x in _rows(r.stdout) if x["kind"] == "session")
            return row if row["verdict"] == "waiting" else None

        row = _poll(waiting, 30, "the registry's status=waiting")
        reg = next(e for e in row["evidence"] if e["surface"] == "registry")
        assert (reg["status"], reg["waiting_for"], reg["kind"]) == ("waiting", "permission prompt", "interactive")
        assert row["reason"] == "blocked on a human: registry status=waiting (waitingFor='permission prompt')"
        tail = next(e for e in row["evidence"] if e["surface"] == "tail")
        assert [x["name"] for x in tail["pending"]] == ["Write"]
        assert not (s_dir / "work" / "approved.txt").exists()
        r = _cli("wait", P["session_id"], "--for", "human", "--timeout", "30", "--format", "json", *home)
        assert r.returncode == 0 and _rows(r.stdout)[-1]["satisfied"] is True, (r.returncode, r.stderr)
        wt = subprocess.Popen(CLI + ["wait", P["session_id"], "--for", "stop", "--timeout", "120", "--format", "json",
                                     *home], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = wt.stderr.readline()
            assert "wait: ready: baselines taken" in line, line
            assert wt.poll() is None  # the dialog is open: the wait waits
            gate.release(s_dir, "approve")
            out, err = wt.communicate(timeout=150)
        finally:
            if wt.poll() is None:
                wt.kill()
        assert wt.returncode == 0, (out[-2000:], err[-2000:])
        rows = _rows(out)
        assert rows[-1]["satisfied"] is True and rows[1]["verdict"] == "idle-eot", rows[1]["reason"]
        assert (s_dir / "work" / "approved.txt").read_text() == "approved\n"
        assert b"Written after the approval." in P["transcript"].read_bytes()
        p.wait(timeout=120)  # the harness ends the TUI (and its tmux server) itself
        assert p.returncode == 0, (live_root / "live_permission.live-runner.log").read_text()[-3000:]
    finally:
        L.stop(p)
