"""`audit size`: what is big in a session store, and why (docs/audit.md "audit size").

Per session: the bytes of its footprint (every file that belongs to it alone), of the files its
records are read from, split by **record kind** (the line's own type: ``assistant``,
``attachment/file``, ``response_item/function_call_output``, ``api-request-shape``, a database
row's ``part/tool`` ...) and by **payload** inside the records (inline images by media type,
documents, tool outputs, the UI's copy of a tool output, thinking text, thinking signatures,
encrypted reasoning, request dumps, other text); the biggest lines; and, over the whole scope,
**duplicate payloads** by SHA-256 (the same image or blob stored N times) with what
deduplication would reclaim, and what a capture (zstd, as ``clean`` archives) would reclaim.

Measurement is byte-level and exact: a line's bytes are its bytes on disk (newline included); a
payload's bytes are the bytes of its JSON string as stored (escapes included). A line of
``BIG_LINE`` bytes or more is never parsed whole: its long strings are located on the bytes
(``_spans``: quotes found with ``bytes.find``, escapes counted), hashed in place, and replaced by
short placeholders; only that small skeleton is parsed to learn where each string sits. Shorter
lines are parsed (orjson) and their long strings re-encoded to measure them, which gives the same
bytes for what the clients write (tests hold both paths equal on every sample corpus).

Rows of a shared database (opencode, Crush) have no bytes of their own on disk: they are measured
as the JSON of the row the reader decoded (``measured: "row json"``), and a capture of such a
session is unknown (null: its rows live in a database that also holds other sessions).
"""

from __future__ import annotations

import hashlib
import os
import stat as S
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson

from ..providers.base import Problem, Provider, ReadReport, SessionRef

BIG_LINE = 256 * 1024
"""Lines this long or longer are measured on their bytes (never parsed whole)."""
LONG = 256
"""Text-like strings of this many bytes or more are payloads (shorter ones stay in their record's
kind only)."""
BINARY_MIN = 32
"""Binary payloads (base64 images and documents, signatures, encrypted reasoning) count from this
many bytes (a 1x1 PNG is about 90 bytes of base64)."""
BINARY = frozenset({"image", "document", "thinking_signature", "encrypted_reasoning"})
DUP_MIN = 1024
"""Payloads of this many bytes or more are hashed for the duplicate census."""
DUP_CAP = 2_000_000
"""At most this many distinct payload hashes are kept (memory stays bounded); past it new
payloads are not hashed and the answer says so (``duplicates_truncated``)."""
TOP_LINES = 5
_NONCE = "\x00ssift-span:"
_NONCE_J = b"\\u0000ssift-span:"

REQUEST_DUMP_KINDS = ("api-request", "api-request-shape", "api-request-blob")
TOOL_OUTPUT_TYPES = frozenset({"tool_result", "function_call_output", "custom_tool_call_output",
                               "local_shell_call_output", "tool_search_call_output", "mcp_tool_call_output"})
SIGNATURE_KEYS = frozenset({"signature", "thoughtSignature", "thought_signature"})
TOOL_OUTPUT_KEYS = frozenset({"functionResponse", "resultDisplay", "aggregated_output", "formatted_output",
                              "stdout", "stderr"})
TOOL_INPUT_TYPES = frozenset({"tool_use", "function_call", "custom_tool_call", "local_shell_call"})
THINKING_KEYS = frozenset({"thinking", "thoughts", "reasoning_content"})


@dataclass
class Payload:
    category: str
    """image, document, tool_input, tool_output, tool_output_copy, thinking, thinking_signature,
    encrypted_reasoning, request_dump, text."""
    media_type: str | None
    size: int
    sha256: str | None


@dataclass
class SessionSize:
    ref: SessionRef
    measured: str = "bytes on disk"
    """``bytes on disk`` (line-based stores), ``decompressed bytes`` (a compressed rollout: its
    lines are measured in the decompressed stream) or ``row json`` (database rows)."""
    footprint_bytes: int | None = None
    """Bytes of every file in the session's footprint (None: it has no files of its own); a lower
    bound when ``footprint_note`` says so."""
    footprint_note: str | None = None
    """``lower bound: N entries of the footprint could not be read (path: why)``; None: every entry read."""
    side_files: dict[str, int] = field(default_factory=dict)
    """Footprint bytes outside the files read, by top-level name (e.g. ``file-history``)."""
    bytes: int = 0
    """Bytes of the records measured (lines with their newline, or row JSON)."""
    lines: int = 0
    kinds: dict[str, list[int]] = field(default_factory=dict)
    """record kind -> [records, bytes]."""
    payloads: dict[str, list[int]] = field(default_factory=dict)
    """payload category -> [count, bytes]."""
    attachments: dict[str, list[int]] = field(default_factory=dict)
    """media type of inline images/documents -> [count, bytes]."""
    big_lines: int = 0
    """Lines measured on their bytes (>= BIG_LINE)."""
    top: list[tuple[int, str, str, str | None]] = field(default_factory=list)
    """The biggest records: (bytes, locator, kind, path)."""
    capture_bytes: int | None = None
    """zstd size of the footprint (what a capture would keep); None when not measured."""
    capture_note: str | None = None
    report: ReadReport = field(default_factory=ReadReport)
    unparsed_lines: int = 0
    """Lines that are not JSON (counted by kind ``(unparsed)``: their bytes are still measured)."""


