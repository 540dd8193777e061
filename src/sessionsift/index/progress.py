"""Progress of a long index build on a terminal: one line on stderr, rewritten in place, only when
stderr is a tty and the build has run for a while (never in a pipe, a file or JSON output)."""

from __future__ import annotations

import os
import sys
import time

DELAY = 0.5
"""Seconds before the first line (a short build prints nothing)."""


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else f"{n / 1e3:,.0f} kB"


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
        if not self.on or now - self.t0 < DELAY or now - self.last < 0.1:
            return
        self.last = now
        self.shown = True
        of_files = f"/{self.total_files}" if self.total_files else ""
        of_bytes = f" of {_mb(self.total_bytes)}" if self.total_bytes else ""
        self.stream.write(f"\r\x1b[Kindexing: {self.files}{of_files} transcripts, {_mb(self.bytes)}{of_bytes} "
                          f"({self.indexed} indexed now)")
        self.stream.flush()

    def done(self) -> None:
        if self.shown and os.getpid() == self.pid:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False
