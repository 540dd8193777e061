"""A scripted mock of the OpenAI Responses API, for running the real Codex CLI offline.

Stdlib only (``http.server`` in a thread).  It answers ``POST /v1/responses`` (``stream: true``)
with the SSE frames REALCLIENTS.md section 1 measured (``event: <type>`` / ``data: <json>``):
``response.created``; per output item ``response.output_item.added``, its deltas
(``response.output_text.delta``/``.done``, ``response.function_call_arguments.delta``/``.done``,
``response.custom_tool_call_input.delta``/``.done``), ``response.output_item.done``; then
``response.completed`` carrying ``usage``.  Anything else gets a small JSON 200.

Routing of a ``/v1/responses`` request: a request whose last ``user`` message is the client's
compaction prompt gets the scenario's summary.  Otherwise the mock finds the *last* ``user`` message
item of the request's ``input`` whose text holds one of the script's conversation markers
(``[<scenario> P<n>]`` for a prompt, ``SUBAGENT-A`` ... for a delegated task) and answers with that
conversation's next unserved turn (the client runs with retries off, so one request is one model
step; call ids are ``call_<conv>_t<turn>_<block>``).  Past the end of the script it answers
``Done.``; a request with no marker gets :data:`DEFAULT_TEXT`.

Usage is scripted, not estimated: each served turn reports the figures of :func:`turn_usage`
(deterministic in the conversation and turn number), and the ground truth records them per
response id, so token tests compare exact numbers.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..common import gate
from ..common.sse import Handler, MockServer, event as sse

DEFAULT_TEXT = "OK."
COMPACT_MARKERS = ("CONTEXT CHECKPOINT COMPACTION", "handoff summary", "summarize the conversation")


@dataclass
class Turn:
    """One model response: output items (see :func:`say`, :func:`think`, :func:`call`, :func:`patch`).

    delay: seconds the mock waits before streaming it (holds the turn busy; a runner may kill the
    client meanwhile). gate: the name of a gate (common/gate.py) the test releases; the reply is held
    until then. on_serve: run in the server thread when the turn is first requested."""

    items: list[dict]
    delay: float = 0.0
    gate: str | None = None
    on_serve: Callable[[], None] | None = None
    input_tokens: int | None = None  # override the scripted input figure (e.g. to cross a compaction limit)


@dataclass
class Conversation:
    marker: str
    turns: list[Turn]
    name: str = ""


@dataclass
class Script:
    conversations: list[Conversation] = field(default_factory=list)
    namespace: str = "scenario"
    summary: str = "Summary: the user asked for some file work; it was done."


def say(text: str) -> dict:
    return {"type": "message", "role": "assistant", "text": text}


def think(summary: str) -> dict:
    return {"type": "reasoning", "summary": summary}


def call(name: str, **args: Any) -> dict:
    """A function call (``exec_command``, ``spawn_agent``, ...) with JSON arguments."""
    return {"type": "function_call", "name": name, "arguments": args}


def patch(text: str, name: str = "apply_patch") -> dict:
    """A freeform custom tool call (``apply_patch`` takes the raw patch text)."""
    return {"type": "custom_tool_call", "name": name, "input": text}


def tool_search(query: str, limit: int = 8) -> dict:
    """A client-executed ``tool_search_call`` (deferred tools such as the multi-agent ones load this way)."""
    return {"type": "tool_search_call", "arguments": {"query": query, "limit": limit}}


def call_id(conv: str, turn: int, block: int) -> str:
    return f"call_{conv}_t{turn}_{block}"


def response_id(ns: str, conv: str, turn: int) -> str:
    return f"resp_{ns}_{conv}_t{turn}"


def turn_usage(conv_index: int, turn: int, items: list[dict], input_tokens: int | None = None) -> dict:
    """The usage the mock reports for a scripted turn (deterministic; the ground truth repeats it)."""
    inp = input_tokens if input_tokens is not None else 1200 + 100 * conv_index + 37 * turn
    cached = 0 if turn == 0 else 512
    reasoning = 16 if any(i["type"] == "reasoning" for i in items) else 0
    out = 40 + 7 * len(items) + reasoning
    return {"input_tokens": inp, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": out, "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": inp + out}


def materialise(items: list[dict], conv: str, turn: int, work: str, agent_id: str = "") -> list[dict]:
    """The Responses API output items of a scripted turn, with deterministic ids. ``{W}`` becomes the
    work dir, ``{AGENT_ID}`` the id the client's spawn_agent returned earlier in this conversation."""
    out = []
    for b, it in enumerate(items):
        base = f"{conv}_t{turn}_{b}"
        t = it["type"]
        if t == "message":
            out.append({"type": "message", "id": f"msg_{base}", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": it["text"].replace("{W}", work),
                                     "annotations": []}]})
        elif t == "reasoning":
            out.append({"type": "reasoning", "id": f"rs_{base}",
                        "summary": [{"type": "summary_text", "text": it["summary"]}]})
        elif t == "function_call":
            args = json.loads(json.dumps(it["arguments"]).replace("{W}", work).replace("{AGENT_ID}", agent_id))
            fc = {"type": "function_call", "id": f"fc_{base}", "call_id": call_id(conv, turn, b),
                  "name": it["name"], "arguments": json.dumps(args), "status": "completed"}
            if it.get("namespace"):
                fc["namespace"] = it["namespace"]
            out.append(fc)
        elif t == "custom_tool_call":
            out.append({"type": "custom_tool_call", "id": f"ctc_{base}", "call_id": call_id(conv, turn, b),
                        "name": it["name"], "input": it["input"].replace("{W}", work), "status": "completed"})
        elif t == "tool_search_call":
            out.append({"type": "tool_search_call", "id": f"tsc_{base}", "call_id": call_id(conv, turn, b),
                        "status": "completed", "execution": "client", "arguments": it["arguments"]})
        else:
            raise ValueError(f"unknown item type {t}")
    return out


