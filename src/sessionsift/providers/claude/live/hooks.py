"""Claude Code's deep live model as its reader's capabilities (``Provider.live_state``,
``wait_for``, ``whoami``, ``subagents``): the verdict of verdict.py, the waiting of wait.py, the
topology of agents.py and the env variable of whoami.py, each handed to the agent-neutral
questions (``sessionsift.live``) in the shared shapes of ``providers.liveness``."""

from __future__ import annotations

from pathlib import Path
from ....timefmt import instant, short_local
from ...liveness import ChildAgent, LiveState, Section, WaitOutcome, WhoamiClaim, cut
from .verdict import NOTE_PERMISSION, Verdict

INVISIBLE = [NOTE_PERMISSION]
"""What Claude Code's disk never shows (the same for every session)."""


def bg_row(t, now: float) -> dict:
    return {"tool_use_id": t.tool_use_id, "task_id": t.task_id, "kind": t.kind, "tool_name": t.tool_name,
            "lane": t.lane, "line": t.line, "launched_at": instant(t.launched_at), "command": t.command,
            "description": t.description, "state": t.state, "status": t.status, "closed_by": t.closed_by,
            "closed_at": instant(t.closed_at), "events": t.events, "persistent": t.persistent,
            "carriers": t.carriers, **t.output_stat(now)}


def lane_fields(lane) -> dict:
    return {"provider": "claude-code", "session_id": lane.session_id, "lane": lane.display,
            "is_subagent": lane.is_subagent, "parent_session_id": lane.parent_session_id,
            "agent_id": lane.agent_id, "path": str(lane.path)}


def _todos_row(td) -> dict | None:
    """null: no TodoWrite list took effect in the transcript (see `evidence` todos for why)."""
    if td is None or td.line is None:
        return None
    return {"line": td.line, "timestamp": instant(td.timestamp), "open": td.open, "completed": td.completed,
            "total": len(td.items), "calls": td.calls, "failed_calls": td.failed}


def _sections(v: Verdict, now: float) -> list[Section]:
    out = []
    if v.open_background:
        items = []
        for t in v.open_background:
            o = t.output_stat(now)
            size = o["output_size"] if o["output_size"] is not None else "?"
            age = f"{o['output_age_secs']:.0f}s" if o["output_age_secs"] is not None else "?"
            items.append(f"{t.kind} {t.task_id or t.tool_use_id} launched {short_local(t.launched_at)} "
                         f"[{t.lane} L{t.line}] {cut(t.description or t.command, 80)}; output {size} B, "
                         f"age {age} ({o['output_state']})")
        out.append(Section("background (open)", items))
    # the [todos] and [tasks] evidence lines say what each list holds; only its open items follow
    td = v.todos
    if td is not None and td.line is not None and td.open:
        out.append(Section(f"open todos (TodoWrite, transcript L{td.line})",
                           [f"[{t.get('status')}] {cut(t.get('content'), 100)}" for t in td.open]))
    if v.tasks.open:
        out.append(Section("open tasks", [f"#{t['id']} [{t['status']}] {cut(t['subject'], 100)}" for t in v.tasks.open]))
    return out


def as_live_state(v: Verdict, now: float | None = None) -> LiveState:
    """The deep verdict in the shared shape (its JSON fields as docs/live.md names them)."""
    import time

    now = time.time() if now is None else now
    s = v.session
    fields = {
        "background": [bg_row(t, now) for t in v.open_background],
        "background_launches": len(v.background),
        "background_closed": len(v.background) - len(v.open_background),
        "tasks": v.tasks.open, "tasks_completed": v.tasks.completed, "task_dirs": v.tasks.dirs,
        "todos": _todos_row(v.todos),
        "last_turn_api_error": v.tail.api_error,
    }
    children = [{**lane_fields(c.lane), "live": c.live, "why": c.why, "last_record_at": instant(c.last_ts),
                 "age_secs": c.age_secs, "last_stop_reason": c.last_stop_reason} for c in v.children]
    watch = [str(s.path), str(s.sidecar_dir)]
    return LiveState(v.verdict, v.reason, v.evidence, v.notes, invisible=list(INVISIBLE), settled=v.settled,
                     owner_ended=v.owner_ended, turn_ended=v.tail.state in ("eot", "interrupted"),
                     unreadable=v.unreadable, children=children, fields=fields, sections=_sections(v, now),
                     watch=watch, detail=v)


