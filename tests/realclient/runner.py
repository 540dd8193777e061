"""Run a scenario with the real Claude Code client against the mock API, offline.

Outer entry point: :func:`run_scenario` (or :func:`start_scenario`, which does not wait)
re-executes this module inside a fresh network namespace (``unshare -n``) for a scenario
defined in any module (``module=``, default ``tests.realclient.scenarios``); the inner process brings up loopback, starts
the mock in a thread, and drives the client (print mode via subprocess,
interactive mode via tmux).  Output layout, for root R and scenario S::

    R/S/work/                 the client's cwd (project dir name derives from it)
    R/S/home/                 HOME for the client
    R/S/config/               CLAUDE_CONFIG_DIR
    R/S/mock-requests.jsonl   every request the mock saw
    R/S/client-*.log          client stdout/stderr (print) or pane captures (interactive)
    R/S/snapshots/<label>/    side files copied while a turn was held busy
    R/S/ground-truth.json     what the script implies + what ended up on disk

CLI:  python -m tests.realclient.runner SCENARIO [--module M] [--root R] [--version V]
"""
from __future__ import annotations

import argparse
import importlib
import re
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from . import client as clientmod
from .common import gate, host, isolate, netns
from .common.truth import routes as _routes, sha256, subst as _subst
from .mock_api import MockAnthropic, Script, _stable_id
from .scenarios import ALL, Scenario, session_uuid

DEFAULT_ROOT = Path("/tmp/ssift-rc")
"""The root the committed examples/ were made under (make_examples runs there, privately:
common/isolate.py); every other run takes a fresh root of its own unless one is named."""
FAKE_KEY = "sk-ant-fake-sessionsift-0000000000000000"


def encode_project_dir(cwd: str) -> str:
    """Claude Code's project directory name for a cwd (non-alphanumerics -> '-')."""
    return "".join(c if c.isalnum() else "-" for c in cwd)


# ============================================================================ outer


SCENARIO_MODULE = "tests.realclient.scenarios"


def launch(name: str, root: Path, version: str = clientmod.PINNED_VERSION,
           module: str = SCENARIO_MODULE) -> tuple[list[str], dict]:
    """The command and environment that run scenario ``name`` of ``module`` in a new network namespace.

    Checks the host and installs the client first (raises ``PrerequisiteMissing``). The command re-runs
    this module as ``--inside NAME --module MODULE``: the inner process imports MODULE (so scenarios it
    registers are known) and runs MODULE's own ``inside(name, root, exe)`` if it has one, else ours."""
    exe = host.ensure(clientmod, version)
    return netns.inner_command("tests.realclient.runner", name, root, exe, "--module", module)


def run_scenario(name: str, root: Path | None = None, version: str = clientmod.PINNED_VERSION,
                 timeout: float = 300, module: str = SCENARIO_MODULE) -> dict:
    """Run scenario ``name`` (defined in ``module``) in a new network namespace; return its ground truth.
    ``root`` None: a fresh root of this run's own (common/isolate.py).

    The ground truth is ``R/NAME/<module.TRUTH_FILE>`` (default ``ground-truth.json``)."""
    root = Path(root) if root is not None else isolate.fresh_root("rc")
    cmd, env = launch(name, root, version, module)
    netns.run_inner(cmd, env, root / f"{name}.runner.log", timeout, f"scenario {name}")
    truth_file = getattr(importlib.import_module(module), "TRUTH_FILE", "ground-truth.json")
    return json.loads((root / name / truth_file).read_text())


def start_scenario(name: str, root: Path, version: str = clientmod.PINNED_VERSION,
                   module: str = SCENARIO_MODULE, log: Path | None = None) -> subprocess.Popen:
    """Start scenario ``name`` like :func:`run_scenario` but return the running process at once.

    Its output goes to ``log`` (default ``R/NAME.live-runner.log``); it leads its own process group."""
    cmd, env = launch(name, root, version, module)
    return netns.start_inner(cmd, env, log or Path(root) / f"{name}.live-runner.log")


# ============================================================================ inner


