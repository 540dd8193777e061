"""A scripted mock of the Anthropic Messages API, for running the real Claude Code client offline.

Stdlib only (``http.server`` in a thread).  It answers:

* ``POST /v1/messages`` (with or without ``?beta=true``), streaming (SSE) or not;
* ``POST /v1/messages/count_tokens``;
* anything else with a small JSON body, so the client never hangs.

Routing of a ``/v1/messages`` request:

1. compaction requests (the request text contains :data:`COMPACT_MARKER`) get the
   scenario's ``summary`` text;
2. requests that carry ``tools`` are agent-loop requests.  The mock finds the *last*
   user message whose text contains one of the scenario's conversation markers
   (a main prompt's ``marker`` or a subagent's ``marker``), counts the assistant
   messages after it, and answers with that conversation's turn number ``n``.
   Past the end of the script it answers a short ``end_turn`` text;
3. everything else (title generation, haiku side calls, ...) gets a short default
   text with ``end_turn``.

Every request is logged (path, model, stream flag, route, digest of the last user
message) as one JSON line to ``log_path``.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .common.sse import Handler, MockServer, event as sse_event

# Text that appears in Claude Code's compaction (summarisation) prompt.
COMPACT_MARKER = "Your task is to create a detailed summary of the conversation so far"
# ... and the header Claude Code puts before its compaction prompt (2.1.x)
COMPACT_MARKERS = (COMPACT_MARKER, "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.")

DEFAULT_TEXT = "OK."
MID_TURN_PREFIX = "The user sent a new message while you were working:"
"""How 2.1.258 opens the `system` message that carries a prompt typed while a turn was running."""


# --------------------------------------------------------------------------- script model

@dataclass
class Turn:
    """One assistant message: a list of content blocks, plus optional behaviour.

    blocks: dicts like ``{"type": "text", "text": ...}``,
    ``{"type": "thinking", "thinking": ...}``, ``{"type": "tool_use", "name": ..., "input": {...}}``
    (the mock fills in ids and signatures).
    delay: seconds to wait before answering (holds the session busy).
    on_serve: callback run (in the server thread) right before the delay starts.
    error: (HTTP status, JSON body) sent instead of a message, as the real API sends an error (e.g.
    400 ``invalid_request_error`` "prompt is too long"); ``blocks`` are then unused.
    stream_pause: seconds the stream stops after the FIRST content block's `content_block_stop`
    (before the next block and `message_delta`, which carries the final output_tokens): shows what
    the client writes for a block while the rest of its message is still streaming.
    """

    blocks: list[dict]
    delay: float = 0.0
    on_serve: Callable[[], None] | None = None
    label: str = ""
    error: tuple[int, dict] | None = None
    stream_pause: float = 0.0

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(b["type"] == "tool_use" for b in self.blocks) else "end_turn"


@dataclass
class Conversation:
    """A scripted conversation: the marker that identifies it and its assistant turns."""

    marker: str
    turns: list[Turn]
    name: str = ""


@dataclass
class Script:
    conversations: list[Conversation] = field(default_factory=list)
    summary: str = "Summary: the user asked for some file work; it was done."
    namespace: str = "scenario"  # seeds deterministic ids


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def thinking(t: str) -> dict:
    return {"type": "thinking", "thinking": t}


def tool(name: str, **inp: Any) -> dict:
    return {"type": "tool_use", "name": name, "input": inp}


def api_error(status: int, kind: str, message: str) -> tuple[int, dict]:
    """An error response the way the Messages API sends one (for ``Turn.error``)."""
    return status, {"type": "error", "error": {"type": kind, "message": message}}


# --------------------------------------------------------------------------- helpers

def _msg_text(msg: dict) -> str:
    c = msg.get("content")
    if isinstance(c, str):
        return c
    out = []
    for b in c or []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text":
            out.append(b.get("text", ""))
    return "\n".join(out)


def _is_tool_result_only(msg: dict) -> bool:
    c = msg.get("content")
    return isinstance(c, list) and bool(c) and all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in c
    )


def _system_text(body: dict) -> str:
    s = body.get("system")
    if isinstance(s, str):
        return s
    if isinstance(s, list):
        return "\n".join(b.get("text", "") for b in s if isinstance(b, dict))
    return ""


def last_user_digest(body: dict, n: int = 120) -> str:
    """Block kinds of the last user message + its last text that is not a <system-reminder>."""
    for m in reversed(body.get("messages") or []):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            return c.replace("\n", " ")[:n]
        kinds = [b.get("type") for b in c or [] if isinstance(b, dict)]
        texts = [b.get("text", "") for b in c or [] if isinstance(b, dict) and b.get("type") == "text"
                 and not b.get("text", "").lstrip().startswith("<system-reminder>")]
        return (f"[{','.join(map(str, kinds))}] " + (texts[-1] if texts else "")).replace("\n", " ")[:n]
    return ""


def _stable_id(prefix: str, *parts: Any, length: int = 24) -> str:
    h = hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    n = int(h, 16)
    s = ""
    while len(s) < length:
        n, r = divmod(n, 62)
        s += alphabet[r]
    return prefix + "01" + s[: length - 2]


# --------------------------------------------------------------------------- SSE

def materialise(turn: Turn, ns: str, key: str) -> list[dict]:
    """Fill ids / signatures into a turn's blocks (deterministic)."""
    out = []
    for i, b in enumerate(turn.blocks):
        b = dict(b)
        if b["type"] == "tool_use":
            b["id"] = _stable_id("toolu_", ns, key, i)
        elif b["type"] == "thinking":
            b.setdefault("signature", "sig-" + hashlib.sha256(b["thinking"].encode()).hexdigest()[:48])
        out.append(b)
    return out