def _session(ref, world):
    """The deep Session the selection holds for `ref`, else one made from its transcript."""
    from ..discover import Session

    got = world.native.get((ref.provider, ref.session_id)) if world is not None else None
    if got is not None:
        return got
    main = Path(ref.paths[0])
    return Session(ref.session_id, main.parent, main, [])


def _home(ref, world) -> Path:
    root = ref.extra.get("root")
    if root:
        return Path(root)
    r = world.roots.get(ref.provider) if world is not None else None
    if r is not None and getattr(r, "path", None) is not None:
        return Path(r.path)
    return Path(ref.paths[0]).parent.parent.parent


def live_state(ref, world) -> LiveState:
    from .verdict import assess

    v = assess(_session(ref, world), _home(ref, world), now=world.now if world is not None else None)
    return as_live_state(v, world.now if world is not None else None)


def wait_for(ref, cond, timeout: float, world, ready=None) -> WaitOutcome:
    from .wait import wait_for as deep

    res = deep(_session(ref, world), _home(ref, world), cond, timeout, ready=ready)
    return WaitOutcome(res.satisfied, as_live_state(res.verdict), res.hit, res.waited_secs, res.polls, res.watcher,
                       res.baselines, res.discovered)


def whoami(env, world) -> WhoamiClaim | None:
    from .whoami import ENV, whoami as deep

    if not env.get(ENV):
        return None
    w = deep(None, env)
    return WhoamiClaim("claude-code", w.session_id, w.source, w.note, well_formed=w.well_formed, top_level=True)


def subagents(ref, world, files: bool = False) -> list[ChildAgent]:
    """Claude Code's subagents are lanes of the session (not sessions of their own): each lane
    joined to its spawning Agent/Task/Workflow call (agents.py), its JSON row as docs/live.md
    names it."""
    from .agents import topology

    out = []
    for n in topology(_session(ref, world), now=world.now if world is not None else None, with_files=files):
        sp = n.spawn
        row = {**lane_fields(n.lane), "agent_type": n.agent_type, "description": n.description,
               "meta": n.meta_state, "join": n.join, "parent_lane": n.parent_lane,
               "spawn": None if sp is None else {
                   "tool_use_id": sp.tool_use_id, "tool_name": sp.tool_name, "lane": sp.lane.display,
                   "line": sp.line, "async": sp.async_ack,
                   "run_in_background": sp.input.get("run_in_background") is True,
                   "notified_status": sp.notified_status},
               "triggered_at": instant(sp.timestamp) if sp else None,
               "started_at": instant(n.started_at), "ended_at": instant(n.ended_at),
               "duration_secs": n.duration_secs, "status": n.status, "status_why": n.status_why,
               "returned": n.returned, "returned_via": n.returned_via,
               "workflow_run": n.lane.workflow_run}
        if files:
            row["files"] = n.files
        spawn = None if sp is None else {"call_id": sp.tool_use_id, "tool_name": sp.tool_name,
                                         "where": f"{sp.lane.display} L{sp.line}", "timestamp": sp.timestamp}
        out.append(ChildAgent(n.lane, n.join, spawn=spawn, agent_type=n.agent_type, description=n.description,
                              started_at=n.started_at, ended_at=n.ended_at, status=n.status, status_why=n.status_why,
                              returned=n.returned, returned_via=n.returned_via, files=n.files, name=n.lane.display,
                              parent=n.parent_lane or "main",
                              group=f"workflow {n.lane.workflow_run}" if n.lane.workflow_run else None,
                              duration_secs=n.duration_secs, row=row))
    return out

