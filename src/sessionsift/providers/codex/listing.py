"""Codex CLI's own listing of its running sessions, and its worktrees' ownership metadata.

Codex CLI (0.171.0, measured with the real client): while a thread is being written the process
holds a ``flock`` on ``$CODEX_HOME/thread-writer-locks/<thread id>.lock`` (released at exit, the
file left behind): that held lock is its listing of running sessions, read from /proc/locks
without taking the lock. ``codex exec --worktree`` creates ``$CODEX_HOME/worktrees/<4 hex>/<repo
name>`` (detached HEAD, no lock), writes ``{"version":1,"ownerThreadId":"<thread id>"}`` to
``codex-thread.json`` in the worktree's git dir, and keeps its OWN cwd in the original checkout,
with no thread id in its argv.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from ..listing import Listing, LiveEntry

SOURCE = "codex thread locks"


def session_listing(home: Path, source: str, held_locks) -> tuple[Listing, list[LiveEntry]]:
    """``held_locks``: () -> ((major, minor, inode) -> holder pids, error), from /proc/locks."""
    d = Path(home) / "thread-writer-locks"
    lst = Listing("codex", str(d), str(home), source, "present", source=SOURCE)
    out: list[LiveEntry] = []
    try:
        names = sorted(os.listdir(d))
    except FileNotFoundError:
        lst.state = "absent"
        lst.note = ("no thread-writer-locks directory: no Codex thread was ever written under this home"
                    if Path(home).is_dir() else "the Codex home itself does not exist")
        return lst, out
    except OSError as exc:
        lst.state = f"unreadable: {exc.strerror}"
        return lst, out
    locks, err = held_locks()
    if locks is None:
        lst.state = f"unreadable: {err}"
        return lst, out
    entries = 0
    for n in names:
        if not n.endswith(".lock") or n.startswith("."):
            continue
        p = d / n
        entries += 1
        lst.entries = entries
        try:
            st = os.stat(p)
        except FileNotFoundError:
            continue
        except OSError as exc:
            lst.unreadable.append((str(p), f"unreadable: {exc.strerror}"))
            lst.state = "unreadable: a thread lock file could not be read"
            continue
        holders = locks.get((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino), [])
        out.append(LiveEntry(n[:-5], str(p), list(holders), None, keeps=bool(holders),
                             state="held" if holders else "not held",
                             detail=f"thread-writer lock held by pid(s) {holders}" if holders else "not held"))
    lst.live = sum(1 for t in out if t.keeps)
    return lst, out


META = ("codex-thread.json", "codex-worktree.json")


def worktree_metadata(admin: str | None) -> tuple[dict | None, str | None]:
    """Codex's ownership metadata in a worktree's git dir: ({file, owner_thread_id, manager},
    problem). `codex-thread.json` is what 0.171.0 writes; `codex-worktree.json` is the newer
    manager's (openai/codex codex-rs/worktree/src/metadata.rs)."""
    if not admin:
        return None, None
    found: dict | None = None
    for name in META:
        p = os.path.join(admin, name)
        try:
            with open(p, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            continue
        except OSError as exc:
            return found, f"{p}: unreadable: {exc.strerror}"
        try:
            o = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return found or {"file": p, "owner_thread_id": None, "manager": None}, f"{p}: not JSON"
        if not isinstance(o, dict):
            continue
        tid = o.get("ownerThreadId")
        cur = {"file": p, "owner_thread_id": tid if isinstance(tid, str) and tid else None,
               "manager": o.get("manager") if isinstance(o.get("manager"), str) else None}
        if found is None or (found["owner_thread_id"] is None and cur["owner_thread_id"]):
            found = cur
    return found, None


def worktree_roots(home: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """Directories under `$CODEX_HOME/worktrees/` (up to three levels, as Codex's own manager
    looks) that hold a `.git` entry."""
    root = Path(home) / "worktrees"
    out: list[str] = []
    problems: list[tuple[str, str]] = []

    def walk(d: str, depth: int) -> None:
        try:
            entries = list(os.scandir(d))
        except FileNotFoundError:
            return
        except OSError as exc:
            problems.append((d, f"unreadable: {exc.strerror}"))
            return
        for e in entries:
            if not e.is_dir(follow_symlinks=False):
                continue
            if os.path.lexists(os.path.join(e.path, ".git")):
                out.append(e.path)
            elif depth < 3:
                walk(e.path, depth + 1)

    walk(str(root), 1)
    return sorted(out), problems
