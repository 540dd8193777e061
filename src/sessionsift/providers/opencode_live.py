"""opencode's live state, from what the client writes (read in the 1.18.33 binary's session loop
and measured with the real client):

- **the messages**: a user message opens a turn; each model step is an ``assistant`` message
  written when the step starts, whose ``time.completed`` is set when it ends, with ``finish``
  (``tool-calls``: another step follows; ``stop``: the turn ended) or an ``error`` (an abort is
  ``MessageAbortedError``). Its parts are updated as they go: a ``tool`` part's ``state.status``
  is ``pending``/``running`` until ``completed``/``error``; a ``text`` part has no ``time.end``
  while it streams. A ``question`` tool running asks the user.
- **the processes**: an ``opencode`` process with the database open (``/proc/<pid>/fd``) is the
  one that can write it; which of its sessions it serves is not recorded, so an open database is
  evidence for every session in it, and no process holding it proves none runs.
- **child sessions** (the ``task`` tool): sessions of their own, joined by the task part's
  ``state.metadata.sessionId``.

Invisible: a pending permission (opencode keeps the request in memory; its ``permission`` table
holds only the rules a user saved), so a tool waiting for approval looks like a running one. The
shell tool's environment holds ``OPENCODE=1``, ``AGENT=1`` and ``OPENCODE_PID`` (the client's own
process), no session id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from .liveness import ChildAgent, LiveState, WhoamiClaim, as_dict, children_rung, decide, ev

HUMAN_TOOLS = frozenset({"question"})
OPEN_TOOL_STATES = frozenset({"pending", "running"})
INVISIBLE = [
    "a pending permission: opencode keeps an approval request in memory (its permission table holds only saved "
    "rules), so a tool waiting for approval looks like a running one",
    "which session a process serves: an opencode process holds the whole database open; it is matched to a "
    "session only through the database",
]
PROVES = {
    "messages": "whether the last turn is open (a step without time.completed, a tool part pending or running, "
                "a prompt with no reply) or ended (finish stop, an error)",
    "processes": "whether an opencode process holds this database open (none: nothing can write this session)",
    "children": "child sessions (the task tool) still running",
}
ENV_PID = "OPENCODE_PID"
ENV_MARK = "OPENCODE"
FORK_PID_ENVS = ("KILO_PID",)
"""The pid variables clients built from opencode's code set beside ``OPENCODE=1`` (Kilo Code's cli:
``process.env.AGENT="1", process.env.OPENCODE="1", process.env.KILO_PID=String(process.pid)``)."""


def _j(b):
    if b is None:
        return None
    try:
        o = orjson.loads(b)
    except (orjson.JSONDecodeError, TypeError):
        return None
    return o if isinstance(o, dict) else None


@dataclass
class Tail:
    state: str
    """awaiting-model | mid-tool | streaming | step-open | eot | interrupted | error | empty | unreadable"""
    detail: str
    message_id: str | None = None
    last_at: float | None = None
    tools: list[dict] = field(default_factory=list)
    """Open tool parts of the last message: {call_id, tool, status, part}."""
    tasks: list[dict] = field(default_factory=list)
    """task tool parts of the session: {call_id, session_id, status, input, output, start, end, part, message}."""
    last_text: str | None = None


def read_tail(prov, ref) -> Tail:
    from . import sqlite_ro
    from .opencode import NEED

    db = Path(ref.extra.get("db_path") or ref.paths[0])
    try:
        con, cols = prov._cons().get(db, NEED)
    except sqlite_ro.StoreError as e:
        return Tail("unreadable", e.reason)
    if cols is None:
        return Tail("empty", "the database has no tables yet")
    sid = ref.session_id
    try:
        with sqlite_ro.snapshot(con, db):
            msgs = sqlite_ro.retry(lambda: con.execute(
                "SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created DESC, id DESC "
                "LIMIT 2", (sid,)).fetchall(), db)
            parts = []
            if msgs:
                parts = sqlite_ro.retry(lambda: con.execute(
                    "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (msgs[0][0],)).fetchall(), db)
            tasks = sqlite_ro.retry(lambda: con.execute(
                "SELECT id, message_id, data FROM part WHERE session_id = ? AND data LIKE '%\"tool\":\"task\"%' "
                "ORDER BY id", (sid,)).fetchall(), db)
    except sqlite_ro.StoreError as e:
        return Tail("unreadable", e.reason)
    except Exception as e:  # a malformed page: say so
        return Tail("unreadable", sqlite_ro.classify(e, db).reason)
    t = Tail("empty", "no message")
    for pid, mid, data in tasks:
        p = _j(data) or {}
        st = as_dict(p.get("state"))
        md = as_dict(st.get("metadata"))
        tm = as_dict(st.get("time"))
        t.tasks.append({"call_id": p.get("callID"), "session_id": md.get("sessionId"), "status": st.get("status"),
                        "input": as_dict(st.get("input")),
                        "output": st.get("output") if isinstance(st.get("output"), str) else None,
                        "start": tm.get("start"), "end": tm.get("end"), "part": pid, "message": mid})
    if not msgs:
        return t
    mid, mt, mdata = msgs[0]
    m = _j(mdata) or {}
    t.message_id = mid
    tm = as_dict(m.get("time"))
    t.last_at = tm.get("completed") or tm.get("created") or mt
    role = m.get("role")
    ps = [(pid, _j(d) or {}) for pid, d in parts]
    texts = [p for _i, p in ps if p.get("type") == "text"]
    if texts and isinstance(texts[-1].get("text"), str):
        t.last_text = texts[-1]["text"] or None
    if role == "user":
        t.state, t.detail = "awaiting-model", f"message:{mid} is a prompt with no reply after it"
        return t
    if role != "assistant":
        t.state, t.detail = "other", f"message:{mid} has role {role!r}"
        return t
    for pid, p in ps:
        st = as_dict(p.get("state"))
        if p.get("type") == "tool" and st.get("status") in OPEN_TOOL_STATES:
            t.tools.append({"call_id": p.get("callID"), "tool": p.get("tool"), "status": st.get("status"), "part": pid})
    err = m.get("error") if isinstance(m.get("error"), dict) else None
    if err is not None:
        name = err.get("name")
        t.state = "interrupted" if name == "MessageAbortedError" else "error"
        t.detail = f"message:{mid} ended with {name}"
        return t
    if "completed" not in tm:
        if t.tools:
            t.state = "mid-tool"
            t.detail = f"message:{mid} (no time.completed) has " + ", ".join(
                f"{x['tool']} {x['status']} (part:{x['part']})" for x in t.tools)
        elif any(p.get("type") == "text" and not (isinstance(p.get("time"), dict) and "end" in p["time"]) for _i, p in ps):
            t.state, t.detail = "streaming", f"message:{mid} has no time.completed and its text is streaming"
        else:
            t.state, t.detail = "step-open", f"message:{mid} has no time.completed: the model step is in flight"
        return t
    fin = m.get("finish")
    if fin in ("tool-calls", "tool_calls", "unknown"):
        t.state, t.detail = "awaiting-model", f"message:{mid} finished {fin!r}: the next step follows"
        return t
    t.state, t.detail = "eot", f"message:{mid} completed with finish {fin!r}"
    return t


def _owner(prov, ref, world) -> tuple[str, str, dict]:
    db = Path(ref.extra.get("db_path") or ref.paths[0])
    procs = world.client_procs(prov)
    if procs is None:
        return "unknown", f"processes cannot be observed ({world.proc_error()})", ev(
            "processes", f"not observable ({world.proc_error()})", PROVES["processes"])
    paths = [str(db), str(db) + "-wal"]
    holding, blind = [], []
    for p in procs:
        o = world.opens(p.pid, paths)
        if o is None:
            blind.append(p.pid)
        elif o:
            holding.append(p.pid)
    row = ev("processes", f"{len(holding)} {prov.display} process(es) hold {db.name} open"
             + (f"; {len(blind)} whose open files cannot be listed" if blind else ""), PROVES["processes"],
             pids=holding, unlistable=blind, running=[p.pid for p in procs], database=str(db))
    if holding:
        return "alive", f"{prov.display} pid {holding[0]} holds the database open", row
    if blind:
        return "unknown", f"{prov.display} pid {blind[0]} runs and its open files cannot be listed", row
    return "none", f"no {prov.display} process holds the database open", row


def live_state(prov, ref, world) -> LiveState:
    from ..timefmt import instant

    tail = read_tail(prov, ref)
    own, own_why, prow = _owner(prov, ref, world)
    last = tail.last_at / 1000 if isinstance(tail.last_at, (int, float)) and tail.last_at > 1e11 else tail.last_at
    rows = [ev("messages", f"{tail.state}: {tail.detail}", PROVES["messages"], message=tail.message_id,
               open_tools=tail.tools, last_record_at=instant(last) if isinstance(last, (int, float)) else None,
               last_record_age_secs=round(world.now - last, 1) if isinstance(last, (int, float)) else None), prow]
    child_why, kids = children_rung(world, ref)
    rows.append(ev("children", f"{sum(1 for k in kids if k['live'])} live of {len(kids)} child session(s)",
                   PROVES["children"], live=[k for k in kids if k["live"]]))
    notes, unreadable = [], []
    if tail.state == "unreadable":
        db = ref.extra.get("db_path") or str(ref.paths[0])
        unreadable.append({"surface": "messages", "path": db, "why": tail.detail})
        notes.append(f"messages: {db} could not be read ({tail.detail}); the verdict rests on the other surfaces")
    open_ = tail.state in ("awaiting-model", "mid-tool", "streaming", "step-open")
    ended = tail.state in ("eot", "interrupted", "error")
    rungs: dict[str, str | None] = {}
    settled = None
    if open_ and own == "none":
        settled = "mid-tool" if tail.state == "mid-tool" else "mid-turn"
        rungs["stale-dead"] = f"{own_why}, and the session's last turn is open ({tail.detail})"
    human = [x for x in tail.tools if x["tool"] in HUMAN_TOOLS]
    if human:
        rungs["waiting"] = "blocked on a human: " + ", ".join(f"{x['tool']} {x['status']} (part:{x['part']})"
                                                               for x in human)
    if open_:
        rungs["running"] = f"messages {tail.state}: {tail.detail}" + (f"; {own_why}" if own == "alive" else "")
    rungs["waiting-children"] = child_why
    if ended:
        rungs["idle-eot"] = f"messages {tail.state}: {tail.detail}"
    verdict, reason = decide(rungs, f"no surface decides: messages {tail.state} ({tail.detail}); {own_why}")
    if verdict == "running" and own == "alive":
        notes.append(f"a process of {prov.display} holding the database is evidence for every session in it: which one it "
                     "serves is not recorded")
    if verdict == "running" and own == "unknown":
        notes.append(f"whether a process of {prov.display} can still write this session cannot be checked ({own_why})")
    db = Path(ref.extra.get("db_path") or ref.paths[0])
    return LiveState(verdict, reason, rows, notes, invisible=list(INVISIBLE),
                     settled=settled if verdict == "stale-dead" else None,
                     owner_ended=True if own == "none" else None,
                     turn_ended=True if ended else (False if open_ else None), unreadable=unreadable, children=kids,
                     fields={"last_reply": tail.last_text},
                     watch=[str(db), str(db) + "-wal", str(db.parent)], detail=tail)


def legacy_state(ref) -> LiveState:
    """A session of the legacy JSON tree (``storage/``): releases before ``opencode.db`` wrote it; its
    live surfaces are not read."""
    why = ("a session of opencode's legacy JSON tree (storage/, written by releases before opencode.db): its "
           "messages are not read for live state")
    return LiveState("unknown", why, [ev("messages", "not read: legacy JSON store", "nothing", path=str(ref.paths[0]))],
                     invisible=[why])


def whoami(env, world, prov=None) -> WhoamiClaim | None:
    """``OPENCODE=1`` and the client's own pid variable (opencode ``OPENCODE_PID``; a client built from
    opencode's code names its own, ``Provider.tool_pid_env``): no session id. ``OPENCODE=1`` alone is
    opencode's only when no fork's pid variable is there (Kilo Code sets ``OPENCODE=1`` too)."""
    pid_env = getattr(prov, "tool_pid_env", ENV_PID)
    name, display = getattr(prov, "name", "opencode"), getattr(prov, "display", "opencode")
    pid = env.get(pid_env)
    forks = [v for v in FORK_PID_ENVS if v != pid_env and env.get(v)]
    if not pid and (env.get(ENV_MARK) != "1" or forks or pid_env != ENV_PID):
        return None
    return WhoamiClaim(name, None, pid_env if pid else ENV_MARK,
                       f"cannot tell: {display} exports OPENCODE=1" + (f" and {pid_env}={pid} (its own process)" if pid
                                                                      else "")
                       + " to its shell tool and no session id (a plugin's shell.env hook could add one); no guess is "
                         "made from recency or process trees",
                       evidence=[{"variable": pid_env, "value": pid}] if pid else [])


def subagents(prov, ref, children, world) -> list[ChildAgent]:
    """Each child session joined to the ``task`` tool part whose ``state.metadata.sessionId`` names
    it: its task (``input.prompt``/``description``, ``subagent_type``) and result (``output``)."""
    import re

    from .opencode_records import iso_ms as iso_of_ms

    st = world.state_of(ref)
    tasks = {t["session_id"]: t for t in (st.detail.tasks if st is not None and isinstance(st.detail, Tail) else [])
             if isinstance(t.get("session_id"), str)}
    out = []
    for c in children:
        t = tasks.get(c.session_id)
        cst = world.state_of(c)
        status, why = "unknown", "no live state"
        if t is not None and t.get("status") == "completed":
            status, why = "completed", "its task part is completed"
        elif t is not None and t.get("status") == "error":
            why = "its task part ended in error"
        elif cst is not None and cst.verdict in ("running", "waiting", "waiting-children"):
            status, why = "running", f"its live state is {cst.verdict}: {cst.reason}"
        elif cst is not None:
            why = f"its live state is {cst.verdict}: {cst.reason}"
        returned = None
        if t is not None and t.get("output"):
            m = re.search(r"<task_result>\n?(.*?)\n?</task_result>", t["output"], re.S)
            returned = m.group(1) if m else t["output"]
        inp = t.get("input", {}) if t else {}
        dur = None
        if t and isinstance(t.get("start"), (int, float)) and isinstance(t.get("end"), (int, float)):
            dur = round((t["end"] - t["start"]) / 1000, 1)
        out.append(ChildAgent(
            c, "task part metadata.sessionId" if t else None,
            spawn=None if t is None else {"call_id": t.get("call_id"), "tool_name": "task", "where": f"part:{t['part']}",
                                          "timestamp": iso_of_ms(t.get("start"))},
            agent_type=inp.get("subagent_type") if isinstance(inp.get("subagent_type"), str) else None,
            description=inp.get("description") if isinstance(inp.get("description"), str) else None,
            started_at=iso_of_ms(t.get("start")) if t else c.first_at,
            ended_at=iso_of_ms(t.get("end")) if t and status == "completed" else None,
            status=status, status_why=why, returned=returned, returned_via="task part output" if returned else None,
            duration_secs=dur))
    return out
