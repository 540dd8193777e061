"""worktrees scan / sweep on worktrees made by the REAL clients, offline: Claude Code 2.1.258's
`--worktree NAME` (tests/realclient harness, scenarios_worktrees.py) and Codex CLI 0.171.0's
`exec --worktree`. Skips naming the missing prerequisite; fails under CI=true."""
from __future__ import annotations

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sessionsift.providers.claude import ClaudeCode
import re
CLAUDE_LOCK = re.compile(ClaudeCode.worktree_lock_reason)
from sessionsift.worktrees.scan import scan
from tests.realclient.common.host import poll as _poll
from tests.realclient.common.host import prereq as _prereq
from tests.realclient import scenarios_worktrees as W
from tests.worktree_util import by_path, cli, commit, git, rows

PRINT = ("wt_print_clean", "wt_print_commit", "wt_print_dirty")


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    """Three print-mode sessions, each run to its end with --worktree: clean, committed, dirty."""
    root = tmp_path_factory.mktemp("wt-rc")
    with ThreadPoolExecutor(4) as ex:
        gts = list(ex.map(lambda n: _prereq(W.run, n, root), PRINT + ("wt_agent",)))
    return root, {g["scenario"]: g for g in gts}


def _args(root: Path, name: str) -> list[str]:
    P = W.paths(name, root)
    return [str(P["work"]), "--claude-home", str(P["config"]), "--codex-home", str(root / "no-codex")]


def test_print_mode_leaves_its_worktree_and_lock_behind(printed):
    root, gts = printed
    for name in PRINT:
        wname = {"wt_print_clean": "wt-clean", "wt_print_commit": "wt-commit", "wt_print_dirty": "wt-dirty"}[name]
        P = W.paths(name, root)
        porcelain = git(P["work"], "worktree", "list", "--porcelain")
        wt = P["work"] / ".claude" / "worktrees" / wname
        assert f"worktree {wt}" in porcelain and f"branch refs/heads/worktree-{wname}" in porcelain
        reason = re.search(r"^locked (.*)$", porcelain, re.M).group(1)
        m = CLAUDE_LOCK.fullmatch(reason)
        assert m and m.group(1) == "session" and m.group(2) == wname and m.group(4).isdigit(), reason
        assert not Path(f"/proc/{m.group(3)}").exists()  # the pid it names is gone
        # its transcript is kept under the worktree's own project dir, naming the worktree
        tr = next((P["config"] / "projects").glob(f"*claude-worktrees-{wname.replace('-', '-')}/*.jsonl"))
        assert tr.stem == gts[name]["session_id"]
        ws = [json.loads(l) for l in tr.read_text().splitlines() if '"worktree-state"' in l]
        assert ws and ws[0]["worktreeSession"]["worktreePath"] == str(wt)


def test_scan_decides_the_real_clients_worktrees(printed):
    root, gts = printed
    got = {}
    for name in PRINT:
        j = rows(cli("worktrees", "scan", *_args(root, name), "--format", "json").stdout)
        (w,) = by_path(j).values()
        got[name] = w
        assert w["agent"] == "claude-code" and w["agent_kind"] == "session" and w["lock"]["state"] == "client"
        assert {s["id"] for s in w["session_ids"]} == {gts[name]["session_id"]}
        assert not any(s["positive"] for s in w["signals"]), w["signals"]
        assert j[-1]["sweep_would_stop"] is None
    assert got["wt_print_clean"]["category"] == "removable"
    assert got["wt_print_commit"]["category"] == "unmerged" and got["wt_print_commit"]["ahead"] == 1
    assert got["wt_print_dirty"]["category"] == "dirty" and got["wt_print_dirty"]["status"]["untracked"] == 1
    # the shared history moves too: divergence, flagged by name, never resolved
    work = W.paths("wt_print_commit", root)["work"]
    commit(work, "main-side.txt")
    p = cli("worktrees", "sweep", *_args(root, "wt_print_commit"))
    assert "diverged - the branch and the main line both moved" in p.stdout and "worktree-wt-commit at" in p.stdout
    assert "1 scanned: 0 live, 0 custom-locked, 1 unmerged, 0 dirty, 0 removable" in p.stdout