@dataclass
class DupGroup:
    sha256: str
    category: str
    media_type: str | None
    size: int
    count: int = 0
    sessions: set = field(default_factory=set)
    locators: list[str] = field(default_factory=list)


@dataclass
class SizeResult:
    sessions: list[SessionSize] = field(default_factory=list)
    dups: dict[str, DupGroup] = field(default_factory=dict)
    duplicates_truncated: bool = False
    problems: list[Problem] = field(default_factory=list)

    def duplicate_groups(self) -> list[DupGroup]:
        g = [d for d in self.dups.values() if d.count > 1]
        g.sort(key=lambda d: (-(d.count - 1) * d.size, d.sha256))
        return g

    def dedup_reclaim(self) -> int:
        return sum((d.count - 1) * d.size for d in self.dups.values() if d.count > 1)


# -- byte-level string spans -------------------------------------------------------------------


def _spans(raw: bytes, minlen: int = BINARY_MIN) -> list[tuple[int, int]] | None:
    """(start, end) of the contents of every JSON string of ``minlen`` bytes or more in ``raw``
    (without quotes), found on the bytes; None when the quotes do not pair up (not JSON)."""
    out: list[tuple[int, int]] = []
    find = raw.find
    pos = 0
    while True:
        q = find(b'"', pos)
        if q < 0:
            return out
        e = q + 1
        while True:
            e = find(b'"', e)
            if e < 0:
                return None
            k = e - 1
            while raw[k] == 92:  # backslash
                k -= 1
            if (e - 1 - k) % 2 == 0:
                break
            e += 1
        if e - q - 1 >= minlen:
            out.append((q + 1, e))
        pos = e + 1


def _skeleton(raw: bytes, spans: list[tuple[int, int]]) -> bytes:
    parts = []
    prev = 0
    for i, (s, e) in enumerate(spans):
        parts.append(raw[prev:s])
        parts.append(_NONCE_J + str(i).encode())
        prev = e
    parts.append(raw[prev:])
    return b"".join(parts)


# -- classification ------------------------------------------------------------------------------


def record_kind(obj: dict) -> str:
    """A record's own kind: its ``type`` (with a ``payload``'s, an ``attachment``'s type or a
    ``subtype`` after a slash), else its first key (Gemini's ``$set``/``$rewindTo``, a header)."""
    t = obj.get("type")
    if isinstance(t, str):
        for k in ("payload", "attachment"):
            sub = obj.get(k)
            if isinstance(sub, dict) and isinstance(sub.get("type"), str):
                return f"{t}/{sub['type']}"
        st = obj.get("subtype")
        if isinstance(st, str):
            return f"{t}/{st}"
        return t
    if "sessionId" in obj and "projectHash" in obj:
        return "header"
    for k in obj:
        return k if k.startswith("$") else f"(no type: {k})"
    return "(empty)"


def _media(d: dict) -> str | None:
    for k in ("media_type", "mimeType", "mime_type", "mime"):
        v = d.get(k)
        if isinstance(v, str):
            return v
    src = d.get("source")
    if isinstance(src, dict):
        return _media(src)
    return None


def _data_url_media(head: str) -> str | None:
    if head.startswith("data:") and ";base64," in head[:128]:
        return head[5:head.index(";")] or None
    return None


def _walk(v: Any, key: str | None, parent: dict | None, ctx: str | None,
          emit) -> None:
    """Call ``emit(value, category, media_type)`` for every string that is a payload candidate;
    ``ctx`` is the category inherited from an enclosing structure (a tool result, a UI copy)."""
    if isinstance(v, dict):
        t = v.get("type")
        c = ctx
        if isinstance(t, str):
            if t in TOOL_OUTPUT_TYPES:
                c = c or "tool_output"
            elif t in ("thinking", "reasoning", "redacted_thinking"):
                c = c or "thinking"
            elif t in TOOL_INPUT_TYPES:
                c = c or "tool_input"
        for k, x in v.items():
            kc = c
            if k == "toolUseResult":
                kc = "tool_output_copy"
            elif k in TOOL_OUTPUT_KEYS or (k == "output" and c is None and isinstance(x, str)):
                kc = c or "tool_output"
            elif k in THINKING_KEYS:
                kc = c or "thinking"
            _walk(x, k, v, kc, emit)
    elif isinstance(v, list):
        for x in v:
            _walk(x, key, parent, ctx, emit)
    elif isinstance(v, str):
        emit(v, key, parent, ctx)


