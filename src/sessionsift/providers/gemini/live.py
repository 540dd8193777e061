"""Gemini CLI's live state, from what the client writes (read in 0.61.0's ``ChatRecordingService``
and ``GeminiChat``, measured with the real client):

- **the chat file** (an append log, replayed as the reader does: last write of an id wins,
  ``$set.messages`` replaces the list, ``$rewindTo`` cuts it): a ``user`` message is written when a
  prompt (or a tool result, as ``functionResponse`` parts) is sent; the ``gemini`` message only when
  the model's reply has streamed in, with its text as ``content`` ("" for a reply that only calls
  tools); its ``toolCalls`` are attached only once the calls COMPLETE (``recordCompletedToolCalls``).
  So the last message says: a prompt or tool results awaiting the model; a reply with no text and
  no tool call recorded (its calls are running); a reply with text and no tool call (the end of
  the turn, or a reply whose calls still run); a subagent's ``complete_task`` call (it finished).
- **the processes**: Gemini CLI runs as ``node .../gemini.js`` in the project directory; the chat
  file is opened per write (``appendFileSync``), so no process holds it and which session a process
  serves is not on disk: a process in the project is evidence for every session of that project,
  none is proof that none of them runs.

Invisible: a tool call waiting for approval and a question to the user (``ask_user``) leave no
record (tool calls are recorded when they complete). The shell tool's environment holds
``GEMINI_CLI=1`` and no session id; only hook commands get ``GEMINI_SESSION_ID``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..liveness import ChildAgent, LiveState, WhoamiClaim, children_rung, decide, ev

FINISH_TOOLS = frozenset({"complete_task"})
"""A subagent's last call: the task is done (its result is the call's output)."""
HOOK_ENV = "GEMINI_SESSION_ID"
TOOL_ENV = "GEMINI_CLI"
INVISIBLE = [
    "waiting on a human: a tool call waiting for approval, or a question to the user, leaves no record (Gemini "
    "CLI records tool calls only once they complete), so it looks like a running call",
    "which session a process serves: the chat file is opened for each write, so no process holds it; a Gemini "
    "CLI process is matched to a session by its project directory only",
]
PROVES = {
    "chat file": "whether the last turn is open (a prompt or tool results awaiting the model, calls running) or "
                 "ended, from the last message the client wrote",
    "processes": "whether a Gemini CLI process works in this session's project (none: nothing can write this "
                 "session any more)",
    "children": "subagent sessions still running",
}


@dataclass
class Tail:
    state: str
    """awaiting-model | mid-tool | eot | finished | error | empty | unreadable | other"""
    detail: str
    last_line: int | None = None
    last_at: str | None = None
    last_text: str | None = None
    kind: str | None = None
    agents: list[dict] = field(default_factory=list)
    """invoke-agent calls of the session: {call_id, name, agent_id, args, status, timestamp, line, result}."""
    size: int | None = None
    mtime: float | None = None


def _messages(path: Path) -> tuple[list[tuple[int, dict]], str | None, str | None]:
    """The conversation as the client holds it (line of the last write, message), the header's
    kind, and an error string when the file cannot be read."""
    order: dict[str, tuple[int, dict]] = {}
    kind = None
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return [], None, "chat file absent"
    except OSError as exc:
        return [], None, f"unreadable: {exc.strerror or exc}"
    if path.suffix == ".json":  # a legacy whole-file session (written whole, never live)
        try:
            o = orjson.loads(data)
        except orjson.JSONDecodeError:
            return [], None, "legacy chat file is not JSON"
        msgs = o.get("messages") if isinstance(o, dict) else None
        return [(1, m) for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else [], \
            (o.get("kind") if isinstance(o, dict) else None), None
    end = data.rfind(b"\n") + 1  # a torn final line is no record yet
    for no, raw in enumerate(data[:end].split(b"\n")[:-1], 1):
        if not raw.strip():
            continue
        try:
            o = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(o, dict):
            continue
        if "$rewindTo" in o:
            keys = list(order)
            rid = o.get("$rewindTo")
            if rid in order:
                for k in keys[keys.index(rid):]:
                    order.pop(k, None)
            else:
                order.clear()
        elif "$set" in o:
            s = o["$set"] if isinstance(o["$set"], dict) else {}
            if isinstance(s.get("messages"), list):
                order = {m["id"]: (no, m) for m in s["messages"] if isinstance(m, dict) and isinstance(m.get("id"), str)}
        elif isinstance(o.get("id"), str) and "type" in o:
            order[o["id"]] = (no, o)
        elif "sessionId" in o and "projectHash" in o:
            kind = o.get("kind") if isinstance(o.get("kind"), str) else kind
    return list(order.values()), kind, None


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _is_response(m: dict) -> bool:
    c = m.get("content")
    return isinstance(c, list) and any(isinstance(p, dict) and "functionResponse" in p for p in c)


def read_tail(path: Path) -> Tail:
    try:
        st = os.stat(path)
    except OSError:
        st = None
    msgs, kind, err = _messages(path)
    if err is not None:
        return Tail("unreadable", err)
    t = Tail("empty", "no message", kind=kind, size=st.st_size if st else None, mtime=st.st_mtime if st else None)
    for no, m in msgs:
        for c in m.get("toolCalls") or []:
            if isinstance(c, dict) and isinstance(c.get("agentId"), str):
                t.agents.append({"call_id": c.get("id"), "name": c.get("name"), "agent_id": c["agentId"],
                                 "args": c.get("args") if isinstance(c.get("args"), dict) else {},
                                 "status": c.get("status"), "timestamp": c.get("timestamp") or m.get("timestamp"),
                                 "line": no, "result": _result_text(c)})
    conv = [(no, m) for no, m in msgs if m.get("type") in ("user", "gemini", "error")]
    if not conv:
        return t
    no, m = conv[-1]
    t.last_line, t.last_at = no, m.get("timestamp") if isinstance(m.get("timestamp"), str) else None
    typ = m.get("type")
    calls = [c for c in (m.get("toolCalls") or []) if isinstance(c, dict)]
    if typ == "error":
        t.state, t.detail = "error", f"L{no} is the client's error message: {_text(m.get('content'))[:200]}"
    elif typ == "user":
        what = "tool results (functionResponse)" if _is_response(m) else "a prompt"
        t.state, t.detail = "awaiting-model", f"L{no} sends {what} and no reply follows"
    elif calls:
        names = ", ".join(f"{c.get('name')} ({c.get('status')})" for c in calls)
        if any(c.get("name") in FINISH_TOOLS for c in calls):
            t.state, t.detail = "finished", f"L{no} calls {names}: the subagent ended its task"
        elif all(c.get("status") == "cancelled" for c in calls):
            t.state, t.detail = "interrupted", f"L{no}: its tool calls were cancelled ({names})"
        else:
            t.state, t.detail = "awaiting-model", f"L{no} records completed tool calls {names}; their results go to " \
                                                  "the model next"
    else:
        text = _text(m.get("content"))
        t.last_text = text or None
        if text.strip():
            t.state, t.detail = "eot", f"L{no} is a reply with text and no tool call recorded"
        else:
            t.state, t.detail = "mid-tool", (f"L{no} is a reply with no text and no tool call recorded: its calls run "
                                             "(Gemini CLI records a tool call once it completes)")
    return t


def _result_text(call: dict) -> str | None:
    """The call's output; for a subagent's (``Subagent '<name>' finished.`` ... ``Result:`` and its
    ``complete_task`` JSON), the ``response`` it returned."""
    out = None
    for r in call.get("result") or []:
        if isinstance(r, dict):
            fr = r.get("functionResponse")
            resp = fr.get("response") if isinstance(fr, dict) else None
            if isinstance(resp, dict):
                o = resp.get("output") if "output" in resp else resp.get("result")
                if isinstance(o, str):
                    out = o
                    break
    if out is None:
        rd = call.get("resultDisplay")
        return rd if isinstance(rd, str) else None
    head, sep, tail = out.partition("\nResult:\n")
    if sep and call.get("agentId"):
        try:
            got = orjson.loads(tail)
        except orjson.JSONDecodeError:
            return out
        if isinstance(got, dict) and isinstance(got.get("response"), str):
            return got["response"]
    return out


def _processes(prov, ref, world) -> tuple[str, str, dict]:
    """(alive | none | unknown, why, evidence row) for the Gemini CLI processes in the project."""
    procs = world.client_procs(prov)
    if procs is None:
        return "unknown", f"processes cannot be observed ({world.proc_error()})", ev(
            "processes", f"not observable ({world.proc_error()})", PROVES["processes"])
    project = ref.project
    if not project:
        n = len(procs)
        return ("none" if not n else "unknown"), (
            "no Gemini CLI process is running" if not n else "the session records no project to match its processes to"), \
            ev("processes", f"{n} Gemini CLI process(es); the session records no project", PROVES["processes"],
               pids=[p.pid for p in procs])
    here = [p for p in procs if world.works_in(p, project)]
    blind = [p for p in procs if p.cwd is None]
    row = ev("processes", f"{len(here)} Gemini CLI process(es) in {project}" + (
        f"; {len(blind)} whose directory cannot be read" if blind else ""), PROVES["processes"],
        pids=[p.pid for p in here], project=project, cwd_unreadable=[p.pid for p in blind])
    if here:
        return "alive", f"Gemini CLI pid {here[0].pid} works in this project", row
    if blind:
        return "unknown", f"Gemini CLI pid {blind[0].pid} runs and its directory cannot be read", row
    return "none", "no Gemini CLI process works in this project", row


def live_state(prov, ref, world) -> LiveState:
    from ...timefmt import instant, parse_ts

    path = Path(ref.paths[0])
    tail = read_tail(path)
    owner, owner_why, prow = _processes(prov, ref, world)
    last = parse_ts(tail.last_at)
    rows = [ev("chat file", f"{tail.state}: {tail.detail}", PROVES["chat file"], path=str(path), kind=tail.kind,
               last_line=tail.last_line, last_record_at=instant(tail.last_at),
               last_record_age_secs=round(world.now - last.timestamp(), 1) if last else None, size=tail.size,
               modified_age_secs=round(world.now - tail.mtime, 1) if tail.mtime else None), prow]
    child_why, kids = children_rung(world, ref)
    rows.append(ev("children", f"{sum(1 for k in kids if k['live'])} live of {len(kids)} subagent session(s)",
                   PROVES["children"], live=[k for k in kids if k["live"]]))
    notes, unreadable = [], []
    if tail.state == "unreadable":
        unreadable.append({"surface": "chat file", "path": str(path), "why": tail.detail})
        notes.append(f"chat file: {path} could not be read ({tail.detail}); the verdict rests on the other surfaces")
    open_ = tail.state in ("awaiting-model", "mid-tool")
    ended = tail.state in ("eot", "finished", "interrupted", "error")
    rungs: dict[str, str | None] = {}
    settled = None
    if open_ and owner == "none":
        settled = "mid-tool" if tail.state == "mid-tool" else "mid-turn"
        rungs["stale-dead"] = f"{owner_why}, and the chat file's last turn is open ({tail.detail})"
    if open_:
        rungs["running"] = f"chat file {tail.state}: {tail.detail}" + (f"; {owner_why}" if owner == "alive" else "")
    rungs["waiting-children"] = child_why
    if ended:
        rungs["idle-eot"] = f"chat file {tail.state}: {tail.detail}"
    verdict, reason = decide(rungs, f"no surface decides: chat file {tail.state} ({tail.detail}); {owner_why}")
    if verdict == "running" and owner == "alive":
        notes.append("a Gemini CLI process in the project is evidence, not proof, that this session runs: which "
                     "session a process serves is not on disk")
    if verdict == "running" and owner == "unknown":
        notes.append(f"whether a Gemini CLI process still serves this session cannot be checked ({owner_why})")
    if verdict == "idle-eot" and tail.state == "eot" and owner == "alive":
        notes.append("a reply with text and no tool call recorded is the end of a turn, or a reply whose tool calls "
                     "still run (they are recorded once complete); a Gemini CLI process works in this project")
    return LiveState(verdict, reason, rows, notes, invisible=list(INVISIBLE),
                     settled=settled if verdict == "stale-dead" else None,
                     owner_ended=True if owner == "none" else None,
                     turn_ended=True if ended else (False if open_ else None), unreadable=unreadable, children=kids,
                     fields={"last_reply": tail.last_text}, watch=[str(path), str(path.parent)], detail=tail)


def whoami(env, world) -> WhoamiClaim | None:
    sid = env.get(HOOK_ENV)
    if sid:
        return WhoamiClaim("gemini-cli", sid, HOOK_ENV, f"from ${HOOK_ENV}, which Gemini CLI exports to hook "
                           "commands (its shell tool gets none)", well_formed=True)
    if env.get(TOOL_ENV) == "1":
        return WhoamiClaim("gemini-cli", None, TOOL_ENV,
                           f"cannot tell: ${TOOL_ENV}=1 says this runs inside a Gemini CLI shell tool, which exports "
                           f"no session id (only hook commands get ${HOOK_ENV}); no guess is made from recency or "
                           "process trees")
    return None


def subagents(prov, ref, children, world) -> list[ChildAgent]:
    """Each subagent session joined to the parent's tool call whose ``agentId`` names it (the
    call's ``args`` carry its task); what it returned is that call's output."""
    from ...timefmt import parse_ts

    tail = world.state_of(ref)
    calls = {a["agent_id"]: a for a in (tail.detail.agents if tail is not None and isinstance(tail.detail, Tail) else [])}
    out = []
    for c in children:
        a = calls.get(c.session_id)
        st = world.state_of(c)
        status, why = "unknown", "no live state"
        if a is not None and a.get("status") == "success":
            status, why = "completed", f"the spawning call {a.get('name')} completed (status success)"
        elif st is not None and st.verdict in ("running", "waiting", "waiting-children"):
            status, why = "running", f"its live state is {st.verdict}: {st.reason}"
        elif st is not None:
            why = f"its live state is {st.verdict}: {st.reason}"
        args = a.get("args", {}) if a else {}
        desc = next((args[k] for k in ("prompt", "task", "objective", "description", "message")
                     if isinstance(args.get(k), str)), None)
        kind = next((args[k] for k in ("agent_name", "agentName", "name", "subagent") if isinstance(args.get(k), str)), None)
        dur = None
        s, e = parse_ts(c.first_at), parse_ts(c.last_at)
        if s and e and status == "completed":
            dur = round((e - s).total_seconds(), 1)
        out.append(ChildAgent(
            c, "toolCalls agentId" if a else None,
            spawn=None if a is None else {"call_id": a.get("call_id"), "tool_name": a.get("name"),
                                          "where": f"L{a.get('line')}", "timestamp": a.get("timestamp")},
            agent_type=kind, description=desc, started_at=c.first_at,
            ended_at=c.last_at if status == "completed" else None, status=status, status_why=why,
            returned=a.get("result") if a else None, returned_via="spawning call output" if a and a.get("result") else None,
            duration_secs=dur))
    return out
