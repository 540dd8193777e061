"""The activity gate: is an agent of THIS session's provider working on it, at the finest
granularity that provider's data allows, named for exactly what the evidence proves.

One snapshot of the world per scan (:func:`observe`): the live processes (``worktrees.procs``:
/proc cwd and argv), each Claude Code data root's session registry (``worktrees.harness``: rows
probed by pid AND start time) and each Codex home's thread-writer locks (``/proc/locks``), plus
who runs this command (``$CLAUDE_CODE_SESSION_ID`` and our own ancestor processes).

Signals are matched per provider (seed 000, the pooled-directories bug): a process counts for a
provider only when ``Provider.is_client_argv`` says it is that client, so a Claude process never
blocks a Gemini transcript, whatever directory they share.

Reasons (a gate that is not proven names what was seen, never "no"):

| reason | proven idle? | what it proves |
|---|---|---|
| ``session_is_live`` | no | a live registry row for this very session (pid alive, start time matching), a Codex thread lock held for it, or ``$CLAUDE_CODE_SESSION_ID`` (the session running this command) |
| ``session_registered_unprobeable`` | no | a registry row for it whose pid cannot be probed from here (another pid namespace) |
| ``agent_working_in_this_project`` | no | a live process of this provider whose cwd is inside the session's project and that no registry row accounts for as another session |
| ``provider_is_running`` | no | a live process of this provider, where the provider records no project per session (Codex) or this session has none, or the process's cwd could not be read |
| ``activity_not_observable`` | no | /proc could not be read: nothing can be proven |
| ``no_live_session`` | yes | Claude Code: its registry was read, no live row names this session, and every client process in its project is accounted for as another session |
| ``no_agent_working_in_this_project`` | yes | no live process of this provider works inside the session's project |
| ``provider_not_running`` | yes | no live process of this provider at all |
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..worktrees import harness as H
from ..worktrees import procs as P

ENV_SELF = "CLAUDE_CODE_SESSION_ID"


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
    self_session: str | None
    claude: dict[str, tuple[H.Listing, list[H.ClaudeRow]]] = field(default_factory=dict)
    codex: dict[str, tuple[H.Listing, dict[str, H.CodexThread]]] = field(default_factory=dict)
    by_provider: dict[str, list[P.Proc]] = field(default_factory=dict)
    open_files: P.OpenFiles | None = None
    """Every file a live process holds open (/proc/*/fd), taken with the snapshot."""

    def self_json(self) -> dict:
        anc = []
        for pid in self.ancestors:
            p = self.proc(pid)
            provs = [n for n, ps in self.by_provider.items() if any(x.pid == pid for x in ps)]
            if provs:
                anc.append({"pid": pid, "providers": provs, "cwd": p.cwd if p else None})
        return {"claude_code_session_id": self.self_session, "agent_ancestors": anc}

    def proc(self, pid: int) -> P.Proc | None:
        for p in self.table.procs:
            if p.pid == pid:
                return p
        return None


def observe(providers: dict, claude_homes: list[Path], codex_homes: list[Path], env=None) -> World:
    """One snapshot. ``providers``: name -> Provider (their ``is_client_argv`` sorts processes)."""
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
    w = World(table, anc, env.get(ENV_SELF) or None)
    w.open_files = P.open_files()
    for name, prov in providers.items():
        w.by_provider[name] = [p for p in table.procs if p.argv and _is(prov, p.argv)]
    for h in claude_homes:
        w.claude[str(h)] = H.claude_listing(h, "scan")
    for h in codex_homes:
        w.codex[str(h)] = H.codex_listing(h, "scan")
    return w


def _is(prov, argv: list[str]) -> bool:
    try:
        return bool(prov.is_client_argv(argv))
    except Exception:  # an outside reader's bug: not its process
        return False


def _canon(p: str) -> str:
    try:
        return os.path.realpath(p)
    except OSError:
        return os.path.normpath(p)


def _in_project(cwd: str, project: str) -> bool:
    return P.inside(os.path.normpath(cwd), os.path.normpath(project)) or P.inside(_canon(cwd), _canon(project))


def _proc_ev(p: P.Proc, w: World, **kw) -> dict:
    d = {"pid": p.pid, "cwd": p.cwd, "argv0": (p.argv or [None])[0], "this_commands_caller": p.pid in w.ancestors}
    d.update(kw)
    return d


def gate(w: World, provider, ref, root: Path | None) -> Gate:
    """The activity gate for one session of ``provider`` found under ``root``."""
    name = provider.name
    if not w.table.available:
        return Gate("activity", False, "activity_not_observable", f"processes cannot be read ({w.table.error})")
    procs = w.by_provider.get(name, [])
    if name == "claude-code":
        return _claude(w, procs, ref, root)
    if name == "codex":
        return _codex(w, procs, ref, root)
    gran = getattr(provider, "activity_granularity", "provider")
    return _project_level(w, procs, ref, provider.display, gran)


def _self_note(ev: list[dict]) -> str:
    return " (this command's own caller)" if any(e.get("this_commands_caller") for e in ev) else ""


def _claude(w: World, procs: list[P.Proc], ref, root: Path | None) -> Gate:
    sid = ref.session_id
    lst, rows = w.claude.get(str(root), (None, [])) if root is not None else (None, [])
    ev: list[dict] = []
    if w.self_session == sid:
        return Gate("activity", False, "session_is_live",
                    f"the session running this command (${ENV_SELF} = {sid})", [{"source": f"${ENV_SELF}"}])
    live = [r for r in rows if r.session_id == sid and r.keeps]
    if live:
        ev = [{"source": "registry row", "path": r.path, "pid": r.pid, "probe": r.probe.state, "guard": r.probe.guard,
               "detail": r.probe.detail, "this_commands_caller": r.pid in w.ancestors} for r in live]
        if all(r.probe.state == "unprobeable" for r in live):
            return Gate("activity", False, "session_registered_unprobeable",
                        f"a registry row names this session but its pid cannot be probed here ({live[0].probe.detail})", ev)
        return Gate("activity", False, "session_is_live",
                    f"live registry row {os.path.basename(live[0].path)} (pid {live[0].pid}, {live[0].probe.guard})"
                    + _self_note(ev), ev)
    # which client processes are accounted for as a session (a live row of any scanned root,
    # or our caller whose session $CLAUDE_CODE_SESSION_ID names)
    owner: dict[int, str] = {}
    for _lst, rs in w.claude.values():
        for r in rs:
            if r.keeps and r.pid and r.session_id:
                owner[r.pid] = r.session_id
    if w.self_session:
        for pid in w.ancestors:
            owner.setdefault(pid, w.self_session)
    project = ref.project
    pdir = ref.extra.get("project_dir") if isinstance(ref.extra, dict) else None
    here = []
    for p in procs:
        if p.cwd is None:
            here.append((p, "cwd unreadable"))
        elif (project and _in_project(p.cwd, project)) or (pdir and _encodes_to(p.cwd, pdir)):
            here.append((p, None))
    blocking = [(p, why) for p, why in here if p.pid not in owner or owner[p.pid] == sid]
    others = [p for p, _ in here if p.pid in owner and owner[p.pid] != sid]
    ev = [_proc_ev(p, w, is_session=owner[p.pid], blocks="only that session") for p in others]
    if blocking:
        bev = [_proc_ev(p, w, note=why) for p, why in blocking]
        if any(why for _, why in blocking):
            return Gate("activity", False, "provider_is_running",
                        "a Claude Code process whose cwd could not be read", bev + ev)
        return Gate("activity", False, "agent_working_in_this_project",
                    f"Claude Code pid {blocking[0][0].pid} works in this project and no registry row names "
                    "the session it writes" + _self_note(bev), bev + ev)
    if lst is None or lst.state != "present":
        why = "not scanned" if lst is None else lst.state
        return Gate("activity", True, "no_agent_working_in_this_project",
                    f"no Claude Code process works in this project (registry {why}: proven at project level only)", ev)
    note = f"registry {lst.state} ({lst.live} live row(s), none for this session)"
    if others:
        note += f"; {len(others)} client process(es) here are other sessions, each blocks only its own"
    return Gate("activity", True, "no_live_session", note, ev)


def _encodes_to(cwd: str, project_dir: str) -> bool:
    from ..providers.claude.discover import canonical_cwd, sanitize

    try:
        return sanitize(canonical_cwd(cwd)) == os.path.basename(project_dir)
    except Exception:
        return False


def _codex(w: World, procs: list[P.Proc], ref, root: Path | None) -> Gate:
    lst, threads = w.codex.get(str(root), (None, {})) if root is not None else (None, {})
    t = threads.get(ref.session_id)
    if t is not None and t.running:
        return Gate("activity", False, "session_is_live", f"its thread-writer lock is held by pid(s) {t.holders}",
                    [{"source": "codex thread lock", "path": t.path, "pids": t.holders}])
    if procs:
        ev = [_proc_ev(p, w) for p in procs]
        return Gate("activity", False, "provider_is_running",
                    f"Codex CLI pid {procs[0].pid} is running; Codex partitions sessions by date and records no "
                    "project a running process could be matched to" + _self_note(ev), ev)
    return Gate("activity", True, "provider_not_running", "no Codex CLI process is running")


def _project_level(w: World, procs: list[P.Proc], ref, display: str, gran: str) -> Gate:
    project = ref.project
    if gran == "provider" or not project:
        if procs:
            ev = [_proc_ev(p, w) for p in procs]
            why = "this session records no project" if not project else f"{display} records no project per session"
            return Gate("activity", False, "provider_is_running",
                        f"{display} pid {procs[0].pid} is running and {why}" + _self_note(ev), ev)
        return Gate("activity", True, "provider_not_running", f"no {display} process is running")
    blind = [p for p in procs if p.cwd is None]
    here = [p for p in procs if p.cwd is not None and _in_project(p.cwd, project)]
    if here:
        ev = [_proc_ev(p, w) for p in here]
        return Gate("activity", False, "agent_working_in_this_project",
                    f"{display} pid {here[0].pid} works in this project" + _self_note(ev), ev)
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
