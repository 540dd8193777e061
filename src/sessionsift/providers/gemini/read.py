"""How a Gemini CLI session reads as records in the shared shape (measured with 0.61.0; the log format
read from ``ChatRecordingService``/``loadConversationRecord`` in the client's source).

A ``session-*.jsonl`` file is an append log of four line kinds, told apart in the client's own order:

1. ``{"$rewindTo": "<message id>"}``: the message and every message after it (in the order the ids
   first entered the list) leave the conversation (an id that is not in the list clears it);
2. a message (``{"id", "timestamp", "type", "content", ...}``), upserted by ``id``: the same gemini
   message is written again when its tokens and again when its ``toolCalls`` are attached;
3. ``{"$set": {...}}``: top-level keys assigned; ``$set.messages`` replaces the whole list;
4. a header (``sessionId`` and ``projectHash``): the start of a client run (a resumed session appends a
   second one).

Reading rules (documented in docs/providers.md):

- **Last write wins**: of the standalone lines of one message id only the last is read (the earlier ones
  are the same message before its tokens/tool calls were attached: superseded, not yielded, counted in
  ``notes``); its records point at that line (``L<n>``, ``L<n>#<k>`` for the k-th record of a line).
  When the last write is damaged (not JSON), the latest readable one is read instead, at its own line,
  and a note says so.
- **Replays are copies**: ``--resume`` appends a ``$set.messages`` holding the whole history again in the
  model-facing Content shape (``functionCall``/``functionResponse`` parts, no tokens, no ``toolCalls``,
  plus a synthesised ``<id>_response`` user message per tool-using turn). Each tool result is also
  recorded twice in the live log (in ``toolCalls[].result`` and in the following ``functionResponse``
  user message). The first record of a message (same id, same text), of a tool call and of a tool result
  (same call id) is the original; every later one is yielded with ``copy_of`` set to it.
- **Rewound** messages (removed by ``$rewindTo`` and never written again) keep their records, marked
  ``rewound`` (they happened: their tokens were spent and their tools ran); their lane stays ``main``.
- Message 0 of each client run (``<session_context>``, also ``<hook_context>``) is ``meta`` with role
  ``user``: synthetic context nobody typed. In a subagent's session the user messages are the delegating
  model's task and the client's nudges: ``message`` with role ``user``, never ``prompt``.
- ``{"$set": {"lastUpdated"}}`` patches are bookkeeping and are not yielded; other patches
  (``summary``, ``memoryScratchpad``, ``directories``, ``sessionId``) are ``meta``.
- Unknown line kinds and message types are yielded with ``kind="unknown"`` and counted in
  ``ReadReport.unknown_kinds`` (``line:<first key>``, ``message:<type>``).

Legacy ``session-*.json`` files (one JSON object, written whole by releases before 0.39) hold the same
messages with no upserts; a record's line is the first line of its message object.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterator

import orjson

from ...read.lines import ReadStats, iter_lines, parse_numbered
from ..base import FileChange, ReadReport, Record, SessionRef, Tokens
from .toolresult import SHELL_TOOLS, file_changes, response_text, shell_exit_code, untruncated_output

PROVIDER = "gemini-cli"
CONTEXT_PREFIXES = ("<session_context>", "<hook_context>")
HARNESS_TYPES = frozenset({"info", "error", "warning"})
_ID = re.compile(rb'\{"id":"((?:[^"\\]|\\.)*)"')
_NORM = re.compile(r"[\s*]+")


def read(ref: SessionRef, report: ReadReport, *, raw: bool = False) -> Iterator[Record]:
    path = ref.paths[0]
    if not isinstance(path, Path):
        path = Path(path)
    b = _Builder(ref, path, report, raw)
    try:
        if path.suffix == ".json":
            yield from b.legacy()
        else:
            yield from b.jsonl()
    except OSError as exc:
        from ..base import Problem

        report.problems.append(Problem(str(path), f"unreadable: {exc.strerror or exc}"))
    report.records += b.count
    if b.superseded:
        report.notes.append(f"{path.name}: {b.superseded} earlier write(s) of a message superseded by a later "
                            "write of the same id (last write wins)")
    if b.rewound:
        report.notes.append(f"{path.name}: {len(b.rewound)} message(s) rewound ($rewindTo): kept, marked rewound")


# ------------------------------------------------------------------------------------------ index

ONE_PASS_BYTES = 1 << 20
"""A chat file up to this size is framed and parsed once, its lines held while the index is taken
from them; a larger one is read twice (the index pass parses only what it needs)."""
_PARSE = object()
GATE_BOOKKEEPING = True
"""Skip the client's ``{"$set":{"lastUpdated":"<ASCII>"}}`` lines by their bytes (a third of a
chat's lines, measured): such bytes are valid JSON, a set patch of bookkeeping only, so the parse
would yield no record and count nothing but a readable line (kept in ``ReadStats.records``)."""
_BOOKKEEPING = re.compile(rb'\{"\$set":\{"lastUpdated":"[\x20\x21\x23-\x5b\x5d-\x7e]*"\}\}')


def index(path: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Pass 1: the last standalone line of every message id, and the ids rewound for good (id -> the
    ``$rewindTo`` line). Only ``$set.messages``, ``$rewindTo`` and header lines are parsed; a message
    line's id is taken from its first bytes (the client writes ``{"id":`` first)."""
    return _index_of((line.no, line.raw, _PARSE) for line in iter_lines(path))


