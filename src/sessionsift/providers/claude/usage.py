"""Claude Code usage, read fast: only the lines that carry usage are decoded, and only the fields
a usage report needs.

What Claude Code writes (evidence in docs/usage.md):
- one `type:"assistant"` record per CONTENT BLOCK of an API message, each repeating the message's
  `message.usage` (REC-020, QT-040): the unit is `message.id` (the dedup key, across every lane
  and session: the same id is the same API response, billed once);
- a subagent's messages in its own lane `<session>/subagents/agent-<id>.jsonl` (attributed to the
  parent session); the parent's `toolUseResult.usage` on the Agent tool_result is an ECHO of the
  subagent's last message and is never counted (it is a `type:"user"` record);
- `cost-state` records: the client's own running cost and token totals per model for the
  session (the last one is the session's total as the client metered it, side requests such as
  title generation and compaction summaries included, which write no assistant record);
- older clients write `costUSD` on each assistant record.

Reading: each file is read in page-aligned chunks; a byte prefilter finds the lines holding
`"usage"` (assistant records with usage, and the echoes), `"type":"assistant"` (to count the
assistant records WITHOUT usage) and `cost-state"`; only those lines are decoded, by
msgspec Structs that skip every other field. A line the Structs cannot type (a hostile value)
is decoded again with orjson and read field by field; a line that is not JSON is counted.
"""

from __future__ import annotations

import os
from datetime import datetime

from ..usage import ClientRecorded, Event, instant_ts as _ts

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the light scan (statusline) imports neither typing nor dataclasses
    from typing import Any

PROVIDER = "claude-code"

CHUNK = 8 << 20
"""Bytes read at once (a multiple of the page size); a longer line is carried over whole."""
NEEDLES = (b'"usage"', b'"type":"assistant"', b'"type": "assistant"', b'cost-state"')
"""Byte needles of the candidate lines: a usage object (also in a re-serialised file, where
`"usage": {` has a space), an assistant record (compact, or re-serialised with a space), a
cost-state record. Decoding tells them apart. They are found with stringzilla (SIMD, 15-20 GB/s
measured here, against 2-3 GB/s for `bytes.find`: every needle starts or ends with `"`)."""


_STRUCTS = None


def _structs():
    global _STRUCTS
    if _STRUCTS is None:
        from . import usage_structs

        _STRUCTS = usage_structs
    return _STRUCTS




class FileScan:
    """What one scan of a transcript read (a plain class with slots, not a dataclass: see ClientRecorded)."""

    __slots__ = ("path", "size", "end", "candidates", "records", "assistant_without_usage", "no_usage_ts", "echoes",
                 "malformed", "odd_values", "no_timestamp", "from_iterations", "cwd", "client", "torn_tail_bytes")

    def __init__(self, path: str, size: int = 0, end: int = 0) -> None:
        self.path = path
        self.size = size
        self.end = end
        """Offset just after the last complete line read (where an incremental scan resumes)."""
        self.candidates = 0
        """Lines the prefilter passed."""
        self.records: list[tuple] = []
        """(msg_id|None, model, ts, input, output, cache_read, cache_write, cache_write_1h, reasoning,
        speed, geo, tier, cost_usd, offset) per assistant record with usage."""
        self.assistant_without_usage = 0
        self.no_usage_ts: list[tuple[float | None, str | None]] = []
        """(instant, model) of each assistant record without usage."""
        self.echoes = 0
        """Non-assistant lines with a usage object (the parent's echo of a subagent): not counted."""
        self.malformed = 0
        """Candidate lines that are not JSON objects."""
        self.odd_values = 0
        """Usage fields whose value is not an integer (read as absent)."""
        self.no_timestamp = 0
        self.from_iterations = 0
        """Records whose four top-level counts were zeroed and were read from `usage.iterations[]`."""
        self.cwd: str | None = None
        self.client: ClientRecorded | None = None
        self.torn_tail_bytes = 0

    def __repr__(self) -> str:
        return f"FileScan(path={self.path!r}, end={self.end}, records={len(self.records)})"

    def events(self, session_id: str, lane: str, project: str | None) -> list[Event]:
        """The usage events of this scan, attributed to `session_id`, `lane` and `project` (:func:`events_of`)."""
        return events_of(self, session_id, lane, project)


