"""Qwen Code's live state, from what the client writes (read in 0.24.4's ``ChatRecordingService``,
``agent.ts`` and ``SessionWriterLease``; measured with the real client offline):

- **the chat file** (``chats/<id>.jsonl``, one record per line, appended as the turn goes): the
  prompt is a ``user`` record; each model reply an ``assistant`` record written once it has streamed
  in, its calls as ``functionCall`` parts; each call's result a ``tool_result`` record written when
  the call completes (``functionResponse`` with the call's id). ``system`` records (telemetry,
  attribution) come between and say nothing of the turn. So the last conversation record says: a
  prompt or results awaiting the model, calls running (a call with no result yet), or the end of
  the turn (a reply with no call).
- **a subagent's transcript** (``subagents/<parent>/agent-<id>.jsonl``) reads the same way, and its
  ``.meta.json`` holds the client's own status (``running``, ``paused``, ``completed``, ``failed``,
  ``cancelled``: ``patchAgentMeta``).
- **the processes**: Qwen Code runs as ``node .../qwen-code/cli.js`` in the project directory; the
  chat file is appended per write and held by no process, so a process is tied to a session only
  by its project directory. A daemon or ACP client also writes a writer lease
  (``tmp/session-writer-locks/<id>.lock``: pid, its start identity, host, state); a headless or
  interactive run writes none.

Invisible: a call waiting for approval (kept in memory: nothing is written until the call
completes) looks like a running call; a reply streaming looks like a request awaiting the model.
whoami: the shell tool gets ``QWEN_CODE=1`` and ``QWEN_CODE_SESSION_ID`` = the session's id
(measured: the sample's ``printenv`` step), so it names the session.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..liveness import ChildAgent, LiveState, WhoamiClaim, as_dict, children_rung, decide, ev, proc_alive, project_processes

SESSION_ENV = "QWEN_CODE_SESSION_ID"
MARKER_ENV = "QWEN_CODE"
INVISIBLE = [
    "waiting on a human: a tool call waiting for approval leaves no record (Qwen Code writes a call's "
    "tool_result only once it completes and keeps an approval request in memory), so it looks like a running call",
    "a reply streaming: a model reply is written once it has streamed in, so a turn awaiting the model and one "
    "whose reply is streaming look the same",
    "which session a process serves: the chat file is appended per write and held open by no process; a Qwen "
    "Code process is matched to a session by its project directory (or a daemon's writer lease)",
]
PROVES = {
    "chat file": "whether the last turn is open (a prompt or results awaiting the model, calls running) or "
                 "ended, from the last conversation record the client wrote",
    "subagent meta": "the subagent's status as the client keeps it (running, paused, completed, failed, cancelled)",
    "writer lease": "which process holds the session's writer lease (a daemon or ACP client; a headless or "
                    "interactive run writes none)",
    "processes": "whether a Qwen Code process works in this session's project (none: nothing can write this "
                 "session any more)",
    "children": "subagent sessions still running",
}
ENDED_META = {"completed", "failed", "cancelled"}


@dataclass
class Tail:
    state: str
    """awaiting-model | mid-tool | eot | empty | unreadable | other"""
    detail: str
    last_line: int | None = None
    last_at: str | None = None
    last_text: str | None = None
    pending: list[dict] = field(default_factory=list)
    """Calls with no result yet: {call_id, name, line}."""
    agents: dict[str, dict] = field(default_factory=dict)
    """call id -> {name, args, line, timestamp, status} of every call (to join subagents)."""
    size: int | None = None
    mtime: float | None = None


def _parts(o: dict) -> list[dict]:
    m = o.get("message")
    ps = m.get("parts") if isinstance(m, dict) else None
    return [p for p in ps if isinstance(p, dict)] if isinstance(ps, list) else []


def read_tail(path: Path) -> Tail:
    """The chat file's last conversation record and the calls still without a result, read line by
    line (a torn last line is no record yet)."""
    try:
        st = os.stat(path)
        fh = open(path, "rb")
    except FileNotFoundError:
        return Tail("unreadable", "chat file absent")
    except OSError as exc:
        return Tail("unreadable", f"unreadable: {exc.strerror or exc}")
    t = Tail("empty", "no conversation record", size=st.st_size, mtime=st.st_mtime)
    last: tuple[int, dict] | None = None
    pending: dict[str, dict] = {}
    with fh:
        for no, raw in enumerate(fh, 1):
            if not raw.endswith(b"\n") or not raw.strip():
                continue
            try:
                o = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(o, dict) or o.get("type") not in ("user", "assistant", "tool_result"):
                continue
            last = (no, o)
            for p in _parts(o):
                fc, fr = p.get("functionCall"), p.get("functionResponse")
                if isinstance(fc, dict) and isinstance(fc.get("id"), str):
                    pending[fc["id"]] = {"call_id": fc["id"], "name": fc.get("name"), "line": no}
                    t.agents[fc["id"]] = {"name": fc.get("name"), "line": no, "timestamp": o.get("timestamp"),
                                          "args": as_dict(fc.get("args"))}
                if isinstance(fr, dict) and isinstance(fr.get("id"), str):
                    pending.pop(fr["id"], None)
                    if fr["id"] in t.agents:
                        tcr = as_dict(o.get("toolCallResult"))
                        t.agents[fr["id"]]["status"] = tcr.get("status")
    if last is None:
        return t
    no, o = last
    t.last_line = no
    t.last_at = o.get("timestamp") if isinstance(o.get("timestamp"), str) else None
    t.pending = list(pending.values())
    typ = o.get("type")
    names = ", ".join(f"{c['name']} (L{c['line']})" for c in t.pending)
    if t.pending:
        t.state, t.detail = "mid-tool", f"L{no} ({typ}); call(s) with no result yet: {names}"
    elif typ == "assistant":
        text = "".join(p.get("text", "") for p in _parts(o)
                       if isinstance(p.get("text"), str) and not p.get("thought"))
        t.last_text = text or None
        t.state, t.detail = "eot", f"L{no} is a reply with no tool call"
    elif typ == "tool_result":
        t.state, t.detail = "awaiting-model", f"L{no} records the last call's result and no reply follows"
    else:
        what = o.get("subtype") or "a prompt"
        t.state, t.detail = "awaiting-model", f"L{no} is a user record ({what}) and no reply follows"
    return t


def _meta(path: Path) -> dict | None:
    m = path.with_name(path.name[: -len(".jsonl")] + ".meta.json") if path.name.endswith(".jsonl") else None
    if m is None:
        return None
    try:
        o = orjson.loads(m.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return o if isinstance(o, dict) else None


def _start_identity(pid: int) -> str | None:
    """``linux:<boot id>:<start ticks>``, as the client's ``readProcessStartIdentity`` writes it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 1:].split()
    return f"linux:{boot}:{fields[19]}" if len(fields) > 19 else None


