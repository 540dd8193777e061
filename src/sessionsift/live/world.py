"""The units a live question asks about and the world it asks in (built once per answer)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..providers.base import Provider, SessionRef
from ..providers.liveness import LiveWorld


@dataclass
class Unit:
    """One session of an answer: its provider, its SessionRef, and what the selection holds for it."""

    name: str
    display: str
    provider: Provider | None
    ref: SessionRef
    native: Any = None
    child: bool = False
    """In the answer only because a target named its parent (``Selection.children``)."""

    @property
    def key(self) -> tuple[str, str]:
        return (self.name, self.ref.session_id)


def units(sel) -> list[Unit]:
    """Every session of a Selection: Claude Code's deep sessions (as SessionRefs, the deep session
    kept as ``native``), then every other provider's refs, in the selection's order."""
    out: list[Unit] = []
    entries = {e.name: e for e in sel.survey.entries}
    if sel.claude is not None:
        deep = sel.deep_provider
        e = entries.get(deep)
        prov = e.provider if e is not None and e.provider is not None else _load(deep)
        home = sel.claude.home.path  # type: ignore[attr-defined]
        for s in sel.claude.sessions:  # type: ignore[attr-defined]
            ref = SessionRef(deep, s.session_id, [s.path],
                             extra={"root": str(home), "project_dir": str(s.project_dir)})
            out.append(Unit(deep, e.display if e else (prov.display if prov else deep), prov, ref, s))
    for r in sel.refs:
        e = entries.get(r.provider)
        prov = e.provider if e is not None and e.provider is not None else _load(r.provider)
        out.append(Unit(r.provider, e.display if e else r.provider, prov, r,
                        child=(r.provider, r.session_id) in sel.children))
    return out


def _load(name: str) -> Provider | None:
    from ..providers import load

    cls = load(name)
    return cls() if cls is not None else None


def _procs():
    from ..worktrees import procs

    return procs.snapshot()


def _locks():
    from ..worktrees import procs

    return procs.held_locks()


def world(sel, now: float | None = None, us: list[Unit] | None = None) -> LiveWorld:
    """The world of one answer over `sel`: every session the survey found (a session's children
    are found among them), the selection's deep sessions, each provider's root; processes and
    /proc/locks are read when a provider first asks."""
    refs: dict[str, list[SessionRef]] = {}
    roots: dict[str, Any] = {}
    for e in sel.survey.entries:
        if e.root is not None:
            roots[e.name] = e.root
        if e.name != sel.deep_provider:  # its sessions are the deep ones (`native`)
            refs[e.name] = list(e.sessions)
    for r in sel.refs:  # a session named by path outside its root
        have = refs.setdefault(r.provider, [])
        if all(x is not r for x in have):
            have.append(r)
    native = {u.key: u.native for u in (us if us is not None else units(sel)) if u.native is not None}
    return LiveWorld(now=time.time() if now is None else now, refs=refs, native=native, roots=roots,
                     proc_source=_procs, lock_source=_locks)


def fresh(w: LiveWorld) -> LiveWorld:
    """The same answer's world observed again (a wait's next look): new time, processes, locks."""
    return LiveWorld(now=time.time(), refs=w.refs, native=w.native, roots=w.roots, proc_source=w.proc_source,
                     lock_source=w.lock_source)


def path_of(ref: SessionRef) -> str | None:
    return str(Path(ref.paths[0])) if ref.paths else None
