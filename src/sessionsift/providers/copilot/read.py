"""How a GitHub Copilot CLI session reads as records in the shared shape (measured with 1.0.102; the event
vocabulary is the client's own ``schemas/session-events.schema.json``, unpacked with its bundle).

``events.jsonl`` is one event a line, ``{"type", "data", "id", "timestamp", "parentId"[, "agentId"]}``,
appended as the session runs (``--continue``/``--resume`` append a ``session.resume`` and go on in the same
file; nothing is rewritten or replayed). The schema marks 85 event types ephemeral (never on disk: streaming
deltas, ``assistant.usage``, ``tool.execution_progress``, ...) and 78 durable; every durable type is mapped
here, anything else is ``unknown`` (counted under its type).

- The main session is the events without ``agentId``; a subagent (child ref) is the events with its
  ``agentId``.
- ``user.message`` is a ``prompt`` only when a person typed it: in the main lane, with no ``source`` (set for
  an inter-agent prompt ``agent-<id>``, a skill's hidden injection ``skill-…``) and not an autopilot
  continuation; otherwise ``meta`` (role user), and in a subagent the task it was given (``message``, role
  user; its turn 1). ``text`` is ``content`` (what was typed; ``transformedContent`` adds the client's
  ``<current_datetime>`` wrapper).
- ``assistant.message``: its ``reasoningText`` (``reasoning``), ``content`` (``message``) and each of
  ``toolRequests`` (``tool_call``: ``name``, ``arguments``, ``toolCallId``), ``L<n>#<i>`` when a line gives
  more than one record. ``tool.execution_start`` repeats a request (same call id and arguments): a copy of
  it (an original when no request named the call, e.g. a notification's own call id).
- ``tool.execution_complete`` -> ``tool_result``: ``text`` = ``result.content`` (what the model read) or
  ``error.message``; ``is_error`` = not ``success`` or a non-zero ``shellExecution.exitCode`` (the client
  records a command that exits 3 as ``success: true``); ``exit_code`` = ``shellExecution.exitCode`` (else the
  ``<shellId: N completed with exit code X>`` trailer of the text). ``truncated`` when the text is the
  client's ``Output too large to read at once (… KB). Saved to: <TMPDIR>/…`` preview (the saved file is
  gone once the client exits). File changes: ``fileEdits`` (``create`` -> ``create`` with the call's
  ``file_text`` as ``new_content``, a complete view; ``edit`` -> ``update`` with the ``detailedContent`` diff).
- ``session.usage_record`` (one per model call: ``usage.inputTokens`` (the prompt, cache reads included),
  ``outputTokens`` (reasoning included), ``cacheReadTokens``, ``cacheWriteTokens``, ``reasoningTokens``,
  ``accounting: {sourceSessionId, sequence, usageId}``) -> ``meta`` with :class:`Tokens` (``dedup_key`` =
  ``<sourceSessionId>:<sequence>``, the identity the schema says a live usage event shares). The call it
  paid for is the next ``assistant.message`` of the same agent (same ``apiCallId``): both carry
  ``message_id`` so usage does not count that message as unpaid. ``session.compaction_complete`` carries the
  compaction call's usage (``compactionTokensUsed``; no usage record is written for it) and the summary.
- ``system.message`` -> ``meta`` role system; ``system.notification`` (delivered to the model as a user
  turn) -> ``meta`` role user; ``tool.user_requested`` -> ``tool_call`` role user; every other durable type
  -> ``meta`` role harness (``session.error`` sets ``is_error``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from ...read.lines import ReadStats, iter_lines, parse_numbered
from ..base import FileChange, Problem, ReadReport, Record, SessionRef, Tokens

PROVIDER = "copilot-cli"

DURABLE = frozenset("""
abort assistant.fusion_phase_completed assistant.fusion_phase_failed assistant.message assistant.reasoning
assistant.turn_end assistant.turn_start external_tool.requested hook.end hook.start human_response.recorded
mcp.oauth_recovery_completed permission.assentDetected permission.carriedForward permission.completed
permission.contextualAuthorization permission.messageAuthorization permission.messageAuthorizationDegraded
permission.messageAuthorizationRead permission.requested session.auto_mode_resolved
session.autopilot_objective_changed session.binary_asset session.canvas.recorded session.canvas.removed
session.compaction_complete session.compaction_start session.completion_receipt session.context_changed
session.context_cleared session.error session.fusion_change_checkpoint session.fusion_commit_started
session.fusion_completed session.fusion_handoff session.fusion_resolved session.fusion_route_failed
session.handoff session.info session.mode_changed session.mode_notice_delivered session.model_change
session.model_deselected session.permission_recovery session.permissions_changed session.plan_changed
session.remote_steerable_changed session.request_body_compression_disabled session.resume
session.schedule_cancelled session.schedule_created session.schedule_rearmed session.session_limits_changed
session.shutdown session.start session.task_complete session.truncation session.usage_checkpoint
session.usage_record session.warning session.workspace_file_changed skill.context_delivered
skill.context_delivered_ref skill.invoked skill.invoked_ref subagent.completed subagent.configured
subagent.deselected subagent.failed subagent.selected subagent.started system.message system.notification
tool.execution_complete tool.execution_start tool.user_requested tool_search.activated user.message
""".split())
"""The event types 1.0.102's schema does not mark ephemeral: what can be on disk."""

