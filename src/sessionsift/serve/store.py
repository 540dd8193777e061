"""What the app reads, read once per change of the data: the selection, its listing, and the
rendered pages of sessions, each kept until a file under a data root changes (a watcher on the
roots, watchfiles, bumps the generation and tells the live page's listeners).

Nothing here computes an answer: the listing is `sessionsift.listing.list_sessions`, a session
`sessionsift.show.session.session_view`, and so on; the store only decides when to ask again.
Memory stays bounded: the rendered-page cache holds at most ``PAGE_CACHE_BYTES``.

Under load: a page already rendered for the current generation is handed out as its encoded
bytes without a thread (`cached`: a dict look-up on the event loop); a question or page asked by
several requests at once is computed once, the others wait for it (`_single`: one flight per key),
so fifty clients opening /live after a change cost one status scan, not fifty. The listing is
made under its own lock: a page look-up never waits behind it.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

PAGE_CACHE_BYTES = 48 << 20
_MISSING = object()


@dataclass
class Snapshot:
    generation: int
    selection: Any
    listing: Any
    by_key: dict
    """(provider, session id) -> SessionRow."""
    children: dict
    """(provider, parent session id) -> [SessionRow] of its child sessions."""


class Store:
    def __init__(self, selector: Callable[[tuple[str, ...]], Any],
                 worktree_roots: tuple[str | None, str | None, str | None] = (None, None, None),
                 workers: bool = False) -> None:
        self.selector = selector
        """targets -> a Selection (the Invocation's roots, providers and filters)."""
        self.worktree_roots = worktree_roots
        """(claude_home, codex_home, home) as the command line named them: `worktrees scan`'s roots."""
        from .worker import Workers

        self.workers: Workers | None = Workers(selector) if workers else None
        """The heavy answers' processes (serve/worker.py; the selector must pickle), None: made here."""
        self.generation = 0
        self._snap: Snapshot | None = None
        self._lock = threading.Lock()
        """Guards the caches (held for dict operations only, never while computing)."""
        self._listing_lock = threading.Lock()
        """Held while the listing of a new generation is made (the first caller makes it)."""
        self._flights: dict[tuple, threading.Lock] = {}
        self._pages: OrderedDict[tuple, bytes] = OrderedDict()
        self._page_bytes = 0
        self._memo: dict[tuple, Any] = {}
        from ..listing import Kept

        self._kept = Kept()
        """The last listing's sessions and their files' identities (listing.Kept): a new
        generation's listing reads again only what changed."""
        self.listeners: set[asyncio.Queue] = set()
        self.changed: list[str] = []
        """The paths of the last change the watcher saw."""

    # -- the data -------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The listing of the current generation (made by the first caller; the others wait)."""
        snap = self._snap
        if snap is not None and snap.generation == self.generation:
            return snap
        with self._listing_lock:
            snap = self._snap
            gen = self.generation
            if snap is not None and snap.generation == gen:
                return snap
            from ..listing import list_sessions

            sel = self.selector(())
            lst = list_sessions(sel, keep=self._kept)  # only the sessions whose files changed are read
            by_key = {(r.ref.provider, r.ref.session_id): r for r in lst.rows}
            kids: dict = {}
            for r in lst.rows:
                if r.ref.parent_session_id is not None:
                    kids.setdefault((r.ref.provider, r.ref.parent_session_id), []).append(r)
            self._snap = Snapshot(gen, sel, lst, by_key, kids)
            return self._snap

    def provider(self, name: str):
        e = self.snapshot().selection.survey.entry(name)
        return e.provider if e is not None else None

    def display(self, name: str) -> str:
        e = self.snapshot().selection.survey.entry(name)
        return e.display if e is not None else name

    def roots(self) -> list[Path]:
        """Every data root that exists (what the watcher watches)."""
        out = []
        for e in self.snapshot().selection.survey.entries:
            p = e.root.path if e.root is not None else None
            if p is not None and Path(p).exists() and Path(p) not in out:
                out.append(Path(p))
        return out

    def _single(self, k: tuple, get: Callable[[tuple], Any], make: Callable[[], Any],
                put: Callable[[tuple, Any], None]) -> Any:
        """`get(k)`, else `make()` and `put` it -- one caller makes it, the others asking for the
        same key meanwhile wait and take its answer (a failure is not kept: the next one tries)."""
        v = get(k)
        if v is not _MISSING:
            return v
        with self._lock:
            flight = self._flights.setdefault(k, threading.Lock())
        try:
            with flight:
                v = get(k)
                if v is not _MISSING:
                    return v
                v = make()
                put(k, v)
                return v
        finally:
            with self._lock:
                if self._flights.get(k) is flight:
                    del self._flights[k]

    def memo(self, key: tuple, make: Callable[[], Any], keep: int | None = None) -> Any:
        """`make()` once per generation and key (a question asked by several pages). `keep`: at
        most that many answers of this kind (``key[0]``) are kept, the oldest dropped first (a
        search's answer holds every hit's text: eight of them, not 256)."""

        def put(k, v):
            with self._lock:
                if len(self._memo) > 256:
                    self._memo.clear()
                if keep is not None:
                    same = [x for x in self._memo if x[2] == key[0]]
                    for old in same[:max(0, len(same) - keep + 1)]:
                        del self._memo[old]
                self._memo[k] = v

        return self._single(("memo", self.generation, *key), lambda k: self._memo.get(k, _MISSING), make, put)

    def compute(self, kind: str, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(selection, *args)`: in the `kind` worker process when the store has workers (its
        own selection, made with the same selector), else here over the current snapshot's."""
        if self.workers is not None:
            return self.workers.run(kind, fn, *args)
        return fn(self.snapshot().selection, *args)

    # -- rendered pages -------------------------------------------------------------------------

    def cached(self, key: tuple) -> bytes | None:
        """The page rendered for the current generation under `key`, or None (never computes,
        never waits: safe on the event loop)."""
        return self._pages.get((self.generation, *key))

    def page(self, key: tuple, make: Callable[[], str]) -> bytes:
        """The page under `key` for the current generation, as UTF-8 bytes (rendered once)."""

        def get(k):
            with self._lock:
                got = self._pages.get(k)
                if got is not None:
                    self._pages.move_to_end(k)
                    return got
            return _MISSING

        def put(k, body):
            with self._lock:
                if k[0] == self.generation and k not in self._pages:
                    self._pages[k] = body
                    self._page_bytes += len(body)
                while self._page_bytes > PAGE_CACHE_BYTES and len(self._pages) > 1:
                    _, old = self._pages.popitem(last=False)
                    self._page_bytes -= len(old)

        return self._single((self.generation, *key), get, lambda: make().encode("utf-8", "backslashreplace"), put)

    # -- changes --------------------------------------------------------------------------------

    def bump(self, paths: list[str]) -> None:
        with self._lock:
            self.generation += 1
            self.changed = paths
            self._pages.clear()
            self._page_bytes = 0
            self._memo.clear()
        for q in list(self.listeners):
            try:
                q.put_nowait(self.generation)
            except asyncio.QueueFull:
                pass

    async def watch(self, stop: asyncio.Event) -> None:
        """Bump the generation whenever a file under a data root changes (until `stop`)."""
        import watchfiles

        roots = await asyncio.to_thread(self.roots)
        if not roots:
            return
        async for changes in watchfiles.awatch(*roots, stop_event=stop, debounce=50, step=20,
                                               recursive=True, ignore_permission_denied=True):
            self.bump(sorted({p for _, p in changes}))
