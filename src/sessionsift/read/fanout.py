"""Answering over many sessions with two processes: the sessions are cut in two contiguous halves
by bytes, a forked worker answers the second half while this process answers the first, and the
worker's answers come back pickled, in order -- so the result is the list a single process gives.

Used by the shared-records questions (search, stats, list, files) when the selected sessions hold
at least PARALLEL_MIN_BYTES, and by discovery of stores with many files (each file's peek). No fork when there is one CPU, no ``os.fork``, another thread runs
(a fork copies no threads or locks) or SESSIONSIFT_NO_FORK is set; a worker that fails only costs
time (this process then answers its half itself). Readers keep no state across sessions that a
fork could corrupt: the SQLite readers open their own connections in a child (sqlite_ro).
"""

from __future__ import annotations

import os
import pickle
import threading
from typing import Any, Callable, Iterator, Sequence, TypeVar

from .nogc import no_gc  # noqa: F401  (its callers import it from here too)

T = TypeVar("T")
R = TypeVar("R")

PARALLEL_MIN_BYTES = 8 << 20
"""Below this many bytes in all, one process answers (a fork and its pickled answers cost more)."""
UNKNOWN_SIZE = 64 << 10
"""The weight of a session whose size is not attributable (rows of a shared database)."""


def can_fork() -> bool:
    return (hasattr(os, "fork") and (os.cpu_count() or 1) >= 2 and threading.active_count() == 1
            and not os.environ.get("SESSIONSIFT_NO_FORK"))


def split_point(sizes: Sequence[int]) -> int:
    """The index where the second half (by bytes) starts."""
    total = sum(sizes)
    acc = 0
    for i, s in enumerate(sizes):
        if acc + s / 2 >= total / 2:
            return i
        acc += s
    return len(sizes)


PROGRESS: Any = None
"""A progress line (index/progress.Reading) the CLI sets for a command that reads much cold:
every map_halves reports its items' bytes to it as they are done (None: nothing reports)."""


def _reported(fn, sizes: Sequence[int], scale: float):
    prog = PROGRESS
    if prog is None:
        return fn
    it = iter(sizes)

    def run(x):
        r = fn(x)
        prog.step(next(it, 0) * scale)
        return r
    return run


def map_halves(fn: Callable[[T], R], items: Sequence[T], sizes: Sequence[int | None],
               min_bytes: int = PARALLEL_MIN_BYTES) -> list[R]:
    """``[fn(x) for x in items]``, the second half computed in a forked worker when the items hold
    at least `min_bytes` (`sizes`: bytes per item, None = not attributable). `fn` must not raise
    (wrap failures in its result) and its results must pickle."""
    w = [UNKNOWN_SIZE if s is None else max(int(s), 1) for s in sizes]
    if PROGRESS is not None:
        PROGRESS.begin(sum(w))
    if len(items) < 2 or sum(w) < min_bytes or not can_fork():
        return list(map(_reported(fn, w, 1.0), items))
    cut = split_point(w)
    if cut <= 0 or cut >= len(items):
        return list(map(_reported(fn, w, 1.0), items))
    worker = Worker(lambda: [fn(x) for x in items[cut:]])
    try:
        if PROGRESS is not None:  # the halves are balanced by bytes: this one stands for both
            PROGRESS.begin(sum(w), estimate=True)
        mine = _reported(fn, w[:cut], sum(w) / max(sum(w[:cut]), 1))
        head = [mine(x) for x in items[:cut]]
        tail = worker.result()
    finally:
        worker.close()
    if tail is None or len(tail) != len(items) - cut:
        tail = [fn(x) for x in items[cut:]]
    return head + tail


class Worker:
    """`job()` run in a forked process; :meth:`result` is its pickled return value, or None when
    the worker failed (the caller then does the work itself)."""

    def __init__(self, job) -> None:
        self.pid = 0
        self.reader = None
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return
        if pid == 0:  # the worker: compute, send, exit without the parent's cleanup
            code = 1
            try:
                os.close(r)
                import gc

                gc.disable()  # a short-lived process: no cycles worth collecting
                data = pickle.dumps(job(), pickle.HIGHEST_PROTOCOL)
                with os.fdopen(w, "wb") as f:
                    f.write(data)
                code = 0
            except BaseException:
                pass
            finally:
                os._exit(code)
        os.close(w)
        self.pid = pid
        self.reader = os.fdopen(r, "rb")

    def result(self):
        if self.reader is None:
            return None
        try:
            data = self.reader.read()
        except OSError:
            data = b""
        status = self.close()
        if status != 0 or not data:
            return None
        try:
            return pickle.loads(data)
        except Exception:
            return None

    def close(self) -> int | None:
        """Idempotent. Closing our end first: a worker still writing fails and exits."""
        if self.reader is None:
            return None
        self.reader.close()
        self.reader = None
        _, status = os.waitpid(self.pid, 0)
        return status


