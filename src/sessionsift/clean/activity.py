"""The activity gate: is an agent of THIS session's provider working on it, at the finest
granularity that provider's data allows, named for exactly what the evidence proves.

Agent-neutral: every signal is a capability the session's provider offers (providers/base.py):
``is_client_argv`` (which processes are its client, however launched), ``session_listing`` (its
own listing of running sessions, e.g. a registry of rows probed by pid and start time, or held
writer locks), ``whoami`` (the session its environment says runs this command),
``activity_granularity`` and ``projects_of``/``works_in`` (which processes work in a session's
project). One snapshot of the world per scan (:func:`observe`): the live processes
(``worktrees.procs``: /proc cwd and argv), each provider's listing under each root, our own
ancestor processes, and every file a process holds open.

Signals are matched per provider (clients share directories): a process counts for a provider
only when its ``is_client_argv`` says it is that client, so one client never blocks another's
session, whatever directory they share. A recognition that raises blocks (fail closed).

Reasons (a gate that is not proven names what was seen, never "no"):

| reason | proven idle? | what it proves |
|---|---|---|
| ``session_is_live`` | no | a live listing row for this very session (pid alive, start time matching; a held writer lock), or the environment of this command naming it |
| ``session_registered_unprobeable`` | no | a listing row for it whose pid cannot be probed from here (another pid namespace) |
| ``agent_working_in_this_project`` | no | a live process of this provider working in one of the session's projects that no listing row accounts for as another session |
| ``provider_is_running`` | no | a live process of this provider, where the provider records no project per session or this session has none, or the process's cwd could not be read |
| ``client_recognition_failed`` | no | the provider's recognition of a process raised: any process may be its client |
| ``caller_unknown`` | no | the provider's reading of this command's environment raised: this may be its session |
| ``activity_not_observable`` | no | /proc could not be read: nothing can be proven |
| ``file_held_open`` / ``open_files_uninspectable`` / ``open_files_not_observable`` | no | :func:`held_open` |
| ``no_live_session`` | yes | the provider's listing was read, no live row names this session, and every client process in its project is accounted for as another session |
| ``no_agent_working_in_this_project`` | yes | no live process of this provider works in any of the session's projects |
| ``provider_not_running`` | yes | no live process of this provider at all |
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..providers.listing import Listing, LiveEntry
from ..worktrees import procs as P


@dataclass
class Gate:
    name: str
    proven: bool
    reason: str
    detail: str
    evidence: list[dict] = field(default_factory=list)
    waived: bool = False

    def to_json(self) -> dict:
        return {"gate": self.name, "proven": self.proven, "waived": self.waived, "reason": self.reason,
                "detail": self.detail, "evidence": self.evidence}


@dataclass
class World:
    table: P.ProcTable
    ancestors: list[int]
    callers: dict[str, tuple[str, str]] = field(default_factory=dict)
    """provider -> (the session its environment says runs this command, where that was read)."""
    caller_errors: dict[str, str] = field(default_factory=dict)
    listings: dict[tuple[str, str], tuple[Listing, list[LiveEntry]]] = field(default_factory=dict)
    """(provider, root) -> its listing of running sessions and their rows."""
    by_provider: dict[str, list[P.Proc]] = field(default_factory=dict)
    unrecognised: dict[str, list[tuple[P.Proc, str]]] = field(default_factory=dict)
    """provider -> processes whose recognition by it raised (with the error)."""
    open_files: P.OpenFiles | None = None
    """Every file a live process holds open (/proc/*/fd), taken with the snapshot."""

    def self_json(self) -> dict:
        anc = []
        for pid in self.ancestors:
            p = self.proc(pid)
            provs = [n for n, ps in self.by_provider.items() if any(x.pid == pid for x in ps)]
            if provs:
                anc.append({"pid": pid, "providers": provs, "cwd": p.cwd if p else None})
        out = {f"{n.replace('-', '_')}_session_id": self.callers[n][0] if n in self.callers else None
               for n in sorted(set(self.by_provider) | set(self.callers))}
        return {**out, "sessions": [{"provider": n, "session_id": sid, "source": src}
                                    for n, (sid, src) in self.callers.items()], "agent_ancestors": anc}

    def proc(self, pid: int) -> P.Proc | None:
        for p in self.table.procs:
            if p.pid == pid:
                return p
        return None


def observe(providers: dict, roots, env=None) -> World:
    """One snapshot. ``providers``: name -> Provider; ``roots``: (provider name, root) pairs whose
    listings of running sessions are read."""
    env = os.environ if env is None else env
    table = P.snapshot()
    byp = {p.pid: p for p in table.procs}
    anc: list[int] = []
    cur = os.getppid()
    seen: set[int] = set()
    while cur and cur > 1 and cur not in seen:
        seen.add(cur)
        anc.append(cur)
        pp = byp.get(cur)
        cur = pp.ppid if pp is not None and pp.ppid else 0
    w = World(table, anc)
    w.open_files = P.open_files()
    for name, prov in providers.items():
        mine, bad = [], []
        for p in table.procs:
            if not p.argv:
                continue
            try:
                if prov.is_client_argv(p.argv):
                    mine.append(p)
            except Exception as exc:  # a reader's bug: it may be its process (fail closed)
                bad.append((p, f"{type(exc).__name__}: {exc}"))
        w.by_provider[name] = mine
        if bad:
            w.unrecognised[name] = bad
        try:
            claim = prov.whoami(env, None)
        except Exception as exc:
            w.caller_errors[name] = f"{type(exc).__name__}: {exc}"
            claim = None
        if claim is not None and getattr(claim, "session_id", None):
            w.callers[name] = (claim.session_id, getattr(claim, "source", None) or "its environment")
    for name, root in roots:
        prov = providers.get(name)
        if prov is None:
            continue
        try:
            got = prov.session_listing(Path(root), "scan", P.held_locks)
        except Exception as exc:  # unreadable: it proves nothing
            got = (Listing(name, "", str(root), "scan", f"unreadable: the reader failed: {type(exc).__name__}: {exc}"),
                   [])
        if got is not None:
            w.listings[(name, str(root))] = got
    return w


def _proc_ev(p: P.Proc, w: World, **kw) -> dict:
    d = {"pid": p.pid, "cwd": p.cwd, "argv0": (p.argv or [None])[0], "this_commands_caller": p.pid in w.ancestors}
    d.update(kw)
    return d


def _self_note(ev: list[dict]) -> str:
    return " (this command's own caller)" if any(e.get("this_commands_caller") for e in ev) else ""


def _works_in(provider, ref, cwd: str) -> tuple[bool, str | None]:
    try:
        return bool(provider.works_in(ref, cwd)), None
    except Exception as exc:  # cannot tell: it may work there (fail closed)
        return True, f"whether it works in this project cannot be told ({type(exc).__name__}: {exc})"


def gate(w: World, provider, ref, root: Path | None) -> Gate:
    """The activity gate for one session of ``provider`` found under ``root``."""
    name, display, sid = provider.name, provider.display, ref.session_id
    if not w.table.available:
        return Gate("activity", False, "activity_not_observable", f"processes cannot be read ({w.table.error})")
    if name in w.unrecognised:
        bad = w.unrecognised[name]
        return Gate("activity", False, "client_recognition_failed",
                    f"{display}'s recognition of pid {bad[0][0].pid} raised ({bad[0][1]}): any process may be its "
                    "client", [_proc_ev(p, w, note=why) for p, why in bad[:5]])
    if name in w.caller_errors:
        return Gate("activity", False, "caller_unknown",
                    f"{display}'s reading of this command's environment raised ({w.caller_errors[name]}): this "
                    "command may run inside this session")
    caller = w.callers.get(name)
    if caller is not None and caller[0] == sid:
        return Gate("activity", False, "session_is_live", f"the session running this command ({caller[1]} = {sid})",
                    [{"source": caller[1]}])
    lst, rows = w.listings.get((name, str(root)), (None, [])) if root is not None else (None, [])
    live = [r for r in rows if r.session_id == sid and r.keeps]
    if live:
        ev = [{"source": lst.source if lst else "listing", "path": r.path, "pid": r.pid, "pids": r.pids,
               "probe": r.state, "guard": r.guard, "detail": r.detail,
               "this_commands_caller": any(p in w.ancestors for p in r.pids)} for r in live]
        if all(r.unprobeable for r in live):
            return Gate("activity", False, "session_registered_unprobeable",
                        f"a listing row names this session but its pid cannot be probed here ({live[0].detail})", ev)
        return Gate("activity", False, "session_is_live",
                    f"live {lst.source if lst else 'listing'} row {os.path.basename(live[0].path)} (pid "
                    f"{live[0].pid}{', ' + live[0].guard if live[0].guard else ''})" + _self_note(ev), ev)
    procs = w.by_provider.get(name, [])
    gran = getattr(provider, "activity_granularity", "provider")
    try:
        projects = provider.projects_of(ref)
    except Exception:  # cannot tell which projects: any process of it may be writing it
        projects = []
    if gran == "session":
        return _session_level(w, provider, procs, ref, lst)
    if gran in ("session", "project") and projects:
        return _project_level(w, provider, procs, ref)
    if procs:
        ev = [_proc_ev(p, w) for p in procs]
        why = "this session records no project" if not projects else f"{display} records no project per session"
        return Gate("activity", False, "provider_is_running",
                    f"{display} pid {procs[0].pid} is running and {why}" + _self_note(ev), ev)
    return Gate("activity", True, "provider_not_running", f"no {display} process is running")


def _session_level(w: World, provider, procs: list[P.Proc], ref, lst: Listing | None) -> Gate:
    """A provider whose listing says which session each client process runs: a process in the
    project blocks unless a live row accounts for it as another session."""
    name, display, sid = provider.name, provider.display, ref.session_id
    owner: dict[int, str] = {}
    for (n, _root), (_lst, rs) in w.listings.items():
        if n != name:
            continue
        for r in rs:
            if r.keeps and r.session_id:
                for pid in r.pids:
                    owner[pid] = r.session_id
    caller = w.callers.get(name)
    if caller is not None:
        for pid in w.ancestors:
            owner.setdefault(pid, caller[0])
    here = []
    for p in procs:
        if p.cwd is None:
            here.append((p, "cwd unreadable"))
            continue
        yes, why = _works_in(provider, ref, p.cwd)
        if yes:
            here.append((p, why))
    blocking = [(p, why) for p, why in here if p.pid not in owner or owner[p.pid] == sid]
    others = [p for p, _ in here if p.pid in owner and owner[p.pid] != sid]
    ev = [_proc_ev(p, w, is_session=owner[p.pid], blocks="only that session") for p in others]
    if blocking:
        bev = [_proc_ev(p, w, note=why) for p, why in blocking]
        if any(why == "cwd unreadable" for _, why in blocking):
            return Gate("activity", False, "provider_is_running",
                        f"a {display} process whose cwd could not be read", bev + ev)
        return Gate("activity", False, "agent_working_in_this_project",
                    f"{display} pid {blocking[0][0].pid} works in this project and no listing row names "
                    "the session it writes" + _self_note(bev), bev + ev)
    if lst is None or lst.state != "present":
        why = "not scanned" if lst is None else lst.state
        return Gate("activity", True, "no_agent_working_in_this_project",
                    f"no {display} process works in this project ({lst.source if lst else 'listing'} {why}: "
                    "proven at project level only)", ev)
    note = f"{lst.source} {lst.state} ({lst.live} live row(s), none for this session)"
    if others:
        note += f"; {len(others)} client process(es) here are other sessions, each blocks only its own"
    return Gate("activity", True, "no_live_session", note, ev)


def _project_level(w: World, provider, procs: list[P.Proc], ref) -> Gate:
    display = provider.display
    blind = [p for p in procs if p.cwd is None]
    here = []
    for p in procs:
        if p.cwd is None:
            continue
        yes, why = _works_in(provider, ref, p.cwd)
        if yes:
            here.append((p, why))
    if here:
        ev = [_proc_ev(p, w, **({"note": why} if why else {})) for p, why in here]
        return Gate("activity", False, "agent_working_in_this_project",
                    f"{display} pid {here[0][0].pid} works in this project" + _self_note(ev), ev)
    if blind:
        return Gate("activity", False, "provider_is_running",
                    f"{display} pid {blind[0].pid} is running and its cwd could not be read", [_proc_ev(p, w) for p in blind])
    n = len(procs)
    return Gate("activity", True, "no_agent_working_in_this_project",
                f"no {display} process works in this project" + (f" ({n} elsewhere)" if n else ""))


def held_open(of: P.OpenFiles | None, footprint: list[str]) -> Gate | None:
    """A process of ANY program holding a file of the footprint open (a writer keeps writing
    after an unlink, into a file no name reaches): the session is not idle, whatever its
    provider's signals say. Where the open files cannot be checked, nothing is proven either
    (fail closed, and said). None: no process holds any of it."""
    if not footprint:
        return None
    if of is None or not of.available:
        why = "not taken" if of is None else of.error
        return Gate("activity", False, "open_files_not_observable",
                    f"which processes hold the session's files open cannot be read ({why})")
    held = of.holders(footprint)
    if held:
        ev = [{"source": "/proc/<pid>/fd", "pid": pid, "argv0": P.argv0(pid), "path": path} for pid, path in held]
        names = ", ".join(f"pid {e['pid']} ({e['argv0'] or '?'})" for e in ev[:3])
        return Gate("activity", False, "file_held_open", f"{names} {'holds' if len(ev) == 1 else 'hold'} "
                                                         f"{held[0][1]} open: a writer would lose what it writes "
                                                         "after an unlink", ev)
    if of.blind:
        return Gate("activity", False, "open_files_uninspectable",
                    f"the open files of {len(of.blind)} process(es) of this user cannot be read "
                    f"(pid {of.blind[0]}...): a writer among them cannot be ruled out",
                    [{"source": "/proc/<pid>/fd", "pid": p, "note": "descriptors unreadable"} for p in of.blind[:5]])
    return None