def _category(head: str, key: str | None, parent: dict | None, ctx: str | None) -> tuple[str, str | None]:
    mt = _data_url_media(head)
    if mt is not None:
        return ("image" if mt.startswith("image/") else "document"), mt
    if key == "data" and isinstance(parent, dict):
        mt = _media(parent)
        src_b64 = parent.get("type") == "base64" or parent.get("encoding") == "base64"
        if mt is not None or src_b64:
            return ("image" if (mt or "").startswith("image/") else "document"), mt
    if key in SIGNATURE_KEYS:
        return "thinking_signature", None
    if key == "encrypted_content":
        return "encrypted_reasoning", None
    if ctx is not None:
        return ctx, None
    return "text", None


# -- measurement -------------------------------------------------------------------------------


class _Census:
    def __init__(self, res: SizeResult, hash_dups: bool = True):
        self.res = res
        self.hash_dups = hash_dups

    def add_payload(self, ss: SessionSize, cat: str, mt: str | None, size: int, data: bytes | None,
                    locator: str) -> None:
        p = ss.payloads.setdefault(cat, [0, 0])
        p[0] += 1
        p[1] += size
        if mt is not None and cat in ("image", "document"):
            a = ss.attachments.setdefault(mt, [0, 0])
            a[0] += 1
            a[1] += size
        if data is None or size < DUP_MIN or not self.hash_dups:
            return
        h = hashlib.sha256(data).hexdigest()
        g = self.res.dups.get(h)
        if g is None:
            if len(self.res.dups) >= DUP_CAP:
                self.res.duplicates_truncated = True
                return
            g = self.res.dups[h] = DupGroup(h, cat, mt, size)
        g.count += 1
        key = (ss.ref.provider, ss.ref.session_id)
        if len(g.sessions) < 1000:
            g.sessions.add(key)
        if len(g.locators) < 5:
            g.locators.append(f"{ss.ref.session_id}:{locator}")

    def add_kind(self, ss: SessionSize, kind: str, size: int, locator: str, path: str | None) -> None:
        k = ss.kinds.setdefault(kind, [0, 0])
        k[0] += 1
        k[1] += size
        ss.bytes += size
        top = ss.top
        if len(top) < TOP_LINES or size > top[-1][0]:
            top.append((size, locator, kind, path))
            top.sort(key=lambda t: -t[0])
            del top[TOP_LINES:]

    def measure_obj(self, ss: SessionSize, obj: dict, kind: str, locator: str) -> None:
        """Payloads of a parsed record: long strings, re-encoded to their stored bytes."""
        if kind.startswith(REQUEST_DUMP_KINDS):
            body = orjson.dumps(obj)
            self.add_payload(ss, "request_dump", None, len(body), body, locator)
            return

        def emit(s: str, key, parent, ctx) -> None:
            if len(s) < BINARY_MIN // 6:  # an escaped character is at most 6 bytes
                return
            enc = _enc(s)
            n = len(enc)
            if n < BINARY_MIN:
                return
            cat, mt = _category(s[:128], key, parent, ctx)
            if n >= LONG or cat in BINARY:
                self.add_payload(ss, cat, mt, n, enc, locator)

        _walk(obj, None, None, None, emit)

    def measure_big(self, ss: SessionSize, raw: bytes, locator: str) -> str | None:
        """A big line measured on its bytes: the record kind, or None when it is not JSON."""
        body = raw.replace(b"\x00", b"") if b"\x00" in raw else raw
        spans = _spans(body)
        if spans is None:
            return None
        try:
            obj = orjson.loads(_skeleton(body, spans))
        except orjson.JSONDecodeError:
            return None
        if not isinstance(obj, dict):
            return None
        kind = record_kind(obj)
        if kind.startswith(REQUEST_DUMP_KINDS):
            self.add_payload(ss, "request_dump", None, len(body), body, locator)
            return kind

        def emit(s: str, key, parent, ctx) -> None:
            if not s.startswith(_NONCE):
                return
            a, b = spans[int(s[len(_NONCE):])]
            head = body[a:a + 128].decode("utf-8", "replace")
            cat, mt = _category(head, key, parent, ctx)
            if b - a >= LONG or cat in BINARY:
                self.add_payload(ss, cat, mt, b - a, body[a:b], locator)

        _walk(obj, None, None, None, emit)
        return kind


