"""Codex CLI's live state, from what the client writes (read in 0.171.0's behaviour and its
rollout persistence policy, ``should_persist_event_msg``):

- **the thread-writer lock** ``$CODEX_HOME/thread-writer-locks/<thread id>.lock``: the process
  writing a thread holds a ``flock`` on it (read from ``/proc/locks``, never taken). Measured with
  0.171.0: the client removes the file when it exits normally; a client killed leaves it behind,
  held by nobody (the kernel drops the lock). So a held lock names the live writer, an unheld one a
  writer that died, and no file a writer that ended (or a release that writes none, 0.50.0): then
  only the processes are left, and a Codex process anywhere may be the owner.
- **the rollout's turn events**: ``task_started`` opens a turn, ``task_complete`` ends it,
  ``turn_aborted`` ends it interrupted (all persisted); a ``function_call`` /
  ``custom_tool_call`` / ``local_shell_call`` of the open turn with no ``*_output`` is a tool
  running (or one its process died in); a pending ``request_user_input`` call waits on a human.
- **the side store** ``thread_history_<N>.sqlite`` ``thread_turns.status`` (``inProgress`` for a
  turn never completed), read at discovery.
- **child threads** (``spawn_agent``): sessions of their own naming this one as parent.

Invisible: a pending approval (exec and patch approval requests are events the rollout does not
persist), and a reply streaming (deltas are not persisted: an item is written when it completes).
The environment a tool runs in: ``CODEX_THREAD_ID`` names the calling thread.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..liveness import ChildAgent, LiveState, WhoamiClaim, as_dict, children_rung, decide, ev
from . import files as rf

TAIL_WINDOW = 256 * 1024
CALLS = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output",
         "local_shell_call": "local_shell_call_output"}
HUMAN_TOOLS = frozenset({"request_user_input"})
OPENS = frozenset({"task_started", "turn_started"})
ENDS = frozenset({"task_complete", "turn_complete"})
ABORTS = frozenset({"turn_aborted"})
ENV = "CODEX_THREAD_ID"
INVISIBLE = [
    "a pending approval: Codex CLI writes no record of an exec or patch approval request (the rollout persists "
    "turn, token and item-completion events only), so a call waiting for approval looks like a running one",
    "a reply streaming: deltas are not persisted (an item is written when it completes), so a turn awaiting the "
    "model and one whose reply is streaming look the same",
]
PROVES = {
    "thread lock": "whether a process is writing this thread now (the flock is held while it is written and "
                   "released when its writer exits)",
    "processes": "which Codex CLI processes run (Codex records no project or thread a process could be matched to)",
    "rollout": "whether the last turn is open (task_started without task_complete/turn_aborted), what it waits "
               "for, or that it ended",
    "side store": "the client's own turn statuses (inProgress: a turn it never completed)",
    "children": "child threads (spawn_agent) still running",
}
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


@dataclass
class Turn:
    """The rollout's last turn."""

    state: str
    """open | ended | aborted | none (no turn event) | empty | unreadable"""
    detail: str
    started_line: int | None = None
    ended_line: int | None = None
    turn_id: str | None = None
    pending: list[dict] = field(default_factory=list)
    """Calls of the open turn with no output: {call_id, name, line, timestamp}."""
    last_line: int | None = None
    last_at: str | None = None
    last_kind: str | None = None
    last_message: str | None = None


def _records(path: Path) -> tuple[list[tuple[int, dict]], str | None]:
    """(line number, record) of the rollout's last turn and what follows it (a plain file: the newest
    window, grown until a turn opens in it; a compressed one: streamed); an error string if unreadable."""
    if path.suffix == ".zst":
        keep: list[tuple[int, dict]] = []
        try:
            for ln in rf.lines(path):
                o = _parse(ln.raw)
                if o is None:
                    continue
                if _etype(o) in OPENS:
                    keep = []
                keep.append((ln.no, o))
        except OSError as exc:
            return [], f"unreadable: {exc.strerror or exc}"
        return keep, None
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            win = TAIL_WINDOW
            while True:
                start = max(0, size - win)
                fh.seek(start)
                data = fh.read(size - start)
                if start > 0:
                    nl = data.find(b"\n")
                    data = data[nl + 1:] if nl >= 0 else b""
                    start += nl + 1 if nl >= 0 else len(data)
                end = data.rfind(b"\n") + 1  # a torn final line is not a record yet
                lines = data[:end].split(b"\n")[:-1] if end else []
                recs = []
                for i, raw in enumerate(lines):
                    o = _parse(raw)
                    if o is not None:
                        recs.append((i, o))
                if start == 0 or any(_etype(o) in OPENS for _i, o in recs):
                    break
                win *= 4
            base = 1
            if start > 0:  # number the lines: count the newlines before the window once
                fh.seek(0)
                left, n = start, 0
                while left > 0:
                    b = fh.read(min(left, 1 << 24))
                    if not b:
                        break
                    n += b.count(b"\n")
                    left -= len(b)
                base = n + 1
    except FileNotFoundError:
        return [], "rollout absent"
    except OSError as exc:
        return [], f"unreadable: {exc.strerror or exc}"
    return [(base + i, o) for i, o in recs], None


