"""Progress of long work on a terminal: one line on stderr, rewritten in place, only when stderr is
a tty and the work has run for a while (never in a pipe or a file). `Progress` counts an index
build's transcripts; `Reading` the bytes of a cold read or search (read/fanout.map_halves and the
search's batches report to it). A line shown is cleared before any answer line is written
(render.Out asks `render.LIVE`), so the two never mix on one terminal. Hand-made, not rich's
Progress: it costs no import (rich.progress measured 35-330 ms to import on this machine under
load), and a search's fast path counts its start-up in milliseconds."""

from __future__ import annotations

import os
import sys
import time
from typing import Callable

DELAY = 0.5
"""Seconds before the first line (a short build prints nothing); $SESSIONSIFT_PROGRESS_DELAY
overrides it (tests show the line at once on a pseudo-terminal, with no timing)."""


def _delay() -> float:
    v = os.environ.get("SESSIONSIFT_PROGRESS_DELAY")
    if v:
        try:
            return float(v)
        except ValueError:
            pass
    return DELAY


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else f"{n / 1e3:,.0f} kB"


SHOWN: Callable[[object], None] | None = None
"""Told of the line on the terminal now (None once it is gone), by the CLI (cli/progress_run.py):
its writer clears that line before an answer line. A callable or None; this module imports no
rendering (a reader imports it)."""


def _live(line) -> None:
    if SHOWN is not None:
        SHOWN(line)


class Progress:
    def __init__(self, total_files: int | None = None, total_bytes: int | None = None, stream=None):
        self.stream = stream or sys.stderr
        self.on = bool(getattr(self.stream, "isatty", lambda: False)())
        self.pid = os.getpid()
        self.total_files, self.total_bytes = total_files, total_bytes
        self.files = self.bytes = self.indexed = 0
        self.t0 = time.monotonic()
        self.shown = False
        self.last = 0.0

    def step(self, nbytes: int, indexed: bool) -> None:
        """One transcript done (`indexed`: its index was built or updated now)."""
        if os.getpid() != self.pid:
            return  # a forked worker: the parent reports
        self.files += 1
        self.bytes += nbytes
        self.indexed += indexed
        now = time.monotonic()
        if not self.on or now - self.t0 < _delay() or now - self.last < 0.1:
            return
        self.last = now
        self.shown = True
        of_files = f"/{self.total_files}" if self.total_files else ""
        of_bytes = f" of {_mb(self.total_bytes)}" if self.total_bytes else ""
        self.stream.write(f"\r\x1b[Kindexing: {self.files}{of_files} transcripts, {_mb(self.bytes)}{of_bytes} "
                          f"({self.indexed} indexed now)")
        self.stream.flush()
        _live(self)

    def clear(self) -> None:
        """Take the line off the terminal (an answer line follows); the next step draws it again."""
        if self.shown and os.getpid() == self.pid:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False

    def done(self) -> None:
        self.clear()
        _live(None)


class Reading:
    """`VERB: N MB of M MB` for a read whose bytes are known up front (`begin`), each piece
    reported as it is done (`step`); where half of it runs in a forked worker the parent's half
    stands for both (they are balanced by bytes), and the line says `~`."""

    def __init__(self, verb: str, stream=None):
        self.verb = verb
        self.stream = stream or sys.stderr
        self.on = bool(getattr(self.stream, "isatty", lambda: False)())
        self.pid = os.getpid()
        self.t0 = time.monotonic()
        self.last = 0.0
        self.shown = False
        self.done_bytes = 0.0
        self.total = 0
        self.estimate = False

    def begin(self, total_bytes: int, estimate: bool = False) -> None:
        self.done_bytes, self.total, self.estimate = 0.0, int(total_bytes), estimate

    def step(self, nbytes: float) -> None:
        if os.getpid() != self.pid:
            return  # a forked worker: the parent reports
        self.done_bytes += nbytes
        now = time.monotonic()
        if not self.on or now - self.t0 < _delay() or now - self.last < 0.1:
            return
        self.last = now
        self.shown = True
        of = f" of {_mb(self.total)}" if self.total else ""
        self.stream.write(f"\r\x1b[K{self.verb}: {'~' if self.estimate else ''}{_mb(int(self.done_bytes))}{of}")
        self.stream.flush()
        _live(self)

    def clear(self) -> None:
        """Take the line off the terminal (an answer line follows); the next step draws it again."""
        if self.shown and os.getpid() == self.pid:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False

    def done(self) -> None:
        self.clear()
        _live(None)
