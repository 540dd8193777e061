"""`clean` against REAL clients, offline (tests/realclient): a live session is never eligible.

- Claude Code 2.1.258 (`clean_self`, scenarios_clean.py): the scan runs INSIDE a real session's Bash
  tool (the real `$CLAUDE_CODE_SESSION_ID`, registry row and client process as its caller), and
  `clean capture --apply` runs from outside while that session is held busy.
- Codex CLI 0.171.0: a real `codex exec` session waiting for its model (its thread lock held).
- opencode 1.18.33 (`live` scenario: steps held 1.5 s each): the client mid-turn in its project.

The three run in parallel. Skips naming the missing prerequisite; fails under CI=true.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.realclient import client as clientmod
from tests.realclient import scenarios_clean as SC
from tests.realclient.scenarios import session_uuid

pytestmark = pytest.mark.realclient
REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"


def _prereq(fn, *a, **kw):
    try:
        return fn(*a, **kw)
    except clientmod.PrerequisiteMissing as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"real-client prerequisite missing under CI: {exc}")
        pytest.skip(f"real-client prerequisite missing: {exc}")


def _poll(cond, timeout, what):
    from tests.realclient.common.wait import until

    return until(cond, timeout, what, every=0.2)


def cli(*args):
    r = subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True, timeout=300,
                       cwd=REPO)
    return r, [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]


def _stop(p):
    from tests.realclient.scenarios_worktrees import stop_group

    stop_group(p)


def _claude(root: Path) -> dict:
    from tests.realclient.runner import start_scenario

    p = _prereq(start_scenario, "clean_self", root, module=SC.MODULE)
    s_dir = root / "clean_self"
    work, config = s_dir / "work", s_dir / "config"
    a = session_uuid("clean_self")
    out: dict = {"a": a}
    try:
        _poll(lambda: (work / "inside-scan.done").exists(), 150, "the scan inside the real session")
        out["inside"] = [json.loads(l) for l in (work / "inside-scan.json").read_text().splitlines()]
        out["inside_err"] = (work / "inside-scan.err").read_text()
        # from outside, while session B is held busy by its sleep
        out["held"] = cli("clean", "capture", "--apply", "--waive-kept", "--older-than", "0s", "--claude-home",
                          str(config), "--data-dir", str(root / "data"), "--format", "json")
        out["alive_during"] = p.poll() is None
        p.wait(timeout=150)
        out["rc"] = p.returncode
        out["after"] = cli("clean", "capture", "--apply", "--waive-kept", "--older-than", "0s", "--claude-home",
                           str(config), "--data-dir", str(root / "data"), "--format", "json")
        out["verify"] = cli("clean", "verify", "--data-dir", str(root / "data"))
        out["work"], out["config"] = work, config
    finally:
        _stop(p)
    return out


def _codex(root: Path) -> dict:
    from tests.realclient.scenarios_worktrees import start_codex_worktree_session

    p, C = _prereq(start_codex_worktree_session, root)
    out: dict = {}
    try:
        chome = C["codex_home"]
        _poll(lambda: list(chome.glob("sessions/**/rollout-*.jsonl")) and list(chome.glob("thread-writer-locks/*.lock")),
              90, "the real Codex session's rollout and thread lock")
        own = {f.name for f in chome.glob("sessions/**/rollout-*.jsonl")}
        # real rollouts of other (finished) sessions in the same home
        for f in (EX / "codex-home" / "sessions").rglob("rollout-*"):
            t = chome / f.relative_to(EX / "codex-home")
            t.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, t)
        claude = root / "claude"
        shutil.copytree(EX / "claude-home", claude)
        out["scan"] = cli("clean", "scan", "--codex-home", str(chome), "--claude-home", str(claude),
                          "--older-than", "0s", "--format", "json", "--data-dir", str(root / "data"))
        out["own"] = own
        out["alive"] = p.poll() is None
    finally:
        _stop(p)
    return out


def _opencode(root: Path) -> dict:
    from tests.realclient.opencode.fixtures import require_opencode
    from tests.realclient.opencode.runner import start_scenario

    _prereq(require_opencode)
    p = start_scenario("live", root)
    data_dir = root / "live" / "xdg" / "data" / "opencode"
    out: dict = {"scans": []}
    from tests.realclient.common.wait import while_running

    def scan_once() -> None:
        if (data_dir / "opencode.db").exists():
            before = _opencode_pids(work)
            r, rs = cli("clean", "scan", "--opencode-home", str(data_dir), "--older-than", "0s", "--format",
                        "json", "--data-dir", str(root / "data"))
            if before and before & _opencode_pids(work):  # the same client ran through the whole scan
                out["scans"].append(rs)

    try:
        work = root / "live" / "work"
        while_running(lambda: p.poll() is None, scan_once, 150, every=0.3)
        p.wait(timeout=150)
    finally:
        _stop(p)
    return out


def _opencode_pids(work: Path) -> set[int]:
    """pids of processes named opencode working in ``work`` (read from /proc by the test itself)."""
    out = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            argv0 = Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0")[0]
            cwd = os.readlink(f"/proc/{d}/cwd")
        except OSError:
            continue
        if os.path.basename(argv0) in (b"opencode", b".opencode") and cwd == str(work):
            out.add(int(d))
    return out


def _gemini(root: Path) -> dict:
    from tests.realclient.gemini import client as gclient
    from tests.realclient.gemini.runner import launch

    name = "tests.realclient.scenarios_clean_gemini:clean_gemini_hold"
    cmd, env = _prereq(_gemini_launch, launch, gclient, name, root)
    root.mkdir(parents=True, exist_ok=True)
    log = open(root / "gemini.runner.log", "w")
    p = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    s_dir = root / "clean_gemini_hold"
    gdir, work = s_dir / "cli-home" / ".gemini", s_dir / "gem-clean-gemini-hold"
    out: dict = {"work": work}
    try:
        _poll(lambda: list(gdir.glob("tmp/*/chats/session-*.jsonl")) and _client_pids(work, _is_gemini), 120,
              "the real Gemini CLI mid-turn with its chat file written")
        claude = root / "claude"
        shutil.copytree(EX / "claude-home", claude)
        before = _client_pids(work, _is_gemini)
        out["scan"] = cli("clean", "scan", "--gemini-home", str(gdir), "--claude-home", str(claude),
                          "--older-than", "0s", "--format", "json", "--data-dir", str(root / "data"))
        out["through"] = bool(before & _client_pids(work, _is_gemini))
        p.wait(timeout=150)
    finally:
        _stop(p)
    return out


def _gemini_launch(launch, gclient, name, root):
    try:
        return launch(name, root, gclient.PINNED_VERSION)
    except gclient.PrerequisiteMissing as exc:
        raise clientmod.PrerequisiteMissing(str(exc))


def _is_gemini(argv: list[bytes]) -> bool:
    from sessionsift.providers.gemini import GeminiCli

    return GeminiCli.is_client_argv([a.decode("utf-8", "replace") for a in argv])


def _client_pids(work: Path, is_client) -> set[int]:
    out = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            argv = Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0")[:-1]
            cwd = os.readlink(f"/proc/{d}/cwd")
        except OSError:
            continue
        if argv and is_client(argv) and cwd == str(work):
            out.add(int(d))
    return out


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    root = tmp_path_factory.mktemp("clean-rc")
    with ThreadPoolExecutor(4) as ex:
        fs = {"claude": ex.submit(_claude, root / "c"), "codex": ex.submit(_codex, root / "x"),
              "opencode": ex.submit(_opencode, root / "o"), "gemini": ex.submit(_gemini, root / "g")}
        out = {}
        for k, f in fs.items():
            try:
                out[k] = f.result()
            except pytest.skip.Exception as exc:
                out[k] = exc
    return out


def _take(live, k):
    v = live[k]
    if isinstance(v, BaseException):
        raise v
    return v


def test_the_scan_inside_a_real_session_blocks_only_that_session(live):
    c = _take(live, "claude")
    rows = c["inside"]
    assert rows and rows[-1]["kind"] == "summary", c["inside_err"]
    head = rows[0]
    sess = {r["session_id"]: r for r in rows if r["kind"] == "session"}
    a = c["a"]
    (b,) = [s for s in sess if s != a]
    assert head["caller"]["claude_code_session_id"] == b
    anc = [x for x in head["caller"]["agent_ancestors"] if "claude-code" in x["providers"]]
    assert anc and anc[0]["cwd"] == str(c["work"])
    gb, ga = sess[b]["gates"]["activity"], sess[a]["gates"]["activity"]
    assert gb["reason"] == "session_is_live" and not sess[b]["eligible"]
    # A is in the same project as the running client, and is not blocked: the client is B
    assert ga["proven"] and ga["reason"] == "no_live_session", ga
    assert any(e.get("is_session") == b and e.get("this_commands_caller") for e in ga["evidence"]), ga


def test_capture_while_a_real_session_is_busy_leaves_it_and_takes_the_idle_one(live):
    c = _take(live, "claude")
    assert c["alive_during"], "the session ended before the outside capture ran"
    r, rows = c["held"]
    assert r.returncode == 0, r.stderr
    acts = {x["session_id"]: x for x in rows if x["kind"] == "action"}
    skipped = {x["session_id"]: x for x in rows if x["kind"] == "skipped"}
    a = c["a"]
    assert acts[a]["status"] == "removed"
    (b,) = [s for s in skipped]
    assert "live" in skipped[b]["why"]
    sess = {x["session_id"]: x for x in rows if x["kind"] == "session"}
    assert sess[b]["gates"]["activity"]["reason"] == "session_is_live"
    # after the client exited (its registry row deleted), the same command takes B too
    assert c["rc"] == 0
    r, rows = c["after"]
    acts = {x["session_id"]: x for x in rows if x["kind"] == "action"}
    assert acts[b]["status"] == "removed", rows[-1]
    assert c["verify"][0].returncode == 0


def test_a_real_codex_session_blocks_codex_only(live):
    x = _take(live, "codex")
    assert x["alive"]
    r, rows = x["scan"]
    sess = [s for s in rows if s["kind"] == "session"]
    codex = [s for s in sess if s["provider"] == "codex"]
    own = [s for s in codex if any(os.path.basename(p) in x["own"] for p in s["footprint"])]
    assert own and own[0]["gates"]["activity"]["reason"] == "session_is_live", own
    others = [s for s in codex if s not in own]
    assert others and {s["gates"]["activity"]["reason"] for s in others} == {"provider_is_running"}
    claude = [s for s in sess if s["provider"] == "claude-code"]
    assert claude and all(s["gates"]["activity"]["proven"] for s in claude)


def test_a_real_opencode_client_mid_turn_blocks_its_session(live):
    o = _take(live, "opencode")
    seen = [s for rs in o["scans"] for s in rs if s.get("kind") == "session"]
    assert seen, "no scan ran while the client was running"
    assert all(not s["eligible"] and s["gates"]["activity"]["reason"] == "agent_working_in_this_project"
               for s in seen), [s["gates"]["activity"] for s in seen]
    assert all(s["delete_reason"].startswith("delete_unsupported_for_this_provider") for s in seen)



def test_a_real_gemini_client_mid_turn_blocks_its_session_and_nothing_else(live):
    g = _take(live, "gemini")
    assert g["through"], "the client was not running through the whole scan"
    r, rows = g["scan"]
    sess = [s for s in rows if s["kind"] == "session"]
    gem = [s for s in sess if s["provider"] == "gemini-cli"]
    assert gem and all(s["gates"]["activity"]["reason"] == "agent_working_in_this_project" and not s["eligible"]
                       for s in gem), [s["gates"]["activity"] for s in gem]
    claude = [s for s in sess if s["provider"] == "claude-code"]
    assert claude and all(s["gates"]["activity"]["proven"] for s in claude)
