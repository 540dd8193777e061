"""One snapshot of the live processes (Linux /proc): cwd, argv, start ticks; and /proc/locks.

A process whose cwd cannot be read (another user's process without ptrace access, a
non-dumpable one) is counted as `uninspectable`: signal 1 cannot see it. Its argv is usually
still readable, so signal 2 does. Our own process and the git children we are running are left
out (git -C chdirs into the worktree it is asked about).
"""

from __future__ import annotations

import os
import stat as S
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


@dataclass
class OpenFiles:
    """Every file a live process holds open (``/proc/<pid>/fd``), taken once. A holder is matched
    by the file's identity (device and inode, through the descriptor's magic link), never by
    the path alone: /proc shows a path as the holder's mount namespace names it, so another
    namespace's file of the same name is not ours (the path only narrows which links to stat)."""

    by_path: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    """path as /proc shows it -> (pid, fd) holding it."""
    below: dict[str, set[str]] = field(default_factory=dict)
    """directory -> the open paths under it."""
    blind: list[int] = field(default_factory=list)
    """Processes of our own user (or any, when we are root) whose descriptors could not be listed:
    a writer among them cannot be ruled out."""
    blind_other: int = 0
    """Processes of other users whose descriptors could not be listed (they can hold our files
    only through permissions those files grant)."""
    available: bool = True
    error: str | None = None

    def holders(self, paths) -> list[tuple[int, str]]:
        """(pid, path) for every process holding one of ``paths`` open, or (a directory) a file
        under it -- the very file (device and inode), not another of the same name."""
        out: set[tuple[int, str]] = set()
        for p in paths:
            a = os.path.abspath(os.fspath(p))
            r = os.path.join(os.path.realpath(os.path.dirname(a)), os.path.basename(a))
            cands = set(self.below.get(r, ())) | ({r} if r in self.by_path else set())
            if not cands:
                continue
            ids = _identities(r)
            for c in cands:
                for pid, fd in self.by_path.get(c, ()):
                    try:
                        st = os.stat(f"/proc/{pid}/fd/{fd}")
                    except OSError:
                        continue  # closed or gone meanwhile
                    if (st.st_dev, st.st_ino) in ids:
                        out.add((pid, os.fspath(p)))
        return sorted(out)


def _identities(top: str) -> set[tuple[int, int]]:
    """(device, inode) of ``top`` and of everything under it (symlinks not followed)."""
    out: set[tuple[int, int]] = set()
    stack = [top]
    while stack:
        q = stack.pop()
        try:
            st = os.lstat(q)
        except OSError:
            continue
        out.add((st.st_dev, st.st_ino))
        if S.S_ISDIR(st.st_mode):
            try:
                stack += [os.path.join(q, n) for n in os.listdir(q)]
            except OSError:
                pass
    return out


def open_files(skip: set[int] | None = None) -> OpenFiles:
    """One pass over ``/proc/*/fd`` (our own process and ``skip`` left out)."""
    me = os.getpid()
    skip = {me} | set(skip or ())
    out = OpenFiles()
    try:
        names = os.listdir("/proc")
    except OSError as exc:
        return OpenFiles(available=False, error=f"/proc unreadable: {exc.strerror}")
    if not os.path.isdir("/proc/self/fd"):
        return OpenFiles(available=False, error="/proc has no per-process descriptors (not Linux?)")
    uid = os.getuid()
    for n in names:
        if not n.isdigit() or int(n) in skip:
            continue
        pid = int(n)
        d = f"/proc/{n}/fd"
        try:
            fds = os.listdir(d)
        except FileNotFoundError:
            continue  # gone
        except OSError:
            try:
                owner = os.stat(f"/proc/{n}").st_uid
            except OSError:
                continue
            if uid == 0 or owner == uid:
                out.blind.append(pid)
            else:
                out.blind_other += 1
            continue
        for fd in fds:
            try:
                t = os.readlink(f"{d}/{fd}")
            except OSError:
                continue
            if not t.startswith("/") or t.endswith(" (deleted)"):
                continue  # a pipe, a socket, an anonymous inode, an unlinked file
            if t not in out.by_path:
                out.by_path[t] = []
                up = os.path.dirname(t)
                while up and up != "/":
                    out.below.setdefault(up, set()).add(t)
                    up = os.path.dirname(up)
            out.by_path[t].append((pid, fd))
    return out


def argv0(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            a = fh.read().split(b"\0")[0]
        return os.fsdecode(a) if a else None
    except OSError:
        return None