def _enc(s: str) -> bytes:
    try:
        return orjson.dumps(s)[1:-1]
    except orjson.JSONEncodeError:  # lone surrogates: measure them as the client wrote them
        return s.encode("utf-8", "surrogatepass")


def _file_lines(prov: Provider, path: Path, report: ReadReport):
    """The lines of one of a session's files as its provider stores them (``Provider.file_lines``:
    a compressed rollout decompressed as a stream), its reading counted in ``report``."""
    from ..read.lines import ReadStats

    st = ReadStats()
    try:
        yield from prov.file_lines(path, st)
    finally:
        report.files += st.files
        report.bytes += st.bytes
        report.zero_filled_lines += st.zero_filled_lines
        report.torn_tail_bytes += st.torn_tail_bytes


def _line_based(prov: Provider, ref: SessionRef) -> bool:
    return bool(ref.paths) and all(str(p).endswith((".jsonl", ".jsonl.zst", ".json")) for p in ref.paths)


def measure_session(prov: Provider, ref: SessionRef, census: _Census, *, big_line: int = BIG_LINE,
                    capture: bool = True) -> SessionSize:
    ss = SessionSize(ref)
    if any(str(p).endswith(".zst") for p in ref.paths):
        ss.measured = "decompressed bytes"
    if _line_based(prov, ref):
        _measure_files(ss, prov, ref, census, big_line)
    else:
        _measure_rows(ss, prov, ref, census)
    _footprint(ss, prov, ref, capture)
    return ss


def _measure_files(ss: SessionSize, prov: Provider, ref: SessionRef, census: _Census, big_line: int) -> None:
    from ..read.lines import parse_line

    multi = len(ref.paths) > 1
    for i, p in enumerate(ref.paths):
        sp = str(p)
        pre = f"{p.name}:" if multi and i else ""
        try:
            if sp.endswith(".json"):
                _measure_document(ss, p, census, pre)
                continue
            for ln in _file_lines(prov, p, ss.report):
                ss.lines += 1
                size = len(ln.raw) + 1
                loc = f"{pre}L{ln.no}"
                if not ln.raw.strip(b"\x00 \t\r"):
                    census.add_kind(ss, "(blank)", size, loc, sp)
                    continue
                if len(ln.raw) >= big_line:
                    ss.big_lines += 1
                    kind = census.measure_big(ss, ln.raw, loc)
                else:
                    obj = parse_line(ln.raw)
                    kind = None
                    if obj is not None:
                        kind = record_kind(obj)
                        census.measure_obj(ss, obj, kind, loc)
                if kind is None:
                    ss.unparsed_lines += 1
                    ss.report.malformed_lines.append(f"{p}:{ln.no}")
                    kind = "(unparsed)"
                census.add_kind(ss, kind, size, loc, sp)
        except OSError as exc:
            ss.report.problems.append(Problem(sp, exc.strerror or str(exc)))
        except Exception as exc:  # noqa: BLE001 - corrupt compressed data and the like
            ss.report.problems.append(Problem(sp, f"{type(exc).__name__}: {exc}"))


def _measure_document(ss: SessionSize, p: Path, census: _Census, pre: str) -> None:
    """A whole-file JSON document (Gemini CLI's legacy ``session-*.json``): one record of kind
    ``(json document)`` with the file's bytes; its payloads measured on the parsed document."""
    data = p.read_bytes()
    ss.report.files += 1
    ss.report.bytes += len(data)
    ss.lines += 1
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        obj = None
    loc = f"{pre}L1"
    if isinstance(obj, dict):
        census.measure_obj(ss, obj, "(json document)", loc)
        census.add_kind(ss, "(json document)", len(data), loc, str(p))
    else:
        ss.unparsed_lines += 1
        ss.report.malformed_lines.append(f"{p}:1")
        census.add_kind(ss, "(unparsed)", len(data), loc, str(p))


def _measure_rows(ss: SessionSize, prov: Provider, ref: SessionRef, census: _Census) -> None:
    ss.measured = "row json"
    seen: set[str] = set()
    try:
        for r in prov.read(ref, ss.report, raw=True):
            base = r.locator.split("#", 1)[0] if "#output" in r.locator else r.locator
            if base in seen:
                continue
            seen.add(base)
            raw = r.raw
            body = orjson.dumps(raw, default=str)
            kind = r.native
            ss.lines += 1
            if isinstance(raw, dict):
                census.measure_obj(ss, raw, kind, base)
            census.add_kind(ss, kind, len(body), base, r.path)
    except Exception as exc:  # noqa: BLE001 - a reader's failure is reported, not propagated
        ss.report.problems.append(Problem(str(ref.paths[0]) if ref.paths else ref.session_id,
                                          f"reader failed: {type(exc).__name__}: {exc}"))