def _index_of(items) -> tuple[dict[str, int], dict[str, int]]:
    """:func:`index` over ``(line number, raw bytes, parsed object or _PARSE)``: a line's object is
    used only where the index pass would parse the line, and then it is the same object (the
    shared reading rules' parse of those bytes)."""
    last: dict[str, int] = {}
    last_version: dict[str, int] = {}
    removed: dict[str, int] = {}
    state: dict[str, None] = {}
    for no, s, given in items:
        if b"\x00" in s:
            s = s.replace(b"\x00", b"")
        s = s.strip()
        mid = None
        if s.startswith(b'{"id":"') and b'"$rewindTo"' not in s:
            m = _ID.match(s)
            mid = _unescape(m.group(1)) if m else None
        if mid is None:
            if s.startswith(b'{"$set":') and b'"messages"' not in s:
                continue
            if not s.startswith(b"{"):
                continue
            if given is _PARSE:
                try:
                    obj = orjson.loads(s)
                except orjson.JSONDecodeError:
                    try:
                        obj = orjson.loads(s.decode("utf-8", "replace"))
                    except orjson.JSONDecodeError:
                        continue
            else:
                obj = given
            if not isinstance(obj, dict):
                continue
            kind = line_kind(obj)
            if kind == "rewind":
                target = obj["$rewindTo"]
                keys = list(state)
                gone = keys[keys.index(target):] if target in state else keys
                for k in gone:
                    del state[k]
                    removed[k] = no
                continue
            if kind == "message":
                mid = obj["id"]
            elif kind == "set" and isinstance(obj["$set"].get("messages"), list):
                state = {}
                for m in obj["$set"]["messages"]:
                    if isinstance(m, dict) and isinstance(m.get("id"), str):
                        state[m["id"]] = None
                        last_version[m["id"]] = no
                continue
            elif kind == "header" and isinstance(obj.get("messages"), list):
                for m in obj["messages"]:
                    if isinstance(m, dict) and isinstance(m.get("id"), str):
                        state[m["id"]] = None
                        last_version[m["id"]] = no
                continue
            else:
                continue
        state[mid] = None
        last[mid] = no
        last_version[mid] = no
    rewound = {k: n for k, n in removed.items() if n > last_version.get(k, 0)}
    return last, rewound


COMPRESSION_ACK = "Got it. Thanks for the additional context!"
"""The model message Gemini CLI puts after a compression's summary (chatCompressionService.js,
0.61.0: the new history is the context, ``{role: "user", parts: [{text: <summary>}]}``, this, then
the turns it kept), written to the session file by ``updateMessagesFromHistory`` as a
``$set.messages``."""