def _lease(ref) -> tuple[str, str, dict] | None:
    """(alive | gone | unknown, why, row) for the session's writer lease, None when it has none."""
    lock = (ref.extra or {}).get("writer_lock")
    if not isinstance(lock, dict):
        return None
    pid, state = lock.get("pid"), lock.get("state")
    row = ev("writer lease", f"{state} lease of pid {pid} ({lock.get('process_kind')})", PROVES["writer lease"],
             path=lock.get("path"), pid=pid, state=state, hostname=lock.get("hostname"))
    if state != "active" or not isinstance(pid, int):
        return "gone", f"the writer lease is {state} (released by its writer)", row
    if lock.get("hostname") not in (None, os.uname().nodename):
        return "unknown", f"the writer lease is held on another host ({lock.get('hostname')})", row
    alive = proc_alive(pid)
    if alive is None:
        return "unknown", f"whether lease holder pid {pid} runs cannot be checked", row
    ident = lock.get("process_start_identity")
    if alive and isinstance(ident, str) and _start_identity(pid) not in (None, ident):
        alive = False  # the pid was reused by another process
    if alive:
        return "alive", f"the writer lease is held by live pid {pid}", row
    return "gone", f"the writer lease names pid {pid}, which is gone (left behind)", row


def live_state(prov, ref, world) -> LiveState:
    from ...timefmt import instant, parse_ts

    path = Path(ref.paths[0])
    tail = read_tail(path)
    last = parse_ts(tail.last_at)
    rows = [ev("chat file", f"{tail.state}: {tail.detail}", PROVES["chat file"], path=str(path),
               last_line=tail.last_line, last_record_at=instant(tail.last_at),
               last_record_age_secs=round(world.now - last.timestamp(), 1) if last else None, size=tail.size,
               modified_age_secs=round(world.now - tail.mtime, 1) if tail.mtime else None,
               pending=tail.pending)]
    meta = _meta(path) if ref.parent_session_id else None
    mstatus = meta.get("status") if meta else None
    if ref.parent_session_id:
        rows.append(ev("subagent meta", f"status {mstatus}" if meta else "no .meta.json beside the transcript",
                       PROVES["subagent meta"], status=mstatus, updated_at=(meta or {}).get("lastUpdatedAt")))
    lease = _lease(ref)
    owner, owner_why, prow = project_processes(prov, ref, world, PROVES["processes"])
    if lease is not None:
        rows.append(lease[2])
        if lease[0] == "alive":
            owner, owner_why = "alive", lease[1]
    rows.append(prow)
    child_why, kids = children_rung(world, ref)
    rows.append(ev("children", f"{sum(1 for k in kids if k['live'])} live of {len(kids)} subagent session(s)",
                   PROVES["children"], live=[k for k in kids if k["live"]]))
    notes, unreadable = [], []
    if tail.state == "unreadable":
        unreadable.append({"surface": "chat file", "path": str(path), "why": tail.detail})
        notes.append(f"chat file: {path} could not be read ({tail.detail}); the verdict rests on the other surfaces")
    open_ = tail.state in ("awaiting-model", "mid-tool")
    ended = tail.state == "eot"
    if mstatus in ENDED_META:
        open_, ended = False, True
    rungs: dict[str, str | None] = {}
    settled = None
    if open_ and owner == "none":
        settled = "mid-tool" if tail.state == "mid-tool" else "mid-turn"
        rungs["stale-dead"] = f"{owner_why}, and the chat file's last turn is open ({tail.detail})"
    if open_:
        rungs["running"] = f"chat file {tail.state}: {tail.detail}" + (f"; {owner_why}" if owner == "alive" else "")
    rungs["waiting-children"] = child_why
    if ended:
        rungs["idle-eot"] = (f"subagent meta status {mstatus}" if mstatus in ENDED_META
                             else f"chat file {tail.state}: {tail.detail}")
    verdict, reason = decide(rungs, f"no surface decides: chat file {tail.state} ({tail.detail}); {owner_why}")
    if verdict == "running" and owner == "alive" and lease is None:
        notes.append("a Qwen Code process in the project is evidence, not proof, that this session runs: which "
                     "session a process serves is not on disk")
    if verdict == "running" and owner == "unknown":
        notes.append(f"whether a Qwen Code process still serves this session cannot be checked ({owner_why})")
    return LiveState(verdict, reason, rows, notes, invisible=list(INVISIBLE),
                     settled=settled if verdict == "stale-dead" else None,
                     owner_ended=True if owner == "none" else (False if owner == "alive" else None),
                     turn_ended=True if ended else (False if open_ else None), unreadable=unreadable, children=kids,
                     fields={"last_reply": tail.last_text}, watch=[str(path), str(path.parent)], detail=tail)


