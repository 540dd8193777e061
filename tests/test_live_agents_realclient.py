"""status / wait / whoami / agents against the REAL Codex CLI, Gemini CLI and opencode clients.

Each live scenario (tests/realclient/<client>/scenarios_live.py) is watched WHILE it runs (the pid
namespace is shared with the client's network namespace):

- ``live_hold``: the client's shell tool records what the client exports to it and runs
  ``sessionsift whoami`` inside it; the mock then holds the final reply at a gate: the test takes
  ``status`` of the open turn, starts ``wait --for stop``, releases the gate, and the wait returns
  when the real client finishes the turn; ``status`` after the run says the turn ended.
- ``live_tool``: a ``sleep 300`` shell call: ``status`` while it runs, then the test SIGKILLs the
  client and ``status`` says it died mid-tool.

Every wait for the client goes through the harness (tests/realclient/common/wait.py, the gate);
nothing here is timed. Skips name the missing prerequisite (fails under CI=true).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.realclient.common import gate, netns
from tests.realclient.common.host import prereq
from tests.realclient.common.wait import until

pytestmark = pytest.mark.realclient
REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "sessionsift"]


def cli(*args: str, timeout: float = 180) -> tuple[int, list[dict]]:
    r = subprocess.run(CLI + list(args) + ["--format", "json"], capture_output=True, text=True, cwd=REPO,
                       timeout=timeout)
    try:
        rows = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    except ValueError:
        raise AssertionError(f"not JSON Lines: {r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r.returncode, rows


def session_row(rows: list[dict], sid: str) -> dict:
    return next(r for r in rows if r["kind"] == "session" and r["session_id"] == sid)


def surface(row: dict, name: str) -> dict:
    return next(e for e in row["evidence"] if e["surface"] == name)


@dataclass
class Client:
    name: str
    runner: str
    flag: str
    home: str
    """The data root under the scenario dir."""
    provider: str

    def start(self, scenario: str, root: Path) -> subprocess.Popen:
        import importlib

        mod = importlib.import_module(self.runner)
        return prereq(mod.start_scenario, f"tests.realclient.{self.name}.scenarios_live:{scenario}", root,
                      label=f"{self.name} real-client")


CODEX = Client("codex", "tests.realclient.codex.runner", "--codex-home", "codex-home", "codex")
GEMINI = Client("gemini", "tests.realclient.gemini.runner", "--gemini-home", "cli-home/.gemini", "gemini-cli")
OPENCODE = Client("opencode", "tests.realclient.opencode.runner", "--opencode-home", "xdg/data/opencode", "opencode")


def held(s_dir: Path) -> bool:
    log = s_dir / "mock-requests.jsonl"
    return log.exists() and b'"gate-held"' in log.read_bytes()


def alive(pid: int) -> bool:
    try:
        st = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return st.rsplit(") ", 1)[1][0] not in "ZX"


def work_dir(s_dir: Path) -> Path:
    for d in ("work", "gem-live-hold", "gem-live-tool"):
        if (s_dir / d).is_dir():
            return s_dir / d
    raise AssertionError(f"no work dir in {s_dir}")


def the_session(c: Client, home: Path) -> str:
    code, rows = cli("status", c.flag, str(home))
    ids = [r["session_id"] for r in rows if r["kind"] == "session" and r["provider"] == c.provider]
    assert len(ids) == 1, (code, rows[-1])
    return ids[0]


@pytest.mark.parametrize("c", [CODEX, GEMINI, OPENCODE], ids=lambda c: c.name)
def test_a_held_turn_is_running_then_wait_stop_returns_when_the_client_finishes(c, tmp_path):
    p = c.start("live_hold", tmp_path)
    s = tmp_path / "live_hold"
    try:
        until(lambda: held(s), 240, f"{c.name}: the gated reply to be requested")
        home = s / c.home
        pid = int((s / "client-P1.pid").read_text())
        sid = the_session(c, home)

        # whoami, run by the client's own shell tool
        who = [json.loads(x) for x in (work_dir(s) / "whoami.json").read_text().splitlines()]
        w = next(r for r in who if r["kind"] == "whoami")
        if c is CODEX:
            assert (work_dir(s) / "tid.txt").read_text().strip() == sid
            assert (w["session_id"], w["provider"], w["source"]) == (sid, "codex", "CODEX_THREAD_ID")
            assert w["transcript"] and sid in Path(w["transcript"]).name
        else:
            env = (work_dir(s) / "env.txt").read_text().splitlines()
            assert w["session_id"] is None and who[-1]["known"] is False
            claim = next(x for x in w["claims"] if x["provider"] == c.provider)
            assert claim["session_id"] is None and "cannot tell" in claim["note"]
            if c is GEMINI:
                assert "GEMINI_CLI=1" in env and not any(v.startswith("GEMINI_SESSION_ID=") for v in env)
            else:
                assert "OPENCODE=1" in env and f"OPENCODE_PID={pid}" in env
                assert not any("SESSION" in v for v in env)

        code, rows = cli("status", sid, c.flag, str(home))
        row = session_row(rows, sid)
        assert code == 0 and row["verdict"] == "running", row["reason"]
        assert row["turn_ended"] is False and row["provider"] == c.provider
        if c is CODEX:
            assert surface(row, "thread lock")["pids"] == [pid]
            assert surface(row, "rollout")["pending"] == []  # the shell call returned: awaiting the model
        elif c is GEMINI:
            assert pid in surface(row, "processes")["pids"]
            assert surface(row, "chat file")["value"].startswith("awaiting-model")
        else:
            assert surface(row, "processes")["pids"] == [pid]
            assert surface(row, "messages")["value"].split(":")[0] in ("awaiting-model", "step-open", "streaming")

        wt = subprocess.Popen(CLI + ["wait", sid, "--for", "stop", "--timeout", "200", c.flag, str(home),
                                     "--format", "json"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        try:
            line = wt.stderr.readline()
            assert "wait: ready: baselines taken" in line, line
            assert wt.poll() is None  # the turn is held: the wait waits
            gate.release(s, "reply")
            out, err = wt.communicate(timeout=240)
        finally:
            if wt.poll() is None:
                wt.kill()
        rows = [json.loads(x) for x in out.splitlines()]
        assert wt.returncode == 0, (out[-2000:], err[-2000:])
        assert rows[-1]["satisfied"] is True and rows[-1]["timed_out"] is False
        assert session_row(rows, sid)["verdict"] in ("idle-eot", "stale-dead")
        p.wait(timeout=240)
        assert p.returncode == 0, (tmp_path / "live_hold.runner.log").read_text()[-3000:]

        code, rows = cli("status", sid, c.flag, str(home))
        row = session_row(rows, sid)
        assert code == 0 and row["verdict"] == "idle-eot", row["reason"]
        assert row["turn_ended"] is True
        if c is CODEX:  # a normal exit removes the lock file (measured with 0.171.0)
            assert surface(row, "thread lock")["value"].startswith("no thread-writer lock for this thread")
            assert not (home / "thread-writer-locks" / f"{sid}.lock").exists()
        else:
            assert surface(row, "processes")["pids"] == []
    finally:
        netns.stop_group(p)


@pytest.mark.parametrize("c", [CODEX, GEMINI, OPENCODE], ids=lambda c: c.name)
def test_a_client_killed_mid_tool_is_stale_dead(c, tmp_path):
    p = c.start("live_tool", tmp_path)
    s = tmp_path / "live_tool"
    try:
        pid_file = s / "client-P1.pid"
        until(lambda: pid_file.exists() and list(_sleepers(s)), 240, f"{c.name}: the tool's `sleep 300` to run")
        pid = int(pid_file.read_text())
        home = s / c.home
        sid = until(lambda: _mid_tool(c, home), 60, f"{c.name}: status to see the running tool")
        code, rows = cli("status", sid, c.flag, str(home))
        row = session_row(rows, sid)
        assert code == 0 and row["verdict"] == "running" and row["turn_ended"] is False, row["reason"]
        os.killpg(pid, signal.SIGKILL)
        until(lambda: not alive(pid), 30, f"{c.name}: the client to die")
        code, rows = cli("status", sid, c.flag, str(home))
        row = session_row(rows, sid)
        assert code == 0 and row["verdict"] == "stale-dead", row["reason"]
        assert row["settled"] == "mid-tool" and row["owner_ended"] is True
        if c is CODEX:
            assert surface(row, "thread lock")["pids"] == []
            assert [x["name"] for x in surface(row, "rollout")["pending"]] == ["exec_command"]
        elif c is GEMINI:
            assert surface(row, "processes")["pids"] == []
        else:
            assert surface(row, "processes")["pids"] == []
            assert [t["tool"] for t in surface(row, "messages")["open_tools"]] == ["bash"]
    finally:
        netns.stop_group(p)


def _sleepers(s_dir: Path):
    """The scenario's `sleep 300` processes (the tool running), found by their cwd."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(d / "cwd")
        except OSError:
            continue
        if argv[:2] == [b"sleep", b"300"] and cwd.startswith(str(s_dir)):
            yield int(d.name)