def test_apply_removes_the_dead_clean_merged_one_only(printed):
    root, _ = printed
    before = {n: by_path(rows(cli("worktrees", "scan", *_args(root, n), "--format", "json").stdout)) for n in PRINT}
    for n in PRINT:
        p = cli("worktrees", "sweep", *_args(root, n), "--apply", "--format", "json")
        assert p.returncode == 0, p.stderr
    clean = W.paths("wt_print_clean", root)["work"] / ".claude" / "worktrees" / "wt-clean"
    assert not clean.exists() and "wt-clean" not in git(clean.parents[2], "worktree", "list")
    assert "worktree-wt-clean" in git(clean.parents[2], "branch", "--list")  # the branch is kept
    for n in ("wt_print_commit", "wt_print_dirty"):
        (path,) = before[n]
        assert Path(path).is_dir()
    # a re-scan agrees: nothing removable left, every other decision unchanged
    for n in PRINT:
        after = by_path(rows(cli("worktrees", "scan", *_args(root, n), "--format", "json").stdout))
        if n == "wt_print_clean":
            assert after == {}
        else:
            assert {p: r["category"] for p, r in after.items()} == {p: r["category"] for p, r in before[n].items()}


def test_a_live_real_session_reads_alive_by_every_signal(tmp_path):
    """The real client, held busy in its --worktree: its process works inside the worktree, its argv
    names the session and the worktree, its registry row names the worktree, its lock names it."""
    p = _prereq(W.start, "wt_print_hold", tmp_path)
    P = W.paths("wt_print_hold", tmp_path)
    wt = P["work"] / ".claude" / "worktrees" / "wt-print-live"
    try:
        def ready():
            rowsd = P["config"] / "sessions"
            tr = list((P["config"] / "projects").glob("*wt-print-live/*.jsonl")) if (P["config"] / "projects").is_dir() else []
            return wt.is_dir() and rowsd.is_dir() and any(rowsd.glob("*.json")) and tr and \
                b"sleep 12" in tr[0].read_bytes()
        _poll(ready, 90, "the held session")
        rep = scan([str(P["work"])], claude_home=str(P["config"]), codex_home=str(tmp_path / "no-codex"))
        (w,) = rep.worktrees
        pos = {s.signal + ":" + s.source for s in w.signals if s.positive}
        assert pos == {"cwd:/proc/<pid>/cwd", "argv:/proc/<pid>/cmdline", "harness:claude-code registry",
                       "lock-owner:lock reason"}, [s.to_json() for s in w.signals]
        assert w.category == "live"
        assert "removed 0" in cli("worktrees", "sweep", str(P["work"]), "--apply", "--claude-home", str(P["config"]),
                                  "--codex-home", str(tmp_path / "no-codex")).stdout
        p.wait(timeout=120)
        assert p.returncode == 0
    finally:
        W.stop_group(p)
    # the session ended (row deleted, pid gone); its clean worktree is left behind, free to go
    w = scan([str(P["work"])], claude_home=str(P["config"]), codex_home=str(tmp_path / "no-codex")).worktrees[0]
    assert w.category == "removable", w.reason


