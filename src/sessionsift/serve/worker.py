"""The server's heavy answers made in processes of their own, so the server keeps only their
results: the live page's status (every session assessed) and the usage page's report (every
message collected). Their working memory -- a status over 10,365 sessions holds each session's
background scan, tail and todo list; a usage collection every message -- would otherwise stay
in the server for good (the allocator keeps what a peak took: 423 MB on the 1 GiB store).

Two pools of one process each, started by ``spawn`` (a fresh interpreter: nothing of the
server's memory is inherited), each answer sent back pickled:

- ``KEEP``: one long-lived process for the live status. It keeps Claude Code's per-file reads
  (providers/claude/live: each session's background scan, its tail, its todo list, by the file's
  identity) between generations, so the status after an append reads only what changed; its
  memory is bounded by the store (one entry per session), not by how long the server runs.
- ``ONCE``: a process per answer (``max_tasks_per_child=1``) for the usage report: it ends when
  the answer is made and its memory is returned.

A worker makes its own selection with the server's selector (which must pickle: the CLI's is
``functools.partial`` over its Invocation); the page then joins the answer with the server's own
listing. Nothing in a worker writes anything: the answers are those of the same library calls
made in the server (tests/test_serve_worker.py holds them equal).
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import threading
from typing import Any, Callable, TypeVar

KEEP = "keep"
ONCE = "once"
T = TypeVar("T")


def _quiet() -> None:
    """A worker ignores SIGINT: Ctrl-C in the server's terminal stops the server, which stops its
    workers (no traceback from each of them)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run(selector: Callable[[tuple[str, ...]], Any], fn: Callable[..., T], args: tuple) -> T:
    return fn(selector(()), *args)


class Workers:
    def __init__(self, selector: Callable[[tuple[str, ...]], Any]) -> None:
        self.selector = selector
        self._ctx = multiprocessing.get_context("spawn")
        self._pools: dict[str, cf.ProcessPoolExecutor] = {}
        self._lock = threading.Lock()

    def _pool(self, kind: str) -> cf.ProcessPoolExecutor:
        with self._lock:
            p = self._pools.get(kind)
            if p is None:
                p = cf.ProcessPoolExecutor(1, mp_context=self._ctx, initializer=_quiet,
                                           max_tasks_per_child=None if kind == KEEP else 1)
                self._pools[kind] = p
            return p

    def run(self, kind: str, fn: Callable[..., T], *args: Any) -> T:
        """`fn(selection, *args)` in the `kind` worker, `fn` a module-level function (it is sent
        by name) and its answer picklable. A worker that died (killed) fails this answer and is
        started again for the next."""
        pool = self._pool(kind)
        try:
            return pool.submit(_run, self.selector, fn, args).result()
        except cf.process.BrokenProcessPool:
            with self._lock:
                if self._pools.get(kind) is pool:
                    del self._pools[kind]
            raise

    def close(self) -> None:
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for p in pools:
            procs = list(p._processes.values()) if p._processes else []
            p.shutdown(wait=False, cancel_futures=True)
            for proc in procs:  # a status under way is not waited for: the server is stopping
                proc.terminate()