def _parse(raw: bytes) -> dict | None:
    try:
        o = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return o if isinstance(o, dict) else None


def _etype(o: dict) -> str | None:
    if o.get("type") != "event_msg":
        return None
    p = o.get("payload")
    return p.get("type") if isinstance(p, dict) else None


def read_turn(path: Path) -> Turn:
    recs, err = _records(path)
    if err is not None:
        return Turn("unreadable", err)
    if not recs:
        return Turn("empty", "no records")
    t = Turn("none", "no turn event in the rollout")
    pending: dict[str, dict] = {}
    for no, o in recs:
        p = as_dict(o.get("payload"))
        ts = o.get("timestamp") if isinstance(o.get("timestamp"), str) else None
        t.last_line, t.last_at = no, ts or t.last_at
        typ = o.get("type")
        pt = p.get("type")
        t.last_kind = f"{typ}/{pt}" if pt else str(typ)
        if typ == "event_msg":
            if pt in OPENS:
                t.state, t.started_line, t.ended_line = "open", no, None
                t.turn_id = p.get("turn_id") if isinstance(p.get("turn_id"), str) else None
                pending.clear()
            elif pt in ENDS:
                t.state, t.ended_line = "ended", no
                lm = p.get("last_agent_message")
                t.last_message = lm if isinstance(lm, str) else None
                pending.clear()
            elif pt in ABORTS:
                t.state, t.ended_line = "aborted", no
                t.detail = f"L{no} turn_aborted (reason {p.get('reason')!r})"
                pending.clear()
        elif typ == "response_item":
            if pt in CALLS and isinstance(p.get("call_id"), str):
                pending[p["call_id"]] = {"call_id": p["call_id"], "name": p.get("name") or pt, "line": no,
                                         "timestamp": ts, "output": CALLS[pt]}
            elif pt in CALLS.values() and isinstance(p.get("call_id"), str):
                pending.pop(p["call_id"], None)
    t.pending = [{k: v for k, v in c.items() if k != "output"} for c in pending.values()]
    if t.state == "open":
        if t.pending:
            t.detail = "unreturned " + ", ".join(f"{c['name']} ({c['call_id']}, L{c['line']})" for c in t.pending)
        else:
            t.detail = f"turn opened at L{t.started_line}; the last record L{t.last_line} ({t.last_kind}) has no " \
                       "reply after it: awaiting the model"
    elif t.state == "ended":
        t.detail = f"L{t.ended_line} task_complete"
    return t


def _home_of(path: Path) -> Path | None:
    for p in Path(path).parents:
        if p.name in ("sessions", "archived_sessions"):
            return p.parent
    return None


@dataclass
class Owner:
    state: str
    """alive | ended | unknown"""
    detail: str
    pids: list[int] = field(default_factory=list)


