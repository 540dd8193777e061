"""`status`: one verdict per session of every provider (docs/live.md).

The verdict, its evidence rows, notes and what is invisible come from the session's provider
(``Provider.live_state``); a provider that offers none answers ``unknown`` with the reason it
declares (``Provider.lacks["live_state"]``). A reader's failure is an unreadable surface of that
session, never the end of the answer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..providers.base import Coverage, Problem
from ..providers.liveness import LiveState, LiveWorld, ev
from .world import Unit, path_of, units, world as make_world

NO_CAPABILITY = "its reader offers no live-state surfaces"


@dataclass
class SessionVerdict:
    """One session's verdict in an answer."""

    unit: Unit
    state: LiveState

    def to_json(self) -> dict:
        """The ``session`` row (docs/live.md): the shared fields, then the provider's own."""
        u, st = self.unit, self.state
        ref = u.ref
        return {"provider": u.name, "session_id": ref.session_id, "is_subagent": ref.is_subagent,
                "parent_session_id": ref.parent_session_id, "path": path_of(ref),
                "verdict": st.verdict, "reason": st.reason, "settled": st.settled,
                "evidence": st.evidence, "notes": st.notes, "invisible": st.invisible,
                "owner_ended": st.owner_ended, "turn_ended": st.turn_ended, "unreadable": st.unreadable,
                "children": st.children, **st.fields}


@dataclass
class StatusResult:
    verdicts: list[SessionVerdict]
    coverage: list[Coverage]
    problems: list[Problem]
    world: LiveWorld
    lacking: dict[str, str] = field(default_factory=dict)
    """provider -> why it offers no live state (its sessions are ``unknown``)."""

    @property
    def counts(self) -> dict[str, int]:
        return dict(Counter(v.state.verdict for v in self.verdicts))

    @property
    def unreadable(self) -> int:
        return sum(len(v.state.unreadable) for v in self.verdicts)

    def shared_notes(self) -> list[tuple[str, int]]:
        """Notes said under more than one session (said once by a short answer), with how many."""
        c = Counter(n for v in self.verdicts for n in dict.fromkeys(v.state.notes))
        return [(n, k) for n, k in c.items() if k > 1]

    def invisible(self) -> list[tuple[str, list[str]]]:
        """(provider display, what its disk cannot show), once per provider in the answer."""
        out: dict[str, list[str]] = {}
        for v in self.verdicts:
            have = out.setdefault(v.unit.display, [])
            for i in v.state.invisible:
                if i not in have:
                    have.append(i)
        return [(d, xs) for d, xs in out.items() if xs]


def unavailable(u: Unit, why: str) -> LiveState:
    """The state of a session whose provider offers no live-state capability: unknown, with why."""
    return LiveState("unknown", why,
                     [ev("reader", f"{u.display} offers no live-state capability", f"nothing: {why}")])


def assess(u: Unit, w: LiveWorld) -> LiveState:
    """One session's live state from its provider (memoised in the world: parents ask for children)."""
    key = u.key
    got = w.states.get(key)
    if got is not None:
        return got
    prov = u.provider
    if prov is None:
        st = unavailable(u, "no reader is installed for it")
    else:
        try:
            st = prov.live_state(u.ref, w)
        except Exception as exc:  # a reader's bug must not take the answer down: say so
            st = LiveState("unknown", f"{u.display}'s live-state reader failed: {type(exc).__name__}: {exc}",
                           [ev("reader", f"failed: {type(exc).__name__}: {exc}", "nothing")],
                           unreadable=[{"surface": "reader", "path": path_of(u.ref), "why": f"{type(exc).__name__}: {exc}"}])
        if st is None:
            st = unavailable(u, getattr(prov, "lacks", {}).get("live_state") or NO_CAPABILITY)
    w.states[key] = st
    return st


def bind(w: LiveWorld, us: list[Unit], sel) -> None:
    """Let providers ask the world for other sessions' states (a parent for its children)."""
    entries = {e.name: e for e in sel.survey.entries}
    by_key = {u.key: u for u in us}

    def other(ref) -> LiveState:
        u = by_key.get((ref.provider, ref.session_id))
        if u is None:
            e = entries.get(ref.provider)
            u = Unit(ref.provider, e.display if e else ref.provider, e.provider if e else None, ref)
        return assess(u, w)

    w.assess = other


def status(sel, now: float | None = None) -> StatusResult:
    """One verdict per session of the selection (every provider), in the selection's order."""
    us = units(sel)
    w = make_world(sel, now, us)
    bind(w, us, sel)
    out = [SessionVerdict(u, assess(u, w)) for u in us]
    lacking = {u.name: (getattr(u.provider, "lacks", {}).get("live_state") or NO_CAPABILITY)
               for u in us if u.provider is None or type(u.provider).live_state is _base_live_state()}
    return StatusResult(out, sel.coverage(), sel.problems(), w, lacking)


def _base_live_state() -> Any:
    from ..providers.base import Provider

    return Provider.live_state
