"""status / wait / whoami / agents against the REAL Codex CLI, Gemini CLI, opencode, Kilo Code, Qwen Code, pi and
GitHub Copilot CLI clients.

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
QWEN = Client("qwen", "tests.realclient.qwen.runner", "--qwen-home", "home/.qwen", "qwen-code")
PI = Client("pi", "tests.realclient.pi.runner", "--pi-home", "home/.pi/agent", "pi")
COPILOT = Client("copilot", "tests.realclient.copilot.runner", "--copilot-home", "home/.copilot", "copilot-cli")
KILO = Client("kilo", "tests.realclient.kilo.runner", "--kilo-home", "xdg/data/kilo", "kilo-code")
CLIENTS = [CODEX, GEMINI, OPENCODE, QWEN, PI, COPILOT, KILO]
TAIL = {GEMINI.name: "chat file", QWEN.name: "chat file", PI.name: "session file", COPILOT.name: "events"}
"""The surface holding the transcript's last turn, for the clients whose processes are matched by project."""


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
    """The one session the client is running. A client may ask its question (an approval) before it
    has written the session's own file (seen once under CI load: GitHub Copilot CLI's session-state/<id>/
    without events.jsonl yet, which the reader does not count, said as a problem, exit 3), so this looks
    again until exactly one session is listed; a wrong count at the deadline fails with what was seen."""
    seen: list = []

    def one():
        code, rows = cli("status", c.flag, str(home))
        ids = [r["session_id"] for r in rows if r["kind"] == "session" and r["provider"] == c.provider]
        seen[:] = [code, len(ids), [p.get("why") for p in rows[-1].get("problems") or []]]
        return ids[0] if len(ids) == 1 else None

    try:
        return until(one, 30, f"{c.name}: exactly one session listed")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last: exit {seen[0]}, {seen[1]} sessions, problems {seen[2]}; "
                             f"files: {sorted(str(x.relative_to(home)) for x in home.rglob('*'))}") from None


@pytest.mark.parametrize("c", CLIENTS, ids=lambda c: c.name)
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
        elif c is COPILOT:  # the bash tool gets the session's id
            env = (work_dir(s) / "env.txt").read_text().splitlines()
            assert "COPILOT_CLI=1" in env and f"COPILOT_AGENT_SESSION_ID={sid}" in env
            assert (w["session_id"], w["provider"], w["source"]) == (sid, "copilot-cli", "COPILOT_AGENT_SESSION_ID")
            # The tool can run before the client has written session-state/<id>/events.jsonl (seen once under CI
            # load: the in-tool answer named the session, its transcript null), so the transcript is asked for
            # again now that the session is listed, in the environment the tool got (its two variables).
            got = {k: v for k, v in (x.split("=", 1) for x in env) if k in ("COPILOT_CLI", "COPILOT_AGENT_SESSION_ID")}
            clean = {k: v for k, v in os.environ.items() if not k.endswith(("SESSION_ID", "THREAD_ID"))}
            r = subprocess.run(CLI + ["whoami", c.flag, str(home), "--format", "json"], capture_output=True, text=True,
                               cwd=REPO, timeout=120, env=clean | got)
            again = [json.loads(x) for x in r.stdout.splitlines()]
            w2 = next(x for x in again if x["kind"] == "whoami")
            assert r.returncode == 0 and w2["session_id"] == sid, r.stdout + r.stderr
            assert Path(w2["transcript"]).parent.name == sid and again[-1]["known"] is True
        elif c is QWEN:  # the shell tool exports the session's id
            env = (work_dir(s) / "env.txt").read_text().splitlines()
            assert "QWEN_CODE=1" in env and f"QWEN_CODE_SESSION_ID={sid}" in env
            assert (w["session_id"], w["provider"], w["source"]) == (sid, "qwen-code", "QWEN_CODE_SESSION_ID")
            assert Path(w["transcript"]).name == f"{sid}.jsonl" and who[-1]["known"] is True
        else:
            env = (work_dir(s) / "env.txt").read_text().splitlines()
            assert w["session_id"] is None and who[-1]["known"] is False
            claim = next(x for x in w["claims"] if x["provider"] == c.provider)
            assert claim["session_id"] is None and "cannot tell" in claim["note"]
            if c is GEMINI:
                assert "GEMINI_CLI=1" in env and not any(v.startswith("GEMINI_SESSION_ID=") for v in env)
            elif c is PI:
                assert "PI_CODING_AGENT=true" in env and not any("SESSION" in v for v in env)
            elif c is KILO:  # built from opencode's code: OPENCODE=1 too, and its own pid variable
                assert {"OPENCODE=1", "AGENT=1", "KILO=1", f"KILO_PID={pid}"} <= set(env)
                assert not any(v.split("=")[0].endswith("SESSION_ID") for v in env)  # (KILO_DISABLE_SESSION_INGEST is ours)
                assert [x["provider"] for x in w["claims"]] == ["kilo-code"] and claim["source"] == "KILO_PID"
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
        elif c is COPILOT:  # the bash call returned: awaiting the model; the client holds the session
            assert surface(row, "in-use lock")["pids"] == [pid]
            assert surface(row, "events")["value"].startswith("awaiting-model")
        elif c.name in TAIL:  # the shell call returned: awaiting the model
            assert pid in surface(row, "processes")["pids"]
            assert surface(row, TAIL[c.name])["value"].startswith("awaiting-model")
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
        elif c is COPILOT:  # a normal exit removes inuse.<pid>.lock
            assert surface(row, "in-use lock")["recorded"] == [] and row["owner_ended"] is True
        else:
            assert surface(row, "processes")["pids"] == []
    finally:
        netns.stop_group(p)