def _iter_files(paths: Iterable[Path], unread: list[tuple[str, str]] | None = None
                ) -> Iterator[tuple[Path, Path, int]]:
    """(footprint entry, file, size) for every regular file of a footprint (dirs walked). An entry
    that does not exist is not there (a footprint names what the client may write); one that
    exists and cannot be stat'ed or listed goes to ``unread`` (path, why): the sizes summed are
    then a lower bound, never "nothing there"."""
    bad = unread if unread is not None else []

    def onerror(exc: OSError) -> None:
        if not isinstance(exc, FileNotFoundError):
            bad.append((str(exc.filename), exc.strerror or str(exc)))

    for top in paths:
        try:
            st = os.lstat(top)
        except FileNotFoundError:
            continue
        except OSError as exc:
            bad.append((str(top), exc.strerror or str(exc)))
            continue
        if S.S_ISREG(st.st_mode):
            yield top, top, st.st_size
        elif S.S_ISDIR(st.st_mode):
            for dp, dns, fns in os.walk(top, onerror=onerror):
                dns.sort()
                for n in sorted(fns):
                    f = Path(dp) / n
                    try:
                        fst = os.lstat(f)
                    except FileNotFoundError:
                        continue
                    except OSError as exc:
                        bad.append((str(f), exc.strerror or str(exc)))
                        continue
                    if S.S_ISREG(fst.st_mode):
                        yield top, f, fst.st_size


def _footprint(ss: SessionSize, prov: Provider, ref: SessionRef, capture: bool) -> None:
    try:
        fp = prov.footprint(ref)
    except Exception as exc:  # noqa: BLE001
        ss.capture_note = f"footprint failed: {type(exc).__name__}: {exc}"
        return
    if not fp:
        ss.capture_note = "no files of its own (rows in a shared database): not measured"
        return
    read = {os.path.abspath(p) for p in ref.paths}
    total = 0
    cctx = None
    if capture:
        import zstandard

        cctx = zstandard.ZstdCompressor(level=3)
    csize = 0
    unread: list[tuple[str, str]] = []
    for top, f, size in _iter_files(fp, unread):
        total += size
        if os.path.abspath(f) not in read:
            name = top.name if top == f else f"{top.name}/{f.relative_to(top).parts[0]}"
            ss.side_files[name] = ss.side_files.get(name, 0) + size
        if cctx is not None:
            try:
                csize += _zstd_size(cctx, f)
            except OSError as exc:
                cctx = None
                ss.capture_note = f"capture size unknown: {f}: {exc.strerror}"
    ss.footprint_bytes = total
    if unread:
        ss.footprint_note = (f"lower bound: {len(unread)} entr{'y' if len(unread) == 1 else 'ies'} of the footprint "
                             f"could not be read ({unread[0][0]}: {unread[0][1]})")
        ss.report.problems.extend(Problem(p, f"footprint entry unreadable: {why}") for p, why in unread)
        if cctx is not None:  # the zstd size of part of the files is no capture size
            cctx = None
            ss.capture_note = "capture size unknown: part of the footprint could not be read"
    if cctx is not None:
        ss.capture_bytes = csize
    elif not capture:
        ss.capture_note = "not measured (--no-capture)"


def _zstd_size(cctx, path: Path) -> int:
    n = 0
    with open(path, "rb") as f:
        comp = cctx.compressobj()
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            n += len(comp.compress(b))
        n += len(comp.flush())
    return n


def size_audit(pairs: list[tuple[Provider, SessionRef]], *, big_line: int = BIG_LINE, capture: bool = True,
               duplicates: bool = True) -> SizeResult:
    """Measure every session of ``pairs`` (see the module docstring)."""
    res = SizeResult()
    census = _Census(res, hash_dups=duplicates)
    for prov, ref in pairs:
        ss = measure_session(prov, ref, census, big_line=big_line, capture=capture)
        res.sessions.append(ss)
        res.problems.extend(ss.report.problems)
    return res


def kind_totals(res: SizeResult) -> tuple[Counter, Counter]:
    recs: Counter = Counter()
    byts: Counter = Counter()
    for ss in res.sessions:
        for k, (n, b) in ss.kinds.items():
            recs[k] += n
            byts[k] += b
    return recs, byts
