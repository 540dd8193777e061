"""Run an opencode scenario with the real client against the Chat Completions mock, offline.

Outer: :func:`run_scenario` (or :func:`start_scenario`, which does not wait) re-executes this module
under ``unshare -n`` (a fresh network namespace with only loopback, brought up with
``ip link set lo up``). Inner: the mock runs in a thread on 127.0.0.1 and each prompt is one
``env -i <only the named variables> opencode run --print-logs --format json [--continue] PROMPT``.
Layout for root R and scenario S::

    R/S/work/                     the client's cwd (a git repo when the scenario says so)
    R/S/home/                     HOME
    R/S/xdg/{config,data,cache,state}/   XDG_*_HOME; the data dir is R/S/xdg/data/opencode
    R/S/mock-requests.jsonl       every request the mock saw
    R/S/client-P<n>.{stdout.jsonl,log}   the client's JSON events and its --print-logs output
    R/S/ground-truth.json         what the script implies + what the run did

CLI: ``python -m tests.realclient.opencode.runner [SCENARIO] [--root R] [--version V]``
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from . import client as clientmod
from .. import extra as _extra
from ..common import host, netns, wait
from ..common.chat import call_id
from ..common.truth import sha256, subst as _subst
from .mock_chat import MODEL, MockChat
from .scenarios import ALL, Scenario

FAKE_KEY = "sk-mock-0000"
SUMMARY = "Summary: the user asked for a file; it was written."
DISABLE = ("AUTOUPDATE", "MODELS_FETCH", "DEFAULT_PLUGINS", "LSP_DOWNLOAD", "SHARE", "CLAUDE_CODE",
           "EXTERNAL_SKILLS")


@dataclass(frozen=True)
class Flavor:
    """A client built from opencode's code that this runner drives the same way (opencode itself; Kilo
    Code, tests/realclient/kilo/): the module re-run under ``unshare -n``, its client module (install,
    locate, version), its XDG app dir and config file name, the ``*_DISABLE_*`` variables that keep it
    from reaching for the network, and its scenario library."""

    label: str
    module: str
    clientmod: ModuleType
    app: str
    config_name: str
    env_prefix: str
    disable: tuple[str, ...]
    scenarios: dict
    extra_env: dict = field(default_factory=dict)


OPENCODE = Flavor("opencode", "tests.realclient.opencode.runner", clientmod, "opencode", "opencode.json",
                  "OPENCODE_DISABLE_", DISABLE, ALL)


# ============================================================================ outer

def launch(name: str, root: Path, version: str | None = None,
           shared_data: Path | None = None, flavor: Flavor = OPENCODE) -> tuple[list[str], dict]:
    exe = host.ensure(flavor.clientmod, version or flavor.clientmod.PINNED_VERSION)
    return netns.inner_command(flavor.module, name, root, exe,
                               *(["--shared-data", str(shared_data)] if shared_data is not None else []))


def run_scenario(name: str, root: Path, version: str | None = None, timeout: float = 300,
                 shared_data: Path | None = None, flavor: Flavor = OPENCODE) -> dict:
    """Run one scenario; ``shared_data`` makes XDG_DATA_HOME a dir shared with other scenarios (one
    opencode.db holding several sessions, as a real user's does; run such scenarios one at a time)."""
    cmd, env = launch(name, root, version, shared_data, flavor)
    netns.run_inner(cmd, env, Path(root) / f"{_extra.short(name)}.runner.log", timeout,
                    f"{flavor.label} scenario {name}")
    return json.loads((Path(root) / _extra.short(name) / "ground-truth.json").read_text())


def start_scenario(name: str, root: Path, version: str | None = None, flavor: Flavor = OPENCODE) -> subprocess.Popen:
    """Like :func:`run_scenario` but returns the running runner (its own process group) at once."""
    cmd, env = launch(name, root, version, flavor=flavor)
    return netns.start_inner(cmd, env, Path(root) / f"{_extra.short(name)}.runner.log")


# ============================================================================ inner

def data_dir(s_dir: Path, shared: Path | None = None, flavor: Flavor = OPENCODE) -> Path:
    return (shared or s_dir / "xdg" / "data") / flavor.app


def client_env(s_dir: Path, shared: Path | None = None, flavor: Flavor = OPENCODE) -> dict:
    x = s_dir / "xdg"
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(s_dir / "home"),
           "XDG_CONFIG_HOME": str(x / "config"), "XDG_DATA_HOME": str(shared or x / "data"),
           "XDG_CACHE_HOME": str(x / "cache"), "XDG_STATE_HOME": str(x / "state"),
           "TERM": "dumb", "NO_COLOR": "1", "LANG": "C.UTF-8"}
    env.update({f"{flavor.env_prefix}{k}": "1" for k in flavor.disable})
    return env | flavor.extra_env


