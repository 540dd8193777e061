"""A session arranged for reading (the model `export markdown` and `export html` render): lanes,
turns, and in each turn its blocks -- prompt, reply, thinking, tool call with its result folded
in, compaction boundary, images -- with the subagent lanes a tool call spawned nested under it.

Everything here is data from the transcript; escaping is the renderers' job. Images are kept as
(media type, base64) only when the media type is an image type a browser shows and the data is
base64 (checked), so a data: URI built from them cannot break out of its attribute.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

from ..providers.base import Provider, ReadReport, Record, SessionRef
from .chunks import count_binaries
from .source import read_session

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_B64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
MAX_IMAGE_B64 = 8 << 20


@dataclass
class Block:
    kind: str
    """prompt, reply, user (other user-role text), thinking, opaque_thinking, tool, result,
    compaction, meta, unknown"""
    record: Record
    labels: tuple[str, ...] = ()
    text: str = ""
    images: list[tuple[str, str]] = field(default_factory=list)
    result: "Block | None" = None
    """For a tool call: its result, folded in."""
    lanes: list[str] = field(default_factory=list)
    """For a tool call that spawned subagent lanes: their names (rendered nested)."""
    also: list[Record] = field(default_factory=list)
    """Records merged into this block (a compaction's boundary and its summary: one banner)."""


@dataclass
class TurnStats:
    """What one turn of one lane took: its first and last instant (epoch seconds) and the tokens of
    its responses, each response once (its usage's dedup key)."""

    first: float | None = None
    """The instant of its first record that has one, in read order (what its heading shows)."""
    lo: float | None = None
    hi: float | None = None
    tokens: dict[str, int | None] = field(default_factory=dict)
    """response key -> its total tokens (input + output + cache read + cache write), None when it
    recorded no count."""

    def add(self, r: Record) -> None:
        ts = _epoch(r.instant)
        if ts is not None:
            if self.first is None:
                self.first = ts
            self.lo = ts if self.lo is None or ts < self.lo else self.lo
            self.hi = ts if self.hi is None or ts > self.hi else self.hi
        t = r.tokens
        if t is not None and not t.cumulative:
            vals = (t.input, t.output, t.cache_read, t.cache_write)
            tot = None if all(v is None for v in vals) else sum(v or 0 for v in vals)
            k = t.dedup_key or f"{r.lane}:{r.locator}"
            old = self.tokens.get(k)
            self.tokens[k] = tot if old is None else max(old, tot or 0)

    @property
    def responses(self) -> int:
        return len(self.tokens)

    @property
    def total(self) -> int | None:
        """The turn's tokens; None when no response in it recorded a count (unknown, not 0)."""
        known = [v for v in self.tokens.values() if v is not None]
        return sum(known) if known else None

    @property
    def seconds(self) -> float | None:
        """From its earliest to its latest instant."""
        return None if self.lo is None or self.hi is None else self.hi - self.lo


def _epoch(instant: str | None) -> float | None:
    from ..timefmt import parse_ts

    d = parse_ts(instant)
    return None if d is None else d.timestamp()


@dataclass
class Turn:
    number: int | None
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Lane:
    name: str
    turns: list[Turn] = field(default_factory=list)
    spawned_by: str | None = None
    """The call id of the tool call that spawned it (Claude Code's agent meta file)."""


@dataclass
class Document:
    ref: SessionRef
    lanes: dict[str, Lane] = field(default_factory=dict)
    report: ReadReport = field(default_factory=ReadReport)
    counts: dict[str, int] = field(default_factory=dict)
    redacted: int = 0
    binary_attachments: int = 0
    images_shown: int = 0
    turns: dict[tuple[str, object], TurnStats] = field(default_factory=dict)
    """(lane, turn) -> what the turn took (every record of it read, bookkeeping included)."""
    prompts: dict[tuple[str, object], str] = field(default_factory=dict)
    """(lane, turn) -> the first line of its first prompt (the table of contents)."""
    shown: set[tuple[str, object]] = field(default_factory=set)
    """(lane, turn) of the turns with a block on the page (a heading to link to)."""


def _images(raw: Any, out: list[tuple[str, str]], depth: int = 0) -> None:
    if depth > 12:
        return
    if isinstance(raw, dict):
        src = raw.get("source")
        if raw.get("type") == "image" and isinstance(src, dict) and src.get("type") == "base64":
            mt, data = src.get("media_type"), src.get("data")
            if isinstance(mt, str) and isinstance(data, str):
                _add(out, mt, data)
        for k in ("url", "image_url"):
            u = raw.get(k)
            if isinstance(u, str) and u.startswith("data:image/") and ";base64," in u[:64]:
                mt, _, data = u[5:].partition(";base64,")
                _add(out, mt, data)
        for v in raw.values():
            if isinstance(v, (dict, list)):
                _images(v, out, depth + 1)
    elif isinstance(raw, list):
        for v in raw:
            if isinstance(v, (dict, list)):
                _images(v, out, depth + 1)


def _add(out: list[tuple[str, str]], mt: str, data: str) -> None:
    if mt not in IMAGE_TYPES or len(data) > MAX_IMAGE_B64 or not _B64.fullmatch(data):
        return
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return
    if (mt, data) not in out:
        out.append((mt, data))


def _is_compaction(r: Record, labels: tuple[str, ...]) -> bool:
    return (any(lb.startswith("harness.compaction") for lb in labels) or r.native in ("compacted", "part/compaction")
            or r.native.endswith("/summary"))


def _classify(r: Record, labels: tuple[str, ...], summary: bool = False) -> str:
    """A block's kind; `summary`: the provider names the record a compaction's summary
    (Provider.compaction_of: pi's compaction entry, Qwen Code's chat_compression, Copilot CLI's
    compaction_complete, Gemini CLI's compression summary ...), whatever kind it was read as."""
    if summary or _is_compaction(r, labels):
        return "compaction"
    if r.kind == "prompt":
        return "prompt"
    if r.kind == "message":
        return "user" if r.role == "user" else "reply"
    if r.kind == "reasoning":
        return "thinking" if r.text and "redacted" not in r.native else "opaque_thinking"
    if r.kind == "tool_call":
        return "tool"
    if r.kind == "tool_result":
        return "result"
    if r.kind == "unknown":
        return "unknown"
    return "user" if (r.role == "user" and r.text) else "meta"


def tool_input_text(r: Record) -> str:
    v = r.tool_input
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    try:
        return orjson.dumps(v, option=orjson.OPT_INDENT_2, default=str).decode("utf-8", "replace")
    except TypeError:
        return str(v)


SUMMARY_KEYS = ("command", "cmd", "file_path", "filePath", "path", "pattern", "url", "query", "description",
                "prompt", "subagent_type")


def summary_line(b: "Block") -> str:
    """One line naming what a tool call did (its command, path, pattern ...), for a fold's summary."""
    v = b.record.tool_input
    if isinstance(v, dict):
        for k in SUMMARY_KEYS:
            x = v.get(k)
            if isinstance(x, str) and x.strip():
                return x.strip().split("\n", 1)[0][:120]
            if isinstance(x, list) and x and all(isinstance(y, str) for y in x):
                return " ".join(x)[:120]
    return " ".join((b.text or "").split())[:120]


def blocks(prov: Provider, ref: SessionRef, doc: Document, *,
           redact: Callable[[str], tuple[str, int]] | None = None, meta: bool = False) -> Iterator[Block]:
    """The session's blocks in read order, one record at a time (copies and, unless ``meta``,
    bookkeeping records left out), counting into ``doc`` (counts, binary attachments, images,
    redactions, each turn's instants and tokens) as it goes: what :func:`build` arranges and the
    streaming export renders. Compaction blocks that follow each other in a lane (Claude Code's
    boundary and the summary after it) are one block: one banner, the summary inside."""
    pending: Block | None = None
    for b in _blocks(prov, ref, doc, redact=redact, meta=meta):
        if pending is not None:
            if b.kind == "compaction" and b.record.lane == pending.record.lane:
                pending.also.append(b.record)
                pending.labels = tuple(dict.fromkeys(pending.labels + b.labels))
                pending.text = "\n\n".join(t for t in (pending.text, b.text) if t)
                pending.images += [i for i in b.images if i not in pending.images]
                continue
            yield pending
            pending = None
        if b.kind == "compaction":
            pending = b
            continue
        yield b
    if pending is not None:
        yield pending


def _blocks(prov: Provider, ref: SessionRef, doc: Document, *,
            redact: Callable[[str], tuple[str, int]] | None = None, meta: bool = False) -> Iterator[Block]:
    last_raw = None
    counts = doc.counts
    turns = doc.turns
    for r, labels in read_session(prov, ref, doc.report, raw=True):
        if r.raw is not None and r.raw is not last_raw:
            last_raw = r.raw
            doc.binary_attachments += count_binaries(r.raw)
        imgs: list[tuple[str, str]] = []
        summary = False
        if r.copy_of is None and r.raw is not None:
            _images(_block_of(r) if "#" in r.locator else r.raw, imgs)
            summary = prov.compaction_of(ref, r) is not None
        r.raw = None
        if r.copy_of is not None:
            counts["copies"] = counts.get("copies", 0) + 1
            continue
        key = (r.lane, r.turn)
        st = turns.get(key)
        if st is None:
            st = turns[key] = TurnStats()
        st.add(r)
        kind = _classify(r, labels, summary)
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "meta" and not meta and not imgs:
            continue
        text = r.text or ""
        if kind == "tool":
            text = tool_input_text(r)
        if redact is not None and text:
            text, n = redact(text)
            doc.redacted += n
        if kind == "prompt" and key not in doc.prompts and text.strip():
            doc.prompts[key] = text.strip().split("\n", 1)[0][:100]
        doc.images_shown += len(imgs)
        doc.shown.add(key)
        yield Block(kind, r, labels, text, imgs)


def build(prov: Provider, ref: SessionRef, *, redact: Callable[[str], tuple[str, int]] | None = None,
          meta: bool = False) -> Document:
    """Read the session once and arrange it (the whole session in memory: the export streams
    instead, export/stream.py; this stays as its oracle and for callers that want the model).
    ``meta``: keep harness bookkeeping records too."""
    doc = Document(ref)
    spawned = prov.spawned_lanes(ref)
    calls: dict[str, Block] = {}
    for b in blocks(prov, ref, doc, redact=redact, meta=meta):
        r, kind = b.record, b.kind
        lane = doc.lanes.get(r.lane)
        if lane is None:
            lane = doc.lanes[r.lane] = Lane(r.lane, spawned_by=spawned.get(r.lane))
        if not lane.turns or lane.turns[-1].number != r.turn:
            lane.turns.append(Turn(r.turn))
        if kind == "result" and r.call_id and r.call_id in calls and calls[r.call_id].result is None:
            calls[r.call_id].result = b
            continue
        if kind == "tool" and r.call_id:
            calls[r.call_id] = b
        lane.turns[-1].blocks.append(b)
    for name, lane in doc.lanes.items():
        if lane.spawned_by and lane.spawned_by in calls and name != "main":
            calls[lane.spawned_by].lanes.append(name)
    return doc


def _block_of(r: Record) -> Any:
    """The content block a ``L<n>#<i>`` record stands for (its raw line holds every block)."""
    raw = r.raw
    try:
        i = int(r.locator.rsplit("#", 1)[1])
    except (IndexError, ValueError):
        return raw
    msg = raw.get("message") if isinstance(raw, dict) else None
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, list) and 0 <= i < len(content):
        return content[i]
    return raw


def nested_lanes(doc: Document) -> set[str]:
    """Lanes rendered under the tool call that spawned them (the rest are rendered after main)."""
    return {n for lane in doc.lanes.values() for t in lane.turns for b in t.blocks for n in b.lanes}
