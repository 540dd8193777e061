"""One Codex CLI rollout, read into shared :class:`Record` objects (docs/providers.md, "Codex CLI").

Every line is ``{timestamp, ordinal?, type, payload}``. What becomes what:

- ``response_item`` is the model-facing history and the transcript: ``message`` (role
  ``developer`` -> meta/system; role ``user`` -> ``prompt`` when a person typed it, ``meta`` for
  the ``<environment_context>`` and other injected context, ``message`` for a subagent's task
  written by its parent; role ``assistant`` -> ``message``, or ``meta`` for a compaction summary),
  ``reasoning`` (summary text), ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` /
  ``tool_search_call`` / ``web_search_call`` -> ``tool_call``, their ``*_output`` -> ``tool_result``.
- ``event_msg`` is the UI layer. Its copies of history items (``item_completed`` UserMessage,
  AgentMessage, Reasoning; legacy ``user_message``, ``agent_message``, ``agent_reasoning``) are
  yielded with ``copy_of`` = the locator of the item they repeat; an echo written before its
  item waits for it a few lines (then, if none comes, it stands as the original).
- Call outcomes (``item_completed`` CommandExecution ``exit_code``, FileChange ``changes``,
  legacy ``exec_command_end`` / ``patch_apply_end`` / ``mcp_tool_call_end``) are merged into the
  **tool_call** record of the same ``call_id`` (``exit_code``, ``is_error``, ``file_changes``);
  the event itself is yielded as a copy of that call. When no event carries the exit code, the
  output text's ``Process exited with code N`` / ``Exit code: N`` / ``metadata.exit_code`` is
  used. A call waits for its outcome until its output has come and a few more lines passed, its
  turn ended, or the file ended; records keep file order.
- Tokens: ``token_usage_record`` is one usage per model response (``dedup_key`` =
  ``codex:response:<response_id>``); ``event_msg/token_count`` carries the running
  ``total_token_usage`` (``Tokens.cumulative=True``, never summed). Only where a response has no
  ``token_usage_record`` (older clients) its ``last_token_usage`` is yielded as a per-response
  record ``L<n>#1``, keyed by the running total it produced, so a repeated token_count does not
  count twice. The assistant message(s) of a response carry the same Tokens (same ``dedup_key``)
  once its usage record comes; an assistant message whose response recorded no usage (a killed
  turn) has ``tokens=None``. ``input`` excludes cached tokens (``input_tokens - cached_input_tokens``);
  ``reasoning`` is part of ``output``; ``cache_write`` is part of ``input``.
- ``compacted``: a meta record (the summary message), then its ``replacement_history`` items as
  ``L<n>#<i>`` records, each a copy of the record it repeats (by id, call id or text) or of the
  compaction itself; unmatched injected context stays meta.
- ``session_meta``, ``turn_context``, ``world_state``, lifecycle events: meta. Anything else:
  ``kind="unknown"``, raw kept, counted in ``ReadReport.unknown_kinds`` under its native type.

Turns: numbered 1.. in order of the ``turn_id`` first seen on ``task_started``/``turn_context``
(older files without turn ids: one per ``turn_context``). Locators are ``L<n>``: the physical
line of the rollout file, for ``.jsonl.zst`` the line of the decompressed stream.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Iterator

import orjson

from ...read.lines import ReadStats, parse_numbered
from ..base import Problem, ReadReport, Record, SessionRef, Tokens
from . import files as rf

from .shapes import (CALL_TYPES, ECHO_WINDOW, KNOWN_TOP, MAX_HELD, META_EVENTS, OUTCOME_WINDOW, OUTPUT_TYPES,
                     PATCH_REJECTED, SYNTHETIC_USER_PREFIXES, TRUNCATED_TEXT, TURN_END_EVENTS, _exit_from_output, _file_changes,
                     _int, _output_text, _text_parts, changes_from_patch, tokens_of)


class _Slot:
    __slots__ = ("rec", "hold", "deadline", "outcome", "output_seen")

    def __init__(self, rec: Record, hold: str | None = None, deadline: int | None = None):
        self.rec, self.hold, self.deadline = rec, hold, deadline
        self.outcome = False
        self.output_seen = False


def _merge_outcome(result: Record, call: Record) -> None:
    """The call's outcome (exit code, error flag) on its result record too, as every provider's
    result carries it (docs/providers.md, "Codex CLI")."""
    if call.exit_code is not None:
        result.exit_code = call.exit_code
    if call.is_error is not None:
        result.is_error = call.is_error


class _Reader:
    def __init__(self, ref: SessionRef, report: ReadReport, raw: bool):
        self.ref, self.report, self.raw = ref, report, raw
        self.path = ref.paths[0]
        self.sid = ref.session_id
        self.q: deque[_Slot] = deque()
        self.calls: dict[str, _Slot] = {}
        self.early_outcome: dict[str, tuple] = {}
        self.results: dict[str, list[Record]] = {}          # call_id -> result records awaiting its outcome
        self.by_id: dict[str, tuple[str, str]] = {}          # item id -> (locator, kind)
        self.by_text: dict[tuple[str, str], deque] = {}      # (role, text) -> unmatched (locator, kind)
        self.text_loc: dict[tuple[str, str], tuple[str, str]] = {}  # (role, text) -> last original (locator, kind)
        self.call_loc: dict[str, tuple[str, str]] = {}       # call_id -> (locator, kind) of the call
        self.output_loc: dict[str, str] = {}
        self.echoes: list[tuple[_Slot, tuple]] = []
        self.turns: dict[str, int] = {}
        self.n_turns = 0
        self.turn: int | None = None
        self.turn_by_id = False                               # the current turn came from a turn id
        self.unclaimed: Tokens | None = None                  # older files: the last response's usage
        self.model: str | None = None
        self.subagent = ref.parent_session_id is not None
        self.last_compacted: str | None = None
        self.awaiting_usage: list[_Slot] = []                 # assistant messages of a response not yet closed
        self.pending_usage = False                            # a token_usage_record awaits its token_count
        self.last_response_key: str | None = None
        self.total_key: dict[tuple[int, int], str] = {}       # (run, running total) -> the response key it closed
        self.last_total: int | None = None
        self.run_no = 0                                       # older releases restart the total per process
        self.seen_usage_record = False
        self.capped = False

    # ------------------------------------------------------------------ plumbing
    def mk(self, ln, obj, role, kind, native, locator=None, **kw) -> Record:
        return Record(provider="codex", session_id=self.sid, locator=locator or f"L{ln.no}", role=role, kind=kind,
                      native=native, path=str(self.path), line=ln.no, offset=ln.offset, length=len(ln.raw),
                      instant=obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None,
                      turn=kw.pop("turn", self.turn), model=kw.pop("model", self.model),
                      raw=obj if self.raw else None, **kw)

    def push(self, slot: _Slot) -> None:
        self.q.append(slot)

    def release(self, no: int, force: bool = False) -> Iterator[Record]:
        while self.q:
            s = self.q[0]
            if s.hold is not None and not force and not (s.deadline is not None and no > s.deadline):
                if len(self.q) <= MAX_HELD:
                    break
                if not self.capped:
                    self.capped = True
                    self.report.notes.append(f"{self.path}: more than {MAX_HELD} records waited for a call "
                                             "outcome; the oldest were released without it")
            self.q.popleft()
            if s.hold == "original":
                self.echoes = [(e, k) for e, k in self.echoes if e is not s]
            elif s.hold == "usage" and s in self.awaiting_usage:
                self.awaiting_usage.remove(s)
            s.hold = None
            if s.rec.copy_of is not None:
                self.report.duplicates += 1
            self.report.records += 1
            yield s.rec

    def turn_of(self, tid) -> int | None:
        if not isinstance(tid, str) or not tid:
            return self.turn
        if tid not in self.turns:
            self.n_turns += 1
            self.turns[tid] = self.n_turns
        return self.turns[tid]

    def unknown(self, ln, obj, native) -> Record:
        """A record we do not know: kept whole (raw even when not asked for) and counted."""
        self.report.unknown_kinds[native] += 1
        rec = self.mk(ln, obj, "harness", "unknown", native)
        rec.raw = obj
        return rec

    # ------------------------------------------------------------------ originals and echoes
    def original(self, rec: Record, item_id, role: str, text: str | None) -> None:
        """Register a model-facing item so its UI echo can name it; settle an echo that came first."""
        loc = (rec.locator, rec.kind)
        tkey = (role, text.strip()) if text else None
        if isinstance(item_id, str) and item_id:
            self.by_id[item_id] = loc
        if tkey is not None:
            self.text_loc[tkey] = loc
        for e, key in self.echoes:
            if (key[0] == "id" and key[1] == item_id) or (key[0] == "text" and tkey is not None
                                                          and key[1:] == tkey):
                e.rec.copy_of = rec.locator
                e.hold = None
                self.echoes.remove((e, key))
                return  # this original is spoken for: a later echo with the same text is another item's
        if tkey is not None:
            self.by_text.setdefault(tkey, deque()).append(loc)

    def echo(self, ln, obj, rec: Record, item_id, role: str, text: str | None) -> _Slot:
        """A UI copy of a history item: point it at the item, or wait a few lines for it."""
        slot = _Slot(rec)
        tkey = (role, text.strip()) if text else None
        hit = self.by_id.get(item_id) if isinstance(item_id, str) and item_id else None
        q = self.by_text.get(tkey) if tkey is not None else None
        if hit is None and q:
            hit = q.popleft()
        elif hit is not None and q and hit in q:
            q.remove(hit)
        if hit is not None:
            rec.copy_of = hit[0]
        else:
            slot.hold, slot.deadline = "original", ln.no + ECHO_WINDOW
            key = ("id", item_id) if isinstance(item_id, str) and item_id else ("text",) + (tkey or ("", ""))
            self.echoes.append((slot, key))
        return slot

    # ------------------------------------------------------------------ outcomes
    def outcome(self, call_id, exit_code=None, is_error=None, changes: tuple = ()) -> None:
        if not isinstance(call_id, str):
            return
        s = self.calls.get(call_id)
        if s is None:
            self.early_outcome[call_id] = (exit_code, is_error, changes)
            return
        r = s.rec
        if exit_code is not None:
            r.exit_code = exit_code
            r.is_error = exit_code != 0
        if is_error is not None:
            r.is_error = is_error
        if changes:
            r.file_changes = changes
        s.outcome = True
        s.hold = None
        for res in self.results.pop(call_id, ()):
            _merge_outcome(res, r)

    # ------------------------------------------------------------------ the line loop
    def run(self) -> Iterator[Record]:
        st = ReadStats()
        try:
            it = rf.lines(self.path, st)
            for ln in it:
                obj = parse_numbered(ln, self.path, st)
                if obj is None:
                    continue
                yield from self.line(ln, obj)
                yield from self.release(ln.no)
        except OSError as exc:
            self.report.problems.append(Problem(str(self.path), f"unreadable: {exc.strerror or exc}"))
        except Exception as exc:  # a corrupt compressed stream: keep what was read
            self.report.problems.append(Problem(str(self.path), f"stopped reading: {type(exc).__name__}: {exc}"))
        yield from self.release(1 << 62, force=True)
        rep = self.report
        rep.add_read(self.path, st, files=st.files)

    def line(self, ln, obj: dict) -> Iterator[Record]:
        t = obj.get("type")
        p = obj.get("payload")
        if not isinstance(t, str) or "payload" not in obj:
            self.push(_Slot(self.unknown(ln, obj, "<no type/payload>")))
            return
        if t not in KNOWN_TOP or not isinstance(p, dict):
            self.push(_Slot(self.unknown(ln, obj, t if t not in KNOWN_TOP else f"{t}/<payload not an object>")))
            return
        if t == "response_item":
            self.response_item(ln, obj, p)
        elif t == "event_msg":
            yield from self.event(ln, obj, p)
        elif t == "token_usage_record":
            rid = p.get("response_id")
            self.turn = self.turn_of(p.get("turn_id")) if p.get("turn_id") else self.turn
            key = f"codex:response:{rid}" if isinstance(rid, str) and rid else f"codex:{self.sid}:L{ln.no}"
            self.pending_usage = True
            self.last_response_key = key
            tok = tokens_of(p.get("usage"), key)
            self.seen_usage_record = True
            self.settle_usage(tok)
            self.push(_Slot(self.mk(ln, obj, "harness", "meta", "token_usage_record", tokens=tok)))
        elif t == "turn_context":
            tid = p.get("turn_id")
            if isinstance(tid, str) and tid:
                self.turn = self.turn_of(tid)
                self.turn_by_id = True
            # without a turn id (0.50.0 writes one turn_context per model request): no new turn here
            if isinstance(p.get("model"), str):
                self.model = p["model"]
            self.push(_Slot(self.mk(ln, obj, "harness", "meta", "turn_context")))
        elif t == "session_meta":
            src = p.get("source")
            if (isinstance(src, dict) and "subagent" in src) or p.get("thread_source") == "subagent":
                self.subagent = True
            self.push(_Slot(self.mk(ln, obj, "harness", "meta", "session_meta", turn=None)))
        elif t == "compacted":
            self.compacted(ln, obj, p)
        else:  # world_state, inter_agent_communication(_metadata)
            self.push(_Slot(self.mk(ln, obj, "harness", "meta", t)))

    # ------------------------------------------------------------------ response items
    def convert(self, ln, obj, p: dict, locator: str | None, in_replacement: bool = False) -> Record:
        """One response item as a Record (no registration: the caller decides)."""
        pt = p.get("type")
        native = f"response_item/{pt}"
        turn = self.turn
        pas = p.get("internal_chat_message_metadata_passthrough")
        if isinstance(pas, dict) and pas.get("turn_id"):
            turn = self.turn_of(pas["turn_id"])
        kw = dict(locator=locator, turn=turn)
        if pt == "message":
            role = p.get("role")
            text = _text_parts(p.get("content"))
            if role in ("developer", "system"):
                return self.mk(ln, obj, "system", "meta", native, text=text, **kw)
            if role == "user":
                return self.mk(ln, obj, "user", self.user_kind(p, text, in_replacement), native, text=text, **kw)
            if role == "assistant":
                md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
                kind = "meta" if md.get("compaction_output") else "message"
                return self.mk(ln, obj, "assistant", kind, native, text=text, **kw)
            self.report.unknown_kinds[f"{native}/{role}"] += 1
            rec = self.mk(ln, obj, "harness", "unknown", f"{native}/{role}", text=text, **kw)
            rec.raw = obj
            return rec
        if pt == "reasoning":
            text = _text_parts(p.get("summary"))
            if text is None:
                text = _text_parts(p.get("content"))
            return self.mk(ln, obj, "assistant", "reasoning", native, text=text, **kw)
        if pt in CALL_TYPES:
            name = p.get("name") if isinstance(p.get("name"), str) else CALL_TYPES[pt]
            if pt == "function_call":
                args = p.get("arguments")
                inp: Any = args
                if isinstance(args, str):
                    try:
                        inp = orjson.loads(args)
                    except orjson.JSONDecodeError:
                        inp = args
                text = args if isinstance(args, str) else None
            elif pt == "custom_tool_call":
                inp = p.get("input")
                text = inp if isinstance(inp, str) else None
            else:
                inp = p.get("action") if "action" in p else p.get("arguments")
                text = None
            cid = p.get("call_id") if isinstance(p.get("call_id"), str) else None
            return self.mk(ln, obj, "assistant", "tool_call", native, tool_name=name, tool_input=inp,
                           call_id=cid, text=text, **kw)
        if pt in OUTPUT_TYPES:
            text = _output_text(p.get("output"))
            if pt == "tool_search_output":
                names = [t.get("name") for t in p.get("tools") or [] if isinstance(t, dict)]
                text = ", ".join(str(n) for n in names) if names else None
            cid = p.get("call_id") if isinstance(p.get("call_id"), str) else None
            rec = self.mk(ln, obj, "tool", "tool_result", native, call_id=cid, text=text, **kw)
            rec.truncated = bool(text) and TRUNCATED_TEXT.search(text) is not None
            return rec
        if pt in ("compaction", "context_compaction", "additional_tools", "compaction_trigger"):
            return self.mk(ln, obj, "harness", "meta", native, **kw)
        self.report.unknown_kinds[native] += 1
        rec = self.mk(ln, obj, "harness", "unknown", native, **kw)
        rec.raw = obj
        return rec

    def user_kind(self, p: dict, text: str | None, in_replacement: bool) -> str:
        pas = p.get("internal_chat_message_metadata_passthrough")
        prov = None
        if isinstance(pas, dict):
            md = pas.get("content_item_metadata")
            if isinstance(md, list):
                prov = [m.get("provenance", {}).get("type") for m in md
                        if isinstance(m, dict) and isinstance(m.get("provenance"), dict)]
            if not prov and isinstance(pas.get("content_item_kinds"), list):
                prov = ["user" if k == "user.text" else k for k in pas["content_item_kinds"]]
        typed = ("user" in prov) if prov else not (text or "").lstrip().startswith(SYNTHETIC_USER_PREFIXES)
        if not typed or (in_replacement and not prov):
            return "meta"
        return "message" if self.subagent else "prompt"

    def response_item(self, ln, obj, p: dict) -> None:
        rec = self.convert(ln, obj, p, None)
        pt = p.get("type")
        slot = _Slot(rec)
        pas = p.get("internal_chat_message_metadata_passthrough")
        if rec.kind == "prompt" and not (isinstance(pas, dict) and pas.get("turn_id")) and not self.turn_by_id:
            # a file without turn ids (older releases): a turn opens at each prompt
            yield_turn = self.n_turns + 1
            self.n_turns = yield_turn
            self.turn = rec.turn = yield_turn
        if pt in ("message", "reasoning"):
            self.original(rec, p.get("id"), "reasoning" if pt == "reasoning" else rec.role, rec.text)
            if rec.role == "assistant" and pt == "message":
                if "ordinal" not in obj and self.unclaimed is not None:
                    # older releases write the response's token_count before its items
                    rec.tokens, self.unclaimed = self.unclaimed, None
                elif "ordinal" in obj or self.seen_usage_record:
                    slot.hold = "usage"  # carries its response's usage once the usage record comes
                    self.awaiting_usage.append(slot)
        elif rec.kind == "tool_call" and rec.call_id:
            self.call_loc[rec.call_id] = (rec.locator, rec.kind)
            for e, key in self.echoes:
                if key == ("call", rec.call_id):
                    e.rec.copy_of, e.hold = rec.locator, None
                    self.echoes.remove((e, key))
                    break
            self.calls[rec.call_id] = slot
            slot.hold = "outcome"
            if rec.call_id in self.early_outcome:
                self.outcome(rec.call_id, *self.early_outcome.pop(rec.call_id))
        elif rec.kind == "tool_result" and rec.call_id:
            self.output_loc[rec.call_id] = rec.locator
            cs = self.calls.get(rec.call_id)
            if cs is not None and not cs.outcome:
                code = _exit_from_output(rec.text)
                if code is not None and cs.rec.exit_code is None:
                    cs.rec.exit_code = code
                    cs.rec.is_error = code != 0
                elif cs.rec.tool_name == "apply_patch" and (rec.text or "").startswith(PATCH_REJECTED):
                    cs.rec.is_error = True  # the client refused the patch before applying it
                if cs.rec.tool_name == "apply_patch" and code == 0 and "Success." in (rec.text or "") \
                        and not cs.rec.file_changes:
                    # no FileChange/patch_apply_end was written (0.50.0): the patch the client reports
                    # it applied is the record of the change
                    patch_text = cs.rec.tool_input if isinstance(cs.rec.tool_input, str) else (
                        cs.rec.tool_input.get("input") if isinstance(cs.rec.tool_input, dict) else None)
                    cs.rec.file_changes = changes_from_patch(patch_text)
                if cs.hold:
                    cs.output_seen = True
                    cs.deadline = ln.no + OUTCOME_WINDOW
            if cs is not None:
                if rec.tool_name is None:
                    rec.tool_name = cs.rec.tool_name  # the output names no tool: its call does
                _merge_outcome(rec, cs.rec)
                if cs.hold:  # the outcome may still come: it reaches this result too (held behind its call)
                    self.results.setdefault(rec.call_id, []).append(rec)
            else:
                code = _exit_from_output(rec.text)
                if code is not None:
                    rec.exit_code, rec.is_error = code, code != 0
        self.push(slot)

    # ------------------------------------------------------------------ events
    def event(self, ln, obj, p: dict) -> Iterator[Record]:
        et = p.get("type")
        native = f"event_msg/{et}"
        if et in ("task_started", "turn_started"):
            yield from self.release(ln.no, force=True)
            tid = p.get("turn_id")
            if isinstance(tid, str) and tid:
                self.turn = self.turn_of(tid)
                self.turn_by_id = True
        if et == "token_count":
            self.token_count(ln, obj, p)
            return
        if et in META_EVENTS:
            text = p.get("reason") if et == "turn_aborted" else (
                p.get("message") if et in ("error", "warning") else None)
            self.push(_Slot(self.mk(ln, obj, "harness", "meta", native, turn=self.turn_of(p.get("turn_id")),
                                    text=text if isinstance(text, str) else None)))
            if et in TURN_END_EVENTS:
                self.turn_by_id = False
                yield from self.release(ln.no, force=True)
            return
        if et == "item_completed":
            self.item_completed(ln, obj, p)
            return
        if et == "user_message":
            text = p.get("message") if isinstance(p.get("message"), str) else None
            rec = self.mk(ln, obj, "user", "message" if self.subagent else "prompt", native, text=text)
            self.push(self.echo(ln, obj, rec, None, "user", text))
        elif et == "agent_message":
            text = p.get("message") if isinstance(p.get("message"), str) else None
            self.push(self.echo(ln, obj, self.mk(ln, obj, "assistant", "message", native, text=text),
                                None, "assistant", text))
        elif et in ("agent_reasoning", "agent_reasoning_raw_content"):
            text = p.get("text") if isinstance(p.get("text"), str) else None
            self.push(self.echo(ln, obj, self.mk(ln, obj, "assistant", "reasoning", native, text=text),
                                None, "reasoning", text))
        elif et in ("exec_command_end", "patch_apply_end", "mcp_tool_call_end", "web_search_end",
                    "image_generation_end"):
            cid = p.get("call_id")
            if et == "exec_command_end":
                self.outcome(cid, exit_code=_int(p.get("exit_code")))
            elif et == "patch_apply_end":
                ok = p.get("success")
                self.outcome(cid, is_error=(not ok) if isinstance(ok, bool) else None,
                             changes=_file_changes(p.get("changes")) if ok is not False else ())
            elif et == "mcp_tool_call_end":
                res = p.get("result")
                err = isinstance(res, dict) and ("Err" in res or res.get("isError") is True
                                                 or (isinstance(res.get("Ok"), dict) and res["Ok"].get("isError") is True))
                self.outcome(cid, is_error=err if isinstance(res, dict) else None)
            self.push(self.call_echo(ln, obj, native, cid))
        elif et == "context_compacted":
            rec = self.mk(ln, obj, "harness", "meta", native)
            rec.copy_of = self.last_compacted
            self.push(_Slot(rec))
        else:
            self.push(_Slot(self.unknown(ln, obj, native)))

    def call_echo(self, ln, obj, native, cid) -> _Slot:
        """The UI copy of a call (its outcome already merged into the call record)."""
        rec = self.mk(ln, obj, "assistant", "tool_call", native, call_id=cid if isinstance(cid, str) else None)
        slot = _Slot(rec)
        hit = self.call_loc.get(cid) if isinstance(cid, str) else None
        if hit is not None:
            rec.copy_of = hit[0]
        elif isinstance(cid, str):
            slot.hold, slot.deadline = "original", ln.no + ECHO_WINDOW
            self.echoes.append((slot, ("call", cid)))
        return slot

    def item_completed(self, ln, obj, p: dict) -> None:
        item = p.get("item")
        if not isinstance(item, dict):
            self.push(_Slot(self.unknown(ln, obj, "event_msg/item_completed/<no item>")))
            return
        it = item.get("type")
        native = f"event_msg/item_completed/{it}"
        iid = item.get("id")
        turn = self.turn_of(p.get("turn_id"))
        if it == "UserMessage":
            text = _text_parts(item.get("content"))
            rec = self.mk(ln, obj, "user", "message" if self.subagent else "prompt", native, text=text, turn=turn)
            self.push(self.echo(ln, obj, rec, None, "user", text))
        elif it == "AgentMessage":
            text = _text_parts(item.get("content"))
            self.push(self.echo(ln, obj, self.mk(ln, obj, "assistant", "message", native, text=text, turn=turn),
                                iid, "assistant", text))
        elif it == "Reasoning":
            st = item.get("summary_text")
            text = "\n".join(x for x in st if isinstance(x, str)) if isinstance(st, list) else None
            self.push(self.echo(ln, obj, self.mk(ln, obj, "assistant", "reasoning", native, text=text, turn=turn),
                                iid, "reasoning", text))
        elif it == "CommandExecution":
            self.outcome(iid, exit_code=_int(item.get("exit_code")),
                         is_error=None if _int(item.get("exit_code")) is not None else (
                             True if item.get("status") in ("failed", "declined") else None))
            self.push(self.call_echo(ln, obj, native, iid))
        elif it == "FileChange":
            status = item.get("status")
            failed = status in ("failed", "declined")
            self.outcome(iid, is_error=True if failed else (False if status == "completed" else None),
                         changes=() if failed else _file_changes(item.get("changes")))
            self.push(self.call_echo(ln, obj, native, iid))
        elif it in ("CollabAgentToolCall", "McpToolCall", "WebSearch", "ImageGeneration", "DynamicToolCall"):
            status = item.get("status")
            if status in ("failed", "completed"):
                self.outcome(iid, is_error=status == "failed")
            self.push(self.call_echo(ln, obj, native, iid))
        elif it == "ContextCompaction":
            rec = self.mk(ln, obj, "harness", "meta", native, turn=turn)
            rec.copy_of = self.last_compacted
            self.push(_Slot(rec))
        elif it in ("Plan", "Sleep", "TodoList"):
            self.push(_Slot(self.mk(ln, obj, "harness", "meta", native, turn=turn)))
        else:
            self.push(_Slot(self.unknown(ln, obj, native)))

    # ------------------------------------------------------------------ tokens
    def settle_usage(self, tok: Tokens | None) -> None:
        """Give the assistant messages of the response that just closed its usage (the same Tokens,
        the same dedup_key: one response, counted once however many records repeat it)."""
        for s in self.awaiting_usage:
            if tok is not None:
                s.rec.tokens = tok
            if s.hold == "usage":
                s.hold = None
        self.awaiting_usage.clear()

    def token_count(self, ln, obj, p: dict) -> None:
        info = p.get("info") if isinstance(p.get("info"), dict) else None
        total_u = info.get("total_token_usage") if info else None
        total = _int(total_u.get("total_tokens")) if isinstance(total_u, dict) else None
        self.push(_Slot(self.mk(ln, obj, "harness", "meta", "event_msg/token_count",
                                tokens=tokens_of(total_u, None, cumulative=True))))
        if total is None:
            return
        if self.last_total is not None and total < self.last_total:
            self.run_no += 1  # a new client process started its running total again (0.50.0 at a resume)
        tkey = (self.run_no, total)
        if self.pending_usage:
            self.pending_usage = False
            self.total_key[tkey] = self.last_response_key
        elif total != self.last_total and tkey not in self.total_key and info is not None:
            key = f"codex:{self.sid}:run{self.run_no}:total:{total}"
            self.total_key[tkey] = key
            last = info.get("last_token_usage")
            if isinstance(last, dict):
                tok = tokens_of(last, key)
                if self.awaiting_usage:
                    self.settle_usage(tok)
                else:
                    self.unclaimed = tok
                rec = self.mk(ln, obj, "harness", "meta", "event_msg/token_count/last_token_usage",
                              locator=f"L{ln.no}#1", tokens=tok)
                self.push(_Slot(rec))
        self.last_total = total

    # ------------------------------------------------------------------ compaction
    def compacted(self, ln, obj, p: dict) -> None:
        msg = p.get("message") if isinstance(p.get("message"), str) else None
        head = self.mk(ln, obj, "harness", "meta", "compacted", text=msg)
        self.push(_Slot(head))
        self.last_compacted = head.locator
        hist = p.get("replacement_history")
        if not isinstance(hist, list):
            return
        for i, item in enumerate(hist, 1):
            loc = f"L{ln.no}#{i}"
            if not isinstance(item, dict):
                self.report.unknown_kinds["compacted/replacement_history/<not an object>"] += 1
                self.push(_Slot(Record(provider="codex", session_id=self.sid, locator=loc, role="harness",
                                       kind="unknown", native="compacted/replacement_history/<not an object>",
                                       path=str(self.path), line=ln.no, turn=self.turn, raw=item)))
                continue
            rec = self.convert(ln, obj, item, loc, in_replacement=True)
            rec.native = "compacted/replacement_history/" + str(item.get("type"))
            if self.raw:
                rec.raw = item
            hit = None
            if isinstance(item.get("id"), str):
                hit = self.by_id.get(item["id"])
            if hit is None and rec.call_id:
                hit = self.call_loc.get(rec.call_id) if rec.kind == "tool_call" else (
                    (self.output_loc[rec.call_id], "tool_result") if rec.call_id in self.output_loc else None)
            if hit is None and rec.text:
                hit = self.text_loc.get(("reasoning" if rec.kind == "reasoning" else rec.role, rec.text.strip()))
            if hit is not None:
                rec.copy_of, rec.kind = hit[0], hit[1]
            elif msg is not None and rec.text is not None and rec.text.strip() == msg.strip():
                rec.copy_of, rec.kind = head.locator, "meta"
            self.push(_Slot(rec))


def read_rollout(ref: SessionRef, report: ReadReport, *, raw: bool = False) -> Iterator[Record]:
    yield from _Reader(ref, report, raw).run()
