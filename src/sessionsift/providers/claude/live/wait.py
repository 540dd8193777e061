"""Claude Code's own `wait` mechanics (the ``Provider.wait_for`` capability of its reader): block
until one session reaches a condition (``providers.liveness.Condition``), or time out.

Conditions (the shared vocabulary, ``liveness.satisfied`` on the verdict):
  stop      the verdict is idle-eot or stale-dead; idle-background-open only when no owner process is
            on record (Verdict.owner_ended: its launches died with it or can no longer report)
  idle      any idle-* verdict, or stale-dead
  human     the verdict is waiting (blocked on a human)
  write:<path-regex>[:<line-regex>]
            a NEW structured write (Write/Edit/MultiEdit/NotebookEdit tool_use) in any lane whose
            file path matches and, when given, one line of whose payload matches (TAIL-015: the
            payload key differs per tool). A literal ':' in the path regex is written `\\:`.

Mechanics (TAIL-012, TAIL-016, ELI-018): baselines are byte offsets of every lane taken at start;
lanes, journals and sidecar files born after the start are discovered on every poll and read from
offset 0; a torn final line is held until it is complete. Changes are awaited with `watchfiles`
(inotify; only paths of this session and the registry count), else by stat() fingerprints every
0.5 s; the state is re-assessed on each change and at least every `heartbeat` (5) seconds so a dead
owner pid is noticed without a file event. An idle wait sleeps in the watcher, never in a loop
that re-reads the transcript.
"""

from __future__ import annotations

import os
import time
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..discover import Session
from ..model import record as R
from ....read.lines import iter_lines, parse_line
from ....read.watch import POLL_SECS, change_waiter  # noqa: F401  (POLL_SECS: the poll fallback's period)
from ...liveness import HEARTBEAT_SECS, Condition, WriteHit, parse_condition, satisfied  # noqa: F401
from .background import BackgroundScan
from .hooks import as_live_state
from .verdict import Verdict, assess


@dataclass
class WaitResult:
    satisfied: bool
    verdict: Verdict
    hit: WriteHit | None
    waited_secs: float
    polls: int
    watcher: str
    baselines: dict[str, int]
    discovered: list[str] = field(default_factory=list)


class Watch:
    """Byte-offset cursors over every file of one session (lanes + sidecar + journals)."""

    def __init__(self, session: Session):
        # a subagents/ dir born while we wait must be seen: never trust discovery's "no sidecar"
        self.session = dataclasses.replace(session, sidecar=None) if getattr(session, "sidecar", None) is False \
            else session
        self.offsets: dict[str, int] = {}
        self.lines: dict[str, int] = {}
        self.discovered: list[str] = []

    def files(self) -> list[tuple[str, str]]:
        out = [(str(l.path), l.display) for l in self.session.lanes()]
        side = self.session.sidecar_dir / "elicitations.jsonl"
        if side.exists():
            out.append((str(side), "sidecar"))
        out += [(str(p), f"journal {p.parent.name}") for p in self.session.workflow_journals()]
        return out

    def baseline(self) -> dict[str, int]:
        for p, _ in self.files():
            try:
                size = Path(p).stat().st_size
            except OSError:
                size = 0
            # a torn tail present at start belongs to the future: baseline at the last newline
            self.offsets[p] = _last_newline_end(p, size)
            self.lines[p] = -1  # unknown; line numbers counted lazily below
        return dict(self.offsets)

    def new_records(self):
        """Yield (path, display, line_no|None, obj) for complete lines appended since the last call."""
        for p, disp in self.files():
            if p not in self.offsets:
                self.offsets[p] = 0  # born after start: wholly post-start
                self.lines[p] = 1
                self.discovered.append(p)
            start = self.offsets[p]
            try:
                size = Path(p).stat().st_size
            except OSError:
                continue
            if size < start:
                start = self.offsets[p] = 0
                self.lines[p] = 1
            if size == start:
                continue
            first = self.lines.get(p, -1)
            if first < 0:
                first = _count_lines_before(p, start) + 1
            no = first
            end = start
            for line in iter_lines(p, start=start, first_line_no=first):  # holds a torn tail
                no = line.no + 1
                end = line.offset + len(line.raw) + 1
                obj = parse_line(line.raw)
                if obj is not None:
                    yield p, disp, line.no, obj
            if end > start:
                self.offsets[p] = min(end, size)
                self.lines[p] = no


def _last_newline_end(p: str, size: int) -> int:
    if size == 0:
        return 0
    with open(p, "rb") as fh:
        pos = size
        step = 65536
        while pos > 0:
            a = max(0, pos - step)
            fh.seek(a)
            chunk = fh.read(pos - a)
            i = chunk.rfind(b"\n")
            if i >= 0:
                return a + i + 1
            pos = a
    return 0


