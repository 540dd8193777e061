"""`agents`: each session's subagents joined to the tool call that spawned them, every agent.

The provider answers (``Provider.subagents``): Claude Code's subagent lanes, or the child sessions
another client writes (``SessionRef.parent_session_id``), each joined where the records allow. A
child session that spawned children of its own has them listed under it (``ChildAgent.parent``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..providers.base import Coverage, Problem, SessionRef
from ..providers.liveness import ChildAgent
from .status import bind
from .world import Unit, path_of, units, world as make_world


@dataclass
class SessionAgents:
    unit: Unit
    agents: list[ChildAgent]


@dataclass
class AgentsResult:
    sessions: list[SessionAgents]
    """One entry per session asked about (top-level, or a child named on its own)."""
    coverage: list[Coverage]
    problems: list[Problem]
    lacking: dict[str, str] = field(default_factory=dict)
    without: dict[str, str] = field(default_factory=dict)
    """display name -> why its client has no subagents at all (``Provider.lacks["subagents"]``): its
    sessions' zero is the client's, said once."""

    @property
    def total(self) -> int:
        return sum(len(s.agents) for s in self.sessions)

    @property
    def statuses(self) -> dict[str, int]:
        return dict(Counter(a.status for s in self.sessions for a in s.agents))


def row(unit: Unit, a: ChildAgent) -> dict:
    """The ``agent`` row (docs/live.md): the provider's own when it gives one, else built from the
    shared fields (a child session of the session ``unit``)."""
    if a.row is not None:
        return a.row
    ref = a.ref
    sp = a.spawn
    from ..timefmt import instant

    return {"provider": unit.name, "session_id": ref.session_id, "lane": None, "is_subagent": True,
            "parent_session_id": ref.parent_session_id, "agent_id": ref.session_id, "path": path_of(ref),
            "agent_type": a.agent_type, "description": a.description, "meta": None, "join": a.join,
            "parent_lane": None if a.parent in (None, "main") else a.parent,
            "spawn": None if sp is None else {"tool_use_id": sp.get("call_id"), "tool_name": sp.get("tool_name"),
                                              "lane": "main", "line": None, "locator": sp.get("where"),
                                              "async": sp.get("async"), "run_in_background": None,
                                              "notified_status": None},
            "triggered_at": instant(sp.get("timestamp")) if sp else None,
            "started_at": instant(a.started_at), "ended_at": instant(a.ended_at),
            "duration_secs": a.duration_secs, "status": a.status, "status_why": a.status_why,
            "returned": a.returned, "returned_via": a.returned_via, "workflow_run": None,
            **({"files": a.files} if a.files else {})}


def agents(sel, files: bool = False) -> AgentsResult:
    us = units(sel)
    w = make_world(sel, us=us)
    bind(w, us, sel)
    in_sel = {u.key for u in us}
    out: list[SessionAgents] = []
    lacking: dict[str, str] = {}
    for u in us:
        ref = u.ref
        if u.child or ((u.name, ref.parent_session_id or "") in in_sel and ref.parent_session_id):
            continue  # listed under the session that spawned it
        if u.provider is None:
            lacking[u.display] = "no reader is installed for it"
            out.append(SessionAgents(u, []))
            continue
        got = _tree(u, w, files, seen=set())
        out.append(SessionAgents(u, got))
    without = {u.display: why for u in us if u.provider is not None
               for why in [getattr(u.provider, "lacks", {}).get("subagents")] if why}
    return AgentsResult(out, sel.coverage(), sel.problems(), lacking, without)


def _tree(u: Unit, w, files: bool, seen: set) -> list[ChildAgent]:
    """The agents of `u`, and under each child session its own (depth first, spawn order)."""
    kids = w.children_of(u.ref)
    got = u.provider.subagents(u.ref, kids, w, files=files) or []
    out: list[ChildAgent] = []
    for a in got:
        out.append(a)
        cref = a.ref
        key = (u.name, getattr(cref, "session_id", None))
        if not isinstance(cref, SessionRef) or key in seen:
            continue  # a lane, not a session of its own
        seen.add(key)
        if a.name is None:
            a.name = cref.session_id
        sub = _tree(Unit(u.name, u.display, u.provider, cref), w, files, seen)
        for g in sub:
            if g.parent in (None, "main"):
                g.parent = a.name
        out += sub
    return out