def client_env(s_dir: Path, base_url: str, interactive: bool) -> dict:
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(s_dir / "home"),
        "CLAUDE_CONFIG_DIR": str(s_dir / "config"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": FAKE_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "IS_SANDBOX": "1",
    }
    if interactive:
        env["TERM"] = "xterm-256color"  # the TUI needs a terminal type
    return env


def seed_config(s_dir: Path, work: Path, extra: dict | None = None) -> None:
    """Pre-seed what the interactive client would otherwise ask about."""
    cfg = s_dir / "config"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / ".claude.json").write_text(json.dumps((extra or {}) | {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "bypassPermissionsModeAccepted": True,
        "customApiKeyResponses": {"approved": [FAKE_KEY[-20:]], "rejected": []},
        "projects": {str(work): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}},
    }, indent=2))
    (cfg / "settings.json").write_text(json.dumps({"skipDangerousModePermissionPrompt": True}, indent=2))


class Inner:
    def __init__(self, sc: Scenario, root: Path, exe: str):
        self.sc = sc
        self.s_dir = root / sc.name
        self.work = self.s_dir / "work"
        self.exe = exe
        self.sid = session_uuid(sc.name)
        self.logs: list[str] = []
        self.snapshots: list[dict] = []
        self.print_runs: list[dict] = []
        self.dialogs: list[dict] = []  # TUI dialogs the runner answered
        self.print_grace = 8.0  # seconds a print-mode client may linger after its script ended

    # ------------------------------------------------------------------ setup
    @property
    def client_tmp(self) -> Path:
        """Where the client puts background-task output files: /tmp/claude-<uid>/<encoded cwd>/."""
        return Path(f"/tmp/claude-{os.getuid()}") / encode_project_dir(str(self.work))

    def prepare(self) -> None:
        if self.s_dir.exists():
            shutil.rmtree(self.s_dir)
        if self.client_tmp.exists():
            shutil.rmtree(self.client_tmp)
        for d in ("work", "home", "config", "snapshots"):
            (self.s_dir / d).mkdir(parents=True)
        for rel, data in self.sc.setup_files.items():
            p = self.work / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        seed_config(self.s_dir, self.work, self.sc.seed_config)
        convs = []
        for c in self.sc.conversations():
            for t in c.turns:
                for b in t.blocks:
                    if b["type"] == "tool_use":
                        b["input"] = _subst(b["input"], str(self.work))
            convs.append(c)
        hooks: dict[tuple[int, int], list] = {}
        for (pi, ti) in self.sc.snapshot_turns:
            turn = self.sc.prompts[pi].turns[ti]
            label = f"P{pi + 1}-turn{ti}"
            hooks.setdefault((pi, ti), []).append(
                lambda lab=label, d=turn.delay: self._snapshot_later(lab, max(0.3, d / 2)))
        for (pi, ti), acts in self.sc.turn_actions.items():
            hooks.setdefault((pi, ti), []).insert(0, lambda acts=acts: [
                subprocess.run(a.command(self.work), check=True) for a in acts])
        for (pi, ti), fns in hooks.items():
            self.sc.prompts[pi].turns[ti].on_serve = (lambda fns=fns: [f() for f in fns])
        self.script = Script(conversations=convs, summary=self.sc.summary, namespace=self.sc.name)

    def _snapshot_later(self, label: str, after: float) -> None:
        def go():
            time.sleep(after)
            src = self.s_dir / "config" / "sessions"
            dst = self.s_dir / "snapshots" / label / "sessions"
            dst.mkdir(parents=True, exist_ok=True)
            files = []
            if src.is_dir():
                for f in sorted(src.iterdir()):
                    if f.suffix == ".key":  # a local secret: record only that it existed
                        files.append({"name": f.name, "copied": False})
                        continue
                    shutil.copy2(f, dst / f.name)
                    files.append({"name": f.name, "copied": True})
            self.snapshots.append({"label": label, "t": time.time(), "files": files})
        threading.Thread(target=go, daemon=True).start()

    # ------------------------------------------------------------------ print mode
    def run_print(self, mock: MockAnthropic, only: list[int] | None = None) -> None:
        """Every prompt in print mode (``only``: just those prompt indices, e.g. the forks an
        interactive scenario makes after its TUI exited)."""
        env = client_env(self.s_dir, mock.base_url, interactive=False) | self.sc.extra_env
        for i, p in enumerate(self.sc.prompts):
            if only is not None and i not in only:
                continue
            if only is None or p.how == "fresh":  # a fork after the TUI ran its `before` in the TUI
                self._before(p)
            args = [self.exe, "-p", self.sc.prompt_text(i)] + (["--dangerously-skip-permissions"] if self.sc.bypass else [])
            if p.how == "new":
                args += ["--session-id", self.sid]
            elif p.how == "resume":
                args += ["--resume", self.sid]
            elif p.how == "continue":
                args += ["--continue"]
            elif p.how == "fork":  # a NEW session file holding copies of this session's records
                args += ["--resume", self.sid, "--fork-session"]
            elif p.how == "fresh":  # another session of its own (id: uuid5 of the scenario and prompt)
                args += ["--session-id", session_uuid(self.sc.name, i + 1)]
            args += self.sc.extra_args
            t0 = time.time()
            out_f = open(self.s_dir / f"client-P{i + 1}.out", "w+")
            cwd = self.work / p.cwd if p.cwd else self.work
            cwd.mkdir(parents=True, exist_ok=True)
            proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=out_f, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            last_key = f"{self.sc.marker(i)}#{len(p.turns) - 1}" if p.turns else None
            done_at = None
            killed = False
            while proc.poll() is None:
                if time.time() - t0 > 150:
                    raise RuntimeError(f"client hung on prompt {i + 1} before finishing its script")
                if done_at is None and last_key and any(sv["key"] == last_key for sv in mock.served):
                    done_at = time.time()
                if done_at and time.time() - done_at > self.print_grace:
                    # the script is finished but the client waits (e.g. for a background task in newer
                    # clients): end it, as a user pressing Ctrl-C would
                    os.killpg(proc.pid, 15)
                    killed = True
                    try:
                        proc.wait(10)
                    except subprocess.TimeoutExpired:
                        os.killpg(proc.pid, 9)
                    break
                time.sleep(0.1)
            proc.wait()
            out_f.seek(0)
            output = out_f.read()
            out_f.close()
            (self.s_dir / f"client-P{i + 1}.out").unlink()
            (self.s_dir / f"client-P{i + 1}.log").write_text(
                f"$ {args[1:]}\nrc={proc.returncode} secs={time.time() - t0:.1f} killed_after_script={killed}\n"
                f"--- output ---\n{output}")
            self.print_runs.append({"prompt": i + 1, "rc": proc.returncode, "killed_after_script": killed})
            if proc.returncode != 0 and not killed and not p.may_fail:
                raise RuntimeError(f"client failed on prompt {i + 1}: rc={proc.returncode} {output[-1000:]}")
            time.sleep(p.settle)

    def _before(self, p) -> None:
        for act in p.before:
            subprocess.run(act.command(self.work), check=True)
            time.sleep(0.05)

    # ------------------------------------------------------------------ interactive mode
    def run_interactive(self, mock: MockAnthropic) -> None:
        env = client_env(self.s_dir, mock.base_url, interactive=True) | self.sc.extra_env
        sock = f"ssift-{self.sc.name}-{os.getpid()}"
        tm = ["tmux", "-L", sock]
        cmd = netns.env_i(env) + [self.exe] + (
            ["--dangerously-skip-permissions"] if self.sc.bypass else []) + [
            "--session-id", self.sid] + self.sc.extra_args
        answered: dict[int, float] = {}
        subprocess.run(tm + ["new-session", "-d", "-s", "main", "-x", "180", "-y", "50", "-c", str(self.work)] + cmd,
                       check=True)
        caps = []

        def cap() -> str:
            return subprocess.run(tm + ["capture-pane", "-p", "-t", "main"], capture_output=True, text=True).stdout

        def wait(cond, timeout=60.0, what=""):
            t0 = time.time()
            while time.time() - t0 < timeout:
                if cond():
                    return
                if self.sc.answers:
                    pane = cap()
                    for k, (needle, keys, *held) in enumerate(self.sc.answers):
                        if held and not gate.path(self.s_dir, held[0]).exists():
                            continue  # the test answers when it has looked at the open dialog
                        if needle in pane and time.time() - answered.get(k, 0) > 3.0:
                            time.sleep(0.5)  # let the dialog settle before typing
                            answered[k] = time.time()
                            self.dialogs.append({"needle": needle, "keys": keys, "t": time.time()})
                            caps.append(pane)
                            for key in keys:
                                subprocess.run(tm + ["send-keys", "-t", "main", key])
                                time.sleep(0.3)
                time.sleep(0.2)
            caps.append(cap())
            raise TimeoutError(f"timed out waiting for {what}\n{caps[-1]}")

        def idle() -> bool:
            a = cap()
            if "esc to interrupt" in a:
                return False
            time.sleep(0.4)
            b = cap()
            return "esc to interrupt" not in b and "❯" in b

        try:
            wait(lambda: "❯" in cap(), 45, "the input prompt")
            time.sleep(1.0)
            for i, p in enumerate(self.sc.prompts):
                if p.how == "fork":
                    # run in print mode once the TUI has exited (below); what comes before it
                    # (e.g. a rewind: TuiKeys) is done in the TUI, now
                    self._before(p)
                    time.sleep(0.5 + p.settle)
                    continue
                if p.how == "fresh":
                    continue  # a print-mode session of its own after the TUI exited, its `before` then
                self._before(p)
                n_req = len(mock.requests)
                subprocess.run(tm + ["send-keys", "-t", "main", "-l", self.sc.prompt_text(i)], check=True)
                time.sleep(0.4)
                subprocess.run(tm + ["send-keys", "-t", "main", "Enter"], check=True)
                if p.slash:
                    route = p.wait_route or ""
                    wait(lambda: any(str(r.get("route", "")).startswith(route) for r in mock.requests[n_req:]),
                         60, f"a '{route}' request")
                elif p.turns:
                    key = f"{self.sc.marker(i)}#{len(p.turns) - 1}"
                    wait(lambda: any(s["key"] == key for s in mock.served), 60, f"turn {key}")
                wait(idle, 60, "idle")
                time.sleep(0.5 + p.settle)
                caps.append(cap())
            time.sleep(self.sc.final_settle)
            for _ in range(2):
                subprocess.run(tm + ["send-keys", "-t", "main", "C-c"])
                time.sleep(0.5)
            t0 = time.time()
            while time.time() - t0 < 15:
                if subprocess.run(tm + ["has-session", "-t", "main"], capture_output=True).returncode != 0:
                    break
                time.sleep(0.3)
        finally:
            (self.s_dir / "client-panes.log").write_text("\n\n=====\n\n".join(caps))
            subprocess.run(tm + ["kill-server"], capture_output=True)
        forks = [i for i, p in enumerate(self.sc.prompts) if p.how in ("fork", "fresh")]
        if forks:  # `claude --resume <id> --fork-session -p ...` of the session the TUI wrote, or a new one
            self.run_print(mock, only=forks)

    # ------------------------------------------------------------------ ground truth
    def ground_truth(self, mock: MockAnthropic, secs: float) -> dict:
        sc = self.sc
        # scripted tool uses, with the ids the mock gives them
        tool_uses = []
        for c in self.script.conversations:
            for ti, t in enumerate(c.turns):
                for bi, b in enumerate(t.blocks):
                    if b["type"] == "tool_use":
                        tool_uses.append({"conversation": c.name, "marker": c.marker, "turn": ti, "block": bi,
                                          "id": _stable_id("toolu_", sc.name, f"{c.marker}#{ti}", bi),
                                          "name": b["name"], "input": b["input"]})
        served_keys = {s["key"] for s in mock.served}
        for tu in tool_uses:
            tu["served"] = f"{tu['marker']}#{tu['turn']}" in served_keys
        # expected files: setup + scripted Write/Edit + shell edits, in script order
        exp: dict[str, str] = {}
        binary: set[str] = set()  # setup files that are not UTF-8 text: held as latin-1, written back so
        for rel, data in sc.setup_files.items():
            try:
                exp[str(self.work / rel)] = data.decode("utf-8")
            except UnicodeDecodeError:
                exp[str(self.work / rel)] = data.decode("latin-1")
                binary.add(str(self.work / rel))
        order = []
        sub_by_marker = {c.marker: c for c in sc.subagents}
        for i, p in enumerate(sc.prompts):
            order.append(("shell", p.before))
            for ti, t in enumerate(p.turns):
                order.append(("shell", sc.turn_actions.get((i, ti), [])))
                for b in t.blocks:
                    order.append(("block", b))
                    if b["type"] == "tool_use" and b["name"] in ("Agent", "Task"):
                        for m, c in sub_by_marker.items():
                            if m in b["input"].get("prompt", ""):
                                for tt in c.turns:
                                    for bb in tt.blocks:
                                        order.append(("block", bb))
        for kind, x in order:
            if kind == "block" and re.search(r"\{[A-Z_]+\}", json.dumps(x.get("input", {}))):
                continue  # dynamic path (e.g. {PLAN_FILE}): not known from the script
            if kind == "shell":
                for act in x:
                    path = act.path.replace("{W}", str(self.work))
                    if path in exp:
                        exp[path] = act.apply(exp[path])
                    # a file the script cannot know (made by Bash etc.) stays out of expected_files
            elif x["type"] == "tool_use":
                inp = x["input"]
                if x["name"] in ("Bash", "Monitor"):
                    # a command that names a file may change it in ways the script cannot model
                    cmd = str(inp.get("command", ""))
                    writes = re.search(r">|\b(sed\s+-i|rm|mv|cp|tee|touch|truncate|dd|patch|git|perl|python3?\s+-c)\b", cmd)
                    for path in [p for p in exp if writes and os.path.basename(p) in cmd]:
                        del exp[path]
                elif x["name"] == "Write":
                    exp[inp["file_path"]] = inp["content"]
                    binary.discard(inp["file_path"])
                elif x["name"] == "Edit" and inp["file_path"] in exp:
                    cur = exp[inp["file_path"]]
                    if inp["old_string"] not in cur:
                        continue  # the client rejects such an edit and leaves the file alone
                    if inp.get("replace_all"):
                        exp[inp["file_path"]] = cur.replace(inp["old_string"], inp["new_string"])
                    else:
                        exp[inp["file_path"]] = cur.replace(inp["old_string"], inp["new_string"], 1)
        expected_files = {p: {"sha256": sha256(c.encode("latin-1" if p in binary else "utf-8")),
                              "size": len(c.encode("latin-1" if p in binary else "utf-8"))}
                          for p, c in exp.items()}
        disk_files = {}
        for f in sorted(self.work.rglob("*")):
            if f.is_file():
                b = f.read_bytes()
                disk_files[str(f)] = {"sha256": sha256(b), "size": len(b)}
        # background tasks
        bg = []
        for spec in sc.background:
            conv, ti, bi = spec["where"]
            tu = next(t for t in tool_uses if t["conversation"] == conv and t["turn"] == ti and t["block"] == bi)
            out = self.work / spec["output_file"] if spec.get("output_file") else None
            bg.append({"tool_use_id": tu["id"], "command": tu["input"]["command"],
                       "expected_completed": spec["completes"],
                       "output_file": str(out) if out else None,
                       "output_file_exists": bool(out and out.exists())})
        subagents = []
        for tu in tool_uses:
            if tu["name"] in ("Agent", "Task"):
                m = next((c.marker for c in sc.subagents if c.marker in tu["input"].get("prompt", "")), None)
                subagents.append({"tool_use_id": tu["id"], "marker": m, "description": tu["input"]["description"],
                                  "run_in_background": bool(tu["input"].get("run_in_background"))})
        proj = self.s_dir / "config" / "projects" / encode_project_dir(str(self.work))
        transcripts = sorted(str(p.relative_to(self.s_dir / "config")) for p in proj.rglob("*.jsonl")) \
            if proj.is_dir() else []
        return {
            "scenario": sc.name,
            "mode": sc.mode,
            "notes": sc.notes,
            "client_version": clientmod.client_version(Path(self.exe)),
            "cwd": str(self.work),
            "config_dir": str(self.s_dir / "config"),
            "project_dir": str(proj.relative_to(self.s_dir / "config")),
            "session_id": self.sid,
            "session_ids_on_disk": sorted(p.stem for p in proj.glob("*.jsonl")) if proj.is_dir() else [],
            "transcripts": transcripts,
            "prompts": [{"n": i + 1, "text": sc.prompt_text(i),
                         "how": p.how if sc.mode == "print" or p.how in ("fork", "fresh") else "interactive",
                         "shell_before": [a.command(self.work) for a in p.before]}
                        for i, p in enumerate(sc.prompts)],
            "tool_uses": tool_uses,
            "expected_files": expected_files,
            "disk_files": disk_files,
            "background_tasks": bg,
            "subagents": subagents,
            "snapshots": self.snapshots,
            "print_runs": self.print_runs,
            "dialogs_answered": self.dialogs,
            "client_tmp_dir": str(self.client_tmp),
            "client_tmp_files": sorted(str(f.relative_to(self.client_tmp)) for f in self.client_tmp.rglob("*")
                                       if f.is_file()) if self.client_tmp.is_dir() else [],
            "mock_routes": _routes(mock.requests),
            "seconds": round(secs, 1),
        }


