"""A scripted mock of the OpenAI Chat Completions API (SSE), for running the real opencode offline.

Stdlib only (``http.server`` in a thread), bound to 127.0.0.1. It answers ``POST .../chat/completions``
as Server-Sent Events (``chat.completion.chunk`` deltas: ``content``, ``reasoning_content`` and
``tool_calls``, then ``finish_reason``, a usage chunk, ``data: [DONE]``), ``GET .../models`` with the
one mock model, and anything else with a small 200 so the client never hangs.

Routing of a completion request (see tests/realclient/opencode/README.md):

1. no ``tools`` in the body: a side call -> opencode's title agent gets the scenario's title, its
   compaction ("context summarization") agent the scenario's summary;
2. with ``tools``: the mock finds the LAST ``user`` message whose text holds one of the script's
   conversation markers (``[<scenario> P<n>]`` for a prompt, ``SUBAGENT-<X>`` for a ``task`` child
   session), counts the ``assistant`` messages after it and answers with that conversation's step
   number n. Past the end of the script it answers ``Done.`` with ``stop``.

Every request is logged as one JSON line (route, conversation, step, tool names, message count),
and every served step is remembered with the usage it reported: the ground truth of tokens.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from ..common.sse import Handler, MockServer

MODEL = "mock-model"


@dataclass
class Step:
    """One model step (one assistant message in opencode): optional reasoning, text, tool calls.

    ``calls`` are ``(tool name, arguments dict)``; ``delay`` holds the response before its first
    chunk (keeps the client mid-turn); ``stall`` sends the first chunks then waits that long before
    finishing (a turn killed mid-stream); ``on_serve`` runs in the server thread when the step is
    chosen; ``usage`` is what the usage chunk reports (a deterministic default otherwise)."""

    text: str | None = None
    reasoning: str | None = None
    calls: list[tuple[str, dict]] = field(default_factory=list)
    delay: float = 0.0
    stall: float = 0.0
    on_serve: Callable[[], None] | None = None
    usage: dict | None = None


@dataclass
class Conversation:
    marker: str
    steps: list[Step]
    name: str = ""


def call_id(ns: str, conv: str, step: int, i: int) -> str:
    """Deterministic tool-call ids (they end up in opencode's part rows as callID)."""
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


def _text_of(msg: dict) -> str:
    c = msg.get("content")
    if isinstance(c, str):
        return c
    out = []
    for p in c or []:
        if isinstance(p, dict) and p.get("type") == "text":
            out.append(str(p.get("text", "")))
    return "\n".join(out)


def chunk(delta: dict, finish: str | None = None, cid: str = "chatcmpl-mock") -> bytes:
    obj = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": MODEL,
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def usage_chunk(usage: dict, cid: str = "chatcmpl-mock") -> bytes:
    obj = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": MODEL,
           "choices": [], "usage": usage}
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


class MockChat(MockServer):
    url_path = "/v1"
    log_sort_keys = True

    def __init__(self, conversations: list[Conversation], namespace: str, title: str = "Mock title",
                 log_path: str | None = None, port: int = 0, summary: str = "Summary: a file was written."):
        self.convs = conversations
        self.ns = namespace
        self.title = title
        self.summary = summary
        self.served: list[dict] = []  # {"conversation", "step", "calls": [...], "usage"}
        self.events: dict[tuple[str, int], threading.Event] = {}
        super().__init__(log_path, port)

    def served_event(self, conv: str, step: int) -> threading.Event:
        with self._lock:
            return self.events.setdefault((conv, step), threading.Event())

    # ------------------------------------------------------------------ routing
    def route(self, body: dict) -> tuple[str, Conversation | None, int]:
        if not body.get("tools"):
            return "side", None, -1
        msgs = body.get("messages") or []
        for i in range(len(msgs) - 1, -1, -1):
            m = msgs[i]
            if m.get("role") != "user":
                continue
            t = _text_of(m)
            for c in self.convs:
                if c.marker in t:
                    n = sum(1 for x in msgs[i + 1:] if x.get("role") == "assistant")
                    return "script", c, n
        return "unscripted", None, -1

    def handler(self):
        mock = self

        class H(Handler):
            def do_GET(self):
                mock.log({"method": "GET", "path": self.path})
                if self.path.rstrip("/").endswith("/models"):
                    self.send_json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
                else:
                    self.send_json(200, {"ok": True})

            def do_POST(self):
                _, body = self.read_json()
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    mock.log({"method": "POST", "path": self.path, "route": "other"})
                    self.send_json(200, {"ok": True})
                    return
                route, conv, idx = mock.route(body)
                tools = sorted(t.get("function", {}).get("name", "") for t in body.get("tools") or [])
                rec = {"method": "POST", "path": self.path, "route": route, "stream": bool(body.get("stream")),
                       "messages": len(body.get("messages") or []), "tools": tools if idx <= 0 else len(tools)}
                if route == "side":
                    msgs = body.get("messages") or []
                    system = next((_text_of(m) for m in msgs if m.get("role") == "system"), "")
                    rec["first_system"] = system[:80]
                    rec["last_user"] = next((_text_of(m)[:80] for m in reversed(msgs) if m.get("role") == "user"), None)
                    # opencode's title agent writes no message; its compaction agent writes the summary
                    # as an assistant message of the session: remember its usage (ground truth)
                    summary = "summarization" in system
                    text = mock.summary if summary else mock.title
                    use = {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}
                    rec["route"] = "summary" if summary else "title"
                    with mock._lock:
                        mock.served.append({"conversation": rec["route"], "step": -1, "calls": [], "usage": use,
                                            "text": text, "reasoning": None})
                    self._stream([chunk({"role": "assistant", "content": text}), chunk({}, "stop")], use)
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
                    self._stream([chunk({"role": "assistant", "content": "Done."}), chunk({}, "stop")], use)
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
                chunks = [chunk({"role": "assistant", "content": ""})]
                if step.reasoning:
                    chunks.append(chunk({"reasoning_content": step.reasoning}))
                if step.text:
                    chunks.append(chunk({"content": step.text}))
                for i, c in enumerate(calls):
                    chunks.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                                         "function": {"name": c["name"], "arguments": ""}}]}))
                    chunks.append(chunk({"tool_calls": [{"index": i, "function": {
                        "arguments": json.dumps(c["arguments"])}}]}))
                finish = "tool_calls" if calls else "stop"
                self._stream(chunks + [chunk({}, finish)], use, stall=step.stall)

            def _stream(self, chunks: list[bytes], use: dict, stall: float = 0.0) -> None:
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
                    self.wfile.write(usage_chunk(use))
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        return H
