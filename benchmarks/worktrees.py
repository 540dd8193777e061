"""A repository with many worktrees in every state: `worktrees scan`, `sweep`, `sweep --apply`,
and a re-scan, with the full tally of each (issue 15's closing run).

Everything is made by git itself (`git worktree add/lock`, real commits) and the live ones are
real processes. Two inputs are hand-made in the shapes the real clients were measured writing
(tests/test_worktrees_realclient.py asserts those shapes against the real clients): the client's
lock reason naming a chosen pid, a registry row for a process whose cwd drifted away, and
Codex's `codex-thread.json` + a held thread-writer lock. Built in a temp dir, removed at the end.

Usage: .venv/bin/python benchmarks/worktrees.py [--removable 488] [--keep DIR]

Reference measured in the same run: `git status --porcelain` run serially in every worktree
(the floor of any honest clean/dirty check), so the ratio says what the rest of the scan costs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.worktree_util import (Sleeper, add_worktree, claude_worktree, commit, dead_pid, git,  # noqa: E402
                                 lock_like_claude, make_repo, start_ticks, write_registry_row)

SS = [sys.executable, "-m", "sessionsift"]


def build(base: Path, n_removable: int) -> tuple[Path, Path, Path, list]:
    repo = make_repo(base / "repo")
    ch, cx = base / "claude-home", base / "codex-home"
    ch.mkdir()
    cx.mkdir()
    procs: list = []
    dead = dead_pid()
    # removable: dead Claude Code sessions (their stale lock left behind, as print mode does) and
    # Codex managed worktrees whose thread is not running
    n_cx = n_removable // 5
    for i in range(n_removable - n_cx):
        wt = claude_worktree(repo, f"s{i:04d}")
        lock_like_claude(repo, wt, f"s{i:04d}", dead, 1)
    for i in range(n_cx):
        wt = add_worktree(repo, cx / "worktrees" / f"{i:04x}" / "repo")
        admin = Path(git(wt, "rev-parse", "--absolute-git-dir"))
        (admin / "codex-thread.json").write_text(json.dumps({"version": 1, "ownerThreadId": str(uuid.uuid4())}))
    # live, one per signal
    lv = [claude_worktree(repo, f"live-{k}") for k in ("cwd", "argv", "registry", "lease")]
    lv.append(add_worktree(repo, cx / "worktrees" / "live" / "repo"))
    for wt in lv[:4]:
        lock_like_claude(repo, wt, wt.name, dead, 1)
    procs.append(Sleeper(lv[0]))                                      # 1 cwd
    sid = str(uuid.uuid4())
    (ch / "projects" / "".join(c if c.isalnum() else "-" for c in os.path.realpath(lv[1]))).mkdir(parents=True)
    (ch / "projects" / "".join(c if c.isalnum() else "-" for c in os.path.realpath(lv[1])) / f"{sid}.jsonl").write_text("")
    procs.append(Sleeper(base, "--resume", sid))                      # 2 argv
    s3 = Sleeper(base)
    procs.append(s3)
    write_registry_row(ch, s3.pid, str(uuid.uuid4()), str(lv[2]))    # 3 harness: registry only
    s4 = Sleeper(base)
    procs.append(s4)
    git(repo, "worktree", "unlock", lv[3])
    lock_like_claude(repo, lv[3], lv[3].name, s4.pid, start_ticks(s4.pid))  # the client's lease
    tid = str(uuid.uuid4())
    wtc = lv[4]
    admin = Path(git(wtc, "rev-parse", "--absolute-git-dir"))
    (admin / "codex-thread.json").write_text(json.dumps({"version": 1, "ownerThreadId": tid}))
    (cx / "thread-writer-locks").mkdir()
    lockf = cx / "thread-writer-locks" / f"{tid}.lock"
    lockf.touch()
    # the holder gets the path through its environment, so its argv carries no thread id
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl,os,time\nf=open(os.environ['LOCKF'])\n"
                               "fcntl.flock(f, fcntl.LOCK_EX)\nwhile True: time.sleep(1)"], cwd=str(base),
                              env=dict(os.environ, LOCKF=str(lockf)))
    procs.append(holder)                                              # 3 harness: codex thread lock
    # custom-locked: standing infrastructure, some in the client's own location
    for i in range(5):
        wt = claude_worktree(repo, f"infra-{i}") if i < 3 else add_worktree(repo, base / f"infra-{i}", f"infra-{i}")
        git(repo, "worktree", "lock", "--reason", f"nightly job {i}", wt)
    # unmerged: dead sessions with commits; the first three diverge when the main line moves
    def unmerged(i: int) -> None:
        wt = claude_worktree(repo, f"work-{i}")
        commit(wt, f"work-{i}.txt")
        lock_like_claude(repo, wt, wt.name, dead, 1)

    for i in range(3):
        unmerged(i)
    # dirty: uncommitted files
    for i in range(3):
        wt = claude_worktree(repo, f"dirty-{i}")
        (wt / "scratch.txt").write_text("unsaved\n")
        lock_like_claude(repo, wt, wt.name, dead, 1)
    # not-session: a person's own worktrees
    for i in range(3):
        add_worktree(repo, base / f"mine-{i}", f"mine-{i}")
    # unregistered: a directory in the client's location that git does not list
    (repo / ".claude" / "worktrees" / "stray").mkdir()
    # the shared history moves: work-0..2 diverge, the removable ones are only behind
    commit(repo, "main-moved.txt")
    for i in range(3, 8):
        unmerged(i)
    return repo, ch, cx, procs


def timed(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    return time.perf_counter() - t0, p


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--removable", type=int, default=488)
    ap.add_argument("--keep", default=None, help="build here and keep it (default: a temp dir, removed)")
    a = ap.parse_args()
    base = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="ssift-wt-bench-"))
    procs = []
    try:
        t0 = time.perf_counter()
        repo, ch, cx, procs = build(base, a.removable)
        print(f"built {base} in {time.perf_counter() - t0:.1f} s; load {os.getloadavg()[0]:.2f}")
        opts = [str(repo), "--claude-home", str(ch), "--codex-home", str(cx)]
        wts = [l[len("worktree "):] for l in git(repo, "worktree", "list", "--porcelain").splitlines()
               if l.startswith("worktree ")][1:]
        t_ref = time.perf_counter()
        for w in wts:
            subprocess.run(["git", "-C", w, "status", "--porcelain"], capture_output=True)
        t_ref = time.perf_counter() - t_ref
        t_scan, p = timed(SS + ["worktrees", "scan", *opts])
        t_nosize, _ = timed(SS + ["worktrees", "scan", *opts, "--no-size"])
        print(f"scan: {t_scan:.2f} s ({t_nosize:.2f} s with --no-size) for {len(wts)} git worktrees; "
              f"`git status` serially in each: {t_ref:.2f} s = {t_scan / t_ref:.1f}x; exit {p.returncode}")
        lines = p.stdout.splitlines()
        print("--- scan: every worktree held back (category, path, why), then the closing lines")
        for i, l in enumerate(lines):
            if re.match(r"^(live|custom-locked|unmerged|dirty|not-session|unknown|unverified|unregistered) ", l):
                print(l.split("  [")[0].replace(str(base), "<tmp>"))
                print("   ", lines[i + 1].strip().replace(str(base), "<tmp>"))
        print("\n".join(l.replace(str(base), "<tmp>") for l in lines[-14:]))
        t_dry, p = timed(SS + ["worktrees", "sweep", *opts])
        print(f"--- sweep (dry run, {t_dry:.2f} s)")
        print("\n".join(p.stdout.splitlines()[-3:]))
        t_apply, p = timed(SS + ["worktrees", "sweep", *opts, "--apply", "--no-size"])
        print(f"--- sweep --apply ({t_apply:.2f} s, exit {p.returncode})")
        print("\n".join(p.stdout.splitlines()[-4:]))
        t_re, p = timed(SS + ["worktrees", "scan", *opts, "--format", "json"])
        summ = json.loads(p.stdout.splitlines()[-1])
        print(f"--- re-scan ({t_re:.2f} s): {summ['tally_line']}")
        left = [l for l in git(repo, "worktree", "list", "--porcelain").splitlines() if l.startswith("worktree ")]
        print(f"git worktree list now: {len(left) - 1} linked worktrees")
        return 0
    finally:
        for pr in procs:
            if isinstance(pr, Sleeper):
                pr.stop()
            else:
                pr.kill()
                pr.wait()
        if not a.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
