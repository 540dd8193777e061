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


PEEK_WHOLE = 1 << 17
"""A plain rollout up to this size is read with one call for discovery's head and tail."""
PEEK_STREAM = 8 << 20
"""A compressed rollout whose stream ends within this many bytes is decompressed once for both."""


@dataclass
class Peek:
    """What discovery reads of a rollout: its size on disk, the first line (as :func:`head_line`)
    and the last lines (as :func:`tail_lines`), from one read where the file is small."""

    size: int
    head: bytes | None
    tail: list[bytes]


def peek(path: Path, want: int = 4) -> Peek | None:
    """Head and tail of a small rollout in one read (the same bytes :func:`head_line` and
    :func:`tail_lines` return); None for a larger one (the caller uses those two). Raises OSError."""
    name = os.fspath(path)
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        size = os.fstat(fd).st_size
        if not name.endswith(".zst"):
            if size > PEEK_WHOLE:
                return None
            data = _read_all(fd, size)
            return Peek(size, _first_line(data), _tail_of(data, want))
        import zstandard

        try:
            with open(fd, "rb", closefd=False) as f, \
                    zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True) as r:
                chunks, got = [], 0
                while got <= PEEK_STREAM:
                    c = r.read(1 << 20)
                    if not c:
                        break
                    chunks.append(c)
                    got += len(c)
                else:
                    return None
        except Exception:  # a corrupt stream: the separate head and tail readings say what they can
            return None
        data = b"".join(chunks)
    finally:
        os.close(fd)
    return Peek(size, _first_line(data), _stream_tail_of(data, want))


def _stream_tail_of(data: bytes, want: int = 4) -> list[bytes]:
    """:func:`tail_lines` of a compressed rollout whose decompressed bytes are `data`: the last
    `want` lines as :func:`lines` frames them (blank ones included; a torn final fragment only
    when it is complete JSON)."""
    from ...read.lines import keep_tail

    pieces = data.rsplit(b"\n", want + 1)
    tail = pieces.pop()
    if len(pieces) > want:  # pieces[0] holds everything before the last want + 1 newlines
        pieces = pieces[1:]
    if tail and keep_tail(tail, None, True):
        pieces.append(tail)
    return pieces[-want:] if want else []


def _first_line(data: bytes) -> bytes | None:
    """:func:`head_line` of a file whose (decompressed) bytes are `data`."""
    nl = data.find(b"\n")
    return data[:nl] if nl >= 0 else (data or None)


def _read_all(fd: int, size: int) -> bytes:
    parts, got = [], 0
    while got < size:
        b = os.pread(fd, size - got, got)
        if not b:
            break
        parts.append(b)
        got += len(b)
    return parts[0] if len(parts) == 1 else b"".join(parts)  # b"" for an empty file (no part)


def _tail_of(data: bytes, want: int = 4, window: int = 1 << 16) -> list[bytes]:
    """:func:`tail_lines` of a plain file whose bytes are `data` (the same backwards windows)."""
    size = len(data)
    pos = size
    while pos > 0:
        pos -= min(window, pos)
        if data.count(b"\n", pos) > want or pos == 0:
            break
    out: list[bytes] = []
    end = size
    while len(out) < want:  # the pieces of data[pos:] from the last, the first one only at pos 0
        i = data.rfind(b"\n", pos, end)
        if i < 0:
            if pos == 0 and data[:end].strip():
                out.append(data[:end])
            break
        piece = data[i + 1:end]
        if piece.strip():
            out.append(piece)
        end = i
    out.reverse()
    return out
