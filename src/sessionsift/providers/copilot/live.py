"""GitHub Copilot CLI's live state, from what the client writes (measured with the real 1.0.102 offline,
and read in its own code: the JavaScript bundle the binary unpacks, ``cli-main.js`` and
``schemas/session-events.schema.json``):

- **the in-use lock**: while a client holds a session it keeps ``inuse.<pid>.lock`` (the pid as
  text) and ``inuse.<pid>.hold`` in the session's directory; a normal exit removes them (the
  samples' finished sessions have none), a client SIGKILLed leaves them behind (the ``killed``
  sample's pid is gone). A lock whose pid runs: the session's owner is alive; only dead pids:
  it died.
- **the event log** (``events.jsonl``, appended as the turn goes): ``user.message`` opens a turn;
  each model step is ``assistant.turn_start`` .. ``assistant.message`` (its ``toolRequests``) ..
  ``assistant.turn_end``; a call runs from ``tool.execution_start`` to ``tool.execution_complete``;
  a clean exit writes ``session.shutdown``. A subagent's events carry its ``agentId``, from
  ``subagent.started`` to ``subagent.completed``/``subagent.failed``. So the last events say: a
  call running, a prompt or results awaiting the model, or an end of turn (a message with no
  tool request and its ``turn_end``). A tool approval asked of the user is ``permission.requested``
  (``requestId``, ``permissionRequest.kind``/``toolCallId``) until its ``permission.completed`` (approved,
  denied, or cancelled when the turn ends): both are written to the log; the schema marks
  ``user_input.requested``, ``exit_plan_mode.requested`` and ``elicitation.requested`` ephemeral (never
  written).

whoami: the client exports ``COPILOT_AGENT_SESSION_ID`` (the session's id) and ``COPILOT_CLI=1``
to its bash tool (measured: tests/realclient/copilot/scenarios_live.py ``live_hold``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..liveness import ChildAgent, LiveState, WhoamiClaim, as_dict, as_list, children_rung, decide, ev, proc_alive

SESSION_ENV = "COPILOT_AGENT_SESSION_ID"
MARKER_ENV = "COPILOT_CLI"
_INUSE = re.compile(r"^inuse\.(\d+)\.lock$")
INVISIBLE = [
    "a question to the user (ask_user), a plan to approve (exit_plan_mode) and an elicitation: their "
    "*.requested events are ephemeral, never written to the log (the client's schemas/session-events.schema.json: "
    "\"Always true for events that are transient and not persisted\"), so a session waiting on one looks like a "
    "running call",
    "a reply streaming: an assistant.message is written once the reply is complete, so a step awaiting the "
    "model and one whose reply streams look the same",
]
PROVES = {
    "events": "whether the last turn is open (a call running, a prompt or results awaiting the model, a tool "
              "approval asked and not answered) or ended, from the last events the client wrote",
    "in-use lock": "which process holds the session (inuse.<pid>.lock: kept while a client holds it, removed on a "
                   "normal exit, left behind by a client that died)",
    "children": "subagents still running",
}


@dataclass
class Tail:
    state: str
    """awaiting-human | awaiting-model | mid-tool | eot | shutdown | finished | failed | empty | unreadable | other"""
    detail: str
    last_line: int | None = None
    last_at: str | None = None
    last_text: str | None = None
    pending: list[dict] = field(default_factory=list)
    approvals: list[dict] = field(default_factory=list)
    """``permission.requested`` events with no ``permission.completed`` of their ``requestId`` (a tool
    approval asked of the user and not answered): {request_id, kind, tool_call_id, line, timestamp}."""
    tasks: dict[str, dict] = field(default_factory=dict)
    """toolCallId -> {line, timestamp, arguments} of the ``task`` calls (to join subagents)."""
    agents: dict[str, dict] = field(default_factory=dict)
    """agentId -> {toolCallId, agentName, ...} from ``subagent.started``, and its end."""


def read_tail(path: Path, agent: str | None) -> Tail:
    """The session's (``agent`` None) or one subagent's last events, read line by line."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return Tail("unreadable", "events.jsonl absent")
    except OSError as exc:
        return Tail("unreadable", f"unreadable: {exc.strerror or exc}")
    t = Tail("empty", "no event")
    pending: dict[str, dict] = {}
    asked: dict[str, dict] = {}
    last_reqs: int | None = None
    last_kind = None
    with fh:
        for no, raw in enumerate(fh, 1):
            if not raw.endswith(b"\n") or not raw.strip():
                continue
            try:
                o = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(o, dict):
                continue
            typ, d = o.get("type"), as_dict(o.get("data"))
            aid = o.get("agentId") if isinstance(o.get("agentId"), str) else None
            if typ == "subagent.started" and aid:
                t.agents[aid] = {**d, "line": no, "timestamp": o.get("timestamp"), "end": None}
            elif typ in ("subagent.completed", "subagent.failed") and aid:
                t.agents.setdefault(aid, {"line": no})["end"] = {"type": typ, "line": no, **d}
            if aid != agent:
                continue
            if typ == "tool.execution_start" and isinstance(d.get("toolCallId"), str):
                pending[d["toolCallId"]] = {"call_id": d["toolCallId"], "name": d.get("toolName"), "line": no}
                if d.get("toolName") == "task":
                    t.tasks[d["toolCallId"]] = {"line": no, "timestamp": o.get("timestamp"),
                                                "arguments": as_dict(d.get("arguments"))}
            elif typ == "tool.execution_complete" and isinstance(d.get("toolCallId"), str):
                pending.pop(d["toolCallId"], None)
            elif typ == "assistant.message":
                last_reqs = len(as_list(d.get("toolRequests")))
                t.last_text = d.get("content") if isinstance(d.get("content"), str) and d.get("content") else None
            elif typ == "user.message":
                last_reqs = None
            elif typ == "permission.requested" and isinstance(d.get("requestId"), str) and not d.get("resolvedByHook"):
                req = as_dict(d.get("permissionRequest"))
                asked[d["requestId"]] = {"request_id": d["requestId"], "kind": req.get("kind"),
                                         "tool_call_id": req.get("toolCallId"), "line": no,
                                         "timestamp": o.get("timestamp")}
            elif typ == "permission.completed" and isinstance(d.get("requestId"), str):
                asked.pop(d["requestId"], None)
            if typ in ("user.message", "assistant.turn_start", "assistant.message", "assistant.turn_end",
                       "tool.execution_start", "tool.execution_complete", "session.shutdown", "subagent.completed",
                       "subagent.failed"):
                t.last_line, t.last_at, last_kind = no, o.get("timestamp"), typ
    t.pending = list(pending.values())
    t.approvals = list(asked.values())
    at = t.last_line
    if last_kind is None:
        return t
    if last_kind == "session.shutdown":
        t.state, t.detail = "shutdown", f"L{at} session.shutdown: the client exited normally"
    elif last_kind in ("subagent.completed", "subagent.failed"):
        t.state = "finished" if last_kind == "subagent.completed" else "failed"
        t.detail = f"L{at} {last_kind}"
    elif t.approvals:
        a = t.approvals[0]
        t.state = "awaiting-human"
        t.detail = (f"L{a['line']} permission.requested ({a['kind']}) and no permission.completed of request "
                    f"{a['request_id']}: a tool approval waits for the user")
    elif t.pending:
        names = ", ".join(f"{c['name']} (L{c['line']})" for c in t.pending)
        t.state, t.detail = "mid-tool", f"L{at} {last_kind}; call(s) running (no tool.execution_complete): {names}"
    elif last_kind == "assistant.turn_end" and last_reqs == 0:
        t.state, t.detail = "eot", f"L{at} assistant.turn_end after a message with no tool request"
    elif last_kind in ("user.message", "assistant.turn_start", "tool.execution_complete", "assistant.turn_end"):
        t.state, t.detail = "awaiting-model", f"L{at} {last_kind} and no reply after it"
    else:
        t.state, t.detail = "other", f"L{at} {last_kind}"
    return t