def owner(prov, ref, world) -> tuple[Owner, list[dict]]:
    """Who writes this thread: the thread-writer lock, else the processes."""
    rows = []
    home = _home_of(Path(ref.paths[0])) if ref.paths else None
    lock = home / "thread-writer-locks" / f"{ref.session_id}.lock" if home is not None else None
    procs = world.client_procs(prov)
    if procs is None:
        prow = ev("processes", f"not observable ({world.proc_error()})", PROVES["processes"])
    else:
        prow = ev("processes", f"{len(procs)} Codex CLI process(es) running", PROVES["processes"],
                  pids=[p.pid for p in procs])
    if lock is not None and lock.is_file():
        holders = world.lock_holders(lock)
        if holders is None:
            rows.append(ev("thread lock", f"{lock.name}: present; who holds it cannot be read "
                           f"({world.locks()[1] or 'not observable'})", PROVES["thread lock"], path=str(lock), pids=None))
            rows.append(prow)
            return Owner("unknown", "the thread lock's holders cannot be read"), rows
        if holders:
            rows.append(ev("thread lock", f"held by pid {', '.join(map(str, holders))}", PROVES["thread lock"],
                           path=str(lock), pids=holders))
            rows.append(prow)
            return Owner("alive", f"its thread-writer lock is held by pid {holders[0]}", holders), rows
        rows.append(ev("thread lock", "present, held by no process: its writer died (a normal exit removes it)",
                       PROVES["thread lock"], path=str(lock), pids=[]))
        rows.append(prow)
        return Owner("ended", "its thread-writer lock is left behind and held by no process (the writer died)"), rows
    why = ("no thread-writer lock for this thread: its writer exited (the client removes the file at a normal "
           "exit), or a release that writes none") if lock is not None else "the rollout is not under a Codex home"
    rows.append(ev("thread lock", why, PROVES["thread lock"], path=str(lock) if lock else None, pids=None))
    rows.append(prow)
    if procs is not None and not procs:
        return Owner("ended", "no Codex CLI process is running, and none holds a lock on this thread"), rows
    if procs:
        return Owner("unknown", f"Codex CLI pid {procs[0].pid} runs; which thread it writes is not on disk"), rows
    return Owner("unknown", "processes cannot be observed"), rows


def live_state(prov, ref, world) -> LiveState:
    path = Path(ref.paths[0])
    turn = read_turn(path)
    own, rows = owner(prov, ref, world)
    ev_rows = list(rows)
    from ...timefmt import instant, parse_ts

    last = parse_ts(turn.last_at)
    ev_rows.append(ev("rollout", f"{turn.state}: {turn.detail}", PROVES["rollout"], path=str(path),
                      turn_id=turn.turn_id, started_line=turn.started_line, ended_line=turn.ended_line,
                      pending=turn.pending, last_line=turn.last_line, last_record_at=instant(turn.last_at),
                      last_record_age_secs=round(world.now - last.timestamp(), 1) if last else None))
    ts = ref.extra.get("turn_statuses") if isinstance(ref.extra, dict) else None
    if isinstance(ts, dict):
        ev_rows.append(ev("side store", ", ".join(f"{k} {v}" for k, v in sorted(ts.items())) + " turn(s)",
                          PROVES["side store"], statuses=ts))
    child_why, kids = children_rung(world, ref)
    ev_rows.append(ev("children", f"{sum(1 for k in kids if k['live'])} live of {len(kids)} child thread(s)",
                      PROVES["children"], live=[k for k in kids if k["live"]]))
    notes: list[str] = []
    unreadable = []
    if turn.state == "unreadable":
        unreadable.append({"surface": "rollout", "path": str(path), "why": turn.detail})
        notes.append(f"rollout: {path} could not be read ({turn.detail}); the verdict rests on the other surfaces")
    open_ = turn.state == "open"
    rungs: dict[str, str | None] = {}
    settled = None
    if open_ and own.state == "ended":
        settled = "mid-tool" if turn.pending else "mid-turn"
        rungs["stale-dead"] = f"{own.detail}, and its last turn is open ({turn.detail})"
    human = [c for c in turn.pending if c["name"] in HUMAN_TOOLS]
    if open_ and human:
        rungs["waiting"] = "blocked on a human: unreturned " + ", ".join(
            f"{c['name']} at L{c['line']}" for c in human)
    if open_:
        rungs["running"] = f"rollout {turn.detail}" + (f"; {own.detail}" if own.state == "alive" else "")
    rungs["waiting-children"] = child_why
    if turn.state in ("ended", "aborted"):
        rungs["idle-eot"] = f"rollout {turn.detail}" + (f"; {own.detail}" if own.state == "alive" else "")
    verdict, reason = decide(rungs, f"no surface decides: rollout {turn.state} ({turn.detail}); owner {own.state}")
    if verdict == "running" and own.state == "unknown":
        notes.append(f"whether the thread's writer still runs cannot be checked ({own.detail}): a process that "
                     "died mid-turn leaves the same open turn")
    if verdict == "running" and turn.pending:
        notes.append("an unreturned call is not proof of still running when its writer cannot be checked; a "
                     "call waiting for approval looks the same (approvals are not persisted)")
    home = _home_of(path)
    return LiveState(verdict, reason, ev_rows, notes, invisible=list(INVISIBLE),
                     settled=settled if verdict == "stale-dead" else None,
                     owner_ended={"ended": True, "alive": False}.get(own.state),
                     turn_ended=True if turn.state in ("ended", "aborted") else (False if open_ else None),
                     unreadable=unreadable, children=kids,
                     fields={"last_agent_message": turn.last_message},
                     watch=[str(path)] + ([str(home / "thread-writer-locks")] if home is not None else []))