TOO_LARGE = "Output too large to read at once ("
TRUNCATION_MARKER = rb"Output too large to read at once \("
_TRAILER = re.compile(r"\n?<shellId: [^>]* completed with exit code (-?\d+)>\s*$")
_TEXT_OF = {"session.error": "message", "session.warning": "message", "session.info": "message",
            "abort": "reason", "session.task_complete": "summary", "session.compaction_complete": "summaryContent",
            "system.message": "content", "system.notification": "content", "session.plan_changed": "operation",
            "session.title_changed": "title", "skill.invoked": "name", "session.mode_changed": "newMode"}


def _d(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _s(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def tokens_of(u: dict, key: str | None) -> Tokens | None:
    """A usage object (``session.usage_record.data.usage``, ``compactionTokensUsed``) -> :class:`Tokens`.
    ``inputTokens`` counts the whole prompt, cache reads included (measured: the mock's ``prompt_tokens``
    1000 with 200 cached is recorded as ``inputTokens`` 1000, ``cacheReadTokens`` 200), so ``input`` is the
    difference; ``outputTokens`` is the completion, reasoning included. A field the record lacks stays None."""
    inp, out = _int(u.get("inputTokens")), _int(u.get("outputTokens"))
    cr, cw, rea = _int(u.get("cacheReadTokens")), _int(u.get("cacheWriteTokens")), _int(u.get("reasoningTokens"))
    if inp is None and out is None:
        return None
    net = inp - cr if inp is not None and cr is not None and cr <= inp else inp
    total = inp + out if inp is not None and out is not None else None
    return Tokens(input=net, output=out, cache_read=cr, cache_write=cw, reasoning=rea, total=total, dedup_key=key)


def shell_exit(result: dict, text: str | None) -> int | None:
    code = _int(_d(result.get("shellExecution")).get("exitCode"))
    if code is None and text:
        m = _TRAILER.search(text)
        if m:
            code = int(m.group(1))
    return code


class Reader:
    def __init__(self, ref: SessionRef, report: ReadReport, raw: bool, views: dict | None = None):
        self.views = views if views is not None else {}
        """(path, locator of a view result) -> the whole file it proves (:func:`view_whole`), for read_view."""
        self.ref = ref
        self.report = report
        self.raw = raw
        self.path = Path(ref.paths[0])
        self.agent = ref.session_id if ref.parent_session_id else None
        """The agentId whose events this ref reads (None: the main session's, those without one)."""
        self.turn = 0
        self.calls: dict[str, tuple[str, str | None, Any]] = {}
        """call id -> (locator of its first record, tool name, arguments)."""
        self.pending_usage: str | None = None
        self.saw_usage = False
        """Whether the log held a ``session.usage_record`` so far (any agent's): releases before them
        (1.0.92, measured) record usage only as the running totals of ``session.shutdown``."""
        self.run = 0
        """The client run the current event belongs to (``session.start`` opens run 1, each
        ``session.resume`` the next)."""
        self.prev_totals: dict[str, dict] = {}
        self.count = 0
        self._line: tuple[int, int, int] = (0, 0, 0)
        self._k = 0
        self._n = 1

    def rec(self, role: str, kind: str, native: str, instant: str | None, obj: Any, **kw) -> Record:
        no, off, length = self._line
        loc = f"L{no}" if self._n == 1 else f"L{no}#{self._k}"
        self._k += 1
        self.count += 1
        if kw.get("copy_of"):
            self.report.duplicates += 1
        return Record(PROVIDER, self.ref.session_id, loc, role, kind, native, path=str(self.path), line=no,  # type: ignore[arg-type]
                      offset=off, length=length, instant=instant, turn=self.turn or None,
                      raw=obj if self.raw else None, **kw)

    def read(self) -> Iterator[Record]:
        stats = ReadStats()
        try:
            for line in iter_lines(self.path, stats=stats):
                obj = parse_numbered(line, self.path, stats)
                if obj is None:
                    continue
                typ = obj.get("type")
                if typ == "session.usage_record":
                    self.saw_usage = True
                elif typ in ("session.start", "session.resume"):
                    self.run += 1
                aid = obj.get("agentId")
                if (aid or None) != self.agent:
                    continue
                self._line = (line.no, line.offset, len(line.raw))
                self._k = 0
                yield from self.event(obj)
        except OSError as exc:
            self.report.problems.append(Problem(str(self.path), f"unreadable: {exc.strerror or exc}"))
        r = self.report
        r.add_read(self.path, stats, files=1)
        r.records += self.count

    # ------------------------------------------------------------------ events
    def event(self, o: dict) -> Iterator[Record]:
        t = o.get("type")
        d = _d(o.get("data"))
        ts = _s(o.get("timestamp"))
        typ = t if isinstance(t, str) else "(no type)"
        if typ == "user.message":
            self._n = 1
            yield from self.user(d, ts, o)
        elif typ == "assistant.message":
            yield from self.assistant(d, ts, o)
        elif typ == "assistant.reasoning":
            self._n = 1
            yield self.rec("assistant", "reasoning", typ, ts, o, text=_s(d.get("content")))
        elif typ == "tool.execution_start":
            self._n = 1
            cid = _s(d.get("toolCallId"))
            seen = self.calls.get(cid or "")
            r = self.rec("assistant", "tool_call", typ, ts, o, tool_name=_s(d.get("toolName")),
                         tool_input=d.get("arguments"), call_id=cid, model=_s(d.get("model")),
                         copy_of=seen[0] if seen else None)
            if cid and not seen:
                self.calls[cid] = (r.locator, r.tool_name, r.tool_input)
            yield r
        elif typ == "tool.user_requested":
            self._n = 1
            cid = _s(d.get("toolCallId"))
            r = self.rec("user", "tool_call", typ, ts, o, tool_name=_s(d.get("toolName")),
                         tool_input=d.get("arguments"), call_id=cid)
            if cid:
                self.calls.setdefault(cid, (r.locator, r.tool_name, r.tool_input))
            yield r
        elif typ == "tool.execution_complete":
            self._n = 1
            yield self.result(d, ts, o)
        elif typ == "session.usage_record":
            self._n = 1
            u = _d(d.get("usage"))
            acc = _d(u.get("accounting"))
            key = (f"{acc['sourceSessionId']}:{acc['sequence']}" if _s(acc.get("sourceSessionId"))
                   and _int(acc.get("sequence")) is not None else _s(acc.get("usageId")) or _s(u.get("apiCallId")))
            mid = _s(u.get("apiCallId")) or f"usage:{self._line[0]}"
            self.pending_usage = mid
            yield self.rec("harness", "meta", typ, ts, o, tokens=tokens_of(u, key), model=_s(u.get("model")),
                           message_id=mid)
        elif typ == "session.compaction_complete":
            self._n = 1
            u = _d(d.get("compactionTokensUsed"))
            att = _s(d.get("compactionAttemptId"))
            tok = tokens_of(u, f"compaction:{att or self._line[0]}") if u else None
            yield self.rec("harness", "meta", typ, ts, o, text=_s(d.get("summaryContent")), tokens=tok,
                           model=_s(u.get("model")), is_error=(d.get("success") is False) or None)
        elif typ == "session.shutdown":
            yield from self.shutdown(d, ts, o)
        elif typ == "system.message":
            self._n = 1
            yield self.rec("system", "meta", typ, ts, o, text=_s(d.get("content")))
        elif typ == "system.notification":
            self._n = 1
            yield self.rec("user", "meta", typ, ts, o, text=_s(d.get("content")))
        elif typ in DURABLE:
            self._n = 1
            field = _TEXT_OF.get(typ)
            yield self.rec("harness", "meta", typ, ts, o, text=_s(d.get(field)) if field else None,
                           is_error=True if typ == "session.error" else None)
        else:
            self._n = 1
            self.report.unknown_kinds[typ] += 1
            yield self.rec("harness", "unknown", typ, ts, o)

    def shutdown(self, d: dict, ts, o) -> Iterator[Record]:
        """``session.shutdown`` (one per client run: the session's usage so far per model in
        ``modelMetrics.<model>.usage``, code changes, token counts of the context): ``meta``. In a log with
        no usage record (releases before them) each model's increment over the previous shutdown's totals
        is this run's usage: one more record ``L<n>#<i>`` per model with :class:`Tokens` (``dedup_key``
        ``run:<line>:<model>``, ``message_id`` ``run:<run>``, which the run's assistant messages carry). A
        total lower than the one before starts over (taken whole). A run killed before its shutdown left
        its usage nowhere."""
        incs = []
        if not self.saw_usage:
            for model, m in sorted(_d(d.get("modelMetrics")).items()):
                u = _d(_d(m).get("usage"))
                prev = self.prev_totals.get(model, {})
                keys = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")
                cur = {k: _int(u.get(k)) for k in keys}
                if any(cur[k] is not None and _int(prev.get(k)) is not None and cur[k] < prev[k] for k in keys):
                    prev = {}
                inc = {k: (v - (_int(prev.get(k)) or 0) if v is not None else None) for k, v in cur.items()}
                self.prev_totals[model] = cur
                if any(v for v in inc.values()):
                    incs.append((model, inc))
        self._n = 1 + len(incs)
        yield self.rec("harness", "meta", "session.shutdown", ts, o)
        for model, inc in incs:
            yield self.rec("harness", "meta", "session.shutdown#run_usage", ts, o, model=model,
                           tokens=tokens_of(inc, f"run:{self._line[0]}:{model}"), message_id=f"run:{self.run}")

    def user(self, d: dict, ts, o) -> Iterator[Record]:
        text = _s(d.get("content"))
        if self.agent is not None:
            if self.turn == 0:
                self.turn = 1
            yield self.rec("user", "message", "user.message", ts, o, text=text)
        elif d.get("source") or d.get("isAutopilotContinuation"):
            yield self.rec("user", "meta", "user.message", ts, o, text=text)
        else:
            self.turn += 1
            yield self.rec("user", "prompt", "user.message", ts, o, text=text)

    def assistant(self, d: dict, ts, o) -> Iterator[Record]:
        reqs = [r for r in d.get("toolRequests") or [] if isinstance(r, dict)]
        reasoning = _s(d.get("reasoningText"))
        content = _s(d.get("content"))
        model = _s(d.get("model"))
        mid = _s(d.get("apiCallId")) or self.pending_usage
        if self.pending_usage is None and not self.saw_usage:
            mid = f"run:{self.run}"  # paid by this run's share of the running totals (shutdown)
        self.pending_usage = None
        items = (1 if reasoning else 0) + (1 if content or not reqs else 0) + len(reqs)
        self._n = items
        if reasoning:
            yield self.rec("assistant", "reasoning", "assistant.message#reasoning", ts, o, text=reasoning,
                           model=model, message_id=mid)
        if content or not reqs:
            yield self.rec("assistant", "message", "assistant.message", ts, o, text=content or "", model=model,
                           message_id=mid)
        for r in reqs:
            cid = _s(r.get("toolCallId"))
            rr = self.rec("assistant", "tool_call", "assistant.message#toolRequest", ts, o, tool_name=_s(r.get("name")),
                          tool_input=r.get("arguments"), call_id=cid, model=model, message_id=mid)
            if cid:
                self.calls.setdefault(cid, (rr.locator, rr.tool_name, rr.tool_input))
            yield rr

    def result(self, d: dict, ts, o) -> Record:
        cid = _s(d.get("toolCallId"))
        call = self.calls.get(cid or "")
        name = call[1] if call else None
        res = _d(d.get("result"))
        err = _d(d.get("error"))
        text = _s(res.get("content"))
        if text is None and err:
            text = _s(err.get("message"))
        code = shell_exit(d, text)
        success = d.get("success")
        is_error = True if success is False else (True if code not in (None, 0) else (False if success is True else None))
        changes: tuple[FileChange, ...] = ()
        if success is True:
            changes = file_changes(d, res, call)
        r = self.rec("tool", "tool_result", "tool.execution_complete", ts, o, text=text, call_id=cid,
                     tool_name=name, exit_code=code, is_error=is_error, file_changes=changes,
                     model=_s(d.get("model")), truncated=bool(text and text.startswith(TOO_LARGE)))
        if name == "view" and success is True:
            got = view_whole(_d(call[2]) if call else {}, res)
            if got is not None:
                self.views[(str(self.path), r.locator)] = got
        return r


def file_changes(d: dict, res: dict, call) -> tuple[FileChange, ...]:
    name, args = (call[1], _d(call[2])) if call else (None, {})
    edits = [e for e in d.get("fileEdits") or [] if isinstance(e, dict) and _s(e.get("path"))]
    if not edits and name in ("create", "edit") and _s(args.get("path")):
        edits = [{"path": args["path"], "kind": "create" if name == "create" else "edit"}]
    out = []
    diff = _s(res.get("detailedContent"))
    for e in edits:
        kind = e.get("kind")
        path = e["path"]
        if kind == "create":
            content = _s(args.get("file_text")) if name == "create" and args.get("path") == path else None
            out.append(FileChange(path, "create", new_content=content, diff=diff if len(edits) == 1 else None))
        elif kind == "edit":
            out.append(FileChange(path, "update", diff=diff if len(edits) == 1 else None))
        elif kind == "delete":
            out.append(FileChange(path, "delete"))
        else:
            out.append(FileChange(path, "unknown", diff=diff if len(edits) == 1 else None))
    return tuple(out)


_HUNK = re.compile(r"^@@ -1,(\d+) \+1,(\d+) @@$")


def view_whole(args: dict, res: dict) -> tuple[str, str, bool] | None:
    """The whole file a successful ``view`` call read, when its record proves it: the call names only
    ``path`` (no ``view_range``), and the client's two renderings of what it read agree on every line:
    ``result.content`` (the file's text as read, no line numbers) and ``result.detailedContent``, a unified
    diff of the file against itself whose one hunk ``@@ -1,N +1,N @@`` covers lines 1..N, N being the count
    of ``content.split("\\n")`` (so a final newline shows as a last empty line: measured on ``a\\nb``,
    ``x\\n\\n`` and a 399-line file). A directory (``create file mode``) or a refusal (``File too large to
    read at once``) has no such hunk."""
    if set(args) - {"path"}:
        return None
    content, dc = _s(res.get("content")), _s(res.get("detailedContent"))
    if content is None or dc is None or "\ncreate file mode" in dc:
        return None
    lines = dc.split("\n")
    hunks = [i for i, ln in enumerate(lines) if ln.startswith("@@")]
    if len(hunks) != 1:
        return None
    m = _HUNK.match(lines[hunks[0]])
    want = content.split("\n")
    if not m or m.group(1) != m.group(2) or int(m.group(1)) != len(want):
        return None
    body = lines[hunks[0] + 1:]
    if body and body[-1] == "":
        body = body[:-1]
    if len(body) != len(want) or any(not b.startswith(" ") or b[1:] != w for b, w in zip(body, want)):
        return None
    return (content, "Copilot CLI view output: the file's text as read, every line of it checked against the "
                     "client's own one-hunk diff of lines 1..N (N = the lines of the text)", True)