def inside(name: str, root: Path, exe: str, inner_cls: type[Inner] = Inner,
           setup: Callable[[Inner], None] | None = None) -> None:
    """In the new namespace: loopback up, scenario ``name`` prepared by ``inner_cls`` (then ``setup``),
    the client driven against the mock, the ground truth written and what the client left ended."""
    netns.loopback_up()
    sc = ALL[name]
    inner = inner_cls(sc, root, exe)
    inner.prepare()
    if setup:
        setup(inner)
    t0 = time.time()
    dump = str(inner.s_dir / "mock-bodies") if os.environ.get("SSIFT_MOCK_DUMP") else None
    with MockAnthropic(inner.script, str(inner.s_dir / "mock-requests.jsonl"), dump_dir=dump) as mock:
        if sc.mode == "print":
            inner.run_print(mock)
        else:
            inner.run_interactive(mock)
        time.sleep(0.3)
        gt = inner.ground_truth(mock, time.time() - t0)
    netns.finish(inner.s_dir, gt)


def main(argv=None, module: str = SCENARIO_MODULE, root: Path | None = None,
         scenario: str | None = None) -> int:
    """CLI. Outside: run SCENARIO (or every scenario in the module's ``ALL``) and print a line each.
    Inside (``--inside NAME``, used by :func:`launch`): run one scenario in this namespace."""
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?", default=scenario)
    ap.add_argument("--inside")
    ap.add_argument("--module", default=module, help="module that defines/registers the scenario")
    ap.add_argument("--root", default=None if root is None else str(root),
                    help="scratch root (default: a fresh one for this run, printed)")
    ap.add_argument("--exe")
    ap.add_argument("--version", default=clientmod.PINNED_VERSION)
    a = ap.parse_args(argv)
    mod = importlib.import_module(a.module)
    if a.root is None and not a.inside:
        a.root = str(isolate.fresh_root("rc"))
        print(f"root: {a.root}", flush=True)
    if a.inside:
        getattr(mod, "inside", inside)(a.inside, Path(a.root), a.exe)
        return 0
    names = [a.scenario] if a.scenario else list(getattr(mod, "ALL", ALL))
    for n in names:
        gt = run_scenario(n, Path(a.root), a.version, module=a.module)
        print(n, gt.get("session_ids_on_disk", gt.get("session_id")), gt["seconds"], "s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
