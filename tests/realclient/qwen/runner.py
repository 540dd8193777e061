"""Run a Qwen Code scenario with the real client against the Chat Completions mock, offline.

Outer: :func:`run_scenario` re-executes this module under ``unshare -n`` (a fresh network namespace
with only loopback, brought up with ``ip link set lo up``). Inner: the mock runs in a thread on
127.0.0.1 and each prompt is one ``env -i <only the named variables> node <qwen>/cli-entry.js --yolo
--output-format json [--continue] -p PROMPT`` (``OPENAI_BASE_URL``/``OPENAI_API_KEY``/``OPENAI_MODEL``
name the mock; settings.json selects the ``openai`` auth type). Layout for root R and scenario S::

    R/S/work/                       the client's cwd
    R/S/home/                       HOME; Qwen's dir is R/S/home/.qwen (settings.json,
                                    projects/<cwd, non-alphanumerics as ->/chats/<session id>.jsonl, ...)
    R/S/xdg/{config,data,cache,state}/, R/S/tmp/   XDG_*_HOME and TMPDIR
    R/S/mock-requests.jsonl         every request the mock saw
    R/S/client-P<n>.{stdout.jsonl,log}   the client's JSON events and its stderr
    R/S/ground-truth.json           what the script implies + what the run did

CLI: ``python -m tests.realclient.qwen.runner [SCENARIO] --root R [--version V]``
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import client as clientmod
from .. import extra as _extra
from ..common import host, netns
from ..common.chat import MODEL, ChatMock, SideReply, text_of
from ..common.truth import sha256, subst as _subst
from .scenarios import ALL, Scenario

FAKE_KEY = "sk-mock-0000"


# ============================================================================ outer

def launch(name: str, root: Path, version: str = clientmod.PINNED_VERSION) -> tuple[list[str], dict]:
    exe = host.ensure(clientmod, version)
    return netns.inner_command("tests.realclient.qwen.runner", name, root, exe)


def run_scenario(name: str, root: Path, version: str = clientmod.PINNED_VERSION, timeout: float = 400) -> dict:
    cmd, env = launch(name, root, version)
    netns.run_inner(cmd, env, Path(root) / f"{_extra.short(name)}.runner.log", timeout, f"Qwen Code scenario {name}")
    return json.loads((Path(root) / _extra.short(name) / "ground-truth.json").read_text())


def start_scenario(name: str, root: Path, version: str = clientmod.PINNED_VERSION) -> subprocess.Popen:
    """Like :func:`run_scenario` but returns the running runner (its own process group) at once: a live
    test watches the client while it runs (the pid namespace is shared); end it with ``netns.stop_group``."""
    cmd, env = launch(name, root, version)
    return netns.start_inner(cmd, env, Path(root) / f"{_extra.short(name)}.runner.log")


# ============================================================================ inner

def qwen_dir(s_dir: Path) -> Path:
    return s_dir / "home" / ".qwen"


def client_env(s_dir: Path, base_url: str) -> dict:
    x = s_dir / "xdg"
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(s_dir / "home"),
            "XDG_CONFIG_HOME": str(x / "config"), "XDG_DATA_HOME": str(x / "data"),
            "XDG_CACHE_HOME": str(x / "cache"), "XDG_STATE_HOME": str(x / "state"), "TMPDIR": str(s_dir / "tmp"),
            "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": FAKE_KEY, "OPENAI_MODEL": MODEL,
            "QWEN_USAGE_STATISTICS_ENABLED": "false",
            "TERM": "dumb", "NO_COLOR": "1", "LANG": "C.UTF-8"}


def write_config(s_dir: Path, sc: Scenario) -> None:
    d = qwen_dir(s_dir)
    d.mkdir(parents=True, exist_ok=True)
    settings = {"security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
                "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}
    for k, v in sc.settings.items():
        settings[k] = (settings.get(k) or {}) | v if isinstance(v, dict) else v
    (d / "settings.json").write_text(json.dumps(settings, indent=2))


SUMMARY_ASK = "summarizes a conversation"
"""In the last user message of Qwen's compression request (sent with the tools, for prompt-cache sharing, and
again without them when the first answer holds no ``<state_snapshot>``)."""


def is_summary_request(body: dict) -> bool:
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    return bool(users) and SUMMARY_ASK in text_of(users[-1])


MEMORY_AGENT = "managed memory extraction"
"""In the system prompt of the background agent Qwen starts after a turn to update its managed memory (sent
with a few tools; it writes no session of its own)."""


def is_side_request(body: dict) -> bool:
    system = next((text_of(m) for m in body.get("messages") or [] if m.get("role") == "system"), "")
    return not body.get("tools") or is_summary_request(body) or MEMORY_AGENT in system


def session_files(s_dir: Path) -> list[Path]:
    return sorted((qwen_dir(s_dir) / "projects").glob("*/chats/*.jsonl"))


def inside(name: str, root: Path, exe: str) -> None:
    netns.loopback_up()
    sc: Scenario = _extra.lookup(name, ALL)
    s_dir = root / _extra.short(name)
    if s_dir.exists():
        subprocess.run(["rm", "-rf", str(s_dir)], check=True)
    work = s_dir / "work"
    for d in (work, s_dir / "home", s_dir / "tmp", *(s_dir / "xdg" / k for k in ("config", "data", "cache", "state"))):
        d.mkdir(parents=True)
    for rel, data in sc.setup_files.items():
        (work / rel).write_bytes(data if isinstance(data, bytes) else data.encode())
    convs = sc.conversations()
    for c in convs:
        for st in c.steps:
            st.calls = [(_subst(n, str(work)), _subst(a, str(work))) for n, a in st.calls]
    t0 = time.time()
    runs = []
    side = lambda body, rec: SideReply(  # noqa: E731
        "summary" if is_summary_request(body) else "memory" if MEMORY_AGENT in rec.get("first_system", "")
        else "side", sc.summary,
        {"prompt_tokens": 500, "completion_tokens": 25, "total_tokens": 525})
    dump = str(s_dir / "mock-bodies") if os.environ.get("SSIFT_MOCK_DUMP") else None
    with ChatMock(convs, sc.name, str(s_dir / "mock-requests.jsonl"), side=side, dump_dir=dump,
                  side_when=is_side_request) as mock:
        write_config(s_dir, sc)
        env_i = netns.env_i(dict(sorted(client_env(s_dir, mock.base_url).items())))
        for i, p in enumerate(sc.prompts):
            argv = [exe, "--yolo", "--output-format", "json"] + (["--continue"] if p.how == "continue" else [])
            if p.how == "fork":
                argv += ["--resume", json.loads(session_files(s_dir)[0].read_text().split("\n", 1)[0])["sessionId"],
                         "--fork-session"]
            argv += ["-p", p.text]
            out = open(s_dir / f"client-P{i + 1}.stdout.jsonl", "w")
            err = open(s_dir / f"client-P{i + 1}.log", "w")
            start = time.time()
            proc = subprocess.Popen([*env_i, "node", *argv], cwd=work, stdout=out, stderr=err,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            # `env -i` execs the client: this pid is the client's (and its process group's) for a live test
            (s_dir / f"client-P{i + 1}.pid").write_text(f"{proc.pid}\n")
            killed = False
            if sc.kill_in_tool and sc.kill_in_tool[0] == i:
                flag = work / sc.kill_in_tool[1]
                host.poll(lambda: flag.exists() or proc.poll() is not None, 120, f"{flag} (the tool running)")
                if proc.poll() is None:
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
    truth = ground_truth(sc, s_dir, work, served, runs, time.time() - t0, exe)
    netns.finish(s_dir, truth)


def _apply(files: dict[str, bytes], name: str, args: dict, work: str) -> None:
    p = args.get("file_path", "")
    if not p.startswith(work + "/"):
        return
    rel = p[len(work) + 1:]
    if name == "write_file":
        files[rel] = args["content"].encode()
    elif name == "edit":
        files[rel] = files.get(rel, b"").decode().replace(args["old_string"], args["new_string"], 1).encode()


def _events(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(errors="replace").splitlines() if path.exists() else []:
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if isinstance(o, dict):
            out.append(o)
    return out


def ground_truth(sc: Scenario, s_dir: Path, work: Path, served: list[dict], runs: list[dict], secs: float,
                 exe: str) -> dict:
    w = str(work)
    calls = []
    expected: dict[str, bytes] = {k: v if isinstance(v, bytes) else v.encode() for k, v in sc.setup_files.items()}
    for s in served:
        for k, c in enumerate(s["calls"]):
            ckey = f"{s['conversation']}/{s['step']}/{k}"
            calls.append({"conversation": s["conversation"], "step": s["step"], "id": c["id"], "name": c["name"],
                          "input": c["arguments"],
                          "expect_exit": sc.expect_exit.get(ckey) if c["name"] == "run_shell_command" else None})
            _apply(expected, c["name"], c["arguments"], w)
    disk = {}
    for f in sorted(work.rglob("*")):
        if f.is_file():
            disk[str(f.relative_to(work))] = {"sha256": sha256(f.read_bytes()), "size": f.stat().st_size}
    sessions = []
    for f in session_files(s_dir):
        try:
            head = json.loads(f.read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            head = {}
        sessions.append({"path": str(f), "id": head.get("sessionId"), "lines": len(f.read_text().splitlines())})
    subagents = []
    for f in sorted((qwen_dir(s_dir) / "projects").glob("*/subagents/*/agent-*.jsonl")):
        meta = f.with_name(f.name[:-len(".jsonl")] + ".meta.json")
        m = json.loads(meta.read_text()) if meta.is_file() else {}
        subagents.append({"path": str(f), "agent_id": m.get("agentId"), "parent": f.parent.name,
                          "tool_use_id": m.get("toolUseId"), "status": m.get("status"),
                          "lines": len(f.read_text().splitlines())})
    events = [e.get("type") for i in range(len(sc.prompts)) for e in _events(s_dir / f"client-P{i + 1}.stdout.jsonl")]
    return {
        "scenario": sc.name,
        "client_version": clientmod.client_version(Path(exe)),
        "notes": sc.notes,
        "cwd": w,
        "qwen_dir": str(qwen_dir(s_dir)),
        "sessions": sessions,
        "subagents": subagents,
        "prompts": [{"text": p.text, "how": p.how, "marker": sc.marker(i)} for i, p in enumerate(sc.prompts)],
        "summary_text": sc.summary,
        "served_steps": served,
        "tool_calls": calls,
        "expected_files": {k: {"sha256": sha256(v), "size": len(v), "content": v.decode("utf-8", "replace")}
                           for k, v in sorted(expected.items())},
        "disk_files": disk,
        "runs": runs,
        "killed": any(r["killed"] for r in runs),
        "client_event_types": sorted(set(t for t in events if isinstance(t, str))),
        "seconds": round(secs, 1),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?")
    ap.add_argument("--inside")
    ap.add_argument("--root", default=None)
    ap.add_argument("--exe")
    ap.add_argument("--version", default=clientmod.PINNED_VERSION)
    a = ap.parse_args(argv)
    if a.inside:
        inside(a.inside, Path(a.root), a.exe)
        return 0
    if not a.root:
        ap.error("--root is required (a scratch dir; never inside the clone)")
    for n in ([a.scenario] if a.scenario else list(ALL)):
        gt = run_scenario(n, Path(a.root), a.version)
        print(n, [s["id"] for s in gt["sessions"]], gt["seconds"], "s", [r["rc"] for r in gt["runs"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