def write_config(s_dir: Path, base_url: str, limit: dict | None = None, flavor: Flavor = OPENCODE,
                 model_extra: dict | None = None) -> None:
    cfg = {"$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
           "model": f"mock/{MODEL}", "small_model": f"mock/{MODEL}",
           "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny"},
           "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                                 "options": {"baseURL": base_url, "apiKey": FAKE_KEY},
                                 "models": {MODEL: {"name": "Mock Model", "tool_call": True, "reasoning": True,
                                                    "limit": limit or {"context": 128000, "output": 8192},
                                                    **(model_extra or {})}}}}}
    d = s_dir / "xdg" / "config" / flavor.app
    d.mkdir(parents=True, exist_ok=True)
    (d / flavor.config_name).write_text(json.dumps(cfg, indent=2))


def _git_init(work: Path) -> str:
    genv = {"PATH": "/usr/bin:/bin", "HOME": str(work.parent / "home"), "GIT_AUTHOR_NAME": "ssift",
            "GIT_AUTHOR_EMAIL": "ssift@example.invalid", "GIT_COMMITTER_NAME": "ssift",
            "GIT_COMMITTER_EMAIL": "ssift@example.invalid", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    (work / "README.md").write_text("scenario repo\n")
    for c in (["git", "init", "-q", "-b", "main"], ["git", "add", "README.md"],
              ["git", "commit", "-q", "-m", "init"]):
        subprocess.run(c, cwd=work, env=genv, check=True)
    return subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=work, env=genv, check=True,
                          capture_output=True, text=True).stdout.strip()


