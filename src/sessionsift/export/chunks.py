"""`export chunks`: a session as JSON Lines chunks for a knowledge base or an embedding pipeline
(docs/export.md "chunks").

One chunk = the records of one turn of one lane, rendered as text (``[user] ...``, ``[assistant]
...``, ``[tool_call Bash] {...}``, ``[tool_result] ...``, ``[reasoning] ...``), cut at record
boundaries so it stays under ``max_chars``; a single record longer than that is cut at line
boundaries (``split_record: true``). Each chunk points back to the bytes (every record's locator,
the lane file and the byte range of its lines) and carries the reading's omissions -- lines the
reading could not take in (malformed, zero-filled, invalid UTF-8, a torn tail), records of unknown
kinds, opaque reasoning, binary attachments, records with no text, repeated copies -- and
``exact_copy: false``: a chunk is a reading, never a copy of the transcript.

Written in bounded memory: chunks stream to a temp file as the session is read; the omissions,
known only at the end, are added while the temp file is copied into place.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

from ..providers.base import Provider, ReadReport, Record, SessionRef
from .source import read_session

SCHEMA = "sessionsift.chunk/1"
SCHEMA_VERSION = 1
DEFAULT_MAX_CHARS = 8000
BINARY_TYPES = frozenset({"image", "document", "input_image", "image_url", "binary"})
BINARY_NATIVES = frozenset({"part/file", "part/binary", "part/image_url"})


@dataclass
class ReadingNotes:
    """What a reading left out, beyond the reader's own report."""

    opaque_reasoning: int = 0
    binary_attachments: int = 0
    records_without_text: Counter = field(default_factory=Counter)
    copies: int = 0
    redacted: int = 0

    def omissions(self, report: ReadReport) -> dict[str, Any]:
        return {**report.omissions(), "unknown_kinds_by_type": dict(report.unknown_kinds),
                "opaque_reasoning": self.opaque_reasoning, "binary_attachments": self.binary_attachments,
                "records_without_text": sum(self.records_without_text.values()),
                "records_without_text_by_kind": dict(self.records_without_text), "copies_not_repeated": self.copies,
                "secrets_redacted": self.redacted}


def count_binaries(v: Any, depth: int = 0) -> int:
    """Image/document blocks inside a raw record (never decoded)."""
    if depth > 12:
        return 0
    n = 0
    if isinstance(v, dict):
        t = v.get("type")
        if isinstance(t, str) and t in BINARY_TYPES:
            n += 1
        if "inlineData" in v:
            n += 1
        for x in v.values():
            if isinstance(x, (dict, list)):
                n += count_binaries(x, depth + 1)
    elif isinstance(v, list):
        for x in v:
            if isinstance(x, (dict, list)):
                n += count_binaries(x, depth + 1)
    return n


ROLE_TAG = {"prompt": "user", "message": "assistant", "reasoning": "reasoning", "tool_call": "tool_call",
            "tool_result": "tool_result"}


def render_record(r: Record) -> str | None:
    """The text a chunk carries for one record; None for bookkeeping records with no text."""
    from ..search.records import record_text

    if r.kind in ("prompt", "message", "reasoning", "tool_result"):
        t = r.text
        if not t:
            return None
        tag = ROLE_TAG[r.kind] if not (r.kind == "message" and r.role == "user") else "user"
        if r.kind == "tool_result":
            tag += " error" if r.is_error else ""
            tag += f" exit {r.exit_code}" if r.exit_code not in (None, 0) else ""
        return f"[{tag}] {t}"
    if r.kind == "tool_call":
        return f"[tool_call {r.tool_name or '?'}] {record_text(r)[len(r.tool_name or ''):].strip()}"
    if r.kind == "meta" and r.role == "user" and r.text:
        return f"[user meta] {r.text}"
    return None


def _split(text: str, n: int) -> list[str]:
    """``text`` in pieces of at most n characters, cut after a newline where there is one."""
    out = []
    while len(text) > n:
        cut = text.rfind("\n", 0, n)
        cut = n if cut <= 0 else cut + 1
        out.append(text[:cut])
        text = text[cut:]
    out.append(text)
    return out


@dataclass
class _Buf:
    lane: str
    turn: int | None
    recs: list[tuple[Record, tuple[str, ...], str]] = field(default_factory=list)
    chars: int = 0


@dataclass
class ChunkStats:
    chunks: int = 0
    records: int = 0
    notes: ReadingNotes = field(default_factory=ReadingNotes)
    report: ReadReport = field(default_factory=ReadReport)


def _uniq(xs) -> list:
    seen: dict = {}
    for x in xs:
        seen.setdefault(x, None)
    return list(seen)


