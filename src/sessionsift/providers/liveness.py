"""The shared vocabulary of live state: what a provider's live-state hooks return.

The questions `status`, `wait`, `whoami` and `agents` (``sessionsift.live``) are written once for
every agent. They ask each session's :class:`~sessionsift.providers.base.Provider` for these
capabilities (hooks with documented defaults on the base class):

- ``live_state(ref, world) -> LiveState | None``: one session's verdict with its evidence rows
  (surface, value, what it proves), notes and what is invisible on its client's disk;
- ``whoami(env, world) -> WhoamiClaim | None``: what the environment a client exports to its tool
  subprocesses says about the calling session;
- ``subagents(ref, children, world) -> list[ChildAgent] | None``: the child sessions a session
  spawned, each joined to the tool call that spawned it where the records allow.

One verdict vocabulary for every agent, first that holds wins (:func:`decide`)::

    stale-dead > waiting > running > waiting-children > idle-background-open > idle-eot > unknown

A disagreement between surfaces (a live owner says idle while the transcript's turn is open) is
``unknown`` at running's rung. An agent whose disk cannot tell a state says so with evidence (in
``LiveState.invisible``): never a guess, never "Claude Code only".

Nothing here knows an agent: the names, paths and formats are each provider's own.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

VERDICTS = ("stale-dead", "waiting", "running", "waiting-children", "idle-background-open", "idle-eot", "unknown")
"""Every verdict, in precedence order (the first that holds wins)."""

RUNGS = ("stale-dead", "waiting", "running", "disputed", "waiting-children", "idle-background-open", "idle-eot")
"""What :func:`decide` weighs, in order; ``disputed`` (surfaces disagree) gives ``unknown``."""

LIVE_VERDICTS = frozenset({"running", "waiting", "waiting-children"})
"""A session in one of these is doing (or waiting on) something: its parent waits on it."""


def decide(rungs: dict[str, str | None], undecided: str) -> tuple[str, str]:
    """(verdict, reason): the first rung of :data:`RUNGS` that holds (its reason, a non-empty
    string, says why); ``unknown`` with ``undecided`` when none does."""
    for r in RUNGS:
        why = rungs.get(r)
        if why:
            return ("unknown" if r == "disputed" else r), why
    return "unknown", undecided


def as_dict(x: Any) -> dict:
    """``x`` when it is a JSON object, else an empty one (a record's field read defensively)."""
    return x if isinstance(x, dict) else {}


def as_list(x: Any) -> list:
    """``x`` when it is a JSON array, else an empty one."""
    return x if isinstance(x, list) else []


def ev(surface: str, value: str, proves: str, **fields: Any) -> dict:
    """One evidence row: the surface read, what it holds, what that proves (JSON-ready fields)."""
    return {"surface": surface, "value": value, "proves": proves, **fields}


def cut(s: str | None, n: int) -> str:
    """``s`` shortened to ``n`` characters with an explicit marker (``…``); None -> ``-``. Raw
    text: the renderer escapes it (a reader does not depend on the rendering path)."""
    if s is None:
        return "-"
    return s if len(s) <= n else s[: max(0, n - 1)] + "…"


@dataclass
class Section:
    """A list a provider's disk holds for one session (open background launches, open todos),
    shown under ``status --verbose``: a title and one line per item, raw (strings from disk
    included: the renderer escapes every line, render.Out.text)."""

    title: str
    items: list[str]


@dataclass
class LiveState:
    """One session's live state, as its provider's surfaces show it."""

    verdict: str
    """One of :data:`VERDICTS` (use :func:`decide`)."""
    reason: str
    """The strongest evidence for the verdict, in one line."""
    evidence: list[dict]
    """One row per surface read (:func:`ev`), including the absent and unreadable ones."""
    notes: list[str] = field(default_factory=list)
    """What a reader must know to weigh this verdict (a lost record, an unprobeable pid)."""
    invisible: list[str] = field(default_factory=list)
    """What this client's disk cannot show at all (e.g. a pending approval): the same for every
    session of the provider, so an answer says it once."""
    settled: str | None = None
    """For ``stale-dead``: what the turn was when its owner ended (``mid-tool``, ``mid-turn``,
    ``settled``, ``unknown``); None otherwise."""
    owner_ended: bool | None = None
    """True: no owner process is on record any more (nothing can write this session's records);
    False: an owner is alive; None: the disk cannot say."""
    turn_ended: bool | None = None
    """True: the last turn ended (an end of turn, an interrupt); False: it is open; None: unknown."""
    unreadable: list[dict] = field(default_factory=list)
    """Surfaces that could not be read (``{surface, path, why}``): the verdict rests on the others."""
    children: list[dict] = field(default_factory=list)
    """The session's live children as its provider sees them (JSON-ready rows)."""
    fields: dict[str, Any] = field(default_factory=dict)
    """Further row fields of this provider (JSON-ready; docs/live.md names them)."""
    sections: list[Section] = field(default_factory=list)
    """Lists shown under ``--verbose``."""
    watch: list[str] = field(default_factory=list)
    """Paths whose change can change this state (``wait`` watches them; directories are watched
    for files born in them)."""
    detail: Any = None
    """The provider's own richer object (e.g. Claude Code's deep Verdict), for its own use."""


@dataclass
class WhoamiClaim:
    """What one client's exported environment says about the calling session."""

    provider: str
    session_id: str | None
    """The session named (None: this client's environment is present but names none)."""
    source: str
    """The variable read (or the one that would be), e.g. ``CLAUDE_CODE_SESSION_ID``."""
    note: str
    """What the value proves, or why it cannot tell (with evidence: what the client exports)."""
    well_formed: bool | None = None
    top_level: bool | None = None
    """True when the value names the top-level session even inside a subagent (Claude Code);
    None when the client does not say."""
    evidence: list[dict] = field(default_factory=list)


@dataclass
class ChildAgent:
    """One child session (a subagent) joined to what spawned it."""

    ref: Any
    """The child's SessionRef."""
    join: str | None
    """How it was joined to its spawning call (the record field that names it), None: unjoined."""
    spawn: dict | None = None
    """``{call_id, tool_name, locator, timestamp}`` of the spawning call, or None."""
    agent_type: str | None = None
    description: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    status: str = "unknown"
    """completed | running | unknown (never a guessed failure)."""
    status_why: str = ""
    returned: str | None = None
    returned_via: str | None = None
    files: list[str] = field(default_factory=list)
    name: str | None = None
    """How the answer names it (a lane, a child session id); None: the child's session id."""
    parent: str | None = None
    """The ``name`` of the node that spawned it (``main``: the session itself), for a tree."""
    group: str | None = None
    """A node it is listed under instead (Claude Code's workflow runs), for a tree."""
    duration_secs: float | None = None
    row: dict | None = None
    """The JSON row as its provider names it (None: the question builds it from these fields)."""


# -- the world: one snapshot of what every provider's live hooks may look at ----------------------


@dataclass
class LiveWorld:
    """What the live questions observed once for every session they ask about: the time, the
    processes (lazily), ``/proc/locks`` (lazily), every session the survey found (to find a
    session's children), and the objects the selection holds for each session (Claude Code's
    deep sessions). Built by the question (``sessionsift.live``); providers only read it."""

    now: float
    refs: dict[str, list[Any]] = field(default_factory=dict)
    """provider name -> every SessionRef its discovery found (not only the selected ones)."""
    native: dict[tuple[str, str], Any] = field(default_factory=dict)
    """(provider, session_id) -> the object the selection holds for it (a deep session)."""
    roots: dict[str, Any] = field(default_factory=dict)
    """provider name -> its Root (where its data was looked for)."""
    proc_source: Callable[[], Any] | None = None
    """Makes the process table (objects with ``procs`` [pid, ppid, start_ticks, cwd, argv],
    ``available``, ``error``); None: processes are not observable."""
    lock_source: Callable[[], tuple[dict | None, str | None]] | None = None
    """Makes ``((major, minor, inode) -> holder pids, error)`` from /proc/locks."""
    states: dict[tuple[str, str], LiveState] = field(default_factory=dict)
    """Live states already assessed in this answer (a parent asks for its children's)."""
    assess: Callable[[Any], LiveState] | None = None
    """Assess another session's live state in this world (set by the question; memoised)."""
    _procs: Any = None
    _locks: Any = None

    # -- processes ------------------------------------------------------------------------------
    def procs(self):
        """The process table (taken once), or None when not observable."""
        if self._procs is None:
            self._procs = self.proc_source() if self.proc_source is not None else False
        return self._procs or None

    def proc_error(self) -> str | None:
        t = self.procs()
        if t is None:
            return "processes are not observable here"
        return None if getattr(t, "available", True) else (getattr(t, "error", None) or "/proc is not readable")

    def client_procs(self, provider) -> list | None:
        """The live processes ``provider.is_client_argv`` recognises as its client; None when the
        process table cannot be read."""
        t = self.procs()
        if t is None or not getattr(t, "available", True):
            return None
        out = []
        for p in t.procs:
            try:
                if p.argv and provider.is_client_argv(p.argv):
                    out.append(p)
            except Exception:  # an outside reader's bug: not its process
                continue
        return out

    def proc(self, pid: int):
        t = self.procs()
        if t is None:
            return None
        for p in t.procs:
            if p.pid == pid:
                return p
        return None

    # -- locks and open files -------------------------------------------------------------------
    def locks(self) -> tuple[dict | None, str | None]:
        if self._locks is None:
            self._locks = self.lock_source() if self.lock_source is not None else (None, "locks are not observable here")
        return self._locks

    def lock_holders(self, path: str | os.PathLike[str]) -> list[int] | None:
        """The pids /proc/locks names as holding a lock on ``path`` (our own process left out),
        [] when none does; None when the locks or the file cannot be looked at."""
        table, _err = self.locks()
        if table is None:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        me = os.getpid()
        return sorted({p for p in table.get((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino), []) if p != me})

    @staticmethod
    def opens(pid: int, paths: Iterable[str]) -> bool | None:
        """Whether process ``pid`` has one of ``paths`` open (``/proc/<pid>/fd``: the very files, by
        device and inode -- a process in another mount namespace may hold a file of the same name);
        None when its descriptors cannot be listed."""
        want = set()
        for p in paths:
            try:
                st = os.stat(p)
            except OSError:
                continue
            want.add((st.st_dev, st.st_ino))
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            return None
        for n in names:
            try:
                st = os.stat(f"/proc/{pid}/fd/{n}")
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in want:
                return True
        return False

    @staticmethod
    def works_in(proc, directory: str) -> bool | None:
        """Whether process ``proc`` (of the process table) works in ``directory`` or under it: its cwd
        is there by name AND is the directory this reader sees at that name (a process in another
        mount namespace can have a cwd of the same name); None when its cwd cannot be read."""
        cwd = getattr(proc, "cwd", None)
        if cwd is None:
            return None
        if not inside(cwd, directory):
            return False
        try:
            a, b = os.stat(f"/proc/{proc.pid}/cwd"), os.stat(cwd)
        except OSError:
            return False
        return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)

    # -- sessions -------------------------------------------------------------------------------
    def children_of(self, ref) -> list:
        """The child sessions discovery found for ``ref`` (its provider's refs naming it as parent)."""
        return [r for r in self.refs.get(ref.provider, []) if r.parent_session_id == ref.session_id]

    def state_of(self, ref) -> LiveState | None:
        """Another session's live state in this answer (assessed once), or None when the question
        cannot assess here."""
        if self.assess is None:
            return None
        key = (ref.provider, ref.session_id)
        if key not in self.states:
            self.states[key] = self.assess(ref)
        return self.states[key]


