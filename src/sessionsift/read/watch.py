"""Waiting for files to change: a watchfiles (inotify) thread over some roots, filtered to the
paths that matter, else stat() fingerprints every POLL_SECS. The live questions (`wait`) and
`usage blocks --live` sleep in it between assessments; nothing re-reads a file while it waits."""

from __future__ import annotations

import threading
import time
from typing import Callable

POLL_SECS = 0.5
"""Without watchfiles: how often the fingerprint is taken to notice a change."""


def change_waiter(roots: list[str], relevant: Callable[[str], bool], fingerprint: Callable[[], tuple]):
    """A callable `wait_fn(timeout) -> bool` that blocks until a path under `roots` for which
    `relevant(path)` holds changed, or `timeout` passed, and the name of the mechanism. The idle
    wait sleeps inside it: in `threading.Event.wait` fed by a watchfiles thread, or - without
    watchfiles, or when it fails - in 0.5 s sleeps between `fingerprint()` snapshots (stat()s).
    `wait_fn.stop` (an Event, watchfiles only) ends the watcher thread."""
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        watchfiles = None
    state = {"failed": False, "print": None}

    def poll(timeout: float) -> bool:
        if state["print"] is None:
            state["print"] = fingerprint()
        t_end = time.monotonic() + timeout
        while True:
            left = t_end - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(POLL_SECS, left))
            fp = fingerprint()
            if fp != state["print"]:
                state["print"] = fp
                return True

    if watchfiles is None or not roots:
        return poll, "poll"
    stop = threading.Event()
    changed = threading.Event()

    def run():
        try:
            for _ in watchfiles.watch(*roots, watch_filter=lambda _c, p: relevant(p), stop_event=stop,
                                      debounce=50, step=50, yield_on_timeout=False, rust_timeout=0,
                                      raise_interrupt=False, ignore_permission_denied=True):
                changed.set()
        except Exception:  # noqa: BLE001 - fall back to polling
            state["failed"] = True
            changed.set()

    th = threading.Thread(target=run, daemon=True)
    th.start()

    def wait_fn(timeout: float) -> bool:
        if state["failed"]:
            return poll(timeout)
        seen = changed.wait(timeout)
        changed.clear()
        return seen and not state["failed"]

    wait_fn.stop = stop  # type: ignore[attr-defined]
    return wait_fn, "watchfiles"


def stat_token(paths: list[str]) -> str | None:
    """``Provider.change_token``'s default: a digest of the metadata of every path (directories
    walked) -- name, mode, size, modification time and inode; no byte is read. None: no path."""
    import hashlib
    import os
    import stat as S

    paths = list(dict.fromkeys(paths))
    if not paths:
        return None
    h = hashlib.sha256(b"stat-v1\0")
    stack = list(reversed(paths))
    while stack:
        p = stack.pop()
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            h.update(b"-\0" + os.fsencode(p) + b"\0")
            continue
        except OSError as exc:
            h.update(b"?\0" + os.fsencode(p) + b"\0" + str(exc.errno).encode() + b"\0")
            continue
        h.update(os.fsencode(p) + f"\0{st.st_mode:o}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0".encode())
        if S.S_ISDIR(st.st_mode):
            try:
                stack.extend(sorted((e.path for e in os.scandir(p)), reverse=True))
            except OSError:
                h.update(b"unlistable\0")
    return "stat-v1:" + h.hexdigest()