def compression_marks(msgs: list) -> dict[int, str]:
    """Index -> ``summary`` / ``ack`` for the compressions a ``$set.messages`` list holds: a user
    message of text parts alone, followed by a gemini message whose text is exactly
    :data:`COMPRESSION_ACK` (measured with 0.61.0, tests/realclient/gemini/scenarios_compress.py)."""
    out: dict[int, str] = {}
    for i in range(1, len(msgs)):
        a, b = msgs[i - 1], msgs[i]
        if not (isinstance(a, dict) and isinstance(b, dict) and a.get("type") == "user" and b.get("type") == "gemini"):
            continue
        if _text_of(_parts(b.get("content"))) != COMPRESSION_ACK:
            continue
        pa = _parts(a.get("content"))
        if pa and all(isinstance(p.get("text"), str) and not p.get("thought") for p in pa) \
                and not _text_of(pa).lstrip().startswith(CONTEXT_PREFIXES):
            out[i - 1], out[i] = "summary", "ack"
    return out


def line_kind(obj: dict) -> str:
    """The client's own classification of a log line (loadConversationRecord's order)."""
    if isinstance(obj.get("$rewindTo"), str):
        return "rewind"
    if isinstance(obj.get("id"), str):
        return "message"
    if isinstance(obj.get("$set"), dict):
        return "set"
    if isinstance(obj.get("sessionId"), str) and isinstance(obj.get("projectHash"), str):
        return "header"
    return "unknown"


def _unescape(b: bytes) -> str | None:
    try:
        v = orjson.loads(b'"' + b + b'"')
    except orjson.JSONDecodeError:
        return None
    return v if isinstance(v, str) else None


def _parts(content: Any) -> list[dict]:
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        return [{"text": p} if isinstance(p, str) else p for p in content if isinstance(p, (str, dict))]
    return []


def _text_of(parts: list[dict], thought: bool = False) -> str:
    return "".join(p["text"] for p in parts if isinstance(p.get("text"), str) and bool(p.get("thought")) == thought)


def _norm(t: str | None) -> str:
    """Runs of whitespace and ``*`` as one space, stripped (``_NORM``: str.split splits on the same
    characters as the pattern's ``\\s``)."""
    return " ".join(t.replace("*", " ").split()) if t else ""


def _int(x: Any) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def tokens_of(t: Any, message_id: str) -> Tokens | None:
    """Gemini's per-message usage in the shared shape (see docs/providers.md):

    ``input`` = ``tokens.input - tokens.cached + tokens.tool`` (Gemini's ``input`` is promptTokenCount,
    which includes the cached tokens; toolUsePromptTokenCount is counted outside it), ``cache_read`` =
    ``cached``, ``output`` = ``output + thoughts`` (candidatesTokenCount excludes the thinking tokens),
    ``reasoning`` = ``thoughts``, ``total`` = ``total``, ``cache_write`` None (not recorded);
    so ``input + cache_read + output == total``. ``dedup_key`` is the message id (written twice)."""
    if not isinstance(t, dict):
        return None
    inp, cached, out = _int(t.get("input")), _int(t.get("cached")), _int(t.get("output"))
    th, tool, total = _int(t.get("thoughts")), _int(t.get("tool")), _int(t.get("total"))
    norm_in = None
    if inp is not None and cached is not None:
        norm_in = max(0, inp - cached) + (tool or 0)
    return Tokens(input=norm_in, output=None if out is None else out + (th or 0), cache_read=cached,
                  reasoning=th, total=total, dedup_key=message_id)


# ------------------------------------------------------------------------------------------ builder