def _mid_tool(c: Client, home: Path) -> str | None:
    """The session's id once status sees its shell call running (the client writes it as it goes)."""
    code, rows = cli("status", c.flag, str(home))
    for r in rows:
        if r["kind"] == "session" and r["provider"] == c.provider and r["verdict"] == "running":
            if c is CODEX and surface(r, "rollout")["pending"]:
                return r["session_id"]
            if c is OPENCODE and surface(r, "messages")["open_tools"]:
                return r["session_id"]
            if c is GEMINI and surface(r, "chat file")["value"].startswith("mid-tool"):
                return r["session_id"]
    return None


# --- the real clients' corpora (session fixtures shared with the readers' own tests) -------------

def test_codex_status_of_every_scenario_and_agents_joined_to_spawn_agent(codex_corpus):
    for name, run in codex_corpus.runs.items():
        (tid, *_rest) = run.ground_truth["thread_ids_reported"]
        code, rows = cli("status", tid, "--codex-home", str(run.codex_home))
        row = session_row(rows, tid)
        assert code == 0, (name, rows[-1])
        if name == "killed":  # SIGKILLed while the mock held the turn's second reply
            assert (row["verdict"], row["settled"]) == ("stale-dead", "mid-turn"), row["reason"]
            lock = surface(row, "thread lock")
            assert lock["pids"] == [] and lock["value"].startswith("present, held by no process"), lock
            assert surface(row, "side store")["statuses"] == {"inProgress": 1}
        else:
            assert row["verdict"] == "idle-eot" and row["turn_ended"] is True, (name, row["reason"])
    run = codex_corpus["subagent"]
    gt = run.ground_truth
    (tid,) = gt["thread_ids_reported"]
    (child,) = gt["spawned_agent_ids"]
    spawn = next(c for c in gt["calls"] if c["name"] == "spawn_agent")
    code, rows = cli("agents", tid, "--codex-home", str(run.codex_home))
    (a,) = [r for r in rows if r["kind"] == "agent"]
    assert code == 0 and a["session_id"] == child and a["parent_session_id"] == tid
    assert (a["join"], a["spawn"]["tool_name"], a["spawn"]["tool_use_id"]) == (
        "spawn_agent output agent_id", "spawn_agent", spawn["call_id"])
    assert a["description"] == spawn["arguments"]["message"]
    assert (a["status"], a["returned"]) == ("completed", "summary.txt written (3 lines).")
    assert rows[-1]["agents"] == 1 and rows[-1]["sessions"] == 1


