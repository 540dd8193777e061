"""Framing of a JSONL transcript into physical lines, and the reading rules for damaged bytes.

Invariants
- The record unit is the physical line (REC-001). Line numbers are 1-based and count every
  newline-terminated line, blank ones included, so `L<n>` addresses agree with `sed -n Np`.
- A file is mapped, never loaded as objects: callers get one line at a time.
- NUL bytes are the absence of a write (a crash left allocated, never-written blocks); they are
  dropped before parsing and each line that held any is counted as `zero_filled_lines`.
  A record that follows a NUL run on the same line is read.
- A final fragment with no trailing newline is *torn*: it is held back (reported as
  `torn_tail_bytes`), never counted malformed, unless it parses as a complete JSON object.
- Invalid UTF-8 is tolerated: the line is decoded with replacement characters and counted as
  `invalid_utf8_lines`.
- A line that is still not a JSON object after all that is `malformed`; a strict reading fails on
  it naming file and line.
"""

from __future__ import annotations

import mmap
import os
import re
from dataclasses import dataclass, field
from typing import Iterator

import orjson

from ..errors import MalformedLine, UsageError


@dataclass(slots=True)
class Line:
    """One physical line of a transcript."""

    no: int
    """1-based line number."""
    offset: int
    """Byte offset of the line's first byte in the file."""
    raw: bytes
    """The line's bytes without the trailing newline (NULs still in place)."""


@dataclass
class ReadStats:
    """What a reading did and did not take in. Counts are of this reading only."""

    files: int = 0
    bytes: int = 0
    lines: int = 0
    blank_lines: int = 0
    records: int = 0
    malformed_lines: list[int] = field(default_factory=list)
    zero_filled_lines: int = 0
    invalid_utf8_lines: int = 0
    torn_tail_bytes: int = 0
    non_object_lines: int = 0
    bridges: list[tuple[int, int, int, bool]] = field(default_factory=list)
    """Records whose parent lay in an omitted line, bridged across it (providers/claude/model/lane.py):
    (record line, omitted line, line bridged to, whether it opens the destroyed record's turn)."""

    def omissions(self) -> dict[str, int]:
        """The omissions of this reading, by name (zero entries are real zeros: we looked)."""
        return {
            "malformed_lines": len(self.malformed_lines),
            "zero_filled_lines": self.zero_filled_lines,
            "invalid_utf8_lines": self.invalid_utf8_lines,
            "torn_tail_bytes": self.torn_tail_bytes,
            "bridged_records": len(self.bridges),
        }

    def bridge_notes(self) -> list[str]:
        """One note per bridge, naming the lines (what `stats`, `show`, `search` print)."""
        return [f"L{ln}'s parent record was in omitted line L{om} (zero-filled or malformed): bridged to L{tl}"
                + ("; it opens the turn whose first record was lost" if op else "")
                for ln, om, tl, op in self.bridges]

    def merge(self, other: "ReadStats") -> None:
        self.files += other.files
        self.bytes += other.bytes
        self.lines += other.lines
        self.blank_lines += other.blank_lines
        self.records += other.records
        self.malformed_lines.extend(other.malformed_lines)
        self.zero_filled_lines += other.zero_filled_lines
        self.invalid_utf8_lines += other.invalid_utf8_lines
        self.torn_tail_bytes += other.torn_tail_bytes
        self.non_object_lines += other.non_object_lines
        self.bridges.extend(other.bridges)


