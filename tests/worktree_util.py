"""Helpers for the worktrees tests: real git repositories and worktrees made by git itself, and
real live processes. Nothing here fakes a git or process fact; the only hand-made inputs are the
ones a test says it makes (a lock reason in the client's measured format, a registry row in
the client's measured shape) and why."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd, *args, check=True) -> str:
    env = dict(os.environ) | GIT_ENV
    p = subprocess.run(["git", "-C", os.fsencode(str(cwd)), *[os.fsencode(str(a)) for a in args]],
                       capture_output=True, env=env)
    if check and p.returncode != 0:
        raise AssertionError(f"git {args}: {p.stderr.decode(errors='replace')}")
    return p.stdout.decode(errors="surrogateescape").strip()


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README").write_text("base\n")
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "initial")
    return path


def commit(cwd: Path, name: str, text: str = "x\n") -> str:
    (cwd / name).write_text(text)
    git(cwd, "add", name)
    git(cwd, "commit", "-q", "-m", f"add {name}")
    return git(cwd, "rev-parse", "HEAD")


def add_worktree(repo: Path, path: Path, branch: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if branch:
        git(repo, "worktree", "add", "-q", "-b", branch, path)
    else:
        git(repo, "worktree", "add", "-q", "--detach", path)
    return path


def claude_worktree(repo: Path, name: str) -> Path:
    """A worktree where and how `claude --worktree NAME` puts one (path, branch), made by git."""
    return add_worktree(repo, repo / ".claude" / "worktrees" / name, f"worktree-{name}")


def dead_pid() -> int:
    """The pid of a process that has exited (reaped)."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def lock_like_claude(repo: Path, wt: Path, name: str, pid: int, start: str | int | None) -> str:
    """Lock with Claude Code's own generated reason. HAND-MADE in the format the real 2.1.258 client
    writes (tests/test_worktrees_realclient.py asserts the client writes exactly this shape):
    the unit tests need a client lock naming a chosen pid, which no client run can give."""
    reason = f"claude session {name} (pid {pid}" + (f" start {start})" if start is not None else ")")
    git(repo, "worktree", "lock", "--reason", reason, wt)
    return reason


def start_ticks(pid: int) -> int:
    raw = Path(f"/proc/{pid}/stat").read_bytes()
    return int(raw[raw.rfind(b")") + 2:].split()[19])


class Sleeper:
    """A real live process (python sleeping) with a chosen cwd and extra argv words."""

    def __init__(self, cwd: Path, *argv_words: str):
        # it says when it runs (a blocking read here: no polling) and then sleeps until stopped
        code = "import sys, time\nprint('ready', flush=True)\nwhile True: time.sleep(1)"
        self.proc = subprocess.Popen([sys.executable, "-c", code, *argv_words], cwd=str(cwd),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdout.readline() == b"ready\n"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.stop()


def local_pid_domain() -> str | None:
    from sessionsift.providers.claude.live.registry import local_pid_domain as f

    return f()


def write_registry_row(home: Path, pid: int, session_id: str, cwd: str) -> Path:
    """A registry row for a live pid. HAND-MADE in the key set and value forms the real 2.1.258
    client was measured writing (`procStart` = start ticks as a string, `pidDomain`): the case it
    stands for - a session whose process cwd drifted away from its worktree and whose argv carries
    no session id - cannot be produced on demand by driving the client."""
    d = home / "sessions"
    d.mkdir(parents=True, exist_ok=True)
    row = {"pid": pid, "sessionId": session_id, "cwd": cwd, "startedAt": int(time.time() * 1000),
           "procStart": str(start_ticks(pid)), "version": "2.1.258", "kind": "interactive", "entrypoint": "cli",
           "pidDomain": local_pid_domain(), "status": "idle", "updatedAt": int(time.time() * 1000),
           "statusUpdatedAt": int(time.time() * 1000)}
    p = d / f"{pid}.json"
    p.write_text(json.dumps(row))
    return p


def cli(*args, env=None, prefix=()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=300)


def rows(stdout: str) -> list[dict]:
    return [json.loads(l) for l in stdout.splitlines() if l.strip()]


def by_path(out: list[dict]) -> dict[str, dict]:
    return {r["path"]: r for r in out if r["kind"] == "worktree"}