def project_processes(prov, ref, world, proves: str) -> tuple[str, str, dict]:
    """(``alive`` | ``none`` | ``unknown``, why, evidence row ``processes``) for a client that holds no
    lock and no file open between writes: the processes ``prov.is_client_argv`` recognises whose cwd
    is the session's project (``ref.project``) or under it, by inode (``LiveWorld.works_in``). A
    process there is evidence for every session of that project; none there proves none of them runs."""
    name = prov.display
    procs = world.client_procs(prov)
    if procs is None:
        return "unknown", f"processes cannot be observed ({world.proc_error()})", ev(
            "processes", f"not observable ({world.proc_error()})", proves)
    project = ref.project
    if not project:
        n = len(procs)
        return ("none" if not n else "unknown"), (
            f"no {name} process is running" if not n else "the session records no project to match its processes to"), \
            ev("processes", f"{n} {name} process(es); the session records no project", proves,
               pids=[p.pid for p in procs])
    here = [p for p in procs if world.works_in(p, project)]
    blind = [p for p in procs if p.cwd is None]
    row = ev("processes", f"{len(here)} {name} process(es) in {project}" + (
        f"; {len(blind)} whose directory cannot be read" if blind else ""), proves,
        pids=[p.pid for p in here], project=project, cwd_unreadable=[p.pid for p in blind])
    if here:
        return "alive", f"{name} pid {here[0].pid} works in this project", row
    if blind:
        return "unknown", f"{name} pid {blind[0].pid} runs and its directory cannot be read", row
    return "none", f"no {name} process works in this project", row