class _Map:
    """A read-only mapping of a file, or an empty buffer for an empty file."""

    def __init__(self, path: str | os.PathLike[str]):
        self._f = open(path, "rb")
        try:
            size = os.fstat(self._f.fileno()).st_size
            self.buf: mmap.mmap | bytes = (
                mmap.mmap(self._f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            )
        except Exception:
            self._f.close()
            raise

    def close(self) -> None:
        if isinstance(self.buf, mmap.mmap):
            self.buf.close()
        self._f.close()

    def __enter__(self) -> "_Map":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


BATCH_BYTES = 1 << 22
"""How much of a mapping `iter_line_batches` copies and splits at once (memory stays bounded)."""
PAGE = mmap.PAGESIZE
_DONTNEED = getattr(mmap, "MADV_DONTNEED", None)


def open_map(path: str | os.PathLike[str]) -> _Map:
    """Map a file read-only (an empty file maps to b"")."""
    return _Map(path)


def release(buf: "mmap.mmap | bytes", lo: int, hi: int) -> None:
    """Let the mapped pages of buf[lo:hi] go (MADV_DONTNEED, whole pages inside the range): a
    read-only file mapping counts in the resident size for every page touched until it is
    unmapped, so a scan of a large file releases what it has passed. Reading those bytes again
    is still correct (the page comes back from the page cache). A no-op on bytes."""
    drop = getattr(buf, "madvise", None) if _DONTNEED is not None else None
    if drop is None:
        return
    lo = lo - lo % PAGE
    hi = min(hi, len(buf))
    hi -= hi % PAGE
    if hi > lo:
        drop(_DONTNEED, lo, hi - lo)


SCAN_WINDOW = 32 << 20
"""`find_released` and `count_released` look at a mapping this much at a time."""


def find_released(buf: "mmap.mmap | bytes", needle: bytes, start: int = 0, end: int | None = None) -> int:
    """`buf.find(needle, start, end)`, looked for one window at a time with each window's pages
    released once searched (a find across a large mapping would leave all of it resident)."""
    size = len(buf)
    end = size if end is None else min(end, size)
    if getattr(buf, "madvise", None) is None or end - start <= SCAN_WINDOW:
        return buf.find(needle, start, end)
    over = max(0, len(needle) - 1)
    pos = start
    while pos < end:
        stop = min(end, pos + SCAN_WINDOW)
        i = buf.find(needle, pos, min(end, stop + over))
        release(buf, pos, stop)
        if i >= 0:
            return i
        pos = stop
    return -1


def count_released(buf: "mmap.mmap | bytes", a: int, b: int, byte: bytes = b"\n") -> int:
    """`buf[a:b].count(byte)` in 1 MB copies, releasing the pages counted past (`byte`: one byte)."""
    n = 0
    rel = Releaser(buf, a)
    while a < b:
        c = min(b, a + (1 << 20))
        n += buf[a:c].count(byte)
        a = c
        rel.passed(a)
    release(buf, rel.done, b)
    return n


class Releaser:
    """Releases a mapping's pages behind a reader that moves forward (`passed(pos)`: nothing
    before `pos` is needed any more), BATCH_BYTES at a time."""

    __slots__ = ("buf", "done")

    def __init__(self, buf: "mmap.mmap | bytes", start: int = 0):
        self.buf, self.done = buf, start

    def passed(self, pos: int) -> None:
        if pos - self.done >= BATCH_BYTES:
            release(self.buf, self.done, pos)
            self.done = pos - pos % PAGE


class Whole:
    """A file read whole into bytes (the same interface as _Map)."""

    def __init__(self, data: bytes):
        self.buf = data

    def close(self) -> None:
        pass

    def __enter__(self) -> "Whole":
        return self

    def __exit__(self, *exc: object) -> None:
        pass


SCAN_WHOLE = 16 << 20
"""`open_scan` reads a file of at most this many bytes rather than mapping it."""


def open_scan(path: str | os.PathLike[str], whole: int | None = None) -> "_Map | Whole":
    """The bytes of a file to scan from end to end: read with one call when it holds at most
    `whole` bytes (SCAN_WHOLE), else mapped. A scan touches every page; a mapping pays a page
    fault per 4 KiB on top of the copy (~2x the CPU of `read` over a store of small files), and
    a freed buffer of the same size is reused by the allocator for the next file."""
    limit = SCAN_WHOLE if whole is None else whole
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        size = os.fstat(fd).st_size
        if size <= limit:  # the bytes present at the fstat, as a mapping of the file would hold
            parts = []
            got = 0
            while got < size:
                chunk = os.read(fd, size - got)
                if not chunk:
                    break  # it shrank meanwhile
                parts.append(chunk)
                got += len(chunk)
            return Whole(parts[0] if len(parts) == 1 else b"".join(parts))
    finally:
        os.close(fd)
    return _Map(path)


def iter_lines(
    path: str | os.PathLike[str],
    start: int = 0,
    first_line_no: int = 1,
    stats: ReadStats | None = None,
    hold_torn: bool = True,
) -> Iterator[Line]:
    """Yield the newline-terminated lines of `path` from byte `start`.

    A final unterminated fragment is yielded only when `hold_torn` is False or it parses as a
    complete JSON value; otherwise its size is added to `stats.torn_tail_bytes`.

    A file of at most READ_WHOLE bytes (from `start`) is read with one call and split, not mapped
    (a mapping costs more than the read for the many small files of a store); the lines, numbers,
    offsets and counts are the same either way.
    """
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size - start <= READ_WHOLE:
            if start:
                f.seek(start)
            data = f.read(max(0, size - start))
            if stats is not None:
                stats.files += 1
                stats.bytes += size - start
            yield from frame(data, start, first_line_no, stats, hold_torn)
            return
    with open_map(path) as m:
        buf = m.buf
        size = len(buf)
        if stats is not None:
            stats.files += 1
            stats.bytes += size - start
        pos = start
        no = first_line_no
        find = buf.find
        drop = getattr(buf, "madvise", None) if _DONTNEED is not None else None
        dropped = pos - pos % PAGE
        while pos < size:
            if drop is not None and pos - dropped >= BATCH_BYTES:
                # every line before `pos` was handed out as a copy: release the mapped pages
                hi = pos - pos % PAGE
                drop(_DONTNEED, dropped, hi - dropped)
                dropped = hi
            nl = find(b"\n", pos)
            if nl < 0:
                frag = bytes(buf[pos:size])
                if keep_tail(frag, stats, hold_torn):
                    yield Line(no, pos, frag)
                return
            if stats is not None:
                stats.lines += 1
            yield Line(no, pos, bytes(buf[pos:nl]))
            no += 1
            pos = nl + 1


READ_WHOLE = 1 << 20
"""Files up to this size are read whole by `iter_lines` (mapped above it)."""


def frame(data: bytes, base: int = 0, first_line_no: int = 1, stats: ReadStats | None = None,
          hold_torn: bool = True) -> Iterator[Line]:
    """The lines of `data` (a file's bytes from offset `base`), framed exactly like `iter_lines`:
    the same numbering, offsets, line count and torn-tail rule. Counts `stats.lines` and the torn
    tail, not `files`/`bytes`."""
    parts = data.split(b"\n")
    tail = parts.pop()
    pos = base
    no = first_line_no
    for raw in parts:
        if stats is not None:
            stats.lines += 1
        yield Line(no, pos, raw)
        no += 1
        pos += len(raw) + 1
    if tail and keep_tail(tail, stats, hold_torn):
        yield Line(no, pos, tail)



STREAM_CHUNK = 1 << 20
"""How much `iter_stream_lines` reads from a stream at once."""


def iter_stream_lines(
    stream,
    stats: ReadStats | None = None,
    hold_torn: bool = True,
    first_line_no: int = 1,
) -> Iterator[Line]:
    """Yield the newline-terminated lines of a readable binary stream (e.g. a decompressor),
    framed exactly like `iter_lines`: the same numbering, the same torn-tail rule. `Line.offset`
    is the offset in the stream (for a compressed file: in the decompressed bytes). Memory stays
    at about one chunk plus the longest line. Counts `stats.bytes` as stream bytes read and
    `stats.files` once."""
    if stats is not None:
        stats.files += 1
    no = first_line_no
    base = 0  # stream offset of buf[0]
    buf = b""
    while True:
        chunk = stream.read(STREAM_CHUNK)
        if stats is not None and chunk:
            stats.bytes += len(chunk)
        if not chunk:
            break
        buf = buf + chunk if buf else chunk
        pos = 0
        find = buf.find
        while True:
            nl = find(b"\n", pos)
            if nl < 0:
                break
            if stats is not None:
                stats.lines += 1
            yield Line(no, base + pos, buf[pos:nl])
            no += 1
            pos = nl + 1
        base += pos
        buf = buf[pos:]
    if buf and keep_tail(buf, stats, hold_torn):
        yield Line(no, base, buf)


def iter_line_batches(
    buf: "mmap.mmap | bytes",
    start: int,
    end: int,
    stats: ReadStats | None = None,
    hold_torn: bool = True,
    views: bool = False,
) -> Iterator[list[bytes]]:
    """Yield the lines of `buf[start:end]` in batches (each line without its newline), framed
    exactly like `iter_lines`: the same lines, the same line count, the same torn-tail rule.
    `end` is the size of `buf` or an offset just after a newline (a part of a file split at a
    line boundary). Counts `stats.lines` and the torn tail, not `files`/`bytes` (the caller
    knows which part of the file it read).

    `views`: the lines of a batch are views of `buf`, not copies (a 500 MB file: about 0.3 s CPU
    less than copying and splitting it): stringzilla `Str`s (buffer objects msgspec decodes and
    `bytes()` copies; orjson takes only `memoryview(line)`), or memoryviews without stringzilla.
    A batch is then a sequence, not a list. The caller must drop every view (and what holds one,
    such as a msgspec Raw) before the mapping is closed, an exception included."""
    pos = start
    rfind, find = buf.rfind, buf.find
    drop = getattr(buf, "madvise", None) if _DONTNEED is not None else None
    mv = memoryview(buf) if views else None
    split = _sz_split() if views else None
    try:
        yield from _batches(buf, pos, end, stats, hold_torn, rfind, find, drop, mv, split)
    finally:
        if mv is not None:
            mv.release()


def _sz_split():
    """stringzilla's split of a view into views of its lines (SIMD; about 2.5x cheaper than
    finding the newlines one by one from Python), or None without it."""
    try:
        from stringzilla import Str
    except ImportError:  # pragma: no cover - a dependency; the find loop gives the same lines
        return None
    return lambda v: Str(v).split("\n")


def _batches(buf, pos, end, stats, hold_torn, rfind, find, drop, mv, split=None):
    while pos < end:
        stop = min(pos + BATCH_BYTES, end)
        nl = rfind(b"\n", pos, stop)
        if nl < 0:
            nl = find(b"\n", stop, end)
        if nl < 0:
            frag = bytes(buf[pos:end])
            if keep_tail(frag, stats, hold_torn):
                yield [frag]
            return
        if mv is None:
            lines = buf[pos:nl].split(b"\n")
        elif split is not None:  # the same lines as bytes.split: stringzilla Strs (views of buf)
            lines = split(mv[pos:nl])
        else:  # the same lines as the split: views of buf[pos:nl) between its newlines
            lines = []
            app = lines.append
            s = pos
            while True:
                e = find(b"\n", s, nl)
                if e < 0:
                    app(mv[s:nl])
                    break
                app(mv[s:e])
                s = e + 1
        if stats is not None:
            stats.lines += len(lines)
        yield lines
        if drop is not None:
            # the lines are copied out: let the mapped pages go, so a long reading's resident
            # size stays at about one batch (the file stays in the page cache)
            lo, hi = pos - pos % PAGE, (nl + 1) - (nl + 1) % PAGE
            if hi > lo:
                drop(_DONTNEED, lo, hi - lo)
        pos = nl + 1


def keep_tail(frag: bytes, stats: ReadStats | None, hold_torn: bool) -> bool:
    """Whether a final fragment with no newline is read as a line (counted), or held back as a
    torn tail (a NUL-only one is a zero-filled line: never-written bytes, not a tear)."""
    if hold_torn and not is_complete(frag):
        if stats is not None:
            if frag.strip(b"\x00") == b"":
                stats.zero_filled_lines += 1
            else:
                stats.torn_tail_bytes += len(frag)
        return False
    if stats is not None:
        stats.lines += 1
    return True


def is_complete(frag: bytes) -> bool:
    frag = frag.replace(b"\x00", b"").strip()
    if not frag:
        return False
    try:
        orjson.loads(frag)
        return True
    except orjson.JSONDecodeError:
        return False


def parse_line(raw: bytes, stats: ReadStats | None = None) -> dict | None:
    """Parse one line into a JSON object, applying the reading rules. None = nothing to read.

    Raises nothing: a line that cannot be read is counted in `stats.malformed_lines` by the
    caller-provided line number through `parse_numbered`.
    """
    obj, _ = _parse(raw, stats)
    return obj


def _parse(raw: bytes, stats: ReadStats | None) -> tuple[dict | None, str | None]:
    if b"\x00" in raw:
        if stats is not None:
            stats.zero_filled_lines += 1
        raw = raw.replace(b"\x00", b"")
    stripped = raw.strip()
    if not stripped:
        if stats is not None:
            stats.blank_lines += 1
        return None, None
    try:
        obj = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        try:
            text = stripped.decode("utf-8")
            return None, "not JSON"
        except UnicodeDecodeError:
            pass
        try:
            obj = orjson.loads(stripped.decode("utf-8", errors="replace"))
        except orjson.JSONDecodeError:
            return None, "not JSON (and not UTF-8)"
        if stats is not None:
            stats.invalid_utf8_lines += 1
    if not isinstance(obj, dict):
        if stats is not None:
            stats.non_object_lines += 1
        return None, "not a JSON object"
    return obj, None


def parse_numbered(
    line: Line, path: str | os.PathLike[str], stats: ReadStats | None, strict: bool = False
) -> dict | None:
    """Parse `line`, counting a malformed one in `stats` (or raising when `strict`)."""
    obj, err = _parse(line.raw, stats)
    if err is not None:
        if strict:
            raise MalformedLine(str(path), line.no, err)
        if stats is not None:
            stats.malformed_lines.append(line.no)
        return None
    if obj is not None and stats is not None:
        stats.records += 1
    return obj


def read_records(
    path: str | os.PathLike[str],
    stats: ReadStats | None = None,
    strict: bool = False,
    start: int = 0,
    first_line_no: int = 1,
) -> Iterator[tuple[Line, dict]]:
    """Yield (line, object) for every readable record of `path`, applying the reading rules."""
    for line in iter_lines(path, start=start, first_line_no=first_line_no, stats=stats):
        obj = parse_numbered(line, path, stats, strict)
        if obj is not None:
            yield line, obj


_LINE_RANGE = re.compile(r"^L?(\d+)?(\.\.)?L?(\d+)?$")


def parse_lines(spec: str) -> tuple[int, int, bool]:
    """A line address (`show --line`): 'N' (explicit), 'A..B', 'A..', '..B' (clamping ranges), each
    number optionally written ``L<n>``; (first, last, explicit). Every agent's line-based store."""
    m = _LINE_RANGE.match(spec.strip())
    if not m or (m.group(1) is None and m.group(3) is None):
        raise UsageError(f"cannot read line address {spec!r} (use N, A..B, A.. or ..B)")
    if not m.group(2):
        n = int(m.group(1))
        return n, n, True
    a = int(m.group(1)) if m.group(1) else 1
    b = int(m.group(3)) if m.group(3) else 10**12
    if a > b:
        raise UsageError(f"empty line range {spec!r}")
    return a, b, False