def whoami(env, world) -> WhoamiClaim | None:
    sid = (env.get(SESSION_ENV) or "").strip()
    if sid:
        return WhoamiClaim("qwen-code", sid, SESSION_ENV,
                           f"from ${SESSION_ENV}, which Qwen Code exports to its shell tool's commands (with "
                           f"{MARKER_ENV}=1 and QWEN_CODE_PROJECT_DIR)", well_formed=True)
    if env.get(MARKER_ENV) == "1":
        return WhoamiClaim("qwen-code", None, SESSION_ENV,
                           f"cannot tell: ${MARKER_ENV}=1 says this runs under Qwen Code, but ${SESSION_ENV} is "
                           "not set (its shell tool exports both; something between removed it)")
    return None


def subagents(prov, ref, children, world) -> list[ChildAgent]:
    """Each subagent session joined to the parent's call its ``.meta.json`` names (``toolUseId``);
    its status is the client's own (the meta's), what it returned its last reply."""
    from ...timefmt import parse_ts

    st = world.state_of(ref)
    calls = st.detail.agents if st is not None and isinstance(st.detail, Tail) else {}
    out = []
    for c in children:
        x = c.extra or {}
        call_id = x.get("tool_use_id")
        a = calls.get(call_id) if isinstance(call_id, str) else None
        cst = world.state_of(c)
        ms = x.get("status")
        if ms == "completed":
            status, why = "completed", "its .meta.json status is completed"
        elif ms in ("running", "paused") and cst is not None and cst.verdict in ("running", "waiting", "waiting-children"):
            status, why = "running", f"its .meta.json status is {ms} and its live state is {cst.verdict}: {cst.reason}"
        else:
            status = "unknown"
            why = f"its .meta.json status is {ms}" + (f"; its live state is {cst.verdict}: {cst.reason}" if cst else "")
        ctail = cst.detail if cst is not None and isinstance(cst.detail, Tail) else None
        dur = None
        s, e = parse_ts(c.first_at), parse_ts(c.last_at)
        if s and e and status == "completed":
            dur = round((e - s).total_seconds(), 1)
        returned = ctail.last_text if ctail is not None and status == "completed" else None
        out.append(ChildAgent(
            c, ".meta.json toolUseId" if a else None,
            spawn=None if a is None else {"call_id": call_id, "tool_name": a.get("name"), "where": f"L{a.get('line')}",
                                          "timestamp": a.get("timestamp"), "async": bool(x.get("backgrounded"))},
            agent_type=x.get("agent_type"), description=x.get("description"), started_at=c.first_at,
            ended_at=c.last_at if status == "completed" else None, status=status, status_why=why,
            returned=returned, returned_via="the subagent's last reply" if returned else None, duration_secs=dur))
    return out