@pytest.mark.parametrize("c", CLIENTS, ids=lambda c: c.name)
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
        elif c is COPILOT:  # its in-use lock is left behind, naming the dead client
            lock = surface(row, "in-use lock")
            assert (lock["pids"], lock["recorded"]) == ([], [pid])
            assert [x["name"] for x in surface(row, "events")["pending"]] == ["bash"]
        elif c.name in TAIL:  # the call the client was inside when it died has no result
            assert surface(row, "processes")["pids"] == []
            names = {"qwen": ["run_shell_command"], "pi": ["bash"]}[c.name]
            assert [x["name"] for x in surface(row, TAIL[c.name])["pending"]] == names
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
            if c in (OPENCODE, KILO) and surface(r, "messages")["open_tools"]:
                return r["session_id"]
            if c.name in TAIL and surface(r, TAIL[c.name])["value"].startswith("mid-tool"):
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


def test_qwen_status_of_every_sample_scenario_and_agents_joined_by_the_meta_tool_use_id(qwen_examples):
    """On the committed Qwen Code 0.24.4 sample (made by the real client, tests/realclient/qwen)."""
    run = next(iter(qwen_examples.values()))
    code, rows = cli("status", "--qwen-home", str(run.qwen_dir))
    assert code == 0, rows[-1]
    for name, run in qwen_examples.items():
        for sid in run.session_ids:
            row = session_row(rows, sid)
            if run.truth.get("killed"):  # SIGKILLed while its shell tool ran `sleep 300`
                assert (row["verdict"], row["settled"]) == ("stale-dead", "mid-tool"), row["reason"]
                assert [x["name"] for x in surface(row, "chat file")["pending"]] == ["run_shell_command"]
            else:
                assert (row["verdict"], row["turn_ended"]) == ("idle-eot", True), (name, row["reason"])
            assert surface(row, "processes")["pids"] == [] and row["owner_ended"] is True
    run = qwen_examples["subagent"]
    (sub,) = run.truth["subagents"]
    call = next(c for c in run.truth["tool_calls"] if c["name"] == "agent")
    code, rows = cli("agents", run.session_ids[0], "--qwen-home", str(run.qwen_dir))
    (a,) = [r for r in rows if r["kind"] == "agent"]
    assert code == 0 and (a["session_id"], a["parent_session_id"]) == (sub["agent_id"], run.session_ids[0])
    assert (a["join"], a["spawn"]["tool_name"], a["spawn"]["tool_use_id"]) == (".meta.json toolUseId", "agent", call["id"])
    assert (a["agent_type"], a["description"]) == (call["input"]["subagent_type"], call["input"]["description"])
    assert (a["status"], a["returned"], a["spawn"]["async"]) == ("completed", "Subagent: sub.txt is written.", True)
    child = session_row(cli("status", sub["agent_id"], "--qwen-home", str(run.qwen_dir))[1], sub["agent_id"])
    assert (child["verdict"], surface(child, "subagent meta")["status"]) == ("idle-eot", "completed")