def proc_alive(pid: int) -> bool | None:
    """Whether ``pid`` names a live, non-zombie process (None: cannot be told here)."""
    if not os.path.isdir("/proc/self"):
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return False
    except OSError:
        return os.path.exists(f"/proc/{pid}")
    r = raw.rfind(b")")
    state = raw[r + 2:r + 3]
    return state not in (b"Z", b"X")


def inside(child: str, parent: str) -> bool:
    """Whether directory ``child`` is ``parent`` or under it (both as given, normalised)."""
    c, p = os.path.normpath(child), os.path.normpath(parent)
    return c == p or c.startswith(p.rstrip(os.sep) + os.sep)


def children_rung(world: LiveWorld, ref) -> tuple[str | None, list[dict]]:
    """The ``waiting-children`` reason for a session whose child sessions are live (running,
    waiting, or waiting on their own children), and one row per child: ``{session_id, verdict,
    live, why}``. Used by providers whose subagents are sessions of their own."""
    rows = []
    live = []
    for c in world.children_of(ref):
        st = world.state_of(c)
        if st is None:
            continue
        is_live = st.verdict in LIVE_VERDICTS
        rows.append({"session_id": c.session_id, "verdict": st.verdict, "live": is_live, "why": st.reason})
        if is_live:
            live.append(f"{c.session_id} ({st.verdict}: {st.reason})")
    return ("live child sessions: " + "; ".join(live) if live else None), rows