def test_codex_worktree_session_is_seen_only_through_its_thread_lock(tmp_path):
    """Codex CLI 0.171.0 `exec --worktree`: the worktree is made under $CODEX_HOME/worktrees, but the
    process keeps its cwd in the original checkout and carries no thread id in its argv - only its
    harness listing (the thread-writer lock it holds) says the session is alive."""
    p, C = _prereq(W.start_codex_worktree_session, tmp_path)
    try:
        def ready():
            wts = list((C["codex_home"] / "worktrees").glob("*/repo"))
            if not wts:
                return None
            meta = list((C["repo"] / ".git" / "worktrees").glob("*/codex-thread.json"))
            locks = list((C["codex_home"] / "thread-writer-locks").glob("[!.]*.lock"))
            return (wts[0], meta[0], locks[0]) if meta and locks else None
        wt, meta, lockf = _poll(ready, 60, "codex's worktree, metadata and thread lock")
        tid = json.loads(meta.read_text())["ownerThreadId"]
        assert lockf.stem == tid and "locked" not in git(C["repo"], "worktree", "list", "--porcelain")
        args = [str(C["repo"]), "--claude-home", str(tmp_path / "no-claude"), "--codex-home", str(C["codex_home"])]
        w = by_path(rows(cli("worktrees", "scan", *args, "--format", "json").stdout))[str(wt)]
        assert w["agent"] == "codex" and w["codex"]["owner_thread_id"] == tid and w["lock"]["state"] == "none"
        pos = [s for s in w["signals"] if s["positive"]]
        assert [(s["signal"], s["source"]) for s in pos] == [("harness", "codex thread locks")], w["signals"]
        assert w["category"] == "live"
        # the process really is elsewhere: its cwd is the original checkout
        holders = pos[0]["pids"]
        assert holders and all(os.readlink(f"/proc/{h}/cwd") == str(C["repo"]) for h in holders)
    finally:
        W.stop_group(p)
    # the session is gone, the lock released: a clean detached worktree at main's tip is removable
    w = by_path(rows(cli("worktrees", "scan", *args, "--format", "json").stdout))[str(wt)]
    assert w["category"] == "removable", w["reason"]
    out = rows(cli("worktrees", "sweep", *args, "--apply", "--format", "json").stdout)
    assert out[-1]["results"]["removed"] == 1 and not wt.exists() and not wt.parent.exists()
    assert by_path(rows(cli("worktrees", "scan", *args, "--format", "json").stdout)) == {}


def test_a_subagents_isolated_worktree_is_an_agent_session(printed):
    """Agent(isolation="worktree"): the client makes `.claude/worktrees/agent-a<16 hex>` on branch
    `worktree-agent-a...`, locks it while the subagent runs (`claude agent ...`), unlocks it when
    the subagent ends, and keeps it because the subagent left a file there."""
    root, _ = printed
    (w,) = by_path(rows(cli("worktrees", "scan", *_args(root, "wt_agent"), "--format", "json").stdout)).values()
    assert re.fullmatch(r"agent-a[0-9a-f]{16}", Path(w["path"]).name) and w["branch"] == f"worktree-{Path(w['path']).name}"
    assert w["agent"] == "claude-code" and w["agent_kind"] == "agent" and w["lock"]["state"] == "none"
    assert w["category"] == "dirty" and w["status"]["untracked"] == 1
    assert (Path(w["path"]) / "agent-note.txt").read_text() == "from-the-agent\n"


def test_interactive_session_is_live_and_removes_its_clean_worktree_itself(tmp_path):
    p = _prereq(W.start, "wt_live_hold", tmp_path)
    P = W.paths("wt_live_hold", tmp_path)
    wt = P["work"] / ".claude" / "worktrees" / "wt-live"
    opts = dict(claude_home=str(P["config"]), codex_home=str(tmp_path / "no-codex"))
    try:
        def ready():
            d = P["config"] / "sessions"
            tr = list((P["config"] / "projects").glob("*wt-live/*.jsonl")) if (P["config"] / "projects").is_dir() else []
            return wt.is_dir() and d.is_dir() and any(d.glob("*.json")) and tr and b"sleep 10" in tr[0].read_bytes()
        _poll(ready, 90, "the held interactive session")
        (w,) = scan([str(P["work"])], **opts).worktrees
        assert w.category == "live" and w.lock.state == "client" and w.lock.name == "wt-live"
        assert {s.signal for s in w.signals if s.positive} == {"cwd", "argv", "harness", "lock-owner"}
        p.wait(timeout=120)
        assert p.returncode == 0
    finally:
        W.stop_group(p)
    # at exit the interactive client removed its clean worktree itself (print mode never does)
    assert not wt.exists() and scan([str(P["work"])], **opts).worktrees == []