_PLAN_RE = re.compile(r'(/[^\s"\'\\<>`]*/plans/[A-Za-z0-9_.-]+\.md)')


def fill_plan_file(blocks: list[dict], body: dict) -> list[dict]:
    """Replace ``{PLAN_FILE}`` in tool inputs by the plan file path the client named in the request."""
    m = _PLAN_RE.findall(json.dumps(body, ensure_ascii=False).replace("\\/", "/"))
    path = m[-1] if m else "/tmp/plan-file-not-found.md"
    return [json.loads(json.dumps(b).replace("{PLAN_FILE}", path)) for b in blocks]


def usage(body: dict, out_tokens: int) -> dict:
    approx_in = max(1, len(json.dumps(body.get("messages", []))) // 4)
    return {
        "input_tokens": approx_in,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": out_tokens,
    }


def stream_message(blocks: list[dict], model: str, msg_id: str, stop_reason: str, body: dict) -> list[bytes]:
    """The SSE event sequence for one assistant message."""
    ev: list[bytes] = []
    u = usage(body, 1)
    ev.append(sse_event("message_start", {
        "type": "message_start",
        "message": {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                    "content": [], "stop_reason": None, "stop_sequence": None, "usage": u},
    }))
    out_tokens = 0
    for i, b in enumerate(blocks):
        t = b["type"]
        if t == "text":
            ev.append(sse_event("content_block_start", {"type": "content_block_start", "index": i,
                                                        "content_block": {"type": "text", "text": ""}}))
            s = b["text"]
            for j in range(0, max(len(s), 1), 40):
                ev.append(sse_event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                            "delta": {"type": "text_delta", "text": s[j:j + 40]}}))
            out_tokens += len(s) // 4 + 1
        elif t == "thinking":
            ev.append(sse_event("content_block_start", {"type": "content_block_start", "index": i,
                                                        "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
            s = b["thinking"]
            for j in range(0, max(len(s), 1), 40):
                ev.append(sse_event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                            "delta": {"type": "thinking_delta", "thinking": s[j:j + 40]}}))
            ev.append(sse_event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                        "delta": {"type": "signature_delta", "signature": b["signature"]}}))
            out_tokens += len(s) // 4 + 1
        elif t == "tool_use":
            ev.append(sse_event("content_block_start", {"type": "content_block_start", "index": i,
                                                        "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}))
            js = json.dumps(b["input"])
            for j in range(0, len(js), 60):
                ev.append(sse_event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                            "delta": {"type": "input_json_delta", "partial_json": js[j:j + 60]}}))
            out_tokens += len(js) // 4 + 1
        else:
            raise ValueError(f"unknown block type {t}")
        ev.append(sse_event("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(sse_event("message_delta", {"type": "message_delta",
                                          "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                          "usage": {"output_tokens": out_tokens}}))
    ev.append(sse_event("message_stop", {"type": "message_stop"}))
    return ev


def parse_sse(data: bytes) -> list[tuple[str, dict]]:
    """Parse an SSE byte stream into (event, data) pairs (used by tests)."""
    out = []
    for chunk in data.decode().split("\n\n"):
        if not chunk.strip():
            continue
        ev, payload = None, None
        for line in chunk.split("\n"):
            if line.startswith("event: "):
                ev = line[7:]
            elif line.startswith("data: "):
                payload = json.loads(line[6:])
        out.append((ev, payload))
    return out


# --------------------------------------------------------------------------- server

class MockAnthropic(MockServer):
    def __init__(self, script: Script, log_path: str | None = None, port: int = 0, dump_dir: str | None = None):
        self.dump_dir = dump_dir  # if set, every /v1/messages request body is saved there (debugging)
        if dump_dir:
            os.makedirs(dump_dir, exist_ok=True)
        self.script = script
        self.served: list[dict] = []  # one entry per scripted turn served
        self._counter = 0
        self.fired: set[tuple[str, int]] = set()
        super().__init__(log_path, port)

    # -- routing ---------------------------------------------------------
    def route(self, body: dict) -> tuple[str, Turn | None, str]:
        """Return (route, turn, key) for a messages request."""
        msgs = body.get("messages") or []
        alltext = _system_text(body) + "\n" + "\n".join(_msg_text(m) for m in msgs)
        users = [m for m in msgs if m.get("role") == "user"]
        last = _msg_text(users[-1]) if users else ""
        if any(m in last for m in COMPACT_MARKERS):
            return "compact", Turn([text(self.compact_text())]), "compact"
        if body.get("tools"):
            # find the last user message (not a pure tool_result) carrying a known marker
            for idx in range(len(msgs) - 1, -1, -1):
                m = msgs[idx]
                # 2.1.258 sends a prompt typed mid-turn as a `system` message ("The user sent a new
                # message while you were working: ...") next to the tool result; other system messages
                # (hook context, which may quote earlier prompts verbatim) never route
                if m.get("role") == "system":
                    if not _msg_text(m).lstrip().startswith(MID_TURN_PREFIX):
                        continue
                elif m.get("role") != "user" or _is_tool_result_only(m):
                    continue
                mt = _msg_text(m)
                for conv in self.script.conversations:
                    if conv.marker in mt:
                        n = sum(1 for mm in msgs[idx + 1:] if mm.get("role") == "assistant")
                        key = f"{conv.marker}#{n}"
                        if n < len(conv.turns):
                            return f"script:{conv.name or conv.marker}#{n}", conv.turns[n], key
                        return f"script-end:{conv.name or conv.marker}#{n}", Turn([text("Done.")]), key
            return "default-tools", Turn([text(DEFAULT_TEXT)]), "default"
        if any(m in alltext for m in COMPACT_MARKERS):
            return "compact", Turn([text(self.compact_text())]), "compact"
        return "default", Turn([text(DEFAULT_TEXT)]), "default"

    def compact_text(self) -> str:
        return ("<analysis>The conversation is scripted by the sessionsift mock.</analysis>\n"
                f"<summary>{self.script.summary}</summary>")

    def handler(self):
        mock = self

        class H(Handler):
            extra_headers = (("request-id", "req_mock"),)

            def do_GET(self):
                mock.log({"t": time.time(), "method": "GET", "path": self.path})
                if self.path.startswith("/v1/models"):
                    self.send_json(200, {"data": [], "has_more": False, "first_id": None, "last_id": None})
                else:
                    self.send_json(200, {})

            def do_HEAD(self):
                mock.log({"t": time.time(), "method": "HEAD", "path": self.path})
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self):
                raw, body = self.read_json()
                path = self.path
                if path.startswith("/v1/messages/count_tokens"):
                    mock.log({"t": time.time(), "method": "POST", "path": path, "model": body.get("model"),
                              "route": "count_tokens"})
                    self.send_json(200, {"input_tokens": max(1, len(raw) // 4)})
                    return
                if not path.startswith("/v1/messages"):
                    mock.log({"t": time.time(), "method": "POST", "path": path, "route": "other"})
                    self.send_json(200, {})
                    return
                route, turn, key = mock.route(body)
                model = body.get("model") or "claude-mock"
                with mock._lock:
                    mock._counter += 1
                    seq = mock._counter
                mock.log({"t": time.time(), "method": "POST", "path": path, "model": model,
                          "stream": bool(body.get("stream")), "route": route, "n_msgs": len(body.get("messages") or []),
                          "n_tools": len(body.get("tools") or []), "last_user": last_user_digest(body),
                          "tools": sorted(t.get("name", "?") for t in body.get("tools") or [])
                          if route.startswith("script") and key.endswith("#0") else None})
                if mock.dump_dir:
                    with open(os.path.join(mock.dump_dir, f"{seq:04d}-{route.split(':')[0]}.json"), "w") as f:
                        json.dump(body, f, indent=1)
                ns = mock.script.namespace
                blocks = materialise(turn, ns, key)
                if any("{PLAN_FILE}" in json.dumps(b) for b in blocks):
                    blocks = fill_plan_file(blocks, body)
                if route.startswith("script:"):
                    with mock._lock:
                        mock.served.append({"route": route, "key": key, "blocks": blocks, "t": time.time()})
                    fk = (key, 0)
                    if turn.on_serve and fk not in mock.fired:
                        mock.fired.add(fk)
                        try:
                            turn.on_serve()
                        except Exception as e:  # pragma: no cover - debugging aid
                            mock.log({"on_serve_error": repr(e)})
                if turn.delay:
                    time.sleep(turn.delay)
                if turn.error is not None:
                    self.send_json(*turn.error)
                    return
                msg_id = _stable_id("msg_", ns, key, "retry" if seq < 0 else "")
                if body.get("stream"):
                    self.start_sse()
                    paused = not turn.stream_pause
                    for ev in stream_message(blocks, model, msg_id, turn.stop_reason, body):
                        self.wfile.write(ev)
                        self.wfile.flush()
                        if not paused and ev.startswith(b"event: content_block_stop"):
                            paused = True
                            time.sleep(turn.stream_pause)
                    self.close_connection = True
                else:
                    self.send_json(200, {
                        "id": msg_id, "type": "message", "role": "assistant", "model": model,
                        "content": blocks, "stop_reason": turn.stop_reason, "stop_sequence": None,
                        "usage": usage(body, 10),
                    })

        return H
