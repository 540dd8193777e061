"""How a Qwen Code chat file reads as records in the shared shape (format from the client's
``ChatRecordingService`` and ``agent-transcript.ts``, 0.24.4; measured offline).

Every line is one record ``{"uuid", "parentUuid", "sessionId", "timestamp", "type", "provenance", "cwd",
"version", "gitBranch", ...}``; the records form a chain through ``parentUuid`` (a ``/rewind`` re-roots it,
leaving the rewound records on a dead branch: they are yielded with ``rewound`` set). ``--continue`` and
``--resume`` append to the same file; nothing is written twice. Types:

- ``user``: ``message.parts`` (Gemini-style ``{text}`` parts). No ``subtype`` with provenance
  ``real_user``: a prompt. ``mid_turn_user_message``: a prompt typed while tools ran. ``notification``,
  ``cron``, ``goal_runtime``, ``realtime_message``, provenance ``system``: text the client delivered as
  the user turn (``meta``, role user). In a subagent's transcript the first user record is the task the
  parent delegated (``message``, role user, opens turn 1).
- ``assistant``: ``message.parts``: ``{text}``, ``{text, thought: true}`` (reasoning),
  ``{functionCall: {id, name, args}}``; ``usageMetadata`` (``promptTokenCount`` including the cached
  tokens, ``candidatesTokenCount``, ``thoughtsTokenCount``, ``cachedContentTokenCount``,
  ``totalTokenCount``), ``model``. A subagent's transcript writes a round's text and usage in one
  record and each call in another (``agentRound``).
- ``tool_result``: ``message.parts[].functionResponse`` (``{id, name, response: {output|error}}``) and
  ``toolCallResult`` (``callId``, ``status``, ``resultDisplay``: for a shell call ``{type:
  "shell_result", exitCode, signal, output, truncated, ...}``, for a write or an edit ``{fileDiff,
  fileName, filePath, originalContent, newContent, diffStat}``).
- ``system``: ``subtype`` ``ui_telemetry`` (``systemPayload.uiEvent``: ``qwen-code.api_response`` with
  ``response_id`` and the token counts of EVERY model call the run made, the side calls too: the
  compression summary, the memory-extraction agent, a subagent's rounds (``subagent_id``);
  ``qwen-code.tool_call``), ``chat_compression`` (``info`` and the ``compressedHistory`` the model gets
  from then on: a summary and the files it re-reads), ``attribution_snapshot``, ``custom_title``,
  ``session_source``, ``session_model``, ``parent_session``, ``slash_command``, ``rewind``,
  ``branch_checkpoint``, ``file_history_snapshot``, goal and artifact bookkeeping.

Usage: one response is one ``api_response`` event. The event and the assistant record holding the
same counts (the event comes first) share ``dedup_key = qwen:response:<response id>``; an event
without an assistant record (a side call) is still usage. A subagent round's event carries no tokens
when the subagent's own transcript exists (its records carry them, in the child session); when that
transcript is gone the event is the only record of the round and carries them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterator

import orjson

from ...read.lines import ReadStats, iter_lines, parse_numbered
from ..base import FileChange, Problem, ReadReport, Record, SessionRef, Tokens

PROVIDER = "qwen-code"
PROMPT_SUBTYPES = frozenset({None, "mid_turn_user_message"})
USER_META_SUBTYPES = frozenset({"notification", "cron", "goal_runtime", "realtime_message", "at_command",
                                "user_text_elements"})
SYSTEM_SUBTYPES = frozenset({
    "ui_telemetry", "chat_compression", "attribution_snapshot", "custom_title", "session_source", "session_model",
    "parent_session", "slash_command", "rewind", "branch_checkpoint", "file_history_snapshot", "goal_state",
    "goal_turn_end", "background_task_completed", "omni_recall", "session_artifact_event",
    "session_artifact_snapshot", "session_sources_snapshot", "turn_result", "agent_session_ready",
    "agent_bootstrap", "agent_launch_prompt", "agent_retry"})
CONVERSATION = frozenset({"user", "assistant", "tool_result"})
_SANE = re.compile(r"[^a-zA-Z0-9_-]")
TOO_LARGE = "Tool output was too large and has been truncated."
"""The first line of a tool result the client cut for the model; the whole output is in
``resultDisplay.outputFiles`` (``<runtime dir>/tmp/<project hash>/<tool>_<id>.output``)."""
SAVED_OUTPUT_MAX = 16 << 20
_OUT_FILES = re.compile(rb'"outputFiles":\[((?:"(?:[^"\\]|\\.)*",?)*)\]')


def _int(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _parts(msg: Any) -> list:
    p = msg.get("parts") if isinstance(msg, dict) else None
    return p if isinstance(p, list) else []


def _text_of(parts: list) -> str | None:
    out = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")]
    return "\n".join(out) if out else None


def usage_tokens(prompt, cached, candidates, thoughts, total, key: str) -> Tokens | None:
    """Gemini-style counts to the shared shape: ``input`` = prompt − cached, ``cache_read`` = cached,
    ``output`` = the completion tokens (Qwen's OpenAI path writes them as ``candidatesTokenCount`` with
    the reasoning inside, and ``total`` = prompt + candidates; where ``total`` = prompt + candidates +
    thoughts the reasoning is outside and is added), ``reasoning`` = thoughts."""
    prompt, cached, candidates, thoughts, total = (_int(x) for x in (prompt, cached, candidates, thoughts, total))
    if prompt is None and candidates is None and total is None:
        return None
    out = candidates
    if out is not None and thoughts and prompt is not None and total == prompt + candidates + thoughts:
        out = candidates + thoughts
    return Tokens(input=None if prompt is None else prompt - (cached or 0), output=out, cache_read=cached,
                  cache_write=None, reasoning=thoughts, total=total, dedup_key=key)


def _meta_tokens(um: Any, key: str) -> Tokens | None:
    if not isinstance(um, dict):
        return None
    return usage_tokens(um.get("promptTokenCount"), um.get("cachedContentTokenCount"), um.get("candidatesTokenCount"),
                        um.get("thoughtsTokenCount"), um.get("totalTokenCount"), key)


def _event_tokens(ev: dict, key: str) -> Tokens | None:
    return usage_tokens(ev.get("input_token_count"), ev.get("cached_content_token_count"),
                        ev.get("output_token_count"), ev.get("thoughts_token_count"), ev.get("total_token_count"), key)


def _same_counts(a: Tokens | None, b: Tokens | None) -> bool:
    return a is not None and b is not None and (a.input, a.output, a.cache_read, a.total) == \
        (b.input, b.output, b.cache_read, b.total)


def _file_changes(display: Any, output: str | None) -> tuple[FileChange, ...]:
    if not isinstance(display, dict) or not isinstance(display.get("filePath"), str) \
            or not isinstance(display.get("newContent"), str):
        return ()
    old = display.get("originalContent") if isinstance(display.get("originalContent"), str) else None
    created = isinstance(output, str) and output.startswith("Successfully created and wrote to new file")
    action = "create" if created else "update"
    return (FileChange(os.path.normpath(display["filePath"]), action, new_content=display["newContent"],
                       old_content=None if created else old,
                       diff=display.get("fileDiff") if isinstance(display.get("fileDiff"), str) else None),)


def _response_text(parts: list) -> tuple[str | None, str | None, bool | None]:
    """(call id, text, is an error) of the first functionResponse part."""
    for p in parts:
        fr = p.get("functionResponse") if isinstance(p, dict) else None
        if isinstance(fr, dict):
            resp = fr.get("response") if isinstance(fr.get("response"), dict) else {}
            if "error" in resp:
                e = resp["error"]
                return fr.get("id"), e if isinstance(e, str) else orjson.dumps(e).decode(), True
            o = resp.get("output")
            return fr.get("id"), o if isinstance(o, str) else (None if o is None else orjson.dumps(o).decode()), False
    return None, None, None


class _Reader:
    def __init__(self, ref: SessionRef, report: ReadReport, raw: bool):
        self.ref = ref
        self.report = report
        self.raw = raw
        self.path = Path(ref.paths[0])
        self.subagent = ref.parent_session_id is not None
        self.turn = 0
        self.count = 0
        self.no = 0
        self.offset = None
        self.length = None
        self.pending: list[tuple[str, Tokens]] = []
        """api_response events not yet claimed by an assistant record: (response id, tokens)."""
        self.source_lines: dict[str, int] | None = None
        self.source_sid: str | None = None
        self.transcripts: dict[str, bool] = {}
        self.calls: dict[str, tuple[Any, Any]] = {}
        m = ref.extra.get("model")
        self.default_model = m if isinstance(m, str) else None
        """A subagent's records name no model; its .meta.json does."""

    def rec(self, loc, role, kind, native, obj, **kw) -> Record:
        self.count += 1
        r = Record(PROVIDER, self.ref.session_id, loc, role, kind, native, path=str(self.path), line=self.no,
                   offset=self.offset, length=self.length, raw=obj if self.raw else None, **kw)
        if r.turn is None and self.turn:
            r.turn = self.turn
        return r

    def run(self) -> Iterator[Record]:
        stats = ReadStats()
        entries = []
        for line in iter_lines(self.path, stats=stats):
            entries.append((line.no, line.offset, len(line.raw), parse_numbered(line, self.path, stats)))
        alive = self._live_chain([o for *_x, o in entries])
        rewound = 0
        for no, off, ln, obj in entries:
            self.no, self.offset, self.length = no, off, ln
            if obj is None:
                continue
            ff = obj.get("forkedFrom") if isinstance(obj.get("forkedFrom"), dict) else None
            copy_of = self._copy_of(ff) if ff is not None else None
            dead = alive is not None and obj.get("type") in CONVERSATION and obj.get("uuid") not in alive
            rewound += dead
            for r in self.record(obj):
                if copy_of is not None:
                    r.copy_of = copy_of if "#" not in r.locator else f"{copy_of}#{r.locator.split('#', 1)[1]}"
                    r.tokens = None
                    r.file_changes = ()
                    self.report.duplicates += 1
                r.rewound = dead
                yield r
        rp = self.report
        rp.add_read(self.path, stats, files=1)
        rp.records += self.count
        if rewound:
            rp.notes.append(f"{self.path.name}: {rewound} record(s) off the chain the client resumes (rewound): kept, "
                            "marked rewound")

    @staticmethod
    def _live_chain(objs: list) -> set[str] | None:
        """uuids on the chain from the last conversation record back to the root; None when the file has
        no uuid chain."""
        parent: dict[str, str | None] = {}
        last = None
        for o in objs:
            if isinstance(o, dict) and isinstance(o.get("uuid"), str):
                p = o.get("parentUuid")
                parent[o["uuid"]] = p if isinstance(p, str) else None
                if o.get("type") in CONVERSATION:
                    last = o["uuid"]
        if last is None:
            return None
        out: set[str] = set()
        cur: str | None = last
        while cur is not None and cur not in out:
            out.add(cur)
            cur = parent.get(cur)
        return out

    def _copy_of(self, ff: dict) -> str:
        sid = ff.get("sessionId") if isinstance(ff.get("sessionId"), str) else "?"
        mu = ff.get("messageUuid") if isinstance(ff.get("messageUuid"), str) else "?"
        if self.source_lines is None:
            self.source_sid = sid
            self.source_lines = {}
            src = self.path.parent / f"{sid}.jsonl"
            try:
                for line in iter_lines(src):
                    m = re.search(rb'"uuid":"([^"]+)"', line.raw[:200])
                    if m:
                        self.source_lines.setdefault(m.group(1).decode(), line.no)
            except OSError:
                self.report.notes.append(f"{self.path.name}: the session it was forked from ({src.name}) cannot be "
                                         "read: copied records named by their source uuid")
        n = self.source_lines.get(mu) if sid == self.source_sid else None
        return f"{sid}:L{n}" if n is not None else f"{sid}:uuid:{mu}"

    # -- records ---------------------------------------------------------------------------------
    def record(self, obj: dict) -> Iterator[Record]:
        t = obj.get("type")
        st = obj.get("subtype")
        loc = f"L{self.no}"
        ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        if t == "user":
            parts = _parts(obj.get("message"))
            text = _text_of(parts)
            if self.subagent:
                first = self.turn == 0
                if first:
                    self.turn = 1
                yield self.rec(loc, "user", "message" if first or st is None else "meta",
                               f"user{'/' + st if st else ''}", obj, instant=ts, text=text)
            elif st in PROMPT_SUBTYPES and obj.get("provenance", "real_user") == "real_user":
                self.turn += 1
                sp = obj.get("systemPayload") if isinstance(obj.get("systemPayload"), dict) else {}
                shown = sp.get("displayText") if isinstance(sp.get("displayText"), str) else None
                yield self.rec(loc, "user", "prompt", f"user{'/' + st if st else ''}", obj, instant=ts,
                               text=shown if shown is not None else text, turn=self.turn)
            elif st in PROMPT_SUBTYPES or st in USER_META_SUBTYPES:
                yield self.rec(loc, "user", "meta", f"user/{st or obj.get('provenance')}", obj, instant=ts, text=text)
            else:
                self._unknown(f"user/{st}")
                yield self.rec(loc, "user", "unknown", f"user/{st}", obj, instant=ts, text=text)
        elif t == "assistant":
            yield from self.assistant(obj, loc, ts)
        elif t == "tool_result":
            yield from self.tool_result(obj, loc, ts)
        elif t == "system":
            yield from self.system(obj, st, loc, ts)
        else:
            name = f"type/{t}"
            self._unknown(name)
            yield self.rec(loc, "harness", "unknown", name, obj, instant=ts)

    def _unknown(self, name: str) -> None:
        self.report.unknown_kinds[name] += 1

    def assistant(self, obj: dict, loc: str, ts) -> Iterator[Record]:
        model = obj.get("model") if isinstance(obj.get("model"), str) else self.default_model
        parts = _parts(obj.get("message"))
        uid = obj.get("uuid") if isinstance(obj.get("uuid"), str) else f"L{self.no}"
        tokens = _meta_tokens(obj.get("usageMetadata"), f"qwen:record:{uid}")
        if tokens is not None and not self.subagent:
            for i, (rid, t) in enumerate(self.pending):
                if _same_counts(t, tokens):
                    tokens = t  # the same response as that event: one key
                    del self.pending[:i + 1]
                    break
        out: list[Record] = []
        for i, p in enumerate(parts):
            if not isinstance(p, dict):
                continue
            bl = f"{loc}#{i}"
            if "functionCall" in p and isinstance(p["functionCall"], dict):
                fc = p["functionCall"]
                if isinstance(fc.get("id"), str):
                    self.calls[fc["id"]] = (fc.get("name"), fc.get("args"))
                out.append(self.rec(bl, "assistant", "tool_call", "assistant/functionCall", obj, instant=ts,
                                    tool_name=fc.get("name"), tool_input=fc.get("args"), call_id=fc.get("id"),
                                    model=model, text=orjson.dumps(fc.get("args")).decode()
                                    if fc.get("args") is not None else None))
            elif isinstance(p.get("text"), str):
                if p.get("thought"):
                    out.append(self.rec(bl, "assistant", "reasoning", "assistant/thought", obj, instant=ts,
                                        text=p["text"], model=model))
                else:
                    out.append(self.rec(bl, "assistant", "message", "assistant/text", obj, instant=ts,
                                        text=p["text"], model=model))
            else:
                name = "assistant/" + (next(iter(p), "?") if p else "?")
                self._unknown(name)
                out.append(self.rec(bl, "assistant", "unknown", name, obj, instant=ts, model=model))
        if not out:  # usage only (a subagent round whose text is empty), or nothing
            out.append(self.rec(loc, "assistant", "message", "assistant", obj, instant=ts, model=model, text=""))
        out[0].tokens = tokens
        yield from out

    def tool_result(self, obj: dict, loc: str, ts) -> Iterator[Record]:
        parts = _parts(obj.get("message"))
        rid, text, err = _response_text(parts)
        tcr = obj.get("toolCallResult") if isinstance(obj.get("toolCallResult"), dict) else {}
        cid = tcr.get("callId") if isinstance(tcr.get("callId"), str) else rid
        status = tcr.get("status") if isinstance(tcr.get("status"), str) else None
        display = tcr.get("resultDisplay")
        code = None
        truncated = False
        if isinstance(display, dict) and display.get("type") == "shell_result":
            code = _int(display.get("exitCode"))
            truncated = display.get("truncated") is True
        name = next((p["functionResponse"].get("name") for p in parts if isinstance(p, dict)
                     and isinstance(p.get("functionResponse"), dict)), None)
        if status is None and self.subagent and err is False and tcr:
            status = "success"  # a subagent's transcript writes a status only for an error
        if status is not None:
            is_err = status != "success" or bool(err) or code not in (None, 0)
        else:
            is_err = True if err or code not in (None, 0) else (False if err is False else None)
        changes = _file_changes(display, text) if status == "success" else ()
        call = self.calls.get(cid or "")
        if not changes and is_err is False and call is not None and call[0] == "write_file" \
                and isinstance(call[1], dict) and isinstance(call[1].get("file_path"), str) \
                and isinstance(call[1].get("content"), str):
            # a subagent's transcript keeps no resultDisplay: the call's content is the whole file written
            created = isinstance(text, str) and text.startswith("Successfully created and wrote to new file")
            overwrote = isinstance(text, str) and text.startswith("Successfully overwrote file")
            changes = (FileChange(os.path.normpath(call[1]["file_path"]),
                                  "create" if created else "update" if overwrote else "unknown",
                                  new_content=call[1]["content"]),)
        if isinstance(text, str) and text.startswith(TOO_LARGE):
            truncated = True
        yield self.rec(loc, "tool", "tool_result", "tool_result", obj, instant=ts, text=text, call_id=cid,
                       tool_name=name, exit_code=code, is_error=is_err, file_changes=changes, truncated=truncated)
        files = display.get("outputFiles") if isinstance(display, dict) else None
        if truncated and isinstance(files, list):
            for i, f in enumerate(x for x in files if isinstance(x, str)):
                yield self.saved_output(f, f"{loc}#output{'' if i == 0 else i}", ts, cid, name)

    def saved_output(self, f: str, loc: str, ts, cid, name) -> Record:
        """The whole output of a cut tool result, from the file the client saved it to (its first 16 MiB);
        text null with a note when that file is gone."""
        text = None
        try:
            with open(f, "rb") as fh:
                data = fh.read(SAVED_OUTPUT_MAX + 1)
            if len(data) > SAVED_OUTPUT_MAX:
                self.report.notes.append(f"{f}: only the first {SAVED_OUTPUT_MAX} bytes of the saved output read")
                data = data[:SAVED_OUTPUT_MAX]
            text = data.decode("utf-8", "replace")
        except OSError as exc:
            self.report.notes.append(f"{self.path.name} {loc}: the whole output the client saved ({f}) cannot be "
                                     f"read: {exc.strerror or exc}")
        return self.rec(loc, "tool", "meta", "tool_result#outputFiles", None, instant=ts, text=text, call_id=cid,
                        tool_name=name)

    def system(self, obj: dict, st, loc: str, ts) -> Iterator[Record]:
        sp = obj.get("systemPayload") if isinstance(obj.get("systemPayload"), dict) else {}
        native = f"system/{st}"
        if st == "ui_telemetry":
            ev = sp.get("uiEvent") if isinstance(sp.get("uiEvent"), dict) else {}
            en = ev.get("event.name")
            if en == "qwen-code.api_response":
                yield self.api_response(obj, ev, loc, ts)
                return
            text = None
            if en == "qwen-code.tool_call":
                text = f"{ev.get('function_name')} {ev.get('status')}"
            yield self.rec(loc, "harness", "meta", f"{native}/{en}", obj, instant=ts, text=text,
                           call_id=ev.get("call_id") if isinstance(ev.get("call_id"), str) else None)
        elif st == "chat_compression":
            hist = sp.get("compressedHistory") if isinstance(sp.get("compressedHistory"), list) else []
            summary = _text_of(_parts(hist[0])) if hist and isinstance(hist[0], dict) else None
            yield self.rec(loc, "harness", "meta", native, obj, instant=ts, text=summary)
        elif st in SYSTEM_SUBTYPES:
            text = None
            if st == "custom_title":
                text = sp.get("customTitle") if isinstance(sp.get("customTitle"), str) else None
            elif st == "slash_command":
                text = orjson.dumps(sp).decode()[:500]
            yield self.rec(loc, "harness", "meta", native, obj, instant=ts, text=text)
        else:
            self._unknown(native)
            yield self.rec(loc, "harness", "unknown", native, obj, instant=ts)

    def api_response(self, obj: dict, ev: dict, loc: str, ts) -> Record:
        rid = ev.get("response_id") if isinstance(ev.get("response_id"), str) else None
        key = f"qwen:response:{rid}" if rid else f"qwen:record:{obj.get('uuid') or loc}"
        tokens = _event_tokens(ev, key)
        sub = ev.get("subagent_id") if isinstance(ev.get("subagent_id"), str) else None
        text = f"API response {rid or '?'} ({ev.get('model') or '?'}, status {ev.get('status_code')})"
        if sub is not None and not self.subagent and self._transcript_exists(sub):
            # the subagent's own transcript carries this round's usage (in the child session)
            text += f"; a round of subagent {sub}: its usage is in its transcript"
            tokens = None
        elif sub is None and tokens is not None:
            self.pending.append((rid or key, tokens))
        return self.rec(loc, "harness", "meta", "system/ui_telemetry/qwen-code.api_response", obj, instant=ts,
                        text=text, tokens=tokens, model=ev.get("model") if isinstance(ev.get("model"), str) else None)

    def _transcript_exists(self, agent_id: str) -> bool:
        if agent_id not in self.transcripts:
            d = self.path.parent.parent / "subagents" / _SANE.sub("_", self.ref.session_id)
            if self.path.parent.name == "archive":
                d = self.path.parent.parent.parent / "subagents" / _SANE.sub("_", self.ref.session_id)
            from ...read.probe import is_file

            # an input of the reading (read/probe.py): the transcript's appearance is a change
            self.transcripts[agent_id] = is_file(d / f"agent-{_SANE.sub('_', agent_id)}.jsonl")
        return self.transcripts[agent_id]