def test_pi_status_of_every_sample_scenario(pi_examples):
    """On the committed pi 0.73.1 sample (made by the real client, tests/realclient/pi). pi has no subagents."""
    run = next(iter(pi_examples.values()))
    code, rows = cli("status", "--pi-home", str(run.agent_dir))
    assert code == 0, rows[-1]
    for name, run in pi_examples.items():
        for sid in run.session_ids:
            row = session_row(rows, sid)
            if run.truth.get("killed"):  # SIGKILLed while its bash tool ran `sleep 300`
                assert (row["verdict"], row["settled"]) == ("stale-dead", "mid-tool"), row["reason"]
                assert [x["name"] for x in surface(row, "session file")["pending"]] == ["bash"]
            else:
                assert (row["verdict"], row["turn_ended"]) == ("idle-eot", True), (name, row["reason"])
            assert surface(row, "processes")["pids"] == [] and row["owner_ended"] is True
    code, rows = cli("agents", "--pi-home", str(run.agent_dir))
    assert code == 0 and [r for r in rows if r["kind"] == "agent"] == [] and rows[-1]["agents"] == 0
    (why,) = rows[-1]["no_subagents"]
    assert why["provider"] == "pi" and 'its README says "No sub-agents."' in why["why"]


def test_pi_whoami_cannot_tell_from_the_marker_its_bash_tool_inherits(pi_examples, tmp_path):
    """The environment is what the real client's bash tool printed (``printenv PI_CODING_AGENT`` in the
    sample's shell_write run): pi's marker and no session id, so whoami claims nothing."""
    run = pi_examples["shell_write"]
    call = next(c for c in run.truth["tool_calls"] if c["input"].get("command") == "printenv PI_CODING_AGENT")
    recs = [json.loads(x) for p in run.agent_dir.glob("sessions/*shell_write*/*.jsonl") for x in p.read_text().splitlines()]
    res = next(r["message"] for r in recs if r.get("type") == "message" and r["message"].get("toolCallId") == call["id"])
    value = res["content"][0]["text"].strip()
    r = subprocess.run(CLI + ["whoami", "--pi-home", str(run.agent_dir), "--format", "json"], capture_output=True,
                       text=True, cwd=REPO, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path),
                                                 "PI_CODING_AGENT": value}, timeout=120)
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    w = next(x for x in rows if x["kind"] == "whoami")
    assert r.returncode == 1 and (w["session_id"], rows[-1]["known"]) == (None, False)
    (claim,) = w["claims"]
    assert (claim["provider"], claim["source"], claim["session_id"]) == ("pi", "PI_CODING_AGENT", None)
    assert claim["note"].startswith("cannot tell: $PI_CODING_AGENT=true")


def test_copilot_status_of_every_sample_scenario_and_agents_joined_by_subagent_started(copilot_examples):
    """On the committed GitHub Copilot CLI 1.0.102 sample (made by the real client, tests/realclient/copilot)."""
    run = next(iter(copilot_examples.values()))
    code, rows = cli("status", "--copilot-home", str(run.home))
    assert code == 0, rows[-1]
    for name, run in copilot_examples.items():
        row = session_row(rows, run.session_id)
        lock = surface(row, "in-use lock")
        if run.truth["killed"]:  # SIGKILLed while its bash tool ran the slow command: its lock left behind
            assert (row["verdict"], row["settled"]) == ("stale-dead", "mid-tool"), row["reason"]
            assert lock["pids"] == [] and len(lock["recorded"]) == 1
            assert [x["name"] for x in surface(row, "events")["pending"]] == ["bash"]
        else:  # a normal exit: session.shutdown, no lock
            assert (row["verdict"], row["turn_ended"]) == ("idle-eot", True), (name, row["reason"])
            assert surface(row, "events")["value"].startswith("shutdown") and lock["recorded"] == []
    run = copilot_examples["subagent"]
    task = next(c for c in run.truth["tool_calls"] if c["name"] == "task")
    code, rows = cli("agents", run.session_id, "--copilot-home", str(run.home))
    (a,) = [r for r in rows if r["kind"] == "agent"]
    assert code == 0 and a["parent_session_id"] == run.session_id
    assert (a["join"], a["spawn"]["tool_name"], a["spawn"]["tool_use_id"]) == ("subagent.started toolCallId", "task",
                                                                               task["id"])
    assert (a["agent_type"], a["description"]) == (task["input"]["agent_type"], task["input"]["description"])
    assert (a["status"], a["returned"]) == ("completed", "sub.txt written.")


