"""Finding and opening Codex CLI rollout files (plain ``.jsonl`` and zstd ``.jsonl.zst``).

Layout: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl`` and the same
names under ``$CODEX_HOME/archived_sessions/`` (flat in the releases seen, walked recursively
anyway). Codex partitions by date: the project is only the ``cwd`` recorded inside each file.
A rollout may also be stored compressed as ``<name>.jsonl.zst``; when both exist the plain file
wins (the client itself prefers it: the compressed sibling is then stale), and the hidden
sibling is kept in ``SessionRef.extra["shadowed"]``.

A compressed rollout is streamed through the ``zstandard`` decompressor, never inflated to disk
or memory as a whole; its line numbers (``L<n>``) count lines of the decompressed stream.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ...read.lines import Line, ReadStats, iter_lines, iter_stream_lines

ROLLOUT_RE = re.compile(r"^rollout-.*\.jsonl(\.zst)?$")
UUID_TAIL_RE = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl(?:\.zst)?$")
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


@dataclass
class RolloutFile:
    path: Path
    archived: bool
    compressed: bool
    shadowed: Path | None = None


@dataclass
class WalkProblem:
    path: str
    why: str


def walk(root: Path, problems: list[WalkProblem]) -> tuple[list[RolloutFile], bool]:
    """Every rollout under ``sessions/`` and ``archived_sessions/``; returns (files, looked):
    ``looked`` is False when neither directory exists (nothing where the client keeps data)."""
    found: dict[Path, RolloutFile] = {}
    looked = False
    for sub, archived in (("sessions", False), ("archived_sessions", True)):
        top = root / sub
        if not top.is_dir():
            if top.exists() or top.is_symlink():
                problems.append(WalkProblem(str(top), "not a directory"))
            continue
        looked = True
        stack = [top]
        while stack:
            d = stack.pop()
            try:
                with os.scandir(d) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                problems.append(WalkProblem(str(d), f"cannot list directory: {exc.strerror or exc}"))
                continue
            for e in entries:
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(Path(e.path))
                        continue
                except OSError as exc:  # pragma: no cover - racing deletion
                    problems.append(WalkProblem(e.path, str(exc)))
                    continue
                if ROLLOUT_RE.match(e.name):
                    p = Path(e.path)
                    comp = e.name.endswith(".zst")
                    plain = p.with_name(e.name[:-4]) if comp else p
                    prev = found.get(plain)
                    if prev is None:
                        found[plain] = RolloutFile(p, archived, comp)
                    elif comp:  # the plain file is already there: it wins
                        prev.shadowed = p
                    else:  # plain found after its compressed sibling
                        found[plain] = RolloutFile(p, archived, False, shadowed=prev.path)
    return sorted(found.values(), key=lambda f: str(f.path)), looked


def thread_id_from_name(name: str) -> str | None:
    m = UUID_TAIL_RE.search(name)
    return m.group(1) if m else None


def open_stream(path: Path):
    """A binary stream of the decompressed rollout (the caller closes it)."""
    import zstandard  # lazy: only compressed rollouts pay for it

    f = open(path, "rb")
    try:
        return _Closing(zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True), f)
    except Exception:
        f.close()
        raise


class _Closing:
    def __init__(self, reader, f):
        self._r, self._f = reader, f

    def read(self, n: int = -1) -> bytes:
        return self._r.read(n)

    def close(self) -> None:
        try:
            self._r.close()
        finally:
            self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def lines(path: Path, stats: ReadStats | None = None) -> Iterator[Line]:
    """The physical lines of a rollout, plain (mapped) or compressed (streamed), with the shared
    reading rules (NUL runs, torn tail) of :mod:`sessionsift.read.lines`."""
    if str(path).endswith(".zst"):
        with open_stream(path) as s:
            yield from iter_stream_lines(s, stats)
    else:
        yield from iter_lines(path, stats=stats)


def head_line(path: Path, limit: int = 1 << 24) -> bytes | None:
    """The first line (up to ``limit`` bytes) without parsing the rest of the file."""
    if str(path).endswith(".zst"):
        with open_stream(path) as s:
            buf = b""
            while len(buf) < limit:
                chunk = s.read(1 << 16)
                if not chunk:
                    break
                buf += chunk
                nl = buf.find(b"\n")
                if nl >= 0:
                    return buf[:nl]
            return buf or None
    with open(path, "rb") as f:
        buf = b""
        while len(buf) < limit:
            chunk = f.read(1 << 16)
            if not chunk:
                break
            buf += chunk
            nl = buf.find(b"\n", len(buf) - len(chunk))
            if nl >= 0:
                return buf[:nl]
        return buf or None


def tail_lines(path: Path, want: int = 4, window: int = 1 << 16) -> list[bytes]:
    """The last few complete lines (plain: read backwards from the end; compressed: the whole
    stream is decompressed, keeping only a small ring of lines)."""
    if str(path).endswith(".zst"):
        from collections import deque

        ring: deque[bytes] = deque(maxlen=want)
        for ln in lines(path):
            ring.append(ln.raw)
        return list(ring)
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        pos = size
        buf = b""
        while pos > 0:
            step = min(window, pos)
            pos -= step
            f.seek(pos)
            buf = f.read(step) + buf
            if buf.count(b"\n") > want or pos == 0:
                break
    parts = buf.split(b"\n")
    if pos > 0:
        parts = parts[1:]  # the first piece may be a partial line
    return [p for p in parts if p.strip()][-want:]
