"""One snapshot of the live processes (Linux /proc): cwd, argv, start ticks; and /proc/locks.

A process whose cwd cannot be read (another user's process without ptrace access, a
non-dumpable one) is counted as `uninspectable`: signal 1 cannot see it. Its argv is usually
still readable, so signal 2 does. Our own process and the git children we are running are left
out (git -C chdirs into the worktree it is asked about).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from . import gitcmd


@dataclass
class Proc:
    pid: int
    ppid: int | None
    start_ticks: int | None
    cwd: str | None
    argv: list[str] | None


@dataclass
class ProcTable:
    procs: list[Proc] = field(default_factory=list)
    uninspectable: int = 0
    """Processes whose cwd could not be read (signal 1 is blind to them)."""
    available: bool = True
    """False when /proc is not there to read (not Linux): signals 1 and 2 cannot be taken."""
    error: str | None = None

    def to_json(self) -> dict:
        return {"scanned": len(self.procs) if self.available else None, "cwd_uninspectable": self.uninspectable,
                "available": self.available, "error": self.error}


def snapshot() -> ProcTable:
    me = os.getpid()
    skip = {me} | set(gitcmd.RUNNING)
    t = ProcTable()
    try:
        names = os.listdir("/proc")
    except OSError as exc:
        return ProcTable(available=False, error=f"/proc unreadable: {exc.strerror}")
    if not os.path.isdir("/proc/self"):
        return ProcTable(available=False, error="/proc has no process entries (not Linux?)")
    for n in names:
        if not n.isdigit():
            continue
        pid = int(n)
        if pid in skip:
            continue
        base = f"/proc/{n}"
        try:
            with open(base + "/stat", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue  # gone
        r = raw.rfind(b")")
        fs = raw[r + 2:].split()
        try:
            state, ppid, start = fs[0], int(fs[1]), int(fs[19])
        except (IndexError, ValueError):
            state, ppid, start = b"?", None, None
        if state in (b"Z", b"X"):
            continue
        try:
            with open(base + "/cmdline", "rb") as fh:
                cl = fh.read()
            argv = [os.fsdecode(a) for a in cl.split(b"\0")[:-1]] if cl else []
        except OSError:
            argv = None
        if argv == []:
            continue  # a kernel thread: no argv, cwd is /
        try:
            cwd = os.readlink(base + "/cwd")
        except FileNotFoundError:
            continue
        except OSError:
            cwd = None
            t.uninspectable += 1
        t.procs.append(Proc(pid, ppid, start, cwd, argv))
    return t


def inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def held_locks() -> tuple[dict[tuple[int, int, int], list[int]] | None, str | None]:
    """(major, minor, inode) -> pids holding a lock on that file, from /proc/locks."""
    try:
        with open("/proc/locks", "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        return None, f"/proc/locks unreadable: {exc.strerror}"
    out: dict[tuple[int, int, int], list[int]] = {}
    for line in raw.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) < 6 or parts[1] == "->":
            continue  # a waiter, not a holder
        try:
            pid = int(parts[4])
            maj, mnr, ino = parts[5].split(":")
            key = (int(maj, 16), int(mnr, 16), int(ino))
        except ValueError:
            continue
        out.setdefault(key, []).append(pid)
    return out, None
