"""A scripted mock of the Gemini API (``streamGenerateContent`` SSE), for running the real Gemini CLI
offline.  Stdlib only (``http.server`` in a thread).

It answers:

* ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse``: SSE ``data: {candidates, usageMetadata,
  modelVersion, responseId}`` frames, one per part, ``finishReason`` and usage on the last one;
* ``POST /v1beta/models/<model>:generateContent``: one JSON response (a short text);
* ``POST .../<model>:countTokens``: ``{totalTokens}``;
* anything else: ``{}`` (so the client never hangs).

Routing of a request that offers tools (``tools[].functionDeclarations``): the mock finds the *last*
``user`` content with a text part holding one of the script's markers (a prompt marker ``[<scenario>
P<n>]`` or a subagent marker), counts the ``model`` contents after it and answers that conversation's turn
``n`` (past the end: a short ``Done.``).  Everything else gets ``OK.``.

The usage of every scripted turn is deterministic (:func:`usage_for`) and is logged with the request, so a
test can compare what the client recorded with what the "API" said.  No call ids are sent (the real API
sends none either; Gemini CLI makes its own).
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..common import gate
from ..common.sse import Handler, MockServer

DEFAULT_TEXT = "OK."


@dataclass
class Turn:
    """One model response: Gemini parts ({text}, {text, thought: True}, {functionCall: {name, args}}).

    delay: seconds to hold the response before sending it (``on_serve`` runs first). gate: the name of
    a gate (common/gate.py) the test releases; the response is held until then."""

    parts: list[dict]
    delay: float = 0.0
    gate: str | None = None
    on_serve: Callable[[], None] | None = None
    cached: int = 0
    """cachedContentTokenCount to report (part of promptTokenCount, as the real API counts it)."""


@dataclass
class Conversation:
    marker: str
    turns: list[Turn]
    name: str = ""


@dataclass
class Script:
    conversations: list[Conversation] = field(default_factory=list)
    namespace: str = "scenario"
    summary: str | None = None
    """The answer to the client's chat-compression calls (no tools; the last user text asks for a
    ``<state_snapshot>``: the summary, then "Critically evaluate..." its verification), served to both;
    None: they get the default text."""


def text(t: str) -> dict:
    return {"text": t}


def thought(t: str) -> dict:
    return {"text": t, "thought": True}


def call(name: str, **args: Any) -> dict:
    return {"functionCall": {"name": name, "args": args}}


def _user_text(content: dict) -> str:
    return "\n".join(p.get("text", "") for p in content.get("parts") or []
                     if isinstance(p, dict) and isinstance(p.get("text"), str))


def usage_for(key: str, body: dict, turn: Turn) -> dict:
    """Deterministic usage for one response: prompt tokens from the request size, a cached share as
    scripted, output from the parts, thoughts from the thought parts, total = prompt + output + thoughts."""
    prompt = max(10, len(json.dumps(body.get("contents", []))) // 4)
    out = sum(len(json.dumps(p)) // 4 + 1 for p in turn.parts if not p.get("thought"))
    th = sum(len(p.get("text", "")) // 4 + 1 for p in turn.parts if p.get("thought"))
    u = {"promptTokenCount": prompt, "candidatesTokenCount": out, "totalTokenCount": prompt + out + th}
    if th:
        u["thoughtsTokenCount"] = th
    if turn.cached:
        u["cachedContentTokenCount"] = min(turn.cached, prompt)
    return u


def response_id(ns: str, key: str) -> str:
    return "resp-" + hashlib.sha256(f"{ns}|{key}".encode()).hexdigest()[:20]


def sse_frames(turn: Turn, model: str, rid: str, usage: dict) -> list[bytes]:
    parts = turn.parts or [text("")]
    frames = []
    for i, p in enumerate(parts):
        cand: dict = {"content": {"role": "model", "parts": [p]}, "index": 0}
        chunk: dict = {"candidates": [cand], "modelVersion": model, "responseId": rid}
        if i == len(parts) - 1:
            cand["finishReason"] = "STOP"
            chunk["usageMetadata"] = usage
        frames.append(b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\r\n\r\n")
    return frames


PLANS_TOKEN = "{SID}"
"""In a scripted part: the session id, read from the plans directory the client names in its plan-mode system
instruction (``<project tmp dir>/<session id>/plans``; unknown before the run)."""


def plans_filled(turn: Turn, body: dict) -> Turn:
    import dataclasses
    import re

    si = json.dumps(body.get("systemInstruction") or {})
    m = re.search(r"/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/plans\b", si)
    if not m:
        return turn
    parts = json.loads(json.dumps(turn.parts).replace(PLANS_TOKEN, m.group(1)))
    return dataclasses.replace(turn, parts=parts)


class MockGemini(MockServer):
    def __init__(self, script: Script, log_path: str | None = None, port: int = 0):
        self.script = script
        self.served: list[dict] = []
        """One entry per scripted turn served: route, key, parts, usage, t (and t_sent once sent)."""
        self.fired: set[str] = set()
        super().__init__(log_path, port)

    def route(self, body: dict) -> tuple[str, Turn, str]:
        contents = body.get("contents") or []
        has_tools = any(t.get("functionDeclarations") for t in body.get("tools") or [] if isinstance(t, dict))
        if has_tools:
            for idx in range(len(contents) - 1, -1, -1):
                c = contents[idx]
                if c.get("role") != "user":
                    continue
                t = _user_text(c)
                for conv in self.script.conversations:
                    if conv.marker in t:
                        n = sum(1 for cc in contents[idx + 1:] if cc.get("role") == "model")
                        key = f"{conv.marker}#{n}"
                        if n < len(conv.turns):
                            return f"script:{conv.name or conv.marker}#{n}", conv.turns[n], key
                        return f"script-end:{conv.name or conv.marker}#{n}", Turn([text("Done.")]), key
            return "default-tools", Turn([text(DEFAULT_TEXT)]), "default"
        if self.script.summary is not None:
            last = next((_user_text(c) for c in reversed(contents) if c.get("role") == "user"), "")
            if "<state_snapshot>" in last:
                n = 1 if last.lstrip().startswith("Critically evaluate") else 0
                return f"script:summary#{n}", Turn([text(self.script.summary)]), f"summary#{n}"
        return "default", Turn([text(DEFAULT_TEXT)]), "default"

    def handler(self):
        mock = self

        class H(Handler):
            def do_GET(self):
                mock.log({"t": time.time(), "method": "GET", "path": self.path})
                self.send_json(200, {})

            def do_POST(self):
                raw, body = self.read_json()
                path = self.path
                model = path.split("/models/")[-1].split(":")[0] if "/models/" in path else None
                if ":countTokens" in path:
                    mock.log({"t": time.time(), "path": path, "route": "countTokens"})
                    return self.send_json(200, {"totalTokens": max(1, len(raw) // 4)})
                if ":streamGenerateContent" not in path and ":generateContent" not in path:
                    mock.log({"t": time.time(), "path": path, "route": "other"})
                    return self.send_json(200, {})
                route, turn, key = mock.route(body)
                if PLANS_TOKEN in json.dumps(turn.parts):
                    turn = plans_filled(turn, body)
                usage = usage_for(key, body, turn)
                rid = response_id(mock.script.namespace, key)
                entry = {"route": route, "key": key, "parts": turn.parts, "usage": usage, "model": model,
                         "response_id": rid, "t": time.time()}
                mock.log({"t": time.time(), "path": path, "model": model, "route": route,
                          "n_contents": len(body.get("contents") or []),
                          "tools": sorted(d.get("name", "?") for t in body.get("tools") or [] if isinstance(t, dict)
                                          for d in t.get("functionDeclarations") or [])
                          if key.endswith("#0") else None})
                if route.startswith("script:"):
                    with mock._lock:
                        mock.served.append(entry)
                    if turn.on_serve and key not in mock.fired:
                        mock.fired.add(key)
                        turn.on_serve()
                if turn.delay:
                    time.sleep(turn.delay)
                if turn.gate and mock.log_path:
                    mock.log({"t": time.time(), "route": "gate-held", "key": key, "gate": turn.gate})
                    gate.hold(os.path.dirname(mock.log_path), turn.gate)
                if ":streamGenerateContent" in path:
                    self.start_sse()
                    try:
                        for fr in sse_frames(turn, model or "", rid, usage):
                            self.wfile.write(fr)
                            self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        entry["broken_pipe"] = True
                    self.close_connection = True
                else:
                    self.send_json(200, {"candidates": [{"content": {"role": "model", "parts": turn.parts},
                                                         "finishReason": "STOP", "index": 0}],
                                         "usageMetadata": usage, "modelVersion": model, "responseId": rid})
                entry["t_sent"] = time.time()

        return H