def whoami(env, world) -> WhoamiClaim | None:
    tid = env.get(ENV)
    if not tid:
        return None
    return WhoamiClaim("codex", tid, ENV, f"from ${ENV}, which Codex CLI exports into its shell tool's environment: "
                       "the thread the calling tool runs in", well_formed=bool(_UUID.match(tid)))


def subagents(prov, ref, children, world) -> list[ChildAgent]:
    """Each child thread joined to the ``spawn_agent`` call whose output names its ``agent_id``;
    its task (the call's ``message``), and what it returned (the parent's ``wait_agent`` output,
    else the child's ``task_complete.last_agent_message``)."""
    from ...timefmt import parse_ts

    spawns: dict[str, dict] = {}
    calls: dict[str, dict] = {}
    waited: dict[str, str] = {}
    try:
        for ln in rf.lines(Path(ref.paths[0])):
            if b"spawn_agent" not in ln.raw and b"call_output" not in ln.raw:
                continue
            o = _parse(ln.raw) or {}
            p = as_dict(o.get("payload"))
            if not p:
                continue
            raw_id = p.get("call_id")
            cid: str = raw_id if isinstance(raw_id, str) else ""
            if p.get("type") == "function_call" and p.get("name") == "spawn_agent":
                calls[cid] = {"line": ln.no, "timestamp": o.get("timestamp"), "arguments": p.get("arguments")}
            elif p.get("type") == "function_call_output" and isinstance(p.get("output"), str):
                res = _parse(p["output"].encode())
                if not res:
                    continue
                c = calls.get(cid)
                if c is not None and isinstance(res.get("agent_id"), str):
                    spawns[res["agent_id"]] = {**c, "call_id": p.get("call_id"), "nickname": res.get("nickname")}
                st = res.get("status")
                if isinstance(st, dict):
                    for aid, s in st.items():
                        if isinstance(s, dict) and isinstance(s.get("completed"), str):
                            waited[aid] = s["completed"]
    except OSError:
        pass
    out = []
    for c in children:
        sp = spawns.get(c.session_id)
        args = _parse(sp["arguments"].encode()) if sp and isinstance(sp.get("arguments"), str) else None
        st = world.state_of(c)
        status, why = "unknown", "no live state"
        if st is not None:
            if st.verdict in ("running", "waiting", "waiting-children"):
                status, why = "running", f"its thread's live state is {st.verdict}: {st.reason}"
            elif st.verdict == "idle-eot":
                status, why = "completed", f"its thread's turn ended: {st.reason}"
            else:
                why = f"its thread's live state is {st.verdict}: {st.reason}"
        returned, via = None, None
        if c.session_id in waited:
            returned, via = waited[c.session_id], "wait_agent output"
        elif st is not None and isinstance(st.fields.get("last_agent_message"), str):
            returned, via = st.fields["last_agent_message"], "child task_complete"
        dur = None
        a, b = parse_ts(c.first_at), parse_ts(c.last_at)
        if a and b and status == "completed":
            dur = round((b - a).total_seconds(), 1)
        out.append(ChildAgent(
            c, "spawn_agent output agent_id" if sp else None,
            spawn=None if sp is None else {"call_id": sp["call_id"], "tool_name": "spawn_agent",
                                           "where": f"L{sp['line']}", "timestamp": sp.get("timestamp")},
            agent_type=c.extra.get("agent_role") or None,
            description=(args or {}).get("message") if isinstance((args or {}).get("message"), str) else None,
            started_at=c.first_at, ended_at=c.last_at if status == "completed" else None, status=status,
            status_why=why, returned=returned, returned_via=via, duration_secs=dur,
            name=c.session_id + (f" ({sp['nickname']})" if sp and sp.get("nickname") else "")))
    return out

