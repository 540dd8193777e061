"""Run a scenario with the real Gemini CLI against the mock Gemini API, offline.

:func:`run_scenario` re-executes this module inside a fresh network namespace (``unshare -n``); the inner
process brings up loopback, starts the mock in a thread and drives the client under ``env -i`` with only
the variables named in :func:`client_env`.  Output layout, for root R and scenario S::

    R/S/<slug>/               the client's cwd (its basename is the project's short name)
    R/S/home/                 HOME for the client (nothing may appear in home/.gemini: GEMINI_CLI_HOME wins)
    R/S/cli-home/             GEMINI_CLI_HOME: the client keeps its data in cli-home/.gemini/
    R/S/mock-requests.jsonl   every request the mock saw
    R/S/client-P<n>.log       the client's command line, exit code, stdout and stderr per prompt
    R/S/ground-truth.json     what the script implies + what ended up on disk

CLI:  python -m tests.realclient.gemini.runner [SCENARIO] [--root R] [--version V]
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
from ..common.truth import routes as _routes, sha256, subst
from .mock_api import MockGemini, Script
from .scenarios import ALL, Scenario

DEFAULT_ROOT = Path("/tmp/ssift-gem")
FAKE_KEY = "fake-gemini-key-sessionsift-0000"
MODEL = "gemini-2.5-pro"
SETTINGS = {
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "enableAutoUpdate": False,
                "enableAutoUpdateNotification": False},
    "security": {"folderTrust": {"enabled": False}, "auth": {"selectedType": "gemini-api-key"}},
}


# ============================================================================ outer

def launch(name: str, root: Path, version: str) -> tuple[list[str], dict]:
    exe = host.ensure(clientmod, version)
    for v in {p.version for p in _extra.lookup(name, ALL).prompts if p.version}:
        clientmod.ensure_client(v)
    return netns.inner_command("tests.realclient.gemini.runner", name, root, exe,
                               env={"SESSIONSIFT_GEMINI_CACHE": str(clientmod.CACHE_ROOT)})


def start_scenario(name: str, root: Path, version: str = clientmod.PINNED_VERSION):
    """Start scenario ``name`` in a new network namespace without waiting (a live test watches the
    client while it runs: the pid namespace is shared); end it with ``netns.stop_group``."""
    cmd, env = launch(name, Path(root), version)
    return netns.start_inner(cmd, env, Path(root) / f"{_extra.short(name)}.runner.log")


def run_scenario(name: str, root: Path | None = None, version: str = clientmod.PINNED_VERSION,
                 timeout: float = 400) -> dict:
    """Run scenario ``name`` in a new network namespace; return its ground truth. ``root`` None: a
    fresh root of this run's own (common/isolate.py)."""
    root = Path(root) if root is not None else isolate.fresh_root("gem")
    cmd, env = launch(name, root, version)
    netns.run_inner(cmd, env, Path(root) / f"{_extra.short(name)}.runner.log", timeout, f"gemini scenario {name}")
    return json.loads((Path(root) / _extra.short(name) / "ground-truth.json").read_text())


# ============================================================================ inner

def _jsonable(v):
    """A setup file's content for the ground truth: text as it is, bytes (an image) by digest."""
    return {"sha256": sha256(v), "size": len(v)} if isinstance(v, bytes) else v


def client_env(s_dir: Path, base_url: str) -> dict:
    node_dir = os.path.dirname(shutil.which("node") or "/usr/bin/node")
    return {
        "PATH": f"{node_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(s_dir / "home"),
        "GEMINI_CLI_HOME": str(s_dir / "cli-home"),
        "GEMINI_API_KEY": FAKE_KEY,
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "GEMINI_TELEMETRY_ENABLED": "false",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
    }


