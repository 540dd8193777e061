"""`usage blocks --live`: the five-hour windows, refreshed as Claude Code transcripts grow.

The change wait is the `wait` command's (`read.watch.change_waiter`: a watchfiles thread over the
projects directory, a stat() fingerprint poll only where no watcher can run); nothing loops over
the transcripts. Each change reads every known transcript from the byte offset where the last
reading stopped (a torn final line waits for its newline) and new transcripts from 0; a file that
shrank (rewritten) makes the whole store be read again. Every `HEARTBEAT` seconds without a change
the view is redrawn anyway (the active window's clock and projection move with time).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..providers.base import Problem
from .collect import Collected, SessionInfo, Unpaid

HEARTBEAT = 30.0


@dataclass
class _File:
    offset: int
    session_id: str
    kind: str
    lane: str


class Incremental:
    """A deep Scope's `Collected` (Claude Code's) kept current by reading only appended bytes, with
    its reader's ``usage_follower`` (`prov`; default: the reader of the deep Scope)."""

    def __init__(self, scope, targets: tuple[str, ...], subagents: bool = True, prov=None):
        if prov is None:
            from ..providers import deep_name, get

            prov = get(deep_name())
        self.name = prov.name
        self.follow = prov.usage_follower(scope)
        self.scope = scope
        self.targets = targets
        self.subagents = subagents
        self.files: dict[str, _File] = {}
        self.col = Collected()
        self.col.claude_home, self.col.claude_home_source = str(scope.home.path), scope.home.source
        self.reads = 0
        self.known = list(scope.sessions)
        """The session set of the last discovery that succeeded (the start's scope at first)."""
        self.stale: str | None = None
        """Why the last refresh could not list the sessions (None: it could): the set it read is
        then the last one known, and sessions started since are not in it."""
        self.problems: dict[tuple[str, str], Problem] = {}
        """(path, why) -> what a refresh could not read, each said once."""

    def _problem(self, path: str, why: str) -> None:
        self.problems.setdefault((path, why), Problem(path, why))

    def _sessions(self):
        try:
            sc = self.follow.sessions(self.targets, self.scope.home)
        except Exception as exc:  # noqa: BLE001 - said, never hidden: the last set known is read
            self.stale = f"the sessions could not be listed ({type(exc).__name__}: {exc}); read the {len(self.known)} known before"
            self._problem(os.path.join(str(self.scope.home.path), "projects"), self.stale)
            return self.known
        self.stale = None
        for p in sc.problems:
            self._problem(p.path, p.why)
        if self.targets:
            ids = {s.session_id for s in self.scope.sessions}
            got = [s for s in sc.sessions if s.session_id in ids]
            if got:
                self.known = got
        else:
            self.known = list(sc.sessions)
        return self.known

    def refresh(self) -> bool:
        """Read what was appended; True when anything new was read."""
        changed = False
        for s in self._sessions():
            info = self.col.sessions.setdefault((self.name, s.session_id), SessionInfo(self.name, s.session_id))
            for path, kind, lane in self.follow.transcripts(s, self.subagents):
                f = self.files.get(path)
                try:
                    size = os.stat(path).st_size
                except OSError as exc:
                    if f is not None:  # a file read before that is gone or unreadable now
                        self._problem(path, exc.strerror or str(exc))
                    continue
                if f is not None and size < f.offset:
                    self._rebuild()
                    return True
                start = f.offset if f is not None else 0
                if f is not None and size == start:
                    continue
                try:
                    fs = self.follow.scan(path, start)
                except OSError as exc:
                    self._problem(path, exc.strerror or str(exc))
                    continue
                self.reads += 1
                if f is None:
                    f = self.files[path] = _File(0, s.session_id, kind, lane)
                    info.lanes += 1
                    info.paths.append(path)
                if fs.end == f.offset and not fs.records:
                    continue
                f.offset = fs.end
                if kind == "main" or info.project is None:
                    info.project = info.project or fs.cwd or os.path.basename(os.path.dirname(path))
                if fs.client is not None and kind == "main":
                    info.client = fs.client
                for e in fs.events(s.session_id, "main" if kind == "main" else lane, info.project):
                    self.col.ledger.add(e)
                info.without_usage += fs.assistant_without_usage
                self.col.without_usage += [Unpaid(self.name, s.session_id, t, info.project, m) for t, m in fs.no_usage_ts]
                changed = True
        return changed

    def _rebuild(self) -> None:
        home = (self.col.claude_home, self.col.claude_home_source)
        self.files.clear()
        self.problems.clear()
        self.col = Collected()
        self.col.claude_home, self.col.claude_home_source = home
        self.refresh()

    def fingerprint(self) -> tuple:
        out = []
        for p in self.files:
            try:
                st = os.stat(p)
                out.append((p, st.st_size, st.st_mtime_ns))
            except OSError:
                out.append((p, None, None))
        root = os.path.join(str(self.scope.home.path), "projects")
        try:
            out.append(tuple(sorted((e.name, e.stat().st_mtime_ns) for e in os.scandir(root))))
        except OSError:
            pass
        return tuple(out)