def _locks(sdir: Path) -> tuple[list[int] | None, str | None]:
    try:
        names = os.listdir(sdir)
    except OSError as exc:
        return None, exc.strerror or str(exc)
    return sorted(int(m.group(1)) for n in names for m in [_INUSE.match(n)] if m), None


def _runs_another_program(prov, pid: int) -> bool:
    """Whether live ``pid`` runs something that is not GitHub Copilot CLI (its ``/proc/<pid>/cmdline``:
    the pid of a dead client's left-behind lock reused); False when the command line cannot be read."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
    except OSError:
        return False
    return bool(argv) and not prov.is_client_argv(argv)


def live_state(prov, ref, world) -> LiveState:
    from ...timefmt import instant

    path = Path(ref.paths[0])
    agent = ref.session_id if ref.parent_session_id else None
    tail = read_tail(path, agent)
    rows = [ev("events", f"{tail.state}: {tail.detail}", PROVES["events"], path=str(path), agent_id=agent,
               last_line=tail.last_line, last_record_at=instant(tail.last_at), pending=tail.pending,
               approvals=tail.approvals)]
    pids, err = _locks(path.parent)
    alive = [p for p in pids or [] if proc_alive(p)]
    reused = [p for p in alive if _runs_another_program(prov, p)]
    alive = [p for p in alive if p not in reused]
    unprobed = [p for p in pids or [] if proc_alive(p) is None]
    if pids is None:
        owner, owner_why = "unknown", f"the session directory cannot be listed ({err})"
        rows.append(ev("in-use lock", f"not listable ({err})", PROVES["in-use lock"], pids=None))
    elif alive:
        owner, owner_why = "alive", f"inuse.{alive[0]}.lock names live pid {alive[0]}"
        rows.append(ev("in-use lock", f"held by live pid(s) {alive}", PROVES["in-use lock"], pids=alive, recorded=pids))
    elif unprobed:
        owner, owner_why = "unknown", f"whether pid {unprobed[0]} of its in-use lock runs cannot be checked"
        rows.append(ev("in-use lock", f"pid(s) {unprobed} not probeable", PROVES["in-use lock"], pids=None,
                       recorded=pids))
    elif pids:
        gone = "gone" + (f" (pid(s) {reused} now run another program: reused)" if reused else "")
        owner, owner_why = "none", f"its in-use lock is left behind by pid(s) {pids}, which are {gone}"
        rows.append(ev("in-use lock", f"left behind: pid(s) {pids} {gone}", PROVES["in-use lock"], pids=[],
                       recorded=pids, reused=reused))
    else:
        owner, owner_why = "none", "no client holds the session (no inuse.<pid>.lock)"
        rows.append(ev("in-use lock", "none: no client holds the session", PROVES["in-use lock"], pids=[],
                       recorded=[]))
    child_why, kids = children_rung(world, ref)
    rows.append(ev("children", f"{sum(1 for k in kids if k['live'])} live of {len(kids)} subagent(s)",
                   PROVES["children"], live=[k for k in kids if k["live"]]))
    notes, unreadable = [], []
    if tail.state == "unreadable":
        unreadable.append({"surface": "events", "path": str(path), "why": tail.detail})
        notes.append(f"events: {path} could not be read ({tail.detail}); the verdict rests on the in-use lock")
    open_ = tail.state in ("awaiting-human", "awaiting-model", "mid-tool")
    ended = tail.state in ("eot", "shutdown", "finished", "failed")
    rungs: dict[str, str | None] = {}
    settled = None
    if open_ and owner == "none":
        settled = "mid-tool" if tail.state == "mid-tool" else "mid-turn"
        rungs["stale-dead"] = f"{owner_why}, and the last turn is open ({tail.detail})"
    if tail.state == "awaiting-human" and owner != "none":
        rungs["waiting"] = f"events {tail.state}: {tail.detail}" + (f"; {owner_why}" if owner == "alive" else "")
    if open_:
        rungs["running"] = f"events {tail.state}: {tail.detail}" + (f"; {owner_why}" if owner == "alive" else "")
    rungs["waiting-children"] = child_why
    if ended:
        rungs["idle-eot"] = f"events {tail.state}: {tail.detail}"
    verdict, reason = decide(rungs, f"no surface decides: events {tail.state} ({tail.detail}); {owner_why}")
    return LiveState(verdict, reason, rows, notes, invisible=list(INVISIBLE),
                     settled=settled if verdict == "stale-dead" else None,
                     owner_ended=True if owner == "none" else (False if owner == "alive" else None),
                     turn_ended=True if ended else (False if open_ else None), unreadable=unreadable, children=kids,
                     fields={"last_reply": tail.last_text}, watch=[str(path), str(path.parent)], detail=tail)


def whoami(env, world) -> WhoamiClaim | None:
    sid = (env.get(SESSION_ENV) or "").strip()
    if sid:
        return WhoamiClaim("copilot-cli", sid, SESSION_ENV,
                           f"from ${SESSION_ENV}, which GitHub Copilot CLI exports to its bash tool (with "
                           f"{MARKER_ENV}=1; measured with 1.0.102)", well_formed=True)
    if env.get(MARKER_ENV) == "1":
        return WhoamiClaim("copilot-cli", None, SESSION_ENV,
                           f"cannot tell: ${MARKER_ENV}=1 says this runs under GitHub Copilot CLI, but ${SESSION_ENV} "
                           "is not set (its bash tool gets both)")
    return None


def subagents(prov, ref, children, world) -> list[ChildAgent]:
    """Each subagent joined to the parent's ``task`` call its ``subagent.started`` names
    (``toolCallId``); done when its ``subagent.completed`` is logged."""
    st = world.state_of(ref)
    tail = st.detail if st is not None and isinstance(st.detail, Tail) else None
    out = []
    for c in children:
        a = (tail.agents if tail else {}).get(c.session_id, {})
        call_id = a.get("toolCallId")
        task = (tail.tasks if tail else {}).get(call_id) if isinstance(call_id, str) else None
        end = a.get("end")
        cst = world.state_of(c)
        if end and end.get("type") == "subagent.completed":
            status, why = "completed", f"subagent.completed at L{end.get('line')}"
        elif cst is not None and cst.verdict in ("running", "waiting", "waiting-children"):
            status, why = "running", f"its live state is {cst.verdict}: {cst.reason}"
        else:
            status = "unknown"
            why = (f"subagent.failed at L{end.get('line')}" if end else "no subagent.completed logged") + (
                f"; its live state is {cst.verdict}" if cst else "")
        args = task["arguments"] if task else {}
        ctail = cst.detail if cst is not None and isinstance(cst.detail, Tail) else None
        out.append(ChildAgent(
            c, "subagent.started toolCallId" if task else None,
            spawn=None if task is None else {"call_id": call_id, "tool_name": "task", "where": f"L{task['line']}",
                                             "timestamp": task.get("timestamp")},
            agent_type=a.get("agentType") or a.get("agentName"),
            description=a.get("agentDescription") or (args.get("description") if isinstance(args.get("description"), str)
                                                      else None),
            started_at=c.first_at, ended_at=c.last_at if status == "completed" else None, status=status,
            status_why=why, returned=ctail.last_text if ctail and status == "completed" else None,
            returned_via="the subagent's last message" if ctail and ctail.last_text and status == "completed" else None))
    return out