def iter_chunks(prov: Provider, ref: SessionRef, stats: ChunkStats, *, max_chars: int = DEFAULT_MAX_CHARS,
                redact: Callable[[str], tuple[str, int]] | None = None) -> Iterator[dict]:
    """The session's chunks (without the reading's omissions, known only when this ends)."""
    if max_chars < 64:
        raise ValueError("max_chars must be at least 64")
    notes = stats.notes
    buf: _Buf | None = None
    parts: Counter = Counter()
    seq = 0
    last_raw = None

    def emit(b: _Buf, split: bool = False) -> dict | None:
        nonlocal seq
        if not b.recs:
            return None
        recs = [x[0] for x in b.recs]
        key = (b.lane, b.turn)
        part = parts[key]
        parts[key] += 1
        lines = [r for r in recs if r.offset is not None and r.length is not None]
        paths = _uniq(r.path for r in recs if r.path)
        d = {
            "kind": "chunk", "schema": SCHEMA, "provider": ref.provider, "session_id": ref.session_id,
            "project": ref.project, "lane": b.lane, "turn": b.turn, "chunk": seq, "part": part,
            "split_record": split, "records": len(recs),
            "roles": _uniq(r.role for r in recs), "labels": _uniq(lb for x in b.recs for lb in x[1]),
            "record_kinds": dict(Counter(r.kind for r in recs)),
            "tools": _uniq(r.tool_name for r in recs if r.tool_name),
            "locators": [r.locator for r in recs], "path": paths[0] if len(paths) == 1 else None, "paths": paths,
            "byte_start": min(r.offset for r in lines) if lines and len(paths) == 1 else None,
            "byte_end": max(r.offset + r.length for r in lines) if lines and len(paths) == 1 else None,
            "byte_range_of": (None if not (lines and len(paths) == 1) else
                              "decompressed stream" if str(paths[0]).endswith(".zst") else "file"),
            "first_instant": next((r.instant for r in recs if r.instant), None),
            "last_instant": next((r.instant for r in reversed(recs) if r.instant), None),
            "text": "\n\n".join(x[2] for x in b.recs),
        }
        d["chars"] = len(d["text"])
        seq += 1
        stats.chunks += 1
        return d

    for r, labels in read_session(prov, ref, stats.report, raw=True):
        raw = r.raw
        if raw is not None and raw is not last_raw:
            last_raw = raw
            notes.binary_attachments += count_binaries(raw) if r.native not in BINARY_NATIVES else 0
        if r.native in BINARY_NATIVES:
            notes.binary_attachments += 1
        r.raw = None
        if r.copy_of is not None:
            notes.copies += 1
            continue
        if r.kind == "reasoning" and (not r.text or "redacted" in r.native):
            notes.opaque_reasoning += 1
        text = render_record(r)
        if text is None:
            notes.records_without_text[r.kind] += 1
            continue
        if redact is not None:
            text, n = redact(text)
            notes.redacted += n
        stats.records += 1
        if buf is None or (buf.lane, buf.turn) != (r.lane, r.turn):
            if buf is not None and (c := emit(buf)):
                yield c
            buf = _Buf(r.lane, r.turn)
        if len(text) > max_chars:
            if (c := emit(buf)):
                yield c
            buf = _Buf(r.lane, r.turn)
            for piece in _split(text, max_chars):
                one = _Buf(r.lane, r.turn, [(r, labels, piece)], len(piece))
                if (c := emit(one, split=True)):
                    yield c
            continue
        sep = 2 if buf.recs else 0
        if buf.chars + sep + len(text) > max_chars:
            if (c := emit(buf)):
                yield c
            buf = _Buf(r.lane, r.turn)
            sep = 0
        buf.recs.append((r, labels, text))
        buf.chars += sep + len(text)
    if buf is not None and (c := emit(buf)):
        yield c


def write_chunks(prov: Provider, ref: SessionRef, dest: Path, *, max_chars: int, reading: dict,
                 redact: Callable[[str], tuple[str, int]] | None = None) -> ChunkStats:
    """Write the session's chunks to ``dest`` (atomically), each with the reading's omissions."""
    stats = ChunkStats()
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".raw-", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            for c in iter_chunks(prov, ref, stats, max_chars=max_chars, redact=redact):
                f.write(orjson.dumps(c) + b"\n")
        om = stats.notes.omissions(stats.report)
        from .keep import write_atomic

        def final(out) -> None:
            with open(tmp, "rb") as src:
                for line in src:
                    c = orjson.loads(line)
                    c["omissions"] = om
                    c["exact_copy"] = False
                    c["reading"] = reading
                    out.write(orjson.dumps(c) + b"\n")

        write_atomic(dest, final, binary=True)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return stats