class Inner:
    def __init__(self, sc: Scenario, root: Path, exe: str):
        self.sc = sc
        self.s_dir = root / sc.name
        self.work = self.s_dir / sc.slug
        self.gemini_dir = self.s_dir / "cli-home" / ".gemini"
        self.exe = exe
        self.runs: list[dict] = []
        self.cmdlines: list[list[str]] = []

    def prepare(self) -> Script:
        if self.s_dir.exists():
            shutil.rmtree(self.s_dir)
        for d in (self.work, self.s_dir / "home", self.gemini_dir):
            d.mkdir(parents=True)
        settings = {k: dict(v) for k, v in SETTINGS.items()}
        for k, v in self.sc.settings.items():
            settings[k] = {**settings.get(k, {}), **v} if isinstance(v, dict) else v
        (self.gemini_dir / "settings.json").write_text(json.dumps(settings, indent=2))
        for rel, data in self.sc.setup_files.items():
            if isinstance(data, bytes):  # an image the prompt attaches or a tool reads
                (self.work / rel).write_bytes(data)
            else:
                (self.work / rel).write_text(data)
        w = str(self.work)
        for conv in self.sc.conversations():
            for t in conv.turns:
                t.parts = subst(t.parts, w)
                if "{GEMINI}" in json.dumps(t.parts):  # the client's .gemini dir (a plan mode plans dir)
                    t.parts = json.loads(json.dumps(t.parts).replace("{GEMINI}", str(self.gemini_dir)))
        return Script(conversations=self.sc.conversations(), namespace=self.sc.name, summary=self.sc.summary)

    def run_prompts(self, mock: MockGemini) -> None:
        if self.sc.start_early_in_minute and time.gmtime().tm_sec > 35:
            start = time.strftime("%H%M", time.gmtime())
            while time.strftime("%H%M", time.gmtime()) == start:
                time.sleep(0.2)
        for i, p in enumerate(self.sc.prompts):
            if p.new_minute:
                start = time.strftime("%H%M", time.gmtime())
                while time.strftime("%H%M", time.gmtime()) == start:
                    time.sleep(0.2)
            env = {k: v for k, v in (client_env(self.s_dir, mock.base_url) | p.env).items() if v is not None}
            exe = str(clientmod.entry_script(p.version)) if p.version else self.exe
            args = ["node", exe, "-m", MODEL, "--yolo", "-o", "json", "-p", self.sc.prompt_text(i)]
            if clientmod.version_tuple(clientmod.client_version(Path(exe))) >= (0, 41):  # --skip-trust: 0.41+
                args.insert(4, "--skip-trust")
            if p.how == "resume":
                args += ["--resume", "latest"]
            cmd = netns.env_i(env) + args
            out_p, err_p = self.s_dir / f"P{i + 1}.out", self.s_dir / f"P{i + 1}.err"
            t0 = time.time()
            with open(out_p, "w") as out, open(err_p, "w") as err:
                proc = subprocess.Popen(cmd, cwd=self.work, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                        start_new_session=True)
                # `env -i` execs node: this pid is the client's (and its process group's) for a live test
                (self.s_dir / f"client-P{i + 1}.pid").write_text(f"{proc.pid}\n")
                killed = None
                kill_key = f"{self.sc.marker(i)}#{p.kill_at_turn}" if p.kill_at_turn is not None else None
                seen_pids: set[int] = set()
                while proc.poll() is None:
                    self._capture_group(proc.pid, i + 1, seen_pids)
                    if time.time() - t0 > 240:
                        os.killpg(proc.pid, signal.SIGKILL)
                        raise RuntimeError(f"client hung on prompt {i + 1}")
                    if kill_key and killed is None and any(s["key"] == kill_key for s in mock.served):
                        time.sleep(1.0)  # the client has sent its request and waits for the answer
                        self._capture_group(proc.pid, i + 1, seen_pids)  # the last look before the kill
                        os.killpg(proc.pid, signal.SIGKILL)
                        killed = {"signal": "SIGKILL", "while_serving": kill_key, "t": time.time()}
                    time.sleep(0.05)
                proc.wait()
            stdout, stderr = out_p.read_text(), err_p.read_text()
            out_p.unlink()
            err_p.unlink()
            (self.s_dir / f"client-P{i + 1}.log").write_text(
                f"$ {args[1:]}\nrc={proc.returncode} secs={time.time() - t0:.1f} killed={killed}\n"
                f"--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}")
            try:
                parsed = json.loads(stdout) if stdout.strip() else None
            except ValueError:
                parsed = None
            self.runs.append({"prompt": i + 1, "rc": proc.returncode, "killed": killed,
                              "client_version": clientmod.client_version(Path(exe)),
                              "session_id": (parsed or {}).get("session_id"),
                              "response": (parsed or {}).get("response"),
                              "stats": (parsed or {}).get("stats")})
            if self.sc.killed_by_test and proc.returncode == -signal.SIGKILL:
                killed = self.runs[-1]["killed"] = {"signal": "SIGKILL", "by": "the test"}
            if proc.returncode != 0 and not killed:
                raise RuntimeError(f"client failed on prompt {i + 1}: rc={proc.returncode}\n{stderr[-2000:]}")

    def run_interactive(self, mock: MockGemini) -> None:
        """Drive the TUI under tmux (``send-keys``/``capture-pane``) through ``Scenario.steps``."""
        env = {k: v for k, v in client_env(self.s_dir, mock.base_url).items()} | {"TERM": "xterm-256color"}
        sock = f"ssift-gem-{self.sc.name}-{os.getpid()}"
        tm = ["tmux", "-L", sock]
        cmd = netns.env_i(env) + ["node", self.exe, "-m", MODEL, "--yolo", "--skip-trust"]
        panes: list[str] = []

        def cap() -> str:
            return subprocess.run(tm + ["capture-pane", "-p", "-t", "main"], capture_output=True, text=True).stdout

        def keys(*k: str, literal: bool = False) -> None:
            subprocess.run(tm + ["send-keys", "-t", "main"] + (["-l"] if literal else []) + list(k), check=True)
            time.sleep(0.3)

        def wait(cond, what: str, timeout: float = 60.0) -> None:
            t0 = time.time()
            while time.time() - t0 < timeout:
                if cond():
                    return
                time.sleep(0.2)
            panes.append(cap())
            raise TimeoutError(f"timed out waiting for {what}:\n{panes[-1]}")

        def idle() -> bool:
            a = cap()
            time.sleep(0.6)
            b = cap()
            return a == b and "Type your message" in b

        subprocess.run(tm + ["new-session", "-d", "-s", "main", "-x", "160", "-y", "80", "-c", str(self.work)] + cmd,
                       check=True)
        t0 = time.time()
        try:
            seen: set[int] = set()
            wait(lambda: "Type your message" in cap(), "the input prompt", 60)
            self._capture_group(int(subprocess.run(tm + ["display", "-p", "-t", "main", "#{pane_pid}"],
                                                   capture_output=True, text=True).stdout.strip()), 1, seen)
            time.sleep(1.0)
            for step, arg in self.sc.steps:
                if step == "prompt":
                    keys(self.sc.prompt_text(arg), literal=True)
                    keys("Enter")
                    key = f"{self.sc.marker(arg)}#{len(self.sc.prompts[arg].turns) - 1}"
                    wait(lambda: any(s["key"] == key for s in mock.served), f"turn {key}")
                    wait(idle, "idle")
                elif step == "rewind":
                    # /rewind lists every user message (the context, each prompt, each functionResponse turn)
                    # and selects "Stay at current position": move up until the wanted prompt is selected
                    want = self.sc.marker(len([x for x in self.sc.steps[:self.sc.steps.index((step, arg))]
                                               if x[0] == "prompt"]) - arg)
                    keys("/rewind", literal=True)
                    time.sleep(1.0)
                    keys("Enter")
                    wait(lambda: "Stay at current position" in cap(), "the rewind list")

                    def selected(pane: str) -> str:
                        lines = pane.splitlines()
                        i = next((k for k, l in enumerate(lines) if "\u25cf" in l), None)
                        return "" if i is None else lines[i]
                    for _ in range(12):
                        if want in selected(cap()):
                            break
                        keys("Up")
                    panes.append(cap())
                    if want not in selected(cap()):
                        raise RuntimeError(f"could not select {want} in /rewind:\n{cap()}")
                    keys("Enter")
                    wait(lambda: "Do nothing" in cap(), "the rewind confirmation")
                    for _ in range(5):
                        line = selected(cap())
                        if line.rstrip(" \u2502").endswith("Rewind conversation"):
                            break
                        keys("Down")
                    panes.append(cap())
                    keys("Enter")
                    # the rewound prompt's text is put back into the input box: wait for it, then erase it
                    wait(lambda: "Do nothing" not in cap() and f"* {want}" in cap(), "the rewound prompt in the input")
                    panes.append(cap())
                    for _ in range(3):
                        subprocess.run(tm + ["send-keys", "-t", "main"] + ["BSpace"] * 80, check=True)
                        time.sleep(0.5)
                        if "Type your message" in cap():
                            break
                    wait(idle, "idle after the rewind")
                panes.append(cap())
            keys("C-c")
            keys("C-c")
            wait(lambda: subprocess.run(tm + ["has-session", "-t", "main"], capture_output=True).returncode != 0,
                 "the client to exit", 20)
        finally:
            (self.s_dir / "client-panes.log").write_text("\n\n=====\n\n".join(panes))
            subprocess.run(tm + ["kill-server"], capture_output=True)
        self.runs.append({"prompt": None, "rc": None, "killed": None, "interactive": True,
                          "client_version": clientmod.client_version(Path(self.exe)), "session_id": None,
                          "secs": round(time.time() - t0, 1), "steps": [list(s) for s in self.sc.steps]})

    def _capture_group(self, pgid: int, prompt: int, seen: set[int]) -> None:
        """Record once the command line of every client process (the process group of the run), so the
        reader's process recognition is checked against what the client really looks like in /proc."""
        for d in Path("/proc").iterdir():
            if not d.name.isdigit() or int(d.name) in seen:
                continue
            try:
                if os.getpgid(int(d.name)) != pgid:
                    continue
                argv = [a.decode(errors="replace") for a in (d / "cmdline").read_bytes().split(b"\0") if a]
                comm = (d / "comm").read_text().strip()
            except OSError:
                continue
            if not argv or argv[0] == "env" or comm not in ("node", "MainThread") and "gemini" not in " ".join(argv):
                continue  # env before its exec; the shells the client's tools spawn
            seen.add(int(d.name))
            self.cmdlines.append({"prompt": prompt, "pid": int(d.name), "comm": comm,
                                  "argv": ["<prompt>" if a == self.sc.prompt_text(prompt - 1) else a for a in argv]})

    # ------------------------------------------------------------------ ground truth
    def ground_truth(self, mock: MockGemini, secs: float) -> dict:
        sc, w = self.sc, str(self.work)
        served = {s["key"]: s for s in mock.served}
        calls, responses = [], []
        for conv in sc.conversations():
            for ti, t in enumerate(conv.turns):
                key = f"{conv.marker}#{ti}"
                s = served.get(key)
                responses.append({"conversation": conv.name, "turn": ti, "key": key, "served": s is not None,
                                  "completed": bool(s and s.get("t_sent") and not s.get("broken_pipe")),
                                  "usage": s["usage"] if s else None, "response_id": s["response_id"] if s else None,
                                  "model": s["model"] if s else None,
                                  "text": "".join(p.get("text", "") for p in t.parts
                                                  if "text" in p and not p.get("thought")),
                                  "thoughts": [p["text"] for p in t.parts if p.get("thought")]})
                for pi, p in enumerate(t.parts):
                    fc = p.get("functionCall")
                    if fc:
                        cmd = fc["args"].get("command")
                        calls.append({"conversation": conv.name, "turn": ti, "part": pi, "name": fc["name"],
                                      "args": fc["args"], "served": s is not None,
                                      "exit_code": sc.exit_codes.get(cmd.replace(w, "{W}")) if cmd else None})
        expected = {str(self.work / k): _jsonable(v) for k, v in sc.setup_files.items()}
        for c in calls:
            a = c["args"]
            if not c["served"]:
                continue
            if c["name"] == "write_file":
                expected[a["file_path"]] = a["content"]
            elif c["name"] == "replace" and a["file_path"] in expected and expected[a["file_path"]].count(a["old_string"]) == 1:
                expected[a["file_path"]] = expected[a["file_path"]].replace(a["old_string"], a["new_string"])
        disk = {}
        for f in sorted(self.work.rglob("*")):
            if f.is_file():
                b = f.read_bytes()
                disk[str(f)] = {"sha256": sha256(b), "size": len(b), "text": b.decode("utf-8", "replace")}
        sessions_on_disk = []
        for f in sorted((self.gemini_dir / "tmp").rglob("*.json*")) if (self.gemini_dir / "tmp").is_dir() else []:
            if "chats" not in f.parts:
                continue
            raw = f.read_bytes()
            try:
                head = json.loads(raw.split(b"\n", 1)[0] if f.suffix == ".jsonl" else raw)
            except ValueError:
                head = {}
            sessions_on_disk.append({"file": str(f.relative_to(self.gemini_dir)), "session_id": head.get("sessionId"),
                                     "kind": head.get("kind"), "bytes": len(raw)})
        chat_files = sorted(str(p.relative_to(self.gemini_dir)) for p in (self.gemini_dir / "tmp").rglob("*.json*")
                            if "chats" in p.parts) if (self.gemini_dir / "tmp").is_dir() else []
        try:
            projects = json.loads((self.gemini_dir / "projects.json").read_text())
        except (OSError, ValueError):
            projects = None
        return {
            "scenario": sc.name,
            "notes": sc.notes,
            "client_version": clientmod.client_version(Path(self.exe)),
            "model": MODEL,
            "cwd": w,
            "project_short_name": sc.slug,
            "home": str(self.s_dir / "home"),
            "gemini_cli_home": str(self.s_dir / "cli-home"),
            "gemini_dir": str(self.gemini_dir),
            "home_dot_gemini_exists": (self.s_dir / "home" / ".gemini").exists(),
            "projects_json": projects,
            "chat_files": chat_files,
            "sessions_on_disk": sessions_on_disk,
            "session_ids": sorted({r["session_id"] for r in self.runs if r["session_id"]}
                                  | {s["session_id"] for s in sessions_on_disk if s["kind"] != "subagent"
                                     and s["session_id"]}),
            "prompts": [{"n": i + 1, "text": sc.prompt_text(i), "how": p.how} for i, p in enumerate(sc.prompts)],
            "runs": self.runs,
            "responses": responses,
            "tool_calls": calls,
            "setup_files": {str(self.work / k): _jsonable(v) for k, v in sc.setup_files.items()},
            "expected_files": expected,
            "disk_files": disk,
            "client_processes": self.cmdlines,
            "mock_routes": _routes(mock.requests),
            "settings": sc.settings,
            "summary_text": sc.summary,
            "summary_served": [{"key": s["key"], "usage": s["usage"]} for s in mock.served
                               if s["key"].startswith("summary#")],
            "seconds": round(secs, 1),
        }


def inside(name: str, root: Path, exe: str) -> None:
    netns.loopback_up()
    inner = Inner(_extra.lookup(name, ALL), root, exe)
    script = inner.prepare()
    t0 = time.time()
    with MockGemini(script, str(inner.s_dir / "mock-requests.jsonl")) as mock:
        if inner.sc.mode == "interactive":
            inner.run_interactive(mock)
        else:
            inner.run_prompts(mock)
        time.sleep(0.3)
        gt = inner.ground_truth(mock, time.time() - t0)
    netns.finish(inner.s_dir, gt)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?")
    ap.add_argument("--inside")
    ap.add_argument("--root", default=None, help="scratch root (default: a fresh one for this run, printed)")
    ap.add_argument("--exe")
    ap.add_argument("--version", default=clientmod.PINNED_VERSION)
    a = ap.parse_args(argv)
    if a.root is None and not a.inside:
        a.root = str(isolate.fresh_root("gem"))
        print(f"root: {a.root}", flush=True)
    if a.inside:
        inside(a.inside, Path(a.root), a.exe)
        return 0
    for n in [a.scenario] if a.scenario else list(ALL):
        gt = run_scenario(n, Path(a.root), a.version)
        print(n, gt["session_ids"], gt["seconds"], "s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