def read(ref: SessionRef, report: ReadReport, *, raw: bool = False) -> Iterator[Record]:
    rd = _Reader(ref, report, raw)
    try:
        yield from rd.run()
    except OSError as exc:
        report.problems.append(Problem(str(rd.path), f"unreadable: {exc.strerror or exc}"))


def fork_point(ref: SessionRef) -> dict | None:
    """The session ``ref`` was forked from, from its records' ``forkedFrom`` marks: the source's id, the
    source uuid of the last record copied (and its line when the source file is there) and how many
    records were copied. None for a session that is no fork."""
    sid = ref.extra.get("forked_from_session")
    if not isinstance(sid, str) or not sid:
        return None
    copied = 0
    last = None
    try:
        for line in iter_lines(ref.paths[0]):
            if b'"forkedFrom"' not in line.raw:
                continue
            try:
                o = orjson.loads(line.raw)
            except orjson.JSONDecodeError:
                continue
            ff = o.get("forkedFrom") if isinstance(o, dict) else None
            if isinstance(ff, dict) and ff.get("sessionId") == sid:
                copied += 1
                last = ff.get("messageUuid")
    except OSError:
        copied = None
    src = Path(ref.paths[0]).parent / f"{sid}.jsonl"
    line_no = None
    from ...read.probe import is_file

    if last and is_file(src):
        try:
            for line in iter_lines(src):
                if f'"uuid":"{last}"'.encode() in line.raw[:200]:
                    line_no = line.no
                    break
        except OSError:
            line_no = None
    return {"session_id": sid, "path": str(src) if is_file(src) else None, "line": line_no, "uuid": last,
            "copied_records": copied}


def output_files(path: Path) -> list[Path]:
    """The saved whole outputs a session's cut tool results name (``resultDisplay.outputFiles``), found by
    their bytes."""
    out: list[Path] = []
    try:
        for line in iter_lines(path):
            if b'"outputFiles":["' not in line.raw:
                continue
            for m in _OUT_FILES.finditer(line.raw):
                try:
                    names = orjson.loads(b"[" + m.group(1) + b"]")
                except orjson.JSONDecodeError:
                    continue
                out += [Path(n) for n in names if isinstance(n, str) and Path(n) not in out]
    except OSError:
        return out
    return out