def test_gemini_status_of_every_scenario_and_agents_joined_by_agent_id(gemini_corpus):
    for name, run in gemini_corpus.runs.items():
        code, rows = cli("status", "--gemini-home", str(run.gemini_dir))
        assert code == 0, (name, rows[-1])
        for sid in run.ground_truth["session_ids"]:
            row = session_row(rows, sid)
            if name == "killed":  # SIGKILLed while the mock held the reply to the tool's results
                assert (row["verdict"], row["settled"]) == ("stale-dead", "mid-turn"), row["reason"]
            else:
                assert row["verdict"] == "idle-eot", (name, row["reason"])
    run = gemini_corpus["subagent"]
    gt = run.ground_truth
    (sid,) = gt["session_ids"]
    child = next(s["session_id"] for s in gt["sessions_on_disk"] if s["kind"] == "subagent")
    inv = next(c for c in gt["tool_calls"] if c["name"] == "invoke_agent")
    done = next(c for c in gt["tool_calls"] if c["name"] == "complete_task")
    code, rows = cli("agents", sid, "--gemini-home", str(run.gemini_dir))
    (a,) = [r for r in rows if r["kind"] == "agent"]
    assert code == 0 and (a["session_id"], a["parent_session_id"], a["join"]) == (child, sid, "toolCalls agentId")
    assert (a["agent_type"], a["description"]) == (inv["args"]["agent_name"], inv["args"]["prompt"])
    assert (a["status"], a["returned"]) == ("completed", done["args"]["result"]["response"])


def test_opencode_status_of_every_scenario_and_agents_joined_by_the_task_part(opencode_corpus):
    for name, run in opencode_corpus.items():
        code, rows = cli("status", run.session_id, "--opencode-home", str(run.data_dir))
        row = session_row(rows, run.session_id)
        assert code == 0, (name, rows[-1])
        if run.truth.get("killed"):  # SIGKILLed mid-stream
            assert (row["verdict"], row["settled"]) == ("stale-dead", "mid-turn"), row["reason"]
        else:
            assert row["verdict"] == "idle-eot", (name, row["reason"])
    run = opencode_corpus["subagent"]
    task = next(c for c in run.truth["tool_calls"] if c["name"] == "task")
    code, rows = cli("agents", run.session_id, "--opencode-home", str(run.data_dir))
    (a,) = [r for r in rows if r["kind"] == "agent"]
    assert code == 0 and a["parent_session_id"] == run.session_id and a["join"] == "task part metadata.sessionId"
    assert (a["spawn"]["tool_name"], a["spawn"]["tool_use_id"]) == ("task", task["id"])
    assert (a["agent_type"], a["description"]) == (task["input"]["subagent_type"], task["input"]["description"])
    assert a["status"] == "completed" and a["returned"]
