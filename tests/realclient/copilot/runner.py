"""Run a GitHub Copilot CLI scenario with the real client against the Chat Completions mock, offline.

Outer: :func:`run_scenario` re-executes this module under ``unshare -n`` (a fresh network namespace with
only loopback, brought up with ``ip link set lo up``). Inner: the mock runs in a thread on 127.0.0.1 and
each prompt is one ``env -i <only the named variables> copilot -p PROMPT --allow-all-tools [--continue |
--resume ID]`` in "bring your own key" mode (``COPILOT_PROVIDER_BASE_URL`` = the mock,
``COPILOT_OFFLINE=true``: no GitHub sign-in, no telemetry, no update check). Layout for root R, scenario S::

    R/S/work/                      the client's cwd
    R/S/home/                      HOME; the client's data is R/S/home/.copilot (its default, ~/.copilot)
    R/S/tmp/                       TMPDIR
    R/S/xdg/{config,data,cache,state}/   XDG_*_HOME
    R/S/mock-requests.jsonl        every request the mock saw
    R/S/client-P<n>.{stdout,log}   the client's output
    R/S/live-snapshot/             a copy of R/S/home/.copilot taken while the client ran (scenarios that ask)
    R/S/ground-truth.json          what the script implies + what the run did

The bundle the binary unpacks on first start lives in the shared ``COPILOT_PKG_CACHE_HOME``
(client.PKG_CACHE), never under HOME.

CLI: ``python -m tests.realclient.copilot.runner [SCENARIO] [--root R] [--version V]``
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import client as clientmod
from .. import extra as _extra
from ..common import host, netns
from ..common.truth import sha256, subst as _subst
from .mock import MODEL, CopilotMock
from .scenarios import ALL, Scenario

FAKE_KEY = "sk-mock-0000"


# ============================================================================ outer

def launch(name: str, root: Path, version: str = clientmod.PINNED_VERSION) -> tuple[list[str], dict]:
    exe = host.ensure(clientmod, version)
    return netns.inner_command("tests.realclient.copilot.runner", name, root, exe,
                               "--pkg-cache", str(clientmod.PKG_CACHE))


def run_scenario(name: str, root: Path, version: str = clientmod.PINNED_VERSION, timeout: float = 400) -> dict:
    cmd, env = launch(name, root, version)
    netns.run_inner(cmd, env, Path(root) / f"{_extra.short(name)}.runner.log", timeout, f"copilot scenario {name}")
    return json.loads((Path(root) / _extra.short(name) / "ground-truth.json").read_text())


def start_scenario(name: str, root: Path, version: str = clientmod.PINNED_VERSION) -> subprocess.Popen:
    """Like :func:`run_scenario` but returns the running runner (its own process group) at once: a live
    test watches the client while it runs (the pid namespace is shared); end it with ``netns.stop_group``."""
    cmd, env = launch(name, root, version)
    return netns.start_inner(cmd, env, Path(root) / f"{_extra.short(name)}.runner.log")


# ============================================================================ inner

def client_env(s_dir: Path, base_url: str, pkg_cache: str) -> dict:
    x = s_dir / "xdg"
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(s_dir / "home"), "TMPDIR": str(s_dir / "tmp"),
            "XDG_CONFIG_HOME": str(x / "config"), "XDG_DATA_HOME": str(x / "data"),
            "XDG_CACHE_HOME": str(x / "cache"), "XDG_STATE_HOME": str(x / "state"),
            "TERM": "dumb", "NO_COLOR": "1", "LANG": "C.UTF-8",
            "COPILOT_PROVIDER_BASE_URL": base_url, "COPILOT_PROVIDER_API_KEY": FAKE_KEY, "COPILOT_MODEL": MODEL,
            "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false", "COPILOT_PKG_CACHE_HOME": pkg_cache}


def session_dirs(copilot_home: Path) -> list[str]:
    d = copilot_home / "session-state"
    return sorted(p.name for p in d.iterdir() if p.is_dir() and not p.name.startswith(".")) if d.is_dir() else []


def inside(name: str, root: Path, exe: str, pkg_cache: str) -> None:
    netns.loopback_up()
    sc: Scenario = _extra.lookup(name, ALL)
    s_dir = root / _extra.short(name)
    if s_dir.exists():
        subprocess.run(["rm", "-rf", str(s_dir)], check=True)
    work = s_dir / "work"
    for d in (work, s_dir / "home", s_dir / "tmp", *(s_dir / "xdg" / k for k in ("config", "data", "cache", "state"))):
        d.mkdir(parents=True)
    for rel, data in sc.setup_files.items():
        if isinstance(data, bytes):  # an image the prompt attaches or a tool views
            (work / rel).write_bytes(data)
        else:
            (work / rel).write_text(data)
    convs = sc.conversations()
    for c in convs:
        for st in c.steps:
            st.calls = [(_subst(n, str(work)), _subst(a, str(work))) for n, a in st.calls]
    copilot_home = s_dir / "home" / ".copilot"
    t0 = time.time()
    runs = []
    dump = str(s_dir / "mock-bodies") if os.environ.get("SSIFT_MOCK_DUMP") else None
    snapshot = None
    with CopilotMock(convs, sc.name, sc.summary, str(s_dir / "mock-requests.jsonl"), dump_dir=dump) as mock:
        env = client_env(s_dir, mock.base_url, pkg_cache) | sc.extra_env
        env_i = netns.env_i(dict(sorted(env.items())))
        for i, p in enumerate([] if sc.acp else sc.prompts):
            argv = [exe, "-p", p.text, "--allow-all-tools"]
            if p.how == "continue":
                argv.append("--continue")
            elif p.how == "resume":
                ids = session_dirs(copilot_home)
                if len(ids) != 1:
                    raise RuntimeError(f"resume wants exactly one session on disk, found {ids}")
                argv += ["--resume", ids[0]]
            out = open(s_dir / f"client-P{i + 1}.stdout", "w")
            err = open(s_dir / f"client-P{i + 1}.log", "w")
            start = time.time()
            proc = subprocess.Popen([*env_i, *argv], cwd=work, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
            # `env -i` execs the client: this pid is the client's (and its process group's) for a live test
            (s_dir / f"client-P{i + 1}.pid").write_text(f"{proc.pid}\n")
            killed = False
            if sc.snapshot_at and sc.snapshot_at[0] == i:
                _, conv, step, secs = sc.snapshot_at
                if not mock.served_event(conv, step).wait(120):
                    raise RuntimeError("the step to snapshot at was never served")
                time.sleep(secs)
                shutil.copytree(copilot_home, s_dir / "live-snapshot", symlinks=True)
                snapshot = {"prompt": i + 1, "after_step": f"{conv}/{step}", "client_pid": proc.pid,
                            "files": sorted(str(f.relative_to(s_dir / "live-snapshot"))
                                            for f in (s_dir / "live-snapshot").rglob("*") if f.is_file())}
            if sc.kill_at and sc.kill_at[0] == i:
                _, conv, step, secs = sc.kill_at
                if not mock.served_event(conv, step).wait(120):
                    raise RuntimeError("the step to kill at was never served")
                time.sleep(secs)
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
            try:
                rc = proc.wait(timeout=240)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                rc = proc.wait()
                killed = True
            out.close()
            err.close()
            runs.append({"prompt": i + 1, "argv": argv[1:], "rc": rc, "killed": killed, "pid": proc.pid,
                         "seconds": round(time.time() - start, 3)})
        if sc.acp:
            runs.append(run_acp(sc, s_dir, work, env_i, exe))
        served = list(mock.served)
    truth = ground_truth(sc, s_dir, work, copilot_home, served, runs, time.time() - t0, exe)
    truth["live_snapshot"] = snapshot
    netns.finish(s_dir, truth)


def run_acp(sc: Scenario, s_dir: Path, work: Path, env_i: list[str], exe: str) -> dict:
    """``copilot --acp`` driven by this harness as its ACP client (JSON-RPC 2.0, one message a line):
    ``initialize``, ``session/new``, one ``session/prompt`` per prompt; a ``session/request_permission``
    the client sends is logged to ``acp-permissions.jsonl`` and answered with its ``allow_once`` option
    once gate ``approve`` is released. stdin is closed at the end (the client then exits)."""
    from ..common import gate

    argv = [exe, "--acp"]
    err = open(s_dir / "client-P1.log", "w")
    log = open(s_dir / "acp-messages.jsonl", "w")
    start = time.time()
    proc = subprocess.Popen([*env_i, *argv], cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                            start_new_session=True)
    (s_dir / "client-P1.pid").write_text(f"{proc.pid}\n")
    assert proc.stdin is not None and proc.stdout is not None
    ids = iter(range(1, 1000))

    def send(obj: dict) -> None:
        log.write(json.dumps({"to": "client", **obj}) + "\n")
        log.flush()
        proc.stdin.write((json.dumps(obj) + "\n").encode())
        proc.stdin.flush()

    def call(method: str, params: dict) -> dict:
        rid = next(ids)
        send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            raw = proc.stdout.readline()
            if not raw:
                raise RuntimeError(f"copilot --acp closed its output awaiting {method}")
            msg = json.loads(raw)
            log.write(json.dumps({"from": "client", **msg}) + "\n")
            log.flush()
            if msg.get("id") == rid and "method" not in msg:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]
            if msg.get("method") == "session/request_permission":
                with open(s_dir / "acp-permissions.jsonl", "a") as fh:
                    fh.write(json.dumps(msg["params"]) + "\n")
                gate.hold(s_dir, "approve")
                opts = msg["params"].get("options", [])
                pick = next((o for o in opts if o.get("kind") == "allow_once"), opts[0])
                send({"jsonrpc": "2.0", "id": msg["id"], "result": {"outcome": {"outcome": "selected",
                                                                                  "optionId": pick["optionId"]}}})
            elif "id" in msg and "method" in msg:  # another request of the client's: not offered
                send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "not offered"}})

    stops = []
    try:
        call("initialize", {"protocolVersion": 1, "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}})
        sid = call("session/new", {"cwd": str(work), "mcpServers": []})["sessionId"]
        for p in sc.prompts:
            blocks: list[dict] = [{"type": "text", "text": p.text}]
            for f in p.images:
                mime = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
                        "webp": "image/webp"}[f.rsplit(".", 1)[-1].lower()]
                blocks.append({"type": "image", "mimeType": mime,
                               "data": base64.b64encode((work / f).read_bytes()).decode()})
            stops.append(call("session/prompt", {"sessionId": sid, "prompt": blocks}).get("stopReason"))
    finally:
        proc.stdin.close()
        try:
            rc = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
        err.close()
        log.close()
    return {"prompt": 1, "argv": argv[1:], "rc": rc, "killed": False, "pid": proc.pid, "acp_stop_reasons": stops,
            "seconds": round(time.time() - start, 3)}


def _apply(files: dict[str, bytes], name: str, args: dict, work: str) -> None:
    p = args.get("path", "")
    if not p.startswith(work + "/"):
        return
    rel = p[len(work) + 1:]
    if name == "create":
        files[rel] = args["file_text"].encode()
    elif name == "edit":
        old = files.get(rel, b"").decode()
        files[rel] = old.replace(args["old_str"], args["new_str"], 1).encode()


def ground_truth(sc: Scenario, s_dir: Path, work: Path, copilot_home: Path, served: list[dict], runs: list[dict],
                 secs: float, exe: str) -> dict:
    w = str(work)
    script_calls = []
    expected: dict[str, bytes] = {k: v if isinstance(v, bytes) else v.encode() for k, v in sc.setup_files.items()}
    for s in served:
        for j, c in enumerate(s["calls"]):
            ckey = f"{s['conversation']}/{s['step']}/{j}"
            script_calls.append({"conversation": s["conversation"], "step": s["step"], "id": c["id"],
                                 "name": c["name"], "input": c["arguments"],
                                 "expect_exit": sc.expect_exit.get(ckey, 0) if c["name"] == "bash" else None})
            _apply(expected, c["name"], c["arguments"], w)
    disk = {}
    for f in sorted(work.rglob("*")):
        if f.is_file():
            disk[str(f.relative_to(work))] = {"sha256": sha256(f.read_bytes()), "size": f.stat().st_size}
    if "shell.txt" in disk:
        expected["shell.txt"] = (work / "shell.txt").read_bytes()
    return {
        "scenario": sc.name,
        "client_version": clientmod.client_version(Path(exe)),
        "notes": sc.notes,
        "cwd": w,
        "copilot_home": str(copilot_home),
        "session_ids_on_disk": session_dirs(copilot_home),
        "prompts": [{"text": p.text, "how": p.how, "marker": sc.marker(i)} for i, p in enumerate(sc.prompts)],
        "subagent_markers": sorted(sc.subagents),
        "summary_text": sc.summary,
        "served_steps": served,
        "tool_calls": script_calls,
        "expected_files": {k: {"sha256": sha256(v), "size": len(v), "content": v.decode("utf-8", "replace")}
                           for k, v in sorted(expected.items())},
        "disk_files": disk,
        "runs": runs,
        "killed": any(r["killed"] for r in runs),
        "extra_env": sc.extra_env,
        "seconds": round(secs, 1),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?")
    ap.add_argument("--inside")
    ap.add_argument("--root", default=None)
    ap.add_argument("--exe")
    ap.add_argument("--pkg-cache")
    ap.add_argument("--version", default=clientmod.PINNED_VERSION)
    a = ap.parse_args(argv)
    if a.inside:
        inside(a.inside, Path(a.root), a.exe, a.pkg_cache)
        return 0
    if not a.root:
        ap.error("--root is required (a scratch dir; never inside the clone)")
    for n in ([a.scenario] if a.scenario else list(ALL)):
        gt = run_scenario(n, Path(a.root), a.version)
        print(n, gt["session_ids_on_disk"], gt["seconds"], "s", [r["rc"] for r in gt["runs"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
