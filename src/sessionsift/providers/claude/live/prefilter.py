"""Find the candidate lines of a mapped transcript region fast: byte needles, line spans, numbers.

Measured on a 524 MB real-client transcript (benchmarks/status.py, 2 cores, Python 3.11):
- RE2 searches one literal at memory speed when the literal's FIRST byte is rare (it jumps with
  memchr on that byte): `Monitor"` ~0.05 s, but `run_in_background` ~0.28 s (`r` is common) and
  `_in_background` ~0.11 s. An alternation of several literals runs RE2's plain DFA instead, at
  ~0.4-0.5 GB/s (>1 s), so each needle gets its own pass, anchored on a rare byte. `mmap.find`
  (CPython's fastsearch) runs at 1-2 GB/s whatever the needle.
- Line numbers need the newlines counted: `bytes.count` runs at ~1 GB/s (a plain byte loop, plus
  the copy out of the mapping); a loop of `mmap.find(b"\\n")` (memchr) costs ~0.5 us per line,
  i.e. ~0.3 s on that file (~900 bytes per record; real records are rarely under 400 bytes).
- Neither `bytes.count` nor the per-line Python work releases the GIL, so a large region is split
  at a line boundary and its second half is handled by a forked child (needles, line numbers AND
  the parsing, see `run_split`) while the parent handles the first half: ~2x on 2 cores.
"""

from __future__ import annotations

import os
import pickle
import threading
from array import array
from typing import Callable, TypeVar

import re2

from ....read.lines import release

T = TypeVar("T")

PARALLEL_MIN = 64 << 20
"""Regions at least this large are split across two processes (when forking is safe)."""
RESULT_WINDOW = 4 << 20
"""A launch's tool_result is looked for this far with `mmap.find` first (it pairs sub-second)."""


def compile_needles(needles: tuple[bytes, ...]):
    """Each needle is a regex whose literal prefix starts with a rare byte (see module doc)."""
    return tuple(re2.compile(n) for n in needles)


def count_newlines(buf, a: int, b: int) -> int:
    """Newlines in buf[a:b] (memchr per line; see the module doc for why not bytes.count)."""
    n = 0
    find = buf.find
    while a < b:
        wb = min(b, a + WINDOW)
        pos = find(b"\n", a, wb)
        while pos >= 0:
            n += 1
            pos = find(b"\n", pos + 1, wb)
        if wb - a >= WINDOW:
            release(buf, a, wb)  # a long count: let the pages it passed go
        a = wb
    return n


WINDOW = 32 << 20
"""`candidate_lines` scans a region this much at a time (cut at a line end) and releases each
window's mapped pages once scanned: the resident size stays at about one window, not the file."""


def candidate_lines(buf, pats, a: int, b: int) -> tuple[array, array, array, int]:
    """Sorted (starts, ends, line numbers relative to `a` (1-based), newlines in [a, b)) of the
    lines of buf[a:b] that hold a match of one of `pats`. `a` is a line start, `b` just after a
    newline (complete lines only). The region is scanned in line-aligned windows (a needle never
    spans a newline, so the lines found are the same)."""
    ss, es, nos = array("q"), array("q"), array("q")
    rfind, find = buf.rfind, buf.find
    no = 1
    wa = a
    while wa < b:
        wb = b
        if b - wa > WINDOW:
            nl = find(b"\n", wa + WINDOW, b)
            wb = b if nl < 0 else nl + 1
        starts: set[int] = set()
        for pat in pats:
            line_end = -1
            for m in pat.finditer(buf, wa, wb):
                p = m.start()
                if p < line_end:  # same line as the previous hit of this needle
                    continue
                ls = rfind(b"\n", wa, p) + 1
                starts.add(ls if ls > wa else wa)
                line_end = find(b"\n", p, wb)
                if line_end < 0:
                    line_end = wb
        prev = wa
        for ls in sorted(starts):
            no += count_newlines(buf, prev, ls)
            prev = ls
            ss.append(ls)
            nos.append(no)
            le = find(b"\n", ls, wb)
            es.append(wb if le < 0 else le)
        no += count_newlines(buf, prev, wb)
        release(buf, wa, wb)
        wa = wb
    return ss, es, nos, no - 1


def find_id(buf, needle: bytes, after: int, end: int) -> int:
    """First `needle` (a `"tool_use_id":"<id>"` key) in buf[after:end]: a short `mmap.find` window
    first, then one RE2 pass anchored on the id's first upper-case letter (rare in JSON) rather
    than on the common `"`. -1 when absent."""
    stop = min(end, after + RESULT_WINDOW)
    pos = buf.find(needle, after, stop)
    if pos >= 0 or stop >= end:
        return pos
    key = needle[len(b'"tool_use_id":"'):]
    cut = next((i for i, c in enumerate(key) if 65 <= c <= 90), 0)
    pat = re2.compile(re2.escape(key[cut:]))
    lead = len(needle) - len(key) + cut
    w = max(after, stop - len(needle)) + lead
    while w < end:
        we = min(end, w + WINDOW)
        for m in pat.finditer(buf, w, min(end, we + len(key))):
            if m.start() >= we:
                break  # the next window's
            p = m.start() - lead
            if buf[p:p + len(needle)] == needle:
                return p
        release(buf, w, we)
        w = we
    return -1


def _split_point(buf, a: int, b: int) -> int:
    nl = buf.find(b"\n", a + (b - a) // 2, b)
    return b if nl < 0 else nl + 1


def _fork_safe() -> bool:
    """A helper only pays with a second CPU, and a fork is only safe with no other thread."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return hasattr(os, "fork") and cpus > 1 and threading.active_count() == 1


def run_split(buf, start: int, end: int, work: Callable[[int, int], T], parallel: bool = True) -> list[T]:
    """[work(start, end)], or for a large region [work(start, mid), work(mid, end)] with the second
    run in a forked child (its result pickled back; if the child fails, it is run here). `mid` is
    a line boundary. Forks only when no other thread runs (a fork copies no threads or locks)."""
    if not (parallel and end - start >= PARALLEL_MIN and _fork_safe()):
        return [work(start, end)]
    mid = _split_point(buf, start, end)
    if mid >= end:
        return [work(start, end)]
    try:
        r, w = os.pipe()
        pid = os.fork()
    except OSError:
        return [work(start, end)]
    if pid == 0:  # child: run the second half, write the pickle, leave without any cleanup
        code = 1
        try:
            os.close(r)
            view = memoryview(pickle.dumps(work(mid, end), protocol=pickle.HIGHEST_PROTOCOL))
            while view:
                view = view[os.write(w, view):]
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    chunks: list[bytes] = []
    try:
        first = work(start, mid)
    finally:
        with os.fdopen(r, "rb") as fh:
            while True:
                c = fh.read(1 << 20)
                if not c:
                    break
                chunks.append(c)
        _, status = os.waitpid(pid, 0)
    second = None
    if os.waitstatus_to_exitcode(status) == 0:
        try:
            second = pickle.loads(b"".join(chunks))
        except Exception:  # noqa: BLE001 - a broken child is redone here
            second = None
    if second is None:
        second = work(mid, end)
    return [first, second]