def _int(v: Any, fs: FileScan) -> int | None:
    if v is None:
        return None
    if type(v) is int and v >= 0:
        return v
    fs.odd_values += 1
    return None


def _from_iterations(fs: FileScan, its: list[tuple]) -> tuple | None:
    """The sums of `usage.iterations[]` when the four top-level counts are all zero: a compaction
    replay zeroes the top-level scalars and leaves the nested values real (QT-041); None when
    the iterations hold nothing either."""
    sums = [0, 0, 0, 0]
    for it in its:
        for k, v in enumerate(it):
            v = _int(v, fs)
            if v:
                sums[k] += v
    if not any(sums):
        return None
    fs.from_iterations += 1
    return tuple(sums)


def _record(fs: FileScan, msg_id, model, ts, u_in, u_out, u_cr, u_cw, cc5, cc1, think, speed, geo, tier,
            cost, offset) -> None:
    # cache writes: the 5m/1h breakdown when present, else the flat count (their sum equals the
    # flat count in every record measured); the 1-hour share is priced separately
    cw = u_cw
    cw1 = None
    if cc5 is not None or cc1 is not None:
        split = (cc5 or 0) + (cc1 or 0)
        cw1 = cc1
        if cw is None or split > cw:
            cw = split
    # thinking_tokens: the client writes 0 whether or not the model thought (measured: a
    # response with a thinking block records 0), so only a positive value is a recorded count
    reasoning = think if think else None
    if ts is None:
        fs.no_timestamp += 1
    fs.records.append((msg_id, model, ts, u_in, u_out, u_cr, cw, cw1, reasoning, speed, geo, tier, cost, offset))


def _take(fs: FileScan, raw: bytes, offset: int) -> None:
    S = _STRUCTS or _structs()
    try:
        ln = S.decode(raw)
    except S.errors:
        # a value the Structs cannot type, NULs, invalid UTF-8, or not JSON: the generic reading
        ln = None
    if ln is None:
        _take_loose(fs, raw, offset)
        return
    t = ln.type
    if t == "assistant":
        if fs.cwd is None and ln.cwd:
            fs.cwd = ln.cwd
        m = ln.message
        u = m.usage if m is not None else None
        if u is None:
            fs.assistant_without_usage += 1
            fs.no_usage_ts.append((_ts(ln.timestamp), m.model if m is not None else None))
            return
        cc = u.cache_creation
        od = u.output_tokens_details
        four = (_int(u.input_tokens, fs), _int(u.output_tokens, fs), _int(u.cache_read_input_tokens, fs),
                _int(u.cache_creation_input_tokens, fs))
        if u.iterations and four == (0, 0, 0, 0):
            four = _from_iterations(fs, [(i.input_tokens, i.output_tokens, i.cache_read_input_tokens,
                                          i.cache_creation_input_tokens) for i in u.iterations]) or four
        _record(fs, m.id, m.model, _ts(ln.timestamp), *four,
                _int(cc.ephemeral_5m_input_tokens, fs) if cc else None,
                _int(cc.ephemeral_1h_input_tokens, fs) if cc else None,
                _int(od.thinking_tokens, fs) if od else None,
                u.speed, u.inference_geo or None, u.service_tier, ln.costUSD, offset)
    elif t == "cost-state":
        fs.client = ClientRecorded(
            ln.totalCostUSD,
            {k: {"input": v.inputTokens, "output": v.outputTokens, "cache_read": v.cacheReadInputTokens,
                 "cache_write": v.cacheCreationInputTokens, "cost_usd": v.costUSD}
             for k, v in (ln.modelUsage or {}).items()},
            fs.path, offset)
    elif ln.type == "user" and b'"usage"' in raw:
        fs.echoes += 1