# -- wait: the conditions every agent's wait is checked against ----------------------------------

HEARTBEAT_SECS = 5.0
"""Without a file event, a wait re-assesses this often (a dead owner and aging children change no file)."""


@dataclass
class Condition:
    """``wait --for``: ``stop``, ``idle``, ``human`` or ``write:<path-regex>[:<line-regex>]``."""

    kind: str
    path_re: re.Pattern | None = None
    line_re: re.Pattern | None = None
    spec: str = ""


def parse_condition(spec: str) -> Condition:
    from ..errors import UsageError

    if spec in ("stop", "idle", "human"):
        return Condition(spec, spec=spec)
    if spec.startswith("write:"):
        rest = spec[len("write:"):]
        parts = re.split(r"(?<!\\):", rest, maxsplit=1)
        pr = parts[0].replace("\\:", ":")
        lr = parts[1] if len(parts) > 1 else None
        if not pr:
            raise UsageError("--for write: needs a path regex: write:<path-regex>[:<line-regex>]")
        try:
            return Condition("write", re.compile(pr), re.compile(lr, re.M) if lr else None, spec)
        except re.error as exc:
            raise UsageError(f"--for {spec!r}: bad regex: {exc}")
    raise UsageError(f"--for {spec!r}: expected stop, idle, human or write:<path-regex>[:<line-regex>]")


def satisfied(cond: Condition, st: LiveState) -> bool:
    """Whether a live state meets ``stop``/``idle``/``human`` (``write:`` is met by a record)."""
    if cond.kind == "stop":
        # background work open but no owner process on record: nothing can write to the session any
        # more (a launch's completion is written by its owner), so the session has stopped
        return st.verdict in ("idle-eot", "stale-dead") or (
            st.verdict == "idle-background-open" and st.owner_ended is True and st.turn_ended is True)
    if cond.kind == "idle":
        return st.verdict in ("idle-eot", "idle-background-open", "stale-dead")
    if cond.kind == "human":
        return st.verdict == "waiting"
    return False


@dataclass
class WriteHit:
    """The record that met a ``write:`` condition."""

    lane: str
    line: int | None
    tool: str
    path: str
    matched_line: str | None
    timestamp: str | None
    locator: str | None = None


@dataclass
class WaitOutcome:
    satisfied: bool
    state: LiveState
    hit: WriteHit | None
    waited_secs: float
    polls: int
    watcher: str
    baselines: dict[str, int]
    discovered: list[str] = field(default_factory=list)


def unjoined_children(children: list, world: "LiveWorld | None") -> list[ChildAgent]:
    """``Provider.subagents``' default: every child session, unjoined (``join`` None), its status
    from its own live state."""
    out = []
    for c in children:
        st = world.state_of(c) if world is not None else None
        status, why = "unknown", "no live state"
        if st is not None:
            if st.verdict in ("running", "waiting", "waiting-children"):
                status, why = "running", f"its live state is {st.verdict}: {st.reason}"
            elif st.verdict == "idle-eot":
                status, why = "completed", f"its last turn ended: {st.reason}"
            else:
                why = f"its live state is {st.verdict}: {st.reason}"
        out.append(ChildAgent(c, None, started_at=c.first_at, ended_at=c.last_at if status == "completed" else None,
                              status=status, status_why=why))
    return out


def last_activity_of(prov: Any, ref: Any) -> list:
    """``Provider.last_activity``'s default: each JSON Lines file of ``ref.paths`` read backwards for
    its last record's instant (``prov.instant_keys``); any other file ``ref.last_at`` for the first
    path, None for the rest."""
    from pathlib import Path

    from ..read.tail import last_jsonl_instant

    out: list = []
    for i, p in enumerate(ref.paths):
        if os.fspath(p).endswith(".jsonl"):
            out.append((Path(p), last_jsonl_instant(p, prov.instant_keys)))
        else:
            out.append((Path(p), ref.last_at if i == 0 else None))
    return out
