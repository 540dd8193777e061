"""Run a scenario with the real Codex CLI against the mock Responses API, offline.

Outer entry point: :func:`run_scenario` re-executes this module inside a fresh network namespace
(``unshare -n``); the inner process brings up loopback only, starts the mock in a thread on
127.0.0.1, and drives ``codex exec`` under ``env -i`` with only PATH, HOME, CODEX_HOME,
MOCK_API_KEY, TERM=dumb and LANG (REALCLIENTS.md section 1).  Layout, for root R and scenario S::

    R/S/work/                 the client's cwd
    R/S/home/                 HOME for the client
    R/S/codex-home/           CODEX_HOME (config.toml, sessions/, state_*.sqlite, ...)
    R/S/mock-requests.jsonl   every request the mock saw
    R/S/client-P<n>.log       argv, rc, stderr of each `codex exec`
    R/S/exec-P<n>.jsonl       its `--json` stdout (the client's own event stream: a second witness)
    R/S/ground-truth.json     what the script implies + what ended up on disk

CLI:  python -m tests.realclient.codex.runner SCENARIO [--root R] [--version V]
"""
from __future__ import annotations

import argparse
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
from ..common import host, isolate, netns
from ..common.truth import routes as _routes, sha256, subst as _subst
from .mock_api import MockResponses, Script, call_id
from .scenarios import ALL, ALL_ANY, Scenario

FAKE_KEY = "sk-mock-sessionsift-codex-0000"
MODEL = "gpt-5.5"  # a slug of the embedded catalog: unknown slugs drop the freeform apply_patch tool
LEGACY_MODEL = "gpt-5-codex"
"""The slug for releases whose catalog predates gpt-5.5 (0.50.0 offers the freeform apply_patch with it)."""


def model_for(version: str) -> str:
    try:
        minor = int(version.split(".")[1])
    except (IndexError, ValueError):
        return MODEL
    return LEGACY_MODEL if version.startswith("0.") and minor < 100 else MODEL

CONFIG = """model = "{model}"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
{extra}
[model_providers.mock]
name = "mock"
base_url = "{base_url}"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
"""


# ============================================================================ outer

def launch(name: str, root: Path, version: str = clientmod.PINNED_VERSION,
           codex_home: Path | None = None) -> tuple[list[str], dict]:
    exe = host.ensure(clientmod, version)
    return netns.inner_command("tests.realclient.codex.runner", name, root, exe,
                               *(["--codex-home", str(codex_home)] if codex_home else []))


def start_scenario(name: str, root: Path, version: str = clientmod.PINNED_VERSION):
    """Start scenario ``name`` in a new network namespace without waiting (a live test watches the
    client while it runs: the pid namespace is shared); end it with ``netns.stop_group``."""
    cmd, env = launch(name, root, version)
    return netns.start_inner(cmd, env, Path(root) / f"{_extra.short(name)}.runner.log")


def run_scenario(name: str, root: Path, version: str = clientmod.PINNED_VERSION, timeout: float = 240,
                 codex_home: Path | None = None) -> dict:
    """Run scenario ``name`` in a new network namespace; return its ground truth. ``codex_home``: a
    CODEX_HOME shared with other scenarios (run them one after another), else ``R/S/codex-home``."""
    cmd, env = launch(name, root, version, codex_home)
    root = Path(root)
    netns.run_inner(cmd, env, root / f"{_extra.short(name)}.runner.log", timeout, f"codex scenario {name}")
    return json.loads((root / _extra.short(name) / "ground-truth.json").read_text())


# ============================================================================ inner