def _events(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if isinstance(o, dict):
            out.append(o)
    return out


def _session_ids(events: list[dict]) -> list[str]:
    seen: list[str] = []
    for e in events:
        sid = e.get("sessionID") or (e.get("part") or {}).get("sessionID") if isinstance(e.get("part"), dict) \
            else e.get("sessionID")
        if isinstance(sid, str) and sid not in seen:
            seen.append(sid)
    return seen


def _tool_running(data: Path, cid: str) -> bool:
    """Whether the client's data dir holds tool call ``cid``'s part in state ``running`` (its database,
    read only, or the JSON tree of the older releases). The kill mid-tool waits for it: a fixed pause
    raced the client's own write on a loaded machine (Kilo Code 7.7.9 under the test suite: no part)."""
    import sqlite3

    for db in sorted(data.glob("*.db")):
        try:
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
            try:
                if con.execute("select 1 from part where json_extract(data, '$.callID') = ? and "
                               "json_extract(data, '$.state.status') = 'running'", (cid,)).fetchone():
                    return True
            finally:
                con.close()
        except sqlite3.Error:
            pass  # not created yet, or busy: looked at again
    for f in (data / "storage" / "part").glob("*/*.json"):
        try:
            d = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if d.get("callID") == cid and (d.get("state") or {}).get("status") == "running":
            return True
    return False


def inside(name: str, root: Path, exe: str, shared: Path | None = None, flavor: Flavor = OPENCODE) -> None:
    netns.loopback_up()
    sc: Scenario = _extra.lookup(name, flavor.scenarios)
    s_dir = root / _extra.short(name)
    if s_dir.exists():
        subprocess.run(["rm", "-rf", str(s_dir)], check=True)
    work = s_dir / "work"
    for d in (work, s_dir / "home", *(s_dir / "xdg" / k for k in ("config", "data", "cache", "state"))):
        d.mkdir(parents=True)
    for rel, data in sc.setup_files.items():
        if isinstance(data, bytes):
            (work / rel).write_bytes(data)
        else:
            (work / rel).write_text(data)
    root_commit = _git_init(work) if sc.git else None
    convs = [c for c in sc.conversations()]
    for c in convs:
        for st in c.steps:
            st.calls = [(_subst(n, str(work)), _subst(a, str(work))) for n, a in st.calls]
    t0 = time.time()
    runs = []
    env = client_env(s_dir, shared, flavor) | sc.extra_env
    env_i = netns.env_i(dict(sorted(env.items())))
    with MockChat(convs, sc.name, sc.title, str(s_dir / "mock-requests.jsonl"), summary=SUMMARY) as mock:
        write_config(s_dir, mock.base_url, sc.model_limit, flavor, sc.model_extra)
        if sc.serve:
            runs.append(run_serve(sc, s_dir, work, env_i, exe, mock))
        for i, p in enumerate([] if sc.serve else sc.prompts):
            argv = [exe, "run", "--print-logs", "--format", "json"] + (["--continue"] if p.how == "continue" else [])
            argv.append(p.text)
            for f in p.files:  # after the message: `-f` is an array option and would take it as a file
                argv += ["-f", f]
            out = open(s_dir / f"client-P{i + 1}.stdout.jsonl", "w")
            err = open(s_dir / f"client-P{i + 1}.log", "w")
            start = time.time()
            proc = subprocess.Popen([*env_i, *argv], cwd=work, stdout=out, stderr=err,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            # `env -i` execs the client: this pid is the client's (and its process group's) for a live test
            (s_dir / f"client-P{i + 1}.pid").write_text(f"{proc.pid}\n")
            killed = False
            if sc.kill_after and sc.kill_after[0] == i:
                ev = mock.served_event(f"P{i + 1}", sc.kill_after[1])
                if not ev.wait(120):
                    raise RuntimeError("the step to kill at was never served")
                kstep = convs[i].steps[sc.kill_after[1]]
                if kstep.calls:  # killed mid-tool: once the client has recorded its last call running
                    cid = call_id(mock.ns, convs[i].name, sc.kill_after[1], len(kstep.calls) - 1)
                    wait.until(lambda: _tool_running(data_dir(s_dir, shared, flavor), cid), 120,
                               f"the client's record of tool call {cid} running")
                else:
                    time.sleep(1.5)  # the first chunks have landed; the stream is held open
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
            try:
                rc = proc.wait(timeout=180)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                rc = proc.wait()
                killed = True
            out.close()
            err.close()
            runs.append({"prompt": i + 1, "argv": argv[1:], "rc": rc, "killed": killed,
                         "seconds": round(time.time() - start, 3)})
        served = list(mock.served)
    truth = ground_truth(sc, s_dir, work, served, runs, root_commit, time.time() - t0, flavor)
    truth["data_dir"] = str(data_dir(s_dir, shared, flavor))
    netns.finish(s_dir, truth)  # ends, by pid, what a killed client left running (a `sleep 60`), and writes it


def run_serve(sc: Scenario, s_dir: Path, work: Path, env_i: list[str], exe: str, mock: MockChat) -> dict:
    """``opencode serve`` on 127.0.0.1 driven over its HTTP API (see ``Scenario.serve``)."""
    import socket
    import urllib.request

    from ..common import gate

    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        port = so.getsockname()[1]
    base = f"http://127.0.0.1:{port}"

    def http(method: str, path: str, body: dict | None = None):
        req = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            raw = r.read()
        return json.loads(raw) if raw.strip() else None

    argv = [exe, "serve", "--print-logs", "--hostname", "127.0.0.1", "--port", str(port)]
    err = open(s_dir / "client-P1.log", "w")
    start = time.time()
    proc = subprocess.Popen([*env_i, *argv], cwd=work, stdout=err, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    (s_dir / "client-P1.pid").write_text(f"{proc.pid}\n")
    try:
        for _ in range(600):
            try:
                http("GET", "/session")
                break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(f"opencode serve exited {proc.returncode}")
                time.sleep(0.1)
        sid = http("POST", "/session", {})["id"]
        http("POST", f"/session/{sid}/prompt_async", {"parts": [{"type": "text", "text": sc.prompts[0].text}]})
        asked: list = []
        for _ in range(1200):
            asked = http("GET", "/question") or []
            if asked or mock.served_event("P1", len(sc.prompts[0].steps) - 1).is_set():
                break
            time.sleep(0.1)
        (s_dir / "questions.json").write_text(json.dumps(asked, indent=1))
        for q in asked:
            gate.hold(s_dir, "answer")
            http("POST", f"/question/{q['id']}/reply",
                 {"answers": [[x["options"][0]["label"]] for x in q["questions"]]})
        if not mock.served_event("P1", len(sc.prompts[0].steps) - 1).wait(120):
            raise RuntimeError("the last step was never served")
        for _ in range(300):  # the turn is written once the reply is in: until the session is idle
            if (http("GET", "/session/status") or {}).get(sid, {"type": "idle"}).get("type") == "idle":
                break
            time.sleep(0.1)
    finally:
        proc.terminate()
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
        err.close()
    return {"prompt": 1, "argv": argv[1:], "rc": rc, "killed": False, "session_id": sid,
            "seconds": round(time.time() - start, 3)}


def _apply(files: dict[str, bytes], name: str, args: dict, work: str) -> None:
    p = args.get("filePath", "")
    if not p.startswith(work + "/"):
        return
    rel = p[len(work) + 1:]
    if name == "write":
        files[rel] = args["content"].encode()
    elif name == "edit":
        old = files.get(rel, b"").decode()
        files[rel] = old.replace(args["oldString"], args["newString"], 1).encode()


def ground_truth(sc: Scenario, s_dir: Path, work: Path, served: list[dict], runs: list[dict],
                 root_commit: str | None, secs: float, flavor: Flavor = OPENCODE) -> dict:
    w = str(work)
    events = []
    for i in range(len(sc.prompts)):
        f = s_dir / f"client-P{i + 1}.stdout.jsonl"
        events += _events(f) if f.exists() else []
    sids = _session_ids(events)
    script_calls = []
    expected: dict[str, bytes] = {k: v if isinstance(v, bytes) else v.encode() for k, v in sc.setup_files.items()}
    if sc.git:
        expected["README.md"] = b"scenario repo\n"
    for s in served:
        for c in s["calls"]:
            key = f"{s['conversation']}/{s['step']}/{len(script_calls)}"
            ckey = f"{s['conversation']}/{s['step']}/{s['calls'].index(c)}"
            script_calls.append({"conversation": s["conversation"], "step": s["step"], "id": c["id"],
                                 "name": c["name"], "input": c["arguments"],
                                 "expect_exit": sc.expect_exit.get(ckey, 0) if c["name"] == "bash" else None})
            _apply(expected, c["name"], c["arguments"], w)
            del key
    disk = {}
    for f in sorted(work.rglob("*")):
        if f.is_file() and ".git" not in f.relative_to(work).parts:
            disk[str(f.relative_to(work))] = {"sha256": sha256(f.read_bytes()), "size": f.stat().st_size}
    return {
        "scenario": sc.name,
        "client": flavor.label,
        "client_version": flavor.clientmod.client_version(Path(sys.argv[sys.argv.index("--exe") + 1])),
        "notes": sc.notes,
        "cwd": w,
        "data_dir": str(data_dir(s_dir, flavor=flavor)),
        "git_root_commit": root_commit,
        "session_ids_from_client_events": sids,
        "prompts": [{"text": p.text, "how": p.how, "marker": sc.marker(i)} for i, p in enumerate(sc.prompts)],
        "subagent_markers": sorted(sc.subagents),
        "summary_text": SUMMARY,
        "served_steps": served,
        "tool_calls": script_calls,
        "expected_files": {k: {"sha256": sha256(v), "size": len(v), "content": v.decode("utf-8", "replace")}
                           for k, v in sorted(expected.items())},
        "disk_files": disk,
        "runs": runs,
        "killed": any(r["killed"] for r in runs),
        "quirks": {"prompt_quoted": f"{flavor.label} run wraps a message argument that contains a space in literal"
                                    " double quotes: the stored user text part is '\"' + prompt + '\"'"},
        "seconds": round(secs, 1),
    }


def main(argv=None, flavor: Flavor = OPENCODE) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?")
    ap.add_argument("--inside")
    ap.add_argument("--root", default=None)
    ap.add_argument("--exe")
    ap.add_argument("--shared-data")
    ap.add_argument("--version", default=flavor.clientmod.PINNED_VERSION)
    a = ap.parse_args(argv)
    if a.inside:
        inside(a.inside, Path(a.root), a.exe, Path(a.shared_data) if a.shared_data else None, flavor)
        return 0
    if not a.root:
        ap.error("--root is required (a scratch dir; never inside the clone)")
    for n in ([a.scenario] if a.scenario else list(flavor.scenarios)):
        gt = run_scenario(n, Path(a.root), a.version, flavor=flavor)
        print(n, gt["session_ids_from_client_events"], gt["seconds"], "s", [r["rc"] for r in gt["runs"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