def imap_forked(fn: Callable[[int], R], n: int, workers: int) -> Iterator[R]:
    """``fn(0), fn(1), ..., fn(n-1)`` in that order, computed by `workers` forked processes that
    each take the next task as soon as they are free (tasks of uneven cost balance out). A task
    is its index (the data is inherited through the fork); each result comes back pickled,
    length-prefixed, on the worker's own pipe. The cost of multiprocessing.Pool without it: no
    import (~10 ms), no feeder and result threads, no queue locks. A worker that dies costs time
    only: its unfinished tasks are computed here. The caller checks `can_fork()` first."""
    import select
    import struct

    if n <= 0:
        return
    import gc

    gc.freeze()  # the workers' collector never walks (so never touches, copies) our objects
    procs: list[tuple[int, int, int]] = []  # (pid, task write fd, result read fd)
    try:
        for _ in range(max(1, min(workers, n))):
            tr, tw = os.pipe()
            rr, rw = os.pipe()
            try:
                pid = os.fork()
            except OSError:
                for fd in (tr, tw, rr, rw):
                    os.close(fd)
                break
            if pid == 0:  # the worker: tasks in, results out, exit without the parent's cleanup
                code = 1
                try:
                    os.close(tw)
                    os.close(rr)
                    for _p, w, r in procs:  # siblings' pipes are not ours
                        os.close(w)
                        os.close(r)
                    gc.disable()
                    while True:
                        b = _read_exact(tr, 4)
                        if b is None:
                            break
                        (i,) = struct.unpack("<i", b)
                        if i < 0:
                            break
                        data = pickle.dumps(fn(i), pickle.HIGHEST_PROTOCOL)
                        _write_all(rw, struct.pack("<Q", len(data)) + data)
                    code = 0
                except BaseException:
                    pass
                finally:
                    os._exit(code)
            os.close(tr)
            os.close(rw)
            procs.append((pid, tw, rr))
    finally:
        gc.unfreeze()
    pending: dict[int, int] = {}  # result fd -> task it is computing
    by_fd = {r: w for _p, w, r in procs}
    nxt = 0
    done: dict[int, R] = {}
    lost: list[int] = []
    want = 0

    def give(r: int) -> None:
        nonlocal nxt
        w = by_fd[r]
        if nxt < n:
            try:
                _write_all(w, struct.pack("<i", nxt))
                pending[r] = nxt
                nxt += 1
                return
            except OSError:
                pass
        try:
            _write_all(w, struct.pack("<i", -1))
        except OSError:
            pass

    try:
        for _p, _w, r in procs:
            give(r)
        while want < n:
            while want in done:
                yield done.pop(want)
                want += 1
            if want >= n:
                break
            if not pending:  # no worker left (none could fork, or all died): the rest here
                while nxt < n:
                    lost.append(nxt)
                    nxt += 1
                for i in sorted(lost):
                    if i >= want:
                        done[i] = fn(i)
                lost.clear()
                continue
            ready, _, _ = select.select(list(pending), [], [])
            for r in ready:
                i = pending.pop(r)
                head = _read_exact(r, 8)
                body = _read_exact(r, struct.unpack("<Q", head)[0]) if head is not None else None
                if body is None:  # the worker died: its task is done here, it gets no more
                    done[i] = fn(i)
                    continue
                done[i] = pickle.loads(body)
                give(r)
    finally:
        for pid, w, r in procs:
            for fd in (w, r):
                try:
                    os.close(fd)
                except OSError:
                    pass
        for pid, _w, _r in procs:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _read_exact(fd: int, k: int) -> bytes | None:
    """k bytes from fd, or None at end of file before them."""
    parts = []
    while k > 0:
        b = os.read(fd, min(k, 1 << 20))
        if not b:
            return None
        parts.append(b)
        k -= len(b)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    mv = memoryview(data)
    while mv:
        k = os.write(fd, mv)
        mv = mv[k:]