def _count_lines_before(p: str, off: int) -> int:
    n = 0
    with open(p, "rb") as fh:
        left = off
        while left > 0:
            b = fh.read(min(left, 1 << 24))
            if not b:
                break
            n += b.count(b"\n")
            left -= len(b)
    return n


def match_write(cond: Condition, obj: dict) -> tuple[str, str, str | None] | None:
    if obj.get("type") != "assistant":
        return None
    for b in R.tool_uses(obj):
        name = b.get("name")
        if not isinstance(name, str) or name not in R.WRITE_PAYLOAD_KEY:
            continue
        inp = b.get("input") if isinstance(b.get("input"), dict) else {}
        path = R.file_tool_path(inp)
        if not isinstance(path, str) or not cond.path_re.search(path):
            continue
        if cond.line_re is None:
            return name, path, None
        payloads: list[str] = []
        for k in (R.WRITE_PAYLOAD_KEY[name],):
            v = inp.get(k)
            if isinstance(v, str):
                payloads.append(v)
            elif isinstance(v, list):
                payloads += [e.get("new_string") for e in v if isinstance(e, dict) and isinstance(e.get("new_string"), str)]
        for pl in payloads:
            for ln in pl.splitlines():
                if cond.line_re.search(ln):
                    return name, path, ln
    return None


def _relevant(session: Session, home: Path) -> Callable[[str], bool]:
    """Does a changed path belong to this session's surfaces (lanes, sidecar, journals, registry)?
    Other sessions of the same project dir change too; they must not wake the wait."""
    main = os.path.realpath(session.path)
    side = os.path.realpath(session.sidecar_dir)
    reg = os.path.realpath(home / "sessions")
    prefixes = (side + os.sep, reg + os.sep)
    return lambda p: p in (main, side, reg) or p.startswith(prefixes)


def _fingerprint(w: "Watch", home: Path) -> tuple:
    """Sizes and mtimes of the session's files and of the registry directory (poll fallback)."""
    out = []
    for p, _ in w.files():
        try:
            st = os.stat(p)
            out.append((p, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((p, None, None))
    reg = home / "sessions"
    try:
        st = os.stat(reg)
        out.append((str(reg), st.st_mtime_ns, tuple(sorted(
            (e.name, e.stat().st_mtime_ns) for e in os.scandir(reg) if e.is_file()))))
    except OSError:
        out.append((str(reg), None, None))
    return tuple(out)


def _watcher(session: Session, home: Path, w: "Watch"):
    """A callable that blocks until something of this session changed or `timeout` passed (it
    returns whether a change was seen), and its name (see `change_waiter`)."""
    roots = [session.project_dir, home / "sessions"]
    return change_waiter([os.path.realpath(r) for r in roots if r.is_dir()], _relevant(session, home),
                         lambda: _fingerprint(w, home))


def wait_for(session: Session, home: Path, cond: Condition, timeout: float,
             ready: Callable[[dict[str, int]], None] | None = None, heartbeat: float = HEARTBEAT_SECS) -> WaitResult:
    """Re-assess on every reported change of the session's files, and every `heartbeat` seconds
    without one (a dead owner pid and aging children change no file)."""
    t0 = time.monotonic()
    w = Watch(session)
    base = w.baseline()
    bg = BackgroundScan(session)
    bg.update()  # the whole-file scan, before any thread exists (it may fork a helper)
    bg.parallel = False
    waiter, how = _watcher(session, home, w)
    if ready:
        ready(base)
    polls = 0
    try:
        while True:
            polls += 1
            hit = None
            if cond.kind == "write":
                for p, disp, no, obj in w.new_records():
                    m = match_write(cond, obj)
                    if m:
                        hit = WriteHit(disp, no, m[0], m[1], m[2], obj.get("timestamp"))
                        break
            v = assess(session, home, bg=bg)
            if hit is not None or satisfied(cond, as_live_state(v)):
                return WaitResult(True, v, hit, time.monotonic() - t0, polls, how, base, w.discovered)
            left = timeout - (time.monotonic() - t0)
            if left <= 0:
                return WaitResult(False, v, None, time.monotonic() - t0, polls, how, base, w.discovered)
            if cond.kind != "write":
                # keep the cursors moving so new lanes are noticed (and counted) in every mode
                for _ in w.new_records():
                    pass
            waiter(min(heartbeat, left))
    finally:
        st = getattr(waiter, "stop", None)
        if st is not None:
            st.set()
