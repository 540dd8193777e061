"""Run a pi scenario with the real client against the Chat Completions mock, offline.

Outer: :func:`run_scenario` re-executes this module under ``unshare -n`` (a fresh network namespace
with only loopback, brought up with ``ip link set lo up``). Inner: the mock runs in a thread on
127.0.0.1 and each prompt is one ``env -i <only the named variables> node <pi>/dist/cli.js --provider
mock --model mock-model --mode json -p [-c | --fork FILE] PROMPT``. Layout for root R and scenario S::

    R/S/work/                       the client's cwd
    R/S/home/                       HOME; pi's agent dir is R/S/home/.pi/agent (models.json, settings.json,
                                    sessions/--<cwd>--/<timestamp>_<uuid>.jsonl)
    R/S/xdg/{config,data,cache,state}/, R/S/tmp/   XDG_*_HOME and TMPDIR
    R/S/mock-requests.jsonl         every request the mock saw
    R/S/client-P<n>.{stdout.jsonl,log}   the client's JSON events and its stderr
    R/S/ground-truth.json           what the script implies + what the run did

CLI: ``python -m tests.realclient.pi.runner [SCENARIO] --root R [--version V]``
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
from ..common.chat import MODEL, ChatMock, SideReply
from ..common.truth import sha256, subst as _subst
from .scenarios import ALL, Scenario

FAKE_KEY = "sk-mock-0000"
PROVIDER = "mock"
COST = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}
"""USD per million tokens in models.json: pi prices every response with it (``usage.cost``)."""


# ============================================================================ outer

def launch(name: str, root: Path, version: str = clientmod.PINNED_VERSION) -> tuple[list[str], dict]:
    exe = host.ensure(clientmod, version)
    return netns.inner_command("tests.realclient.pi.runner", name, root, exe)


def run_scenario(name: str, root: Path, version: str = clientmod.PINNED_VERSION, timeout: float = 400) -> dict:
    cmd, env = launch(name, root, version)
    netns.run_inner(cmd, env, Path(root) / f"{_extra.short(name)}.runner.log", timeout, f"pi scenario {name}")
    return json.loads((Path(root) / _extra.short(name) / "ground-truth.json").read_text())


def start_scenario(name: str, root: Path, version: str = clientmod.PINNED_VERSION) -> subprocess.Popen:
    """Like :func:`run_scenario` but returns the running runner (its own process group) at once: a live
    test watches the client while it runs (the pid namespace is shared); end it with ``netns.stop_group``."""
    cmd, env = launch(name, root, version)
    return netns.start_inner(cmd, env, Path(root) / f"{_extra.short(name)}.runner.log")


# ============================================================================ inner

def agent_dir(s_dir: Path) -> Path:
    return s_dir / "home" / ".pi" / "agent"


def client_env(s_dir: Path) -> dict:
    x = s_dir / "xdg"
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(s_dir / "home"),
            "XDG_CONFIG_HOME": str(x / "config"), "XDG_DATA_HOME": str(x / "data"),
            "XDG_CACHE_HOME": str(x / "cache"), "XDG_STATE_HOME": str(x / "state"), "TMPDIR": str(s_dir / "tmp"),
            "PI_OFFLINE": "1", "PI_TELEMETRY": "0", "PI_SKIP_VERSION_CHECK": "1",
            "TERM": "dumb", "NO_COLOR": "1", "LANG": "C.UTF-8"}


def write_config(s_dir: Path, base_url: str, sc: Scenario) -> None:
    d = agent_dir(s_dir)
    d.mkdir(parents=True, exist_ok=True)
    models = {"providers": {PROVIDER: {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": FAKE_KEY,
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": MODEL, "name": "Mock Model", "reasoning": False,
                    "input": ["text", "image"] if sc.vision else ["text"],
                    "contextWindow": sc.context_window, "maxTokens": 2048, "cost": COST}]}}}
    (d / "models.json").write_text(json.dumps(models, indent=2))
    settings = {"defaultProvider": PROVIDER, "defaultModel": MODEL, "quietStartup": True} | sc.settings
    (d / "settings.json").write_text(json.dumps(settings, indent=2))


def session_files(s_dir: Path) -> list[Path]:
    return sorted((agent_dir(s_dir) / "sessions").glob("*/*.jsonl"))


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
    env_i = netns.env_i(dict(sorted(client_env(s_dir).items())))
    side = lambda body, rec: SideReply("summary", sc.summary,  # noqa: E731 - pi's only tool-less call
                                       {"prompt_tokens": 500, "completion_tokens": 25, "total_tokens": 525})
    dump = str(s_dir / "mock-bodies") if os.environ.get("SSIFT_MOCK_DUMP") else None
    with ChatMock(convs, sc.name, str(s_dir / "mock-requests.jsonl"), side=side, dump_dir=dump) as mock:
        write_config(s_dir, mock.base_url, sc)
        for i, p in enumerate(sc.prompts):
            argv = [exe, "--provider", PROVIDER, "--model", MODEL, "--mode", "json", "-p"]
            if p.how == "continue":
                argv.append("-c")
            elif p.how == "fork":
                argv += ["--fork", str(session_files(s_dir)[0])]
            argv += [f"@{a}" for a in p.attach]
            argv.append(p.text)
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
    p = args.get("path", "")
    rel = p[len(work) + 1:] if p.startswith(work + "/") else p
    if not rel or rel.startswith("/"):
        return
    if name == "write":
        files[rel] = args["content"].encode()
    elif name == "edit":
        text = files.get(rel, b"").decode()
        for e in args["edits"]:
            text = text.replace(e["oldText"], e["newText"], 1)
        files[rel] = text.encode()


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


def cost_of(usage: dict) -> dict:
    """What pi's ``calculateCost`` makes of a Chat Completions usage (USD; pi-ai's parseChunkUsage: input
    = prompt - cached - cache writes, output = completion tokens)."""
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    inp = usage["prompt_tokens"] - cached
    out = usage["completion_tokens"]
    c = {"input": COST["input"] * inp / 1e6, "output": COST["output"] * out / 1e6,
         "cacheRead": COST["cacheRead"] * cached / 1e6, "cacheWrite": 0.0}
    c["total"] = sum(c.values())
    return c


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
                          "expect_exit": sc.expect_exit.get(ckey) if c["name"] == "bash" else None})
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
        sessions.append({"path": str(f), "id": head.get("id"), "parentSession": head.get("parentSession"),
                         "lines": len(f.read_text().splitlines())})
    events = [e.get("type") for i in range(len(sc.prompts)) for e in _events(s_dir / f"client-P{i + 1}.stdout.jsonl")]
    return {
        "scenario": sc.name,
        "client_version": clientmod.client_version(Path(exe)),
        "notes": sc.notes,
        "cwd": w,
        "agent_dir": str(agent_dir(s_dir)),
        "sessions": sessions,
        "prompts": [{"text": p.text, "how": p.how, "marker": sc.marker(i)} for i, p in enumerate(sc.prompts)],
        "summary_text": sc.summary,
        "served_steps": [s | {"cost": cost_of(s["usage"])} for s in served],
        "tool_calls": calls,
        "expected_files": {k: {"sha256": sha256(v), "size": len(v), "content": v.decode("utf-8", "replace")}
                           for k, v in sorted(expected.items())},
        "disk_files": disk,
        "runs": runs,
        "killed": any(r["killed"] for r in runs),
        "client_event_types": sorted(set(t for t in events if isinstance(t, str))),
        "model_cost_per_million": COST,
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