def _g(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _orjson_loads(b):
    global _orjson_loads
    import orjson

    _orjson_loads = orjson.loads  # the import once; later calls go straight to orjson
    return orjson.loads(b)


def _take_loose(fs: FileScan, raw: bytes, offset: int, loads=None) -> None:
    """The same reading from a generic parse, for lines whose values the Structs reject (and every
    line of a light scan). `loads`: orjson's, or the stdlib's for a light scan."""
    loads = loads or _orjson_loads
    try:
        obj = loads(raw.replace(b"\x00", b""))
    except ValueError:  # orjson.JSONDecodeError, json.JSONDecodeError, UnicodeDecodeError
        try:
            obj = loads(raw.replace(b"\x00", b"").decode("utf-8", "replace"))
        except ValueError:
            fs.malformed += 1
            return
    if not isinstance(obj, dict):
        fs.malformed += 1
        return
    t = obj.get("type")
    m = obj.get("message")
    if t == "assistant":
        if fs.cwd is None and isinstance(obj.get("cwd"), str):
            fs.cwd = obj["cwd"]
        u = m.get("usage") if isinstance(m, dict) else None
        if not isinstance(u, dict):
            fs.assistant_without_usage += 1
            mm = m.get("model") if isinstance(m, dict) else None
            fs.no_usage_ts.append((_ts(obj.get("timestamp")), mm if isinstance(mm, str) else None))
            return
        s = lambda v: v if isinstance(v, str) else None  # noqa: E731
        cost = obj.get("costUSD")
        cost = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None
        four = (_int(u.get("input_tokens"), fs), _int(u.get("output_tokens"), fs),
                _int(u.get("cache_read_input_tokens"), fs), _int(u.get("cache_creation_input_tokens"), fs))
        its = u.get("iterations")
        if isinstance(its, list) and its and four == (0, 0, 0, 0):
            four = _from_iterations(fs, [tuple(i.get(k) for k in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                                                   "cache_creation_input_tokens"))
                                         for i in its if isinstance(i, dict)]) or four
        _record(fs, s(m.get("id")), s(m.get("model")), _ts(obj.get("timestamp")), *four,
                _int(_g(u, "cache_creation", "ephemeral_5m_input_tokens"), fs),
                _int(_g(u, "cache_creation", "ephemeral_1h_input_tokens"), fs),
                _int(_g(u, "output_tokens_details", "thinking_tokens"), fs),
                s(u.get("speed")), s(u.get("inference_geo")) or None, s(u.get("service_tier")), cost, offset)
    elif t == "cost-state":
        tot = obj.get("totalCostUSD")
        mu = obj.get("modelUsage")
        fs.client = ClientRecorded(
            float(tot) if isinstance(tot, (int, float)) and not isinstance(tot, bool) else None,
            {str(k): {"input": v.get("inputTokens"), "output": v.get("outputTokens"),
                      "cache_read": v.get("cacheReadInputTokens"), "cache_write": v.get("cacheCreationInputTokens"),
                      "cost_usd": v.get("costUSD")} for k, v in mu.items() if isinstance(v, dict)}
            if isinstance(mu, dict) else {}, fs.path, offset)
    elif t == "user" and b'"usage"' in raw:
        fs.echoes += 1


def _candidate_starts(buf: bytes, end: int, simd: bool = True) -> list[int]:
    """Start offsets (in `buf`) of the lines of buf[:end] holding a needle, sorted, unique
    (stringzilla's finds; `simd` False: the bytes' own, for a few appended lines)."""
    starts: set[int] = set()
    if simd:
        import stringzilla as _sz

        s = _sz.Str(buf)
        find, rfind = s.find, s.rfind
    else:
        find, rfind = buf.find, buf.rfind
    for needle in NEEDLES:
        p = find(needle, 0, end)
        while p >= 0:
            ls = rfind(b"\n", 0, p) + 1
            starts.add(ls)
            le = find(b"\n", p, end)
            if le < 0:
                break
            p = find(needle, le + 1, end)
    return sorted(starts)