def stream_response(resp_id: str, model: str, items: list[dict], usage: dict) -> list[bytes]:
    ev = [sse("response.created", {"type": "response.created", "response": {
        "id": resp_id, "object": "response", "status": "in_progress", "model": model, "output": []}})]
    for i, it in enumerate(items):
        t = it["type"]
        empty = dict(it)
        if t == "message":
            empty["content"] = []
        elif t == "function_call":
            empty["arguments"] = ""
        elif t == "custom_tool_call":
            empty["input"] = ""
        ev.append(sse("response.output_item.added", {"type": "response.output_item.added",
                                                      "output_index": i, "item": empty}))
        if t == "message":
            s = it["content"][0]["text"]
            for j in range(0, max(len(s), 1), 40):
                ev.append(sse("response.output_text.delta", {
                    "type": "response.output_text.delta", "item_id": it["id"], "output_index": i,
                    "content_index": 0, "delta": s[j:j + 40]}))
            ev.append(sse("response.output_text.done", {"type": "response.output_text.done", "item_id": it["id"],
                                                         "output_index": i, "content_index": 0, "text": s}))
        elif t == "function_call":
            s = it["arguments"]
            for j in range(0, len(s), 60):
                ev.append(sse("response.function_call_arguments.delta", {
                    "type": "response.function_call_arguments.delta", "item_id": it["id"], "output_index": i,
                    "delta": s[j:j + 60]}))
            ev.append(sse("response.function_call_arguments.done", {
                "type": "response.function_call_arguments.done", "item_id": it["id"], "output_index": i,
                "arguments": s}))
        elif t == "custom_tool_call":
            s = it["input"]
            for j in range(0, len(s), 60):
                ev.append(sse("response.custom_tool_call_input.delta", {
                    "type": "response.custom_tool_call_input.delta", "item_id": it["id"], "output_index": i,
                    "delta": s[j:j + 60]}))
            ev.append(sse("response.custom_tool_call_input.done", {
                "type": "response.custom_tool_call_input.done", "item_id": it["id"], "output_index": i,
                "input": s}))
        ev.append(sse("response.output_item.done", {"type": "response.output_item.done", "output_index": i,
                                                     "item": it}))
    ev.append(sse("response.completed", {"type": "response.completed", "response": {
        "id": resp_id, "object": "response", "status": "completed", "model": model, "output": items,
        "usage": usage}}))
    return ev


def _text_of(item: dict) -> str:
    c = item.get("content")
    if isinstance(c, str):
        return c
    return "\n".join(str(p.get("text", "")) for p in c or [] if isinstance(p, dict))




