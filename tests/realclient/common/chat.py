"""A scripted mock of the OpenAI Chat Completions streaming API, shared by every harness whose client
speaks it (opencode, pi, Qwen Code; GitHub Copilot CLI and Kilo Code may reuse it).

Stdlib only (``http.server`` in a daemon thread, :mod:`.sse`), bound to 127.0.0.1. It answers
``POST .../chat/completions`` as Server-Sent Events -- ``chat.completion.chunk`` deltas (``content``,
``reasoning_content``, ``tool_calls``), then ``finish_reason``, a usage chunk (``choices: []``,
``usage``: the client asks for it with ``stream_options.include_usage``), then ``data: [DONE]`` --, or
as one JSON ``chat.completion`` when the request has no ``stream: true``; ``GET .../models`` with the
one mock model; anything else with a small 200 so a client never hangs.

Routing of a completion request:

1. :meth:`ChatMock.is_side` (``side_when(body)``; default: no ``tools`` in the body) -> a side call the client makes for its
   own purposes (a title, a compaction summary, a memory extraction). ``side(body, rec)`` answers it
   with a :class:`SideReply` (route name, text, usage), default ``Done.``; the served reply is kept in
   ``served`` under ``conversation`` = its route, step -1.
2. Otherwise the mock finds the LAST ``user`` message whose text holds one of the conversations'
   markers (``[<scenario> P<n>]`` for a prompt, ``SUBAGENT-<X>`` for a delegated task, ...), counts
   the ``assistant`` messages after it and answers that conversation's step n. Past the end of the
   script (or with no marker) it answers ``Done.`` with ``stop`` (``conversation: "unscripted"``).

Every request is logged as one JSON line (route, conversation, step, tool names, message count), and
every served step is remembered with the usage it reported: the ground truth of tokens. With
``dump_dir`` every request body is saved there too (the harnesses pass it when ``SSIFT_MOCK_DUMP=1``).
Tool-call ids are deterministic (:func:`call_id`), so a ground truth can name them before the client
runs.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from . import gate
from .sse import Handler, MockServer

MODEL = "mock-model"


@dataclass
class Step:
    """One model step (one assistant message): optional reasoning, text, tool calls.

    ``calls`` are ``(tool name, arguments dict)``; ``delay`` holds the response before its first
    chunk (keeps the client mid-turn); ``stall`` sends the first chunks then waits that long before
    finishing (a turn killed mid-stream); ``on_serve`` runs in the server thread when the step is
    chosen; ``usage`` is what the usage chunk reports (a deterministic default otherwise);
    ``finish`` overrides the finish reason (``length``, ...); ``gate`` names a gate (common/gate.py)
    the test releases: the response is held until then (beside ``log_path``)."""

    text: str | None = None
    reasoning: str | None = None
    calls: list[tuple[str, dict]] = field(default_factory=list)
    delay: float = 0.0
    stall: float = 0.0
    on_serve: Callable[[], None] | None = None
    usage: dict | None = None
    finish: str | None = None
    gate: str | None = None


@dataclass
class Conversation:
    marker: str
    steps: list[Step]
    name: str = ""


@dataclass
class SideReply:
    """The answer to a side call: ``route`` names it in the log and in ``served``."""

    route: str
    text: str
    usage: dict


def call_id(ns: str, conv: str, step: int, i: int) -> str:
    """Deterministic tool-call ids (they end up in the client's records)."""
    h = hashlib.sha256(f"{ns}/{conv}/{step}/{i}".encode()).hexdigest()[:20]
    return f"call_{h}"


def default_usage(conv_index: int, step: int, has_reasoning: bool) -> dict:
    """Distinct, deterministic numbers per step so a test can tell any two steps apart."""
    prompt = 1000 + 100 * conv_index + 10 * step
    cached = 200 + step
    out = 30 + step
    u = {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out,
         "prompt_tokens_details": {"cached_tokens": cached}}
    if has_reasoning:
        u["completion_tokens_details"] = {"reasoning_tokens": 7 + step}
    return u


def text_of(msg: dict) -> str:
    """The text of a Chat Completions message (a string, or the ``text`` parts of a list)."""
    c = msg.get("content")
    if isinstance(c, str):
        return c
    out = []
    for p in c or []:
        if isinstance(p, dict) and p.get("type") == "text":
            out.append(str(p.get("text", "")))
    return "\n".join(out)


def chunk(delta: dict, finish: str | None = None, cid: str = "chatcmpl-mock", model: str = MODEL) -> bytes:
    obj = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def usage_chunk(usage: dict, cid: str = "chatcmpl-mock", model: str = MODEL) -> bytes:
    obj = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
           "choices": [], "usage": usage}
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


