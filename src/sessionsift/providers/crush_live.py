"""Crush's live state, from what its own code writes (charmbracelet/crush at the vendored commit,
``internal/agent/agent.go``, ``internal/message``, ``internal/db/datadirlock.go``):

- **the data-dir lock** ``<data dir>/crush.lock``: the crush process that opened the project's
  database holds an exclusive ``flock`` on it for its whole life (``acquireDataDirLock``; the
  kernel drops it when the process ends, however it ends) and writes ``{pid, version,
  started_at}`` into it; the file is never removed. Held: a crush process owns this database now;
  not held: none does. Read from ``/proc/locks``, never taken.
- **the messages**: each model step is an ``assistant`` message created empty at the step's
  start and updated as it streams; a ``finish`` part (``end_turn``, ``max_tokens``, ``tool_use``,
  ``canceled``, ``error``, ...) is appended at the step's end (``finished_at`` is set from it); a
  ``tool_call`` part is ``finished: false`` while its input streams; each tool's result is a
  ``tool`` message. So: a step with no ``finish`` is in flight, ``tool_use`` with no ``tool``
  message for every call is a tool running, ``end_turn`` ends the turn, ``canceled`` is an interrupt.
- **child sessions**: the agent tool's task sessions, named ``<message id>$$<tool call id>``
  (``CreateTaskSession``), so each is joined to its spawning call by its own id.

Invisible: a pending permission (the permission service keeps requests in memory), so a tool
waiting for approval looks like a running one. The shell tool's environment holds ``CRUSH=1``,
``AGENT=crush``, ``AI_AGENT=crush`` (``CrushEnvMarkers``), no session id; hook commands get
``CRUSH_SESSION_ID``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from .liveness import ChildAgent, LiveState, WhoamiClaim, as_dict, children_rung, decide, ev

LOCK_NAME = "crush.lock"
HOOK_ENV = "CRUSH_SESSION_ID"
TOOL_ENV = "CRUSH"
ENDS = {"end_turn": "eot", "max_tokens": "eot", "content_filter": "eot", "stop": "eot", "canceled": "interrupted",
        "error": "error", "permission_denied": "eot"}
INVISIBLE = [
    "a pending permission: Crush's permission service keeps a request in memory and writes nothing, so a tool "
    "waiting for approval looks like a running one",
]
PROVES = {
    "data-dir lock": "whether a crush process owns this project's database now (the flock is held for the "
                     "process's life and dropped by the kernel when it ends)",
    "processes": "which crush processes work in this project",
    "messages": "whether the last turn is open (a step without a finish part, a tool call without its result) or "
                "ended (finish end_turn, canceled, error)",
    "children": "task sessions (the agent tool) still running",
}


def _j(s):
    if not isinstance(s, (str, bytes)) or not s:
        return None
    try:
        return orjson.loads(s)
    except orjson.JSONDecodeError:
        return None


@dataclass
class Tail:
    state: str
    """awaiting-model | mid-tool | step-open | eot | interrupted | error | empty | unreadable"""
    detail: str
    message_id: str | None = None
    last_at: float | None = None
    pending: list[dict] = field(default_factory=list)
    calls: dict[str, dict] = field(default_factory=dict)
    """Every tool call of the session: id -> {name, input, message, finished, result, is_error}."""
    last_text: str | None = None


def read_tail(prov, ref) -> Tail:
    from . import sqlite_ro
    from .crush import NEED

    db = Path(ref.extra.get("db_path") or ref.paths[0])
    try:
        con, cols = prov._cons().get(db, NEED)
    except sqlite_ro.StoreError as e:
        return Tail("unreadable", e.reason)
    if cols is None:
        return Tail("empty", "the database has no tables yet")
    try:
        with sqlite_ro.snapshot(con, db):
            rows = sqlite_ro.retry(lambda: con.execute(
                "SELECT id, role, parts, created_at FROM messages WHERE session_id = ? ORDER BY created_at, rowid",
                (ref.session_id,)).fetchall(), db)
    except sqlite_ro.StoreError as e:
        return Tail("unreadable", e.reason)
    except Exception as e:
        return Tail("unreadable", sqlite_ro.classify(e, db).reason)
    t = Tail("empty", "no message")
    last = None
    _assistants: list[tuple] = []
    for mid, role, raw, created in rows:
        parts = _j(raw)
        parts = parts if isinstance(parts, list) else []
        for p in parts:
            if not isinstance(p, dict):
                continue
            d = as_dict(p.get("data"))
            if p.get("type") == "tool_call" and isinstance(d.get("id"), str):
                t.calls[d["id"]] = {"name": d.get("name"), "input": d.get("input"), "message": mid,
                                    "finished": d.get("finished"), "result": None, "is_error": None, "created": created}
            elif p.get("type") == "tool_result" and isinstance(d.get("tool_call_id"), str):
                c = t.calls.get(d["tool_call_id"])
                if c is not None:
                    c["result"] = d.get("content") if isinstance(d.get("content"), str) else ""
                    c["is_error"] = d.get("is_error")
        if role in ("user", "assistant", "tool"):
            last = (mid, role, parts, created)
        if role == "assistant":
            _assistants.append((mid, role, parts, created))
    if last is None:
        return t
    mid, role, parts, created = last
    t.message_id, t.last_at = mid, created
    fin = next((p.get("data") for p in parts if isinstance(p, dict) and p.get("type") == "finish"), None)
    reason = fin.get("reason") if isinstance(fin, dict) else None
    texts = [p.get("data", {}).get("text") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
    t.last_text = texts[-1] if texts and isinstance(texts[-1], str) and texts[-1] else None
    if role == "tool":  # the step's assistant message was created before its results (agent.go)
        ids = [(p.get("data") or {}).get("tool_call_id") for p in parts
               if isinstance(p, dict) and p.get("type") == "tool_result"]
        amid = next((t.calls[i]["message"] for i in ids if i in t.calls), None)
        a = next((x for x in _assistants if x[0] == amid), None)
        if a is not None:
            afin = next((p.get("data") for p in a[2] if isinstance(p, dict) and p.get("type") == "finish"), None)
            areason = afin.get("reason") if isinstance(afin, dict) else None
            if areason in (None, "tool_use"):  # its step is still the open one: judge it
                mid, parts, role, reason = a[0], a[2], "assistant", areason
    mine = [(cid, c) for cid, c in t.calls.items() if c["message"] == mid]
    if role == "user":
        t.state, t.detail = "awaiting-model", f"messages:{mid} is a prompt with no reply after it"
    elif role == "tool":
        t.state, t.detail = "awaiting-model", f"messages:{mid} holds tool results; the next step follows"
    elif reason is None:
        t.pending = [{"call_id": cid, "name": c["name"]} for cid, c in mine if c["result"] is None]
        if mine and any(c["finished"] is False for _i, c in mine):
            t.state, t.detail = "step-open", f"messages:{mid} has no finish part; a tool call's input is streaming"
        elif t.pending:
            t.state = "mid-tool"
            t.detail = f"messages:{mid} has no finish part; no result yet for " + ", ".join(
                f"{c['name']} ({c['call_id']})" for c in t.pending)
        elif mine:
            t.state, t.detail = "awaiting-model", f"messages:{mid} has every call's result; its step ends next"
        else:
            t.state, t.detail = "step-open", f"messages:{mid} has no finish part: the model step is in flight"
    elif reason == "tool_use":
        t.pending = [{"call_id": cid, "name": c["name"]} for cid, c in mine if c["result"] is None]
        if t.pending:
            t.state = "mid-tool"
            t.detail = f"messages:{mid} finished tool_use; no result yet for " + ", ".join(
                f"{c['name']} ({c['call_id']})" for c in t.pending)
        else:
            t.state, t.detail = "awaiting-model", f"messages:{mid} finished tool_use and every call has its result"
    else:
        t.state = ENDS.get(reason, "eot")
        t.detail = f"messages:{mid} finished {reason!r}"
    return t


def _lock(ref, world) -> tuple[str, str, dict]:
    dd = Path(ref.extra.get("data_dir") or Path(ref.extra.get("db_path") or ref.paths[0]).parent)
    lock = dd / LOCK_NAME
    if not lock.is_file():
        return "absent", f"no {LOCK_NAME} in {dd} (a release that writes none)", ev(
            "data-dir lock", f"absent ({dd})", PROVES["data-dir lock"], path=str(lock), pids=None)
    info = _j(_read(lock)) or {}
    holders = world.lock_holders(lock)
    rec = {k: info.get(k) for k in ("pid", "version", "started_at")}
    if holders is None:
        return "unknown", f"who holds {LOCK_NAME} cannot be read", ev(
            "data-dir lock", "present; its holders cannot be read", PROVES["data-dir lock"], path=str(lock), pids=None,
            recorded=rec)
    if holders:
        return "alive", f"{LOCK_NAME} is held by pid {holders[0]}", ev(
            "data-dir lock", f"held by pid {', '.join(map(str, holders))}", PROVES["data-dir lock"], path=str(lock),
            pids=holders, recorded=rec)
    return "none", f"{LOCK_NAME} is held by no process (its last owner, pid {rec['pid']}, ended)", ev(
        "data-dir lock", "present, held by no process", PROVES["data-dir lock"], path=str(lock), pids=[], recorded=rec)


def _read(p: Path) -> bytes | None:
    try:
        return p.read_bytes()
    except OSError:
        return None


def _procs(prov, ref, world) -> tuple[str, str, dict]:
    procs = world.client_procs(prov)
    if procs is None:
        return "unknown", "processes cannot be observed", ev("processes", f"not observable ({world.proc_error()})",
                                                             PROVES["processes"])
    here = [p for p in procs if ref.project and world.works_in(p, ref.project)]
    blind = [p for p in procs if p.cwd is None]
    row = ev("processes", f"{len(here)} crush process(es) in {ref.project}", PROVES["processes"],
             pids=[p.pid for p in here], cwd_unreadable=[p.pid for p in blind])
    if here:
        return "alive", f"crush pid {here[0].pid} works in this project", row
    if blind:
        return "unknown", f"crush pid {blind[0].pid} runs and its directory cannot be read", row
    return "none", "no crush process works in this project", row


def live_state(prov, ref, world) -> LiveState:
    from .crush import iso_epoch
    from ..timefmt import instant

    tail = read_tail(prov, ref)
    lk, lk_why, lrow = _lock(ref, world)
    if lk in ("absent", "unknown"):
        own, own_why, prow = _procs(prov, ref, world)
        rows = [lrow, prow]
    else:
        own, own_why, rows = lk, lk_why, [lrow]
    rows.insert(0, ev("messages", f"{tail.state}: {tail.detail}", PROVES["messages"], message=tail.message_id,
                      pending=tail.pending, last_record_at=instant(iso_epoch(tail.last_at)),
                      last_record_age_secs=round(world.now - tail.last_at, 1) if isinstance(tail.last_at, (int, float))
                      and tail.last_at < 1e11 else None))
    child_why, kids = children_rung(world, ref)
    rows.append(ev("children", f"{sum(1 for k in kids if k['live'])} live of {len(kids)} task session(s)",
                   PROVES["children"], live=[k for k in kids if k["live"]]))
    notes, unreadable = [], []
    if tail.state == "unreadable":
        db = ref.extra.get("db_path") or str(ref.paths[0])
        unreadable.append({"surface": "messages", "path": db, "why": tail.detail})
        notes.append(f"messages: {db} could not be read ({tail.detail}); the verdict rests on the other surfaces")
    open_ = tail.state in ("awaiting-model", "mid-tool", "step-open")
    ended = tail.state in ("eot", "interrupted", "error")
    rungs: dict[str, str | None] = {}
    settled = None
    if open_ and own == "none":
        settled = "mid-tool" if tail.state == "mid-tool" else "mid-turn"
        rungs["stale-dead"] = f"{own_why}, and the session's last turn is open ({tail.detail})"
    if open_:
        rungs["running"] = f"messages {tail.state}: {tail.detail}" + (f"; {own_why}" if own == "alive" else "")
    rungs["waiting-children"] = child_why
    if ended:
        rungs["idle-eot"] = f"messages {tail.state}: {tail.detail}"
    verdict, reason = decide(rungs, f"no surface decides: messages {tail.state} ({tail.detail}); {own_why}")
    if verdict == "running" and own == "alive":
        notes.append("a crush process owning the project's database is evidence for every session in it: which one "
                     "it serves is not recorded")
    if verdict == "running" and own == "unknown":
        notes.append(f"whether a crush process can still write this session cannot be checked ({own_why})")
    db = Path(ref.extra.get("db_path") or ref.paths[0])
    return LiveState(verdict, reason, rows, notes, invisible=list(INVISIBLE),
                     settled=settled if verdict == "stale-dead" else None,
                     owner_ended=True if own == "none" else (False if own == "alive" else None),
                     turn_ended=True if ended else (False if open_ else None), unreadable=unreadable, children=kids,
                     fields={"last_reply": tail.last_text}, watch=[str(db), str(db) + "-wal", str(db.parent)],
                     detail=tail)


def whoami(env, world) -> WhoamiClaim | None:
    sid = env.get(HOOK_ENV)
    if sid:
        return WhoamiClaim("crush", sid, HOOK_ENV, f"from ${HOOK_ENV}, which Crush exports to hook commands (its "
                           "shell tool gets none)", well_formed=True)
    if env.get(TOOL_ENV) == "1":
        return WhoamiClaim("crush", None, TOOL_ENV,
                           f"cannot tell: ${TOOL_ENV}=1 (with AGENT=crush) says this runs inside a Crush shell tool, "
                           f"which exports no session id (only hook commands get ${HOOK_ENV}); no guess is made from "
                           "recency or process trees")
    return None


def subagents(prov, ref, children, world) -> list[ChildAgent]:
    """Each task session joined to the tool call its id names (``<message id>$$<call id>``)."""
    from .crush import iso_epoch

    st = world.state_of(ref)
    calls = st.detail.calls if st is not None and isinstance(st.detail, Tail) else {}
    out = []
    for c in children:
        if c.helper is not None:
            continue  # a title-generation row: the client's bookkeeping, no agent
        _mid, sep, cid = c.session_id.partition("$$")
        call = calls.get(cid) if sep else None
        cst = world.state_of(c)
        status, why = "unknown", "no live state"
        if call is not None and call["result"] is not None:
            status, why = ("completed", "its spawning call has its result") if not call["is_error"] else (
                "unknown", "its spawning call's result is an error")
        elif cst is not None and cst.verdict in ("running", "waiting", "waiting-children"):
            status, why = "running", f"its live state is {cst.verdict}: {cst.reason}"
        elif cst is not None:
            why = f"its live state is {cst.verdict}: {cst.reason}"
        inp = _j(call["input"]) if call is not None and isinstance(call.get("input"), str) else (
            call.get("input") if call is not None and isinstance(call.get("input"), dict) else None)
        out.append(ChildAgent(
            c, "session id <message id>$$<call id>" if call else None,
            spawn=None if call is None else {"call_id": cid, "tool_name": call["name"], "where": f"messages:{call['message']}",
                                             "timestamp": iso_epoch(call.get("created"))},
            description=(inp or {}).get("prompt") if isinstance((inp or {}).get("prompt"), str) else None,
            started_at=c.first_at, ended_at=c.last_at if status == "completed" else None, status=status,
            status_why=why, returned=call["result"] if call is not None and call["result"] else None,
            returned_via="spawning call result" if call is not None and call["result"] else None))
    return out