class Inner:
    def __init__(self, sc: Scenario, root: Path, exe: str, codex_home: Path | None = None):
        self.sc = sc
        self.s_dir = root / sc.name
        self.work = self.s_dir / "work"
        self.home = self.s_dir / "home"
        self.shared = codex_home is not None
        self.codex_home = codex_home or self.s_dir / "codex-home"
        self.exe = exe
        self.model = model_for(clientmod.client_version(Path(exe)))
        self.runs: list[dict] = []
        self.archived: list[dict] = []

    def prepare(self) -> None:
        if self.s_dir.exists():
            shutil.rmtree(self.s_dir)
        for d in (self.work, self.home, self.codex_home):
            d.mkdir(parents=True, exist_ok=self.shared and d == self.codex_home)
        for rel, data in self.sc.setup_files.items():
            (self.work / rel).write_bytes(data)
        self.script = Script(conversations=self.sc.conversations(), namespace=self.sc.name)

    def env(self) -> dict:
        return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(self.home), "CODEX_HOME": str(self.codex_home),
                "MOCK_API_KEY": FAKE_KEY, "TERM": "dumb", "LANG": "C.UTF-8"}

    def run(self, mock: MockResponses) -> None:
        (self.codex_home / "config.toml").write_text(
            CONFIG.format(model=self.model, base_url=mock.base_url, extra=""))
        for i, p in enumerate(self.sc.prompts):
            flags = ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json"]
            for kv in self.sc.config:
                flags += ["-c", kv]
            flags += list(p.flags)
            if p.how == "new":
                args = [self.exe, "exec", *flags, self.sc.prompt_text(i)]
            elif p.how == "fork":  # a new thread (its own rollout) from the first one's history
                args = [self.exe, "exec", *flags, "fork", self.thread_ids()[0], self.sc.prompt_text(i)]
            elif self.model == MODEL:
                args = [self.exe, "exec", *flags, "resume", "--last", self.sc.prompt_text(i)]
            else:  # older releases read the word after --last as a session id: resume by id instead
                args = [self.exe, "exec", *flags, "resume", self.thread_ids()[0], self.sc.prompt_text(i)]
            cmd = [*netns.env_i(self.env()), *args]
            t0 = time.time()
            out = open(self.s_dir / f"exec-P{i + 1}.jsonl", "w")
            err = open(self.s_dir / f"client-P{i + 1}.stderr", "w+")
            proc = subprocess.Popen(cmd, cwd=self.work, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
            # `env -i` execs the client: this pid is the client's (and its process group's) for a live test
            (self.s_dir / f"client-P{i + 1}.pid").write_text(f"{proc.pid}\n")
            killed = False
            kill_key = None
            if self.sc.kill_at and self.sc.kill_at[0] == i:
                kill_key = f"P{i + 1}#{self.sc.kill_at[1]}"
            while proc.poll() is None:
                if time.time() - t0 > 120:
                    os.killpg(proc.pid, signal.SIGKILL)
                    raise RuntimeError(f"client hung on prompt {i + 1}")
                if kill_key and any(s["key"] == kill_key for s in mock.served):
                    time.sleep(0.5)  # the request is in; the mock holds the response
                    os.killpg(proc.pid, signal.SIGKILL)
                    killed = True
                    proc.wait()
                    break
                time.sleep(0.05)
            out.close()
            err.seek(0)
            stderr = err.read()
            err.close()
            (self.s_dir / f"client-P{i + 1}.stderr").unlink()
            (self.s_dir / f"client-P{i + 1}.log").write_text(
                f"$ {args[1:]}\nrc={proc.returncode} secs={time.time() - t0:.1f} killed={killed}\n"
                f"--- stderr ---\n{stderr}")
            self.runs.append({"prompt": i + 1, "rc": proc.returncode, "killed": killed, "how": p.how})
            if self.sc.killed_by_test and proc.returncode == -signal.SIGKILL:
                killed = True
                self.runs[-1]["killed"] = "by the test"
            if proc.returncode != 0 and not killed:
                raise RuntimeError(f"client failed on prompt {i + 1}: rc={proc.returncode}\n{stderr[-2000:]}")
        if self.sc.archive_after:
            for tid in self.thread_ids():
                cmd = [*netns.env_i(self.env()), self.exe, "archive", tid]
                r = subprocess.run(cmd, cwd=self.work, capture_output=True, text=True, timeout=60)
                self.archived.append({"thread_id": tid, "rc": r.returncode, "out": r.stdout.strip()})
                if r.returncode != 0:
                    raise RuntimeError(f"codex archive {tid} failed: {r.stderr[-1000:]}")

    def thread_ids(self) -> list[str]:
        """The thread ids `codex exec --json` reported (``thread.started``), in order, once each."""
        out: list[str] = []
        for i in range(len(self.sc.prompts)):
            f = self.s_dir / f"exec-P{i + 1}.jsonl"
            for ln in (f.read_text().splitlines() if f.exists() else []):
                try:
                    ev = json.loads(ln)
                except ValueError:
                    continue
                if ev.get("type") == "thread.started" and ev.get("thread_id") not in out:
                    out.append(ev.get("thread_id"))
        return out

    # ------------------------------------------------------------------ ground truth
    def ground_truth(self, mock: MockResponses, secs: float) -> dict:
        sc = self.sc
        work = str(self.work)
        served_keys = {s["key"] for s in mock.served}
        calls = []
        exp: dict[str, str] = {rel: data.decode("utf-8", "replace") for rel, data in sc.setup_files.items()}
        exp = {str(self.work / k): v for k, v in exp.items()}
        for conv in self.script.conversations:
            for ti, turn in enumerate(conv.turns):
                key = f"{conv.name}#{ti}"
                for bi, it in enumerate(turn.items):
                    if it["type"] not in ("function_call", "custom_tool_call", "tool_search_call"):
                        continue
                    served = key in served_keys
                    killed_here = sc.kill_at is not None and key == f"P{sc.kill_at[0] + 1}#{sc.kill_at[1]}"
                    delivered = served and not killed_here
                    row = {"conversation": conv.name, "turn": ti, "block": bi, "call_id": call_id(conv.name, ti, bi),
                           "type": it["type"], "name": it.get("name", "tool_search"), "served": served,
                           "delivered": delivered}
                    if it["type"] in ("function_call", "tool_search_call"):
                        # {AGENT_ID}: the id the client's spawn_agent returned (the mock filled it in the same way)
                        row["arguments"] = json.loads(json.dumps(_subst(it["arguments"], work)).replace(
                            "{AGENT_ID}", mock.agent_ids[-1] if mock.agent_ids else ""))
                        row["expect_exit"] = it.get("expect_exit")
                    else:
                        row["input"] = it["input"].replace("{W}", work)
                        row["expect_changes"] = _subst(it.get("expect_changes") or [], work)
                        row["expect_rejected"] = bool(it.get("expect_rejected"))
                        if delivered:
                            for ch in row["expect_changes"]:
                                exp[ch["path"]] = ch["content"]
                    calls.append(row)
        usage = [{"key": s["key"], "response_id": s["response_id"], "usage": s["usage"],
                  "unscripted": bool(s.get("unscripted"))} for s in mock.served
                 if not (sc.kill_at and s["key"] == f"P{sc.kill_at[0] + 1}#{sc.kill_at[1]}")]
        thread_ids = self.thread_ids()
        mine = set(thread_ids) | set(mock.agent_ids)
        rollouts = sorted(str(p.relative_to(self.codex_home)) for sub in ("sessions", "archived_sessions")
                          if (self.codex_home / sub).is_dir() for p in (self.codex_home / sub).rglob("rollout-*")
                          if any(t in p.name for t in mine))
        disk = {}
        for f in sorted(self.work.rglob("*")):
            if f.is_file():
                b = f.read_bytes()
                disk[str(f)] = {"sha256": sha256(b), "size": len(b)}
        return {
            "scenario": sc.name,
            "notes": sc.notes,
            "client": "codex",
            "client_version": clientmod.client_version(Path(self.exe)),
            "model": self.model,
            "cwd": work,
            "codex_home": str(self.codex_home),
            "rollouts": rollouts,
            "thread_ids_reported": thread_ids,
            "archived": self.archived,
            "prompts": [{"n": i + 1, "text": sc.prompt_text(i), "how": p.how} for i, p in enumerate(sc.prompts)],
            "subagents": [{"marker": c.marker, "conversation": c.name} for c in sc.subagents],
            "spawned_agent_ids": list(mock.agent_ids),
            "calls": calls,
            "responses": usage,
            "killed_at": None if sc.kill_at is None else f"P{sc.kill_at[0] + 1}#{sc.kill_at[1]}",
            "expected_files": {p: {"sha256": sha256(c.encode()), "size": len(c.encode())} for p, c in exp.items()},
            "disk_files": disk,
            "runs": self.runs,
            "mock_routes": _routes(mock.requests),
            "seconds": round(secs, 1),
        }


def inside(name: str, root: Path, exe: str, codex_home: Path | None = None) -> None:
    netns.loopback_up()
    sc = _extra.lookup(name, ALL_ANY)
    inner = Inner(sc, root, exe, codex_home)
    inner.prepare()
    t0 = time.time()
    dump = str(inner.s_dir / "mock-bodies") if os.environ.get("SSIFT_MOCK_DUMP") else None
    with MockResponses(inner.script, str(inner.s_dir / "mock-requests.jsonl"), work=str(inner.work),
                       dump_dir=dump) as mock:
        inner.run(mock)
        time.sleep(0.2)
        gt = inner.ground_truth(mock, time.time() - t0)
    netns.finish(inner.s_dir, gt)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?")
    ap.add_argument("--inside")
    ap.add_argument("--root", default=None)
    ap.add_argument("--exe")
    ap.add_argument("--codex-home", default=None, help="a CODEX_HOME shared by the scenarios (run in turn)")
    ap.add_argument("--version", default=clientmod.PINNED_VERSION)
    a = ap.parse_args(argv)
    if a.inside:
        inside(a.inside, Path(a.root), a.exe, Path(a.codex_home) if a.codex_home else None)
        return 0
    root = Path(a.root) if a.root else isolate.fresh_root("codex")
    print(f"root: {root}", flush=True)
    for n in ([a.scenario] if a.scenario else list(ALL)):
        gt = run_scenario(n, root, a.version, codex_home=Path(a.codex_home) if a.codex_home else None)
        print(n, gt["thread_ids_reported"], gt["rollouts"], gt["seconds"], "s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