def test_kilo_status_of_every_sample_scenario_and_agents_joined_by_the_task_part(kilo_examples):
    """On the committed Kilo Code 7.7.7 sample (made by the real client, tests/realclient/kilo): opencode's
    live state under Kilo Code's names."""
    run = next(iter(kilo_examples.values()))
    code, rows = cli("status", "--kilo-home", str(run.data_dir))
    assert code == 0, rows[-1]
    for name, run in kilo_examples.items():
        row = session_row(rows, run.session_id)
        assert row["provider"] == "kilo-code"
        if name == "killed_tool":  # SIGKILLed while its bash call ran `sleep 60`
            assert (row["verdict"], row["settled"]) == ("stale-dead", "mid-tool"), row["reason"]
            assert [t["tool"] for t in surface(row, "messages")["open_tools"]] == ["bash"]
            assert "no Kilo Code process holds the database open" in row["reason"]
        elif name == "killed":  # SIGKILLed mid-stream
            assert (row["verdict"], row["settled"]) == ("stale-dead", "mid-turn"), row["reason"]
        else:
            assert row["verdict"] == "idle-eot", (name, row["reason"])
    run = kilo_examples["subagent"]
    task = next(c for s in run.truth["served_steps"] for c in s["calls"] if c["name"] == "task")
    code, rows = cli("agents", run.session_id, "--kilo-home", str(run.data_dir))
    (a,) = [r for r in rows if r["kind"] == "agent"]
    assert code == 0 and (a["provider"], a["parent_session_id"]) == ("kilo-code", run.session_id)
    assert (a["join"], a["spawn"]["tool_use_id"]) == ("task part metadata.sessionId", task["id"])
    assert (a["agent_type"], a["description"]) == (task["arguments"]["subagent_type"], task["arguments"]["description"])
    assert a["status"] == "completed" and a["returned"]


def test_copilot_waiting_on_a_tool_approval_over_acp(tmp_path):
    """The real client run as an ACP server (``copilot --acp``, no --allow-all-tools) asks its ACP client (the
    harness) to approve a bash call and waits: its log holds ``permission.requested`` and no
    ``permission.completed``, so the session is ``waiting`` (on a human), ``wait --for human`` holds at once and
    ``wait --for stop`` does not; once the harness approves, the call runs and the turn goes on."""
    p = COPILOT.start("live_approval", tmp_path)
    s = tmp_path / "live_approval"
    home = s / COPILOT.home
    try:
        until(lambda: (s / "acp-permissions.jsonl").exists(), 240, "copilot: the approval to be asked")
        (asked,) = [json.loads(x) for x in (s / "acp-permissions.jsonl").read_text().splitlines()]
        pid = int((s / "client-P1.pid").read_text())
        sid = the_session(COPILOT, home)
        assert asked["sessionId"] == sid

        def approval() -> dict | None:
            row = session_row(cli("status", sid, COPILOT.flag, str(home))[1], sid)
            return row if surface(row, "events")["approvals"] else None

        row = until(approval, 60, "copilot: permission.requested on disk")
        assert row["verdict"] == "waiting" and row["turn_ended"] is False, row["reason"]
        (a,) = surface(row, "events")["approvals"]
        assert (a["kind"], a["tool_call_id"]) == ("shell", asked["toolCall"]["toolCallId"])
        assert surface(row, "in-use lock")["pids"] == [pid]
        assert not (work_dir(s) / "approved.txt").exists()  # the call waits for its approval
        code, rows = cli("wait", sid, "--for", "human", "--timeout", "30", COPILOT.flag, str(home))
        assert code == 0 and rows[-1]["satisfied"] is True and session_row(rows, sid)["verdict"] == "waiting"
        code, rows = cli("wait", sid, "--for", "stop", "--timeout", "1", COPILOT.flag, str(home))
        assert code == 124 and rows[-1]["timed_out"] is True

        gate.release(s, "approve")
        until(lambda: held(s), 120, "copilot: the gated reply to be requested (the approved call ran)")
        row = session_row(cli("status", sid, COPILOT.flag, str(home))[1], sid)
        assert row["verdict"] == "running" and surface(row, "events")["approvals"] == [], row["reason"]
        assert (work_dir(s) / "approved.txt").read_text() == "approved\n"
        gate.release(s, "reply")
        p.wait(timeout=240)
        assert p.returncode == 0, (tmp_path / "live_approval.runner.log").read_text()[-3000:]
        row = session_row(cli("status", sid, COPILOT.flag, str(home))[1], sid)
        assert row["verdict"] == "idle-eot", row["reason"]
    finally:
        netns.stop_group(p)