class MockResponses(MockServer):
    url_path = "/v1"

    def __init__(self, script: Script, log_path: str | None = None, work: str = "", dump_dir: str | None = None):
        self.script = script
        self.work = work
        self.dump_dir = dump_dir
        if dump_dir:
            os.makedirs(dump_dir, exist_ok=True)
        self.served: list[dict] = []  # one per scripted turn served: key, response_id, usage, items
        self.fired: set[str] = set()
        self._next: dict[str, int] = {}
        self.agent_ids: list[str] = []  # ids the client's spawn_agent returned (seen in later requests)
        super().__init__(log_path)

    def route(self, body: dict) -> tuple[str, Conversation | None, int]:
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        users = [i for i in items if i.get("type", "message") == "message" and i.get("role") == "user"]
        if users and any(m.lower() in _text_of(users[-1]).lower() for m in COMPACT_MARKERS):
            return "compact", None, 0
        for idx in range(len(items) - 1, -1, -1):
            it = items[idx]
            if it.get("type", "message") != "message" or it.get("role") != "user":
                continue
            txt = _text_of(it)
            for conv in self.script.conversations:
                if conv.marker in txt:
                    # the next turn of this conversation: every request is one model step (the client runs
                    # with request/stream retries off), and after a compaction the history no longer holds
                    # the earlier call ids, so the mock counts what it served rather than reading the input
                    with self._lock:
                        n = self._next.get(conv.name, 0)
                        self._next[conv.name] = n + 1
                    return "script", conv, n
        return "default", None, 0

    def agent_id_in(self, body: dict) -> str:
        """The last ``agent_id`` a spawn_agent output in this request's input reported (and remember it)."""
        found = ""
        for it in body.get("input") or []:
            if isinstance(it, dict) and it.get("type") == "function_call_output":
                out = it.get("output")
                try:
                    o = json.loads(out) if isinstance(out, str) else None
                except ValueError:
                    o = None
                if isinstance(o, dict) and isinstance(o.get("agent_id"), str):
                    found = o["agent_id"]
                    with self._lock:
                        if found not in self.agent_ids:
                            self.agent_ids.append(found)
        return found

    def handler(self):
        mock = self

        class H(Handler):
            def do_GET(self):
                mock.log({"t": time.time(), "method": "GET", "path": self.path})
                self.send_json(200, {"data": [], "object": "list"})

            def do_POST(self):
                if self.headers.get("content-encoding") == "zstd":  # request compression (not seen offline)
                    mock.log({"t": time.time(), "path": self.path, "route": "compressed-body"})
                _, body = self.read_json()
                if not self.path.rstrip("/").endswith("/responses"):
                    mock.log({"t": time.time(), "method": "POST", "path": self.path, "route": "other"})
                    self.send_json(200, {})
                    return
                route, conv, turn = mock.route(body)
                model = body.get("model") or "gpt-mock"
                with mock._lock:
                    seq = len(mock.requests) + 1
                tools = sorted(str(t.get("name") or t.get("type")) for t in body.get("tools") or [])
                key = f"{conv.name}#{turn}" if conv else route
                rec = {"t": time.time(), "method": "POST", "path": self.path, "model": model,
                       "stream": bool(body.get("stream")), "route": f"{route}:{key}", "key": key,
                       "n_input": len(body.get("input") or []), "n_tools": len(tools),
                       "tools": tools if (conv and turn == 0) else None}
                mock.log(rec)
                if mock.dump_dir:
                    with open(os.path.join(mock.dump_dir, f"{seq:04d}-{key.replace('#', '-')}.json"), "w") as f:
                        json.dump(body, f, indent=1)
                ns = mock.script.namespace
                if conv is not None and turn < len(conv.turns):
                    t = conv.turns[turn]
                    ci = mock.script.conversations.index(conv)
                    agent = mock.agent_id_in(body)
                    items = materialise(t.items, conv.name, turn, mock.work, agent)
                    usage = turn_usage(ci, turn, t.items, t.input_tokens)
                    rid = response_id(ns, conv.name, turn)
                    with mock._lock:
                        first = key not in mock.fired
                        mock.fired.add(key)
                        mock.served.append({"key": key, "response_id": rid, "usage": usage, "items": items,
                                            "t": time.time()})
                    if first and t.on_serve:
                        t.on_serve()
                    if t.delay:
                        time.sleep(t.delay)
                    if t.gate:
                        mock.log({"t": time.time(), "route": "gate-held", "key": key, "gate": t.gate})
                        gate.hold(os.path.dirname(mock.work), t.gate)
                else:
                    text = mock.script.summary if route == "compact" else (
                        "Done." if conv is not None else DEFAULT_TEXT)
                    items = materialise([say(text)], conv.name if conv else route, turn, mock.work)
                    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                             "total_tokens": 105}
                    rid = f"resp_{ns}_{key.replace('#', '_t')}_{seq}"
                    with mock._lock:
                        mock.served.append({"key": key, "response_id": rid, "usage": usage, "items": items,
                                            "t": time.time(), "unscripted": True})
                try:
                    self.start_sse()
                    for ev in stream_response(rid, model, items, usage):
                        self.wfile.write(ev)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client was killed mid-response
                    mock.log({"t": time.time(), "route": "client-gone", "key": key})
                self.close_connection = True

        return H