def split_point(path: str, size: int) -> int | None:
    """A line boundary near the middle of a file (where a second reader starts), or None."""
    with open(path, "rb") as f:
        f.seek(size // 2)
        tail = f.read(1 << 20)
        while tail:
            i = tail.find(b"\n")
            if i >= 0:
                return f.tell() - len(tail) + i + 1
            tail = f.read(1 << 20)
    return None


def merge_scans(a: FileScan, b: FileScan) -> FileScan:
    """`b` read the bytes that follow `a`'s in the same file."""
    a.size = max(a.size, b.size)
    a.end = b.end
    a.candidates += b.candidates
    a.records += b.records
    a.assistant_without_usage += b.assistant_without_usage
    a.no_usage_ts += b.no_usage_ts
    a.echoes += b.echoes
    a.malformed += b.malformed
    a.odd_values += b.odd_values
    a.no_timestamp += b.no_timestamp
    a.from_iterations += b.from_iterations
    a.cwd = a.cwd or b.cwd
    a.client = b.client or a.client
    a.torn_tail_bytes = b.torn_tail_bytes
    return a


def scan_file(path: str | os.PathLike[str], start: int = 0, hold_torn: bool = True,
              stop: int | None = None, light: bool = False) -> FileScan:
    """Read the usage of one transcript from byte `start` (a line start) to `stop` (a line start,
    default the end). Raises OSError. `light`: every candidate line read by the generic parse
    with the stdlib's json and found with bytes.find (no msgspec, orjson or stringzilla imported:
    for the few lines a client appended since the last reading; the same records, held equal by
    tests/test_statusline.py)."""
    if light:
        import json

        loads = json.loads
        take = lambda fs_, raw_, off_: _take_loose(fs_, raw_, off_, loads)  # noqa: E731
    else:
        loads = _orjson_loads
        take = _take
    p = os.fspath(path)
    fs = FileScan(p)
    with open(p, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        fs.size = size
        pos = start
        f.seek(start)
        carry = b""
        left = (size if stop is None else stop) - start
        while True:
            chunk = f.read(min(CHUNK, left)) if left > 0 else b""
            left -= len(chunk)
            if not chunk:
                break
            buf = carry + chunk if carry else chunk
            base = pos - len(carry)
            pos += len(chunk)
            last = buf.rfind(b"\n")
            if last < 0:
                carry = buf
                continue
            end = last + 1
            for ls in _candidate_starts(buf, end, not light):
                le = buf.find(b"\n", ls, end)
                fs.candidates += 1
                take(fs, buf[ls:le], base + ls)
            carry = buf[end:]
        base = pos - len(carry)
        fs.end = base
        if carry and stop is not None and base + len(carry) < size:
            raise ValueError("scan_file: stop must be a line start")
        if carry:
            frag = carry
            if frag.strip(b"\x00").strip():
                try:
                    loads(frag)
                    complete = True
                except ValueError:
                    complete = False
                if complete or not hold_torn:
                    if any(n in frag for n in NEEDLES):
                        fs.candidates += 1
                        take(fs, frag, base)
                    fs.end = base + len(frag)
                else:
                    fs.torn_tail_bytes = len(frag)
    return fs


def events_of(fs: FileScan, session_id: str, lane: str, project: str | None) -> list[Event]:
    out = []
    path = fs.path
    for (mid, model, ts, i, o, cr, cw, cw1, r, speed, geo, tier, cost, off) in fs.records:
        out.append(Event(PROVIDER, session_id, lane, project, model, ts, i, o, cr, cw, cw1, r, speed, geo, tier,
                         cost, f"{PROVIDER}:{mid}" if mid else f"{path}@{off}", 1, path))
    return out


def light_usage(path: str, start: int, light: bool) -> tuple[int, list[Event]]:
    """(offset read to, usage events) of one main transcript from byte `start`: the statusLine
    hook's reading (providers.hook_usage; usage/statusline.py), `light` as in :func:`scan_file`."""
    fs = scan_file(path, start, light=light)
    return fs.end, events_of(fs, "", "main", None)