@pytest.mark.parametrize("c", [OPENCODE, KILO], ids=lambda c: c.name)
def test_a_question_to_the_user_is_waiting_then_wait_stop_returns_once_answered(c, tmp_path):
    """The real client run as a server (``serve``, driven over its HTTP API: ``run`` denies the question tool)
    calls ``question``; its tool part stays ``running`` until the harness answers (gate ``answer``): the
    session is ``waiting`` (on a human), ``wait --for human`` holds at once, and ``wait --for stop``, started
    before the answer, returns once the client has the answer and ends the turn."""
    p = c.start("live_question", tmp_path)
    s = tmp_path / "live_question"
    home = s / c.home
    try:
        until(lambda: (s / "questions.json").exists(), 240, f"{c.name}: the question to be asked")
        (asked,) = json.loads((s / "questions.json").read_text())
        pid = int((s / "client-P1.pid").read_text())
        sid = the_session(c, home)
        assert asked["sessionID"] == sid
        code, rows = cli("status", sid, c.flag, str(home))
        row = session_row(rows, sid)
        assert code == 0 and row["verdict"] == "waiting" and row["turn_ended"] is False, row["reason"]
        assert row["reason"].startswith("blocked on a human: question running")
        (t,) = surface(row, "messages")["open_tools"]
        assert (t["tool"], t["status"], t["call_id"]) == ("question", "running", asked["tool"]["callID"])
        assert surface(row, "processes")["pids"] == [pid]
        code, rows = cli("wait", sid, "--for", "human", "--timeout", "30", c.flag, str(home))
        assert code == 0 and rows[-1]["satisfied"] is True
        wt = subprocess.Popen(CLI + ["wait", sid, "--for", "stop", "--timeout", "200", c.flag, str(home),
                                     "--format", "json"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        try:
            line = wt.stderr.readline()
            assert "wait: ready: baselines taken" in line, line
            assert wt.poll() is None  # the question is open: the wait waits
            gate.release(s, "answer")
            out, err = wt.communicate(timeout=240)
        finally:
            if wt.poll() is None:
                wt.kill()
        rows = [json.loads(x) for x in out.splitlines()]
        assert wt.returncode == 0, (out[-2000:], err[-2000:])
        assert rows[-1]["satisfied"] is True and session_row(rows, sid)["verdict"] == "idle-eot"
        p.wait(timeout=240)
        assert p.returncode == 0, (tmp_path / "live_question.runner.log").read_text()[-3000:]
    finally:
        netns.stop_group(p)


def test_copilot_a_left_behind_lock_whose_pid_another_program_took_is_not_a_live_owner(copilot_examples, tmp_path):
    """The killed sample (the real client SIGKILLed mid-call left its inuse.<pid>.lock behind), with ONE hand-made
    change no client can be made to produce on demand: the lock renamed to the pid of a live process that is not
    Copilot (a `sleep` this test starts), as when the dead client's pid is reused. The owner is not alive: the
    session is still stale-dead, the pid listed as reused."""
    import shutil

    run = copilot_examples["killed"]
    home = tmp_path / "copilot-home"
    shutil.copytree(run.home / "session-state" / run.session_id, home / "session-state" / run.session_id)
    sdir = home / "session-state" / run.session_id
    sleeper = subprocess.Popen(["sleep", "120"])
    try:
        (lock,) = sdir.glob("inuse.*.lock")
        lock.rename(sdir / f"inuse.{sleeper.pid}.lock")
        code, rows = cli("status", run.session_id, "--copilot-home", str(home))
        row = session_row(rows, run.session_id)
        assert code == 0 and (row["verdict"], row["settled"]) == ("stale-dead", "mid-tool"), row["reason"]
        lock_row = surface(row, "in-use lock")
        assert (lock_row["pids"], lock_row["recorded"], lock_row["reused"]) == ([], [sleeper.pid], [sleeper.pid])
        assert row["owner_ended"] is True
    finally:
        sleeper.kill()
        sleeper.wait()