class ChatMock(MockServer):
    url_path = "/v1"
    log_sort_keys = True
    unique_ids = True
    """Each response gets its own id (``chatcmpl-<namespace>-<n>``); False: every one is ``chatcmpl-mock``."""

    def __init__(self, conversations: list[Conversation], namespace: str, log_path: str | None = None,
                 port: int = 0, model: str = MODEL,
                 side: Callable[[dict, dict], SideReply] | None = None, dump_dir: str | None = None,
                 side_when: Callable[[dict], bool] | None = None):
        self.convs = conversations
        self.side_when = side_when
        """Tells a side call apart when the client sends its tools with it too (Qwen Code's compression
        request); default: a request without tools."""
        self.dump_dir = dump_dir
        """Where every request body is saved (``<n>.json``), when given (``SSIFT_MOCK_DUMP=1``)."""
        self.ns = namespace
        self.model = model
        self.side = side
        self.served: list[dict] = []  # {"conversation", "step", "calls": [...], "usage", "text", "reasoning"}
        self.events: dict[tuple[str, int], threading.Event] = {}
        self._n = 0
        self._dumped = 0
        super().__init__(log_path, port)

    def served_event(self, conv: str, step: int) -> threading.Event:
        with self._lock:
            return self.events.setdefault((conv, step), threading.Event())

    def _cid(self) -> str:
        if not self.unique_ids:
            return "chatcmpl-mock"
        with self._lock:
            self._n += 1
            return f"chatcmpl-{self.ns}-{self._n}"

    # ------------------------------------------------------------------ routing
    def is_side(self, body: dict) -> bool:
        if self.side_when is not None:
            return self.side_when(body)
        return not body.get("tools")

    def route(self, body: dict) -> tuple[str, Conversation | None, int]:
        if self.is_side(body):
            return "side", None, -1
        msgs = body.get("messages") or []
        for i in range(len(msgs) - 1, -1, -1):
            m = msgs[i]
            if m.get("role") != "user":
                continue
            t = text_of(m)
            for c in self.convs:
                if c.marker in t:
                    n = sum(1 for x in msgs[i + 1:] if x.get("role") == "assistant")
                    return "script", c, n
        return "unscripted", None, -1

    def side_reply(self, body: dict, rec: dict) -> SideReply:
        if self.side is not None:
            return self.side(body, rec)
        return SideReply("side", "Done.", {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55})

    def handler(self):
        mock = self

        class H(Handler):
            def do_GET(self):
                mock.log({"method": "GET", "path": self.path})
                if self.path.rstrip("/").endswith("/models"):
                    self.send_json(200, {"object": "list", "data": [{"id": mock.model, "object": "model"}]})
                else:
                    self.send_json(200, {"ok": True})

            def do_POST(self):
                raw, body = self.read_json()
                if mock.dump_dir:
                    os.makedirs(mock.dump_dir, exist_ok=True)
                    with mock._lock:
                        mock._dumped += 1
                        n = mock._dumped
                    with open(os.path.join(mock.dump_dir, f"{n:03d}.json"), "wb") as f:
                        f.write(raw)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    mock.log({"method": "POST", "path": self.path, "route": "other"})
                    self.send_json(200, {"ok": True})
                    return
                route, conv, idx = mock.route(body)
                tools = sorted(t.get("function", {}).get("name", "") for t in body.get("tools") or [])
                stream = bool(body.get("stream"))
                rec = {"method": "POST", "path": self.path, "route": route, "stream": stream,
                       "messages": len(body.get("messages") or []), "tools": tools if idx <= 0 else len(tools)}
                if route == "side":
                    msgs = body.get("messages") or []
                    system = next((text_of(m) for m in msgs if m.get("role") == "system"), "")
                    rec["first_system"] = system[:80]
                    rec["last_user"] = next((text_of(m)[:80] for m in reversed(msgs) if m.get("role") == "user"), None)
                    reply = mock.side_reply(body, rec)
                    rec["route"] = reply.route
                    with mock._lock:
                        mock.served.append({"conversation": reply.route, "step": -1, "calls": [],
                                            "usage": reply.usage, "text": reply.text, "reasoning": None})
                    self._answer(stream, [({"role": "assistant", "content": reply.text}, None)], "stop", reply.usage)
                    mock.log(rec)
                    return
                if route == "unscripted" or conv is None or idx >= len(conv.steps):
                    rec["conversation"] = conv.name if conv else None
                    rec["step"] = idx
                    mock.log(rec | {"past_script": True})
                    use = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
                    with mock._lock:
                        mock.served.append({"conversation": "unscripted", "step": idx, "calls": [], "usage": use,
                                            "text": "Done.", "reasoning": None, "after": conv.name if conv else None})
                    self._answer(stream, [({"role": "assistant", "content": "Done."}, None)], "stop", use)
                    return
                step = conv.steps[idx]
                ci = mock.convs.index(conv)
                use = step.usage or default_usage(ci, idx, bool(step.reasoning))
                calls = [{"id": call_id(mock.ns, conv.name, idx, i), "name": nm, "arguments": args}
                         for i, (nm, args) in enumerate(step.calls)]
                with mock._lock:
                    mock.served.append({"conversation": conv.name, "step": idx, "calls": calls, "usage": use,
                                        "text": step.text, "reasoning": step.reasoning})
                rec.update(conversation=conv.name, step=idx, calls=[c["name"] for c in calls])
                mock.log(rec)
                if step.on_serve:
                    step.on_serve()
                mock.served_event(conv.name, idx).set()
                if step.delay:
                    time.sleep(step.delay)
                if step.gate and mock.log_path:
                    mock.log({"t": time.time(), "route": "gate-held", "gate": step.gate})
                    gate.hold(os.path.dirname(mock.log_path), step.gate)
                deltas: list[tuple[dict, None]] = [({"role": "assistant", "content": ""}, None)]
                if step.reasoning:
                    deltas.append(({"reasoning_content": step.reasoning}, None))
                if step.text:
                    deltas.append(({"content": step.text}, None))
                for i, c in enumerate(calls):
                    deltas.append(({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                                    "function": {"name": c["name"], "arguments": ""}}]}, None))
                    deltas.append(({"tool_calls": [{"index": i, "function": {
                        "arguments": json.dumps(c["arguments"])}}]}, None))
                finish = step.finish or ("tool_calls" if calls else "stop")
                self._answer(stream, deltas, finish, use, stall=step.stall, calls=calls, step=step)

            def _answer(self, stream: bool, deltas: list, finish: str, use: dict, stall: float = 0.0,
                        calls: list | None = None, step: Step | None = None) -> None:
                cid = mock._cid()
                if not stream:  # one chat.completion object
                    msg: dict = {"role": "assistant", "content": "".join(
                        d.get("content") or "" for d, _ in deltas) or None}
                    if step is not None and step.reasoning:
                        msg["reasoning_content"] = step.reasoning
                    if calls:
                        msg["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                            "name": c["name"], "arguments": json.dumps(c["arguments"])}} for c in calls]
                    self.send_json(200, {"id": cid, "object": "chat.completion", "created": int(time.time()),
                                         "model": mock.model, "usage": use,
                                         "choices": [{"index": 0, "message": msg, "finish_reason": finish}]})
                    return
                chunks = [chunk(d, f, cid, mock.model) for d, f in deltas] + [chunk({}, finish, cid, mock.model)]
                self.start_sse()
                try:
                    if stall:  # the opening chunks, then hold: the client is mid-stream
                        for c in chunks[:-1]:
                            self.wfile.write(c)
                        self.wfile.flush()
                        time.sleep(stall)
                        chunks = chunks[-1:]
                    for c in chunks:
                        self.wfile.write(c)
                    self.wfile.write(usage_chunk(use, cid, mock.model))
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        return H