class _Builder:
    def __init__(self, ref: SessionRef, path: Path, report: ReadReport, raw: bool):
        self.ref, self.path, self.report, self.raw = ref, path, report, raw
        self.path_s = str(path)
        self.sid = ref.session_id
        self.subagent = ref.extra.get("kind") == "subagent" or ref.parent_session_id is not None
        self.count = 0
        self.superseded = 0
        self.turn: int | None = None
        self.rewound: dict[str, int] = {}
        self.seen_msg: dict[tuple, tuple[str, str | None, int | None, str | None]] = {}
        """key -> (locator, normalised text or None = not yet computed, turn, text) of the original."""
        self.seen_call: dict[str, tuple[str, int | None]] = {}
        self.seen_result: dict[str, tuple[str, int | None]] = {}
        self.seen_display: dict[str, tuple[str, int | None]] = {}
        self._line = (0, None, None)
        self._k = 0

    # -- framing -------------------------------------------------------------------------------
    def _parsed(self, stats: ReadStats) -> Iterator[tuple]:
        """(line, parse_numbered's object) per line, the bookkeeping lines left out by their bytes
        (GATE_BOOKKEEPING): they would yield nothing and are no message's winning write."""
        gate = _BOOKKEEPING.fullmatch if GATE_BOOKKEEPING else None
        path = self.path
        for line in iter_lines(path, stats=stats):
            raw = line.raw
            if gate is not None and raw.startswith(b'{"$set":{"lastUpdated":"') and gate(raw):
                stats.records += 1
                continue
            yield line, parse_numbered(line, path, stats)

    def jsonl(self) -> Iterator[Record]:
        stats = ReadStats()
        if os.stat(self.path).st_size <= ONE_PASS_BYTES:  # one framing, one parse per line
            parsed = list(self._parsed(stats))
            last, self.rewound = _index_of((line.no, line.raw, _PARSE if obj is None else obj)
                                           for line, obj in parsed)
            source = iter(parsed)
        else:
            last, self.rewound = index(self.path)
            source = self._parsed(stats)
        winners = {n: mid for mid, n in last.items()}
        pending: dict[str, tuple[dict, int, int, int]] = {}
        """Superseded versions held until their winning line has been read: when that line turns out
        unreadable (damaged bytes), the latest readable version is read instead (at its own line)."""
        for line, obj in source:
            wid = winners.get(line.no)
            if obj is not None:
                self._at(line.no, line.offset, len(line.raw))
                kind = line_kind(obj)
                if kind == "message" and last.get(obj["id"], 0) > line.no:
                    self.superseded += 1
                    pending[obj["id"]] = (obj, line.no, line.offset, len(line.raw))
                    continue
                if kind == "message" and obj["id"] == wid:
                    pending.pop(wid, None)
                    wid = None
                yield from self._dispatch(obj, kind)  # a list: every record of the line
            if wid is not None and wid in pending:  # the winning write is unreadable: fall back
                yield from self._fallback(pending.pop(wid))
        for held in list(pending.values()):
            yield from self._fallback(held)
        self._close(stats)

    def _fallback(self, held: tuple[dict, int, int, int]) -> Iterator[Record]:
        obj, no, offset, length = held
        self.superseded -= 1
        self._at(no, offset, length)
        self.report.notes.append(f"{self.path.name}:{no}: read in place of a later write of message "
                                 f"{obj['id']!r} that could not be read")
        yield from self.message(obj)

    def _dispatch(self, obj: dict, kind: str) -> list[Record]:
        """Every record of one line, in order (lists, not nested generators: a line's records are
        few and each generator level costs per record)."""
        if kind == "message":
            return self.message(obj)
        if kind == "set":
            return self.patch(obj, obj["$set"])
        if kind == "header":
            out = [self.rec("harness", "meta", "header", obj, text=_header_text(obj),
                            instant=obj.get("startTime") if isinstance(obj.get("startTime"), str) else None)]
            for m in obj.get("messages") or [] if isinstance(obj.get("messages"), list) else []:
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    out += self.message(m)
            return out
        if kind == "rewind":
            return [self.rec("harness", "meta", "$rewindTo", obj, text=f"rewind to message {obj['$rewindTo']}")]
        native = "line:" + (next(iter(obj), "") if obj else "{}")
        self.report.unknown_kinds[native] += 1
        return [self.rec("harness", "unknown", native, obj)]

    def legacy(self) -> Iterator[Record]:
        data = self.path.read_bytes()
        stats = ReadStats(files=1, bytes=len(data))
        try:
            obj = orjson.loads(data.replace(b"\x00", b"")) if data.strip(b"\x00 \n\t\r") else None
        except orjson.JSONDecodeError:
            obj = None
            stats.malformed_lines.append(1)
        if b"\x00" in data:
            stats.zero_filled_lines += 1
        if not isinstance(obj, dict):
            if obj is not None:
                stats.non_object_lines += 1
                stats.malformed_lines.append(1)
            self._close(stats)
            return
        starts = _message_lines(data)
        self._at(1, 0, None)
        yield self.rec("harness", "meta", "header", obj, text=_header_text(obj),
                       instant=obj.get("startTime") if isinstance(obj.get("startTime"), str) else None)
        msgs = obj.get("messages") if isinstance(obj.get("messages"), list) else []
        marks = compression_marks(msgs) if isinstance(msgs, list) else {}
        for i, m in enumerate(msgs):
            if not isinstance(m, dict):
                continue
            if i < len(starts) and len(starts) == len(msgs):
                self._at(*starts[i])
            if isinstance(m.get("id"), str):
                yield from self.message(m) if i not in marks else self.compression(m, marks[i])
            else:
                self.report.unknown_kinds["message:no id"] += 1
                yield self.rec("harness", "unknown", "message:no id", m)
        if isinstance(obj.get("summary"), str):
            yield self.rec("harness", "meta", "summary", obj.get("summary"), text=obj["summary"])
        self._close(stats)

    def _close(self, stats: ReadStats) -> None:
        r = self.report
        r.add_read(self.path, stats, files=1)

    def _at(self, no: int, offset: int | None, length: int | None) -> None:
        self._line = (no, offset, length)
        self._k = 0

    def rec(self, role, kind, native, raw_obj, **kw) -> Record:
        no, offset, length = self._line
        loc = f"L{no}" if self._k == 0 else f"L{no}#{self._k}"
        self._k += 1
        self.count += 1
        if "turn" not in kw:
            kw["turn"] = self.turn
        if kw.get("lane") == "rewound":  # still this session's own conversation, not a subagent lane
            kw["lane"], kw["rewound"] = "main", True
        if kw.get("copy_of"):
            self.report.duplicates += 1
        return Record(PROVIDER, self.sid, loc, role, kind, native, path=self.path_s, line=no, offset=offset,
                      length=length, raw=raw_obj if self.raw else None, **kw)

    # -- lines ---------------------------------------------------------------------------------
    def patch(self, obj: dict, s: dict) -> list[Record]:
        out: list[Record] = []
        msgs = s.get("messages")
        if isinstance(msgs, list):
            marks = compression_marks(msgs)
            for i, m in enumerate(msgs):
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    mark = marks.get(i)
                    out += self.message(m) if mark is None else self.compression(m, mark)
        keys = [k for k in s if k not in ("messages", "lastUpdated")]
        if keys:
            summary = s.get("summary")
            text = summary if keys == ["summary"] and isinstance(summary, str) else "set " + ", ".join(keys)
            out.append(self.rec("harness", "meta", "$set:" + ",".join(keys), obj, text=text))
        return out

    def compression(self, m: dict, mark: str) -> list[Record]:
        """The summary of a chat compression (a user message of text parts) and the client's fixed
        acknowledgement after it (see :func:`compression_marks`): ``meta``, never a prompt or an agent
        message; a later replay of them (same id, same text) is a copy as any message's is."""
        mid = m["id"]
        ts = m.get("timestamp") if isinstance(m.get("timestamp"), str) else None
        lane = "rewound" if mid in self.rewound else "main"
        text = _text_of(_parts(m.get("content")))
        if mark == "summary":
            return [self._msg_rec(mid, "user", "meta", "user:compression_summary", m, text, lane, ts)]
        return [self._msg_rec(mid, "harness", "meta", "gemini:compression_ack", m, text, lane, ts)]

    def message(self, m: dict) -> list[Record]:
        mid, typ = m["id"], m.get("type")
        if not isinstance(typ, str):
            typ = f"<{type(typ).__name__}>"
        lane = "rewound" if mid in self.rewound else "main"
        ts = m.get("timestamp")
        if not isinstance(ts, str):
            ts = None
        if typ == "user":
            return self._user(m, mid, lane, ts)
        if typ == "gemini":
            return self._gemini(m, mid, lane, ts)
        if typ in HARNESS_TYPES:
            return [self._msg_rec(mid, "harness", "meta", typ, m, _text_of(_parts(m.get("content"))), lane, ts)]
        native = f"message:{typ}"
        self.report.unknown_kinds[native] += 1
        return [self.rec("harness", "unknown", native, m, instant=ts, lane=lane,
                         text=_text_of(_parts(m.get("content"))) or None)]

    def _msg_rec(self, mid, role, kind, native, raw_obj, text, lane, ts, j: int = 0, **kw) -> Record:
        """A message-level record; a later one with the same id, kind, index and text is a copy (a
        reasoning record is matched by its text alone: a replay may hold it twice, see _gemini)."""
        normed = _norm(text) if kind == "reasoning" else None
        key = (mid, kind, normed) if kind == "reasoning" else (mid, kind, j)
        prev = self.seen_msg.get(key)
        # the normalised texts are compared only when the key was seen (most records are originals)
        if prev is not None and (prev[1] if prev[1] is not None else _norm(prev[3])) == (
                normed if normed is not None else _norm(text)):
            return self.rec(role, kind, native, raw_obj, text=text, lane=lane, instant=ts, copy_of=prev[0],
                            turn=prev[2], **kw)
        if kind == "prompt" or (self.subagent and role == "user" and kind == "message"):
            # a turn opens at a prompt; in a subagent's session at the task its parent delegated
            self.turn = (self.turn or 0) + 1
        r = self.rec(role, kind, native, raw_obj, text=text, lane=lane, instant=ts, **kw)
        self.seen_msg[key] = (r.locator, normed, r.turn, text)
        return r

    def _user(self, m, mid, lane, ts) -> list[Record]:
        parts = _parts(m.get("content"))
        text = _text_of(parts)
        shown = _text_of(_parts(m.get("displayContent"))) if m.get("displayContent") is not None else None
        responses = [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]
        out: list[Record] = []
        if text or not responses:
            if text.lstrip().startswith(CONTEXT_PREFIXES):
                out.append(self._msg_rec(mid, "user", "meta", "user:context", m, text, lane, ts))
            elif self.subagent:
                out.append(self._msg_rec(mid, "user", "message", "user", m, text, lane, ts))
            else:
                out.append(self._msg_rec(mid, "user", "prompt", "user", m, shown if shown else text, lane, ts))
        for fr in responses:
            out.append(self._result(fr.get("id"), fr.get("name"), fr.get("response"), None, None, m, lane, ts,
                                    "user:functionResponse"))
        return out

    def _gemini(self, m, mid, lane, ts) -> list[Record]:
        parts = _parts(m.get("content"))
        model = m.get("model") if isinstance(m.get("model"), str) else None
        out: list[Record] = []
        j = 0
        for th in m.get("thoughts") or [] if isinstance(m.get("thoughts"), list) else []:
            if not isinstance(th, dict):
                continue
            t = "\n\n".join(x for x in (th.get("subject"), th.get("description")) if isinstance(x, str) and x)
            tts = th.get("timestamp") if isinstance(th.get("timestamp"), str) else ts
            out.append(self._msg_rec(mid, "assistant", "reasoning", "gemini:thought", th, t, lane, tts, j, model=model))
            j += 1
        # a resumed history keeps `thoughts` AND has them again as thought parts (`**subject** text`,
        # measured): one reasoning record per distinct thought
        seen_here = None
        for p in parts:
            if p.get("thought") and isinstance(p.get("text"), str):
                if seen_here is None:
                    seen_here = {_norm(r.text) for r in out}
                if _norm(p["text"]) in seen_here:
                    continue
                seen_here.add(_norm(p["text"]))
                out.append(self._msg_rec(mid, "assistant", "reasoning", "gemini:thought", p, p["text"], lane, ts, j,
                                         model=model))
                j += 1
        text = _text_of(parts)
        calls = [tc for tc in m.get("toolCalls") or [] if isinstance(tc, dict)] \
            if isinstance(m.get("toolCalls"), list) else []
        fcalls = [p["functionCall"] for p in parts if isinstance(p.get("functionCall"), dict)]
        if text or not (out or calls or fcalls):
            out.append(self._msg_rec(mid, "assistant", "message", "gemini", m, text, lane, ts, model=model))
        in_tool_calls = set()
        for tc in calls:
            cid = tc.get("id") if isinstance(tc.get("id"), str) else None
            in_tool_calls.add(cid)
            tts = tc.get("timestamp") if isinstance(tc.get("timestamp"), str) else ts
            out.append(self._call(cid, tc.get("name"), tc.get("args"), tc, lane, tts, model, "gemini:toolCall"))
            status = tc.get("status") if isinstance(tc.get("status"), str) else None
            result = tc.get("result")
            if result is None and status is None:
                continue
            frs = [p["functionResponse"] for p in _parts(result) if isinstance(p.get("functionResponse"), dict)]
            resp = frs[0].get("response") if len(frs) == 1 else (
                {"output": "\n".join(filter(None, (response_text(f.get("response"))[0] for f in frs)))} if frs
                else ({"output": result} if isinstance(result, str) else None))
            res = self._result(cid, tc.get("name"), resp, status, tc.get("resultDisplay"), tc, lane, tts,
                               "gemini:toolCall.result")
            out.append(res)
            full = untruncated_output(res.text, tc.get("resultDisplay"))
            if full is not None:  # the model saw it cut; the whole output is on disk here too
                prev = self.seen_display.get(cid) if cid else None
                d = self.rec("tool", "meta", "gemini:toolCall.resultDisplay", tc, lane=lane, instant=tts, text=full,
                             tool_name=res.tool_name, call_id=cid, copy_of=prev[0] if prev else None,
                             **({"turn": prev[1]} if prev else {}))
                if cid and not prev:
                    self.seen_display[cid] = (d.locator, d.turn)
                out.append(d)
        for fc in fcalls:
            cid = fc.get("id") if isinstance(fc.get("id"), str) else None
            if cid is None or cid not in in_tool_calls:
                out.append(self._call(cid, fc.get("name"), fc.get("args"), fc, lane, ts, model, "gemini:functionCall"))
        tokens = tokens_of(m.get("tokens"), mid)
        if tokens is not None:  # on the message's text record where it has one (a usage census counts those)
            orig = [r for r in out if r.copy_of is None and r.kind != "tool_result"]
            first = next((r for r in orig if r.kind == "message"), orig[0] if orig else None)
            if first is not None:
                first.tokens = tokens
        return out

    def _call(self, cid, name, args, raw_obj, lane, ts, model, native) -> Record:
        prev = self.seen_call.get(cid) if cid else None
        r = self.rec("assistant", "tool_call", native, raw_obj, lane=lane, instant=ts, model=model,
                     tool_name=name if isinstance(name, str) else None, tool_input=args, call_id=cid,
                     copy_of=prev[0] if prev else None, **({"turn": prev[1]} if prev else {}))
        if cid and not prev:
            self.seen_call[cid] = (r.locator, r.turn)
        return r

    def _result(self, cid, name, resp, status, display, raw_obj, lane, ts, native) -> Record:
        cid = cid if isinstance(cid, str) else None
        name = name if isinstance(name, str) else None
        text, err = response_text(resp)
        exit_code = shell_exit_code(text, status) if name in SHELL_TOOLS else None
        if status is not None:
            is_error = status != "success" or bool(err) or bool(exit_code)
        else:
            is_error = True if (err or exit_code) else err
        changes: tuple[FileChange, ...] = file_changes(display, status)
        prev = self.seen_result.get(cid) if cid else None
        r = self.rec("tool", "tool_result", native, raw_obj, lane=lane, instant=ts, text=text, tool_name=name,
                     call_id=cid, exit_code=exit_code, is_error=is_error, file_changes=() if prev else changes,
                     copy_of=prev[0] if prev else None, **({"turn": prev[1]} if prev else {}))
        if cid and not prev:
            self.seen_result[cid] = (r.locator, r.turn)
        return r


def _header_text(obj: dict) -> str:
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else "main"
    return f"session {obj.get('sessionId')} ({kind}) started {obj.get('startTime')}"


def _message_lines(data: bytes) -> list[tuple[int, int, None]]:
    """(line, offset) of each message object in a legacy file pretty-printed the client's way
    (``JSON.stringify(record, null, 2)``: a message opens with a line ``    {`` inside ``  "messages": [``)."""
    out: list[tuple[int, int, None]] = []
    inside = False
    pos, no = 0, 1
    for raw in data.split(b"\n"):
        if not inside and raw.startswith(b'  "messages": ['):
            inside = not raw.rstrip().endswith(b"]")
        elif inside:
            if raw == b"    {":
                out.append((no, pos, None))
            elif raw.startswith(b"  ]"):
                inside = False
        pos += len(raw) + 1
        no += 1
    return out
