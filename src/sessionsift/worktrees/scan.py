"""`worktrees scan`: every linked worktree of the repositories in scope, with the facts and the
three liveness signals behind each decision (decide.py).

Scope: the named repositories (each REPO may be any path inside one), and their worktrees in
the clients' known locations (`<repo>/.claude/worktrees/*`, `$CODEX_HOME/worktrees/**`). With no
REPO the repositories are the ones the clients' own records name: Codex's managed worktrees
under `$CODEX_HOME/worktrees/`, Claude Code's `worktree-state` transcript records and registry
rows whose cwd is a `.claude/worktrees/` path. A repository's main worktree is reported in its
`repo` row and never counted among the worktrees.

Liveness (any positive keeps the worktree):
1. `cwd`: a live process whose /proc/<pid>/cwd is inside the worktree;
2. `argv`: a live process whose argv carries one of the worktree's session ids (Claude Code
   transcripts kept for the worktree path, Codex's `ownerThreadId`) or names it with
   `--worktree NAME`;
3. `harness`: the harnesses' listings of running sessions - a Claude Code registry row (pid alive,
   start time matching, or unprobeable) whose cwd is inside the worktree or whose session is one
   of its sessions; a Codex thread lock held for its owner thread;
plus `lock-owner`: the pid in the client's own lock reason, alive with its start time matching
(the client's lease; it cannot prove which worktrees that process still considers
current, so it only ever keeps, never frees).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import TargetError
from . import contents as C
from . import decide as D
from . import gitcmd as G
from . import harness as H
from . import locks as L
from . import procs as P


@dataclass
class Signal:
    signal: str
    """`cwd` | `argv` | `harness` | `lock-owner`."""
    source: str
    positive: bool | None
    """None: this signal could not be taken for this worktree (said why in `detail`)."""
    detail: str
    pids: list[int] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"signal": self.signal, "source": self.source, "positive": self.positive, "detail": self.detail,
                "pids": self.pids}


@dataclass
class Worktree:
    repo: str
    path: str
    registered: bool = True
    registration_note: str | None = None
    admin_dir: str | None = None
    head: str | None = None
    branch: str | None = None
    detached: bool = False
    exists: bool = True
    prunable: str | None = None
    lock: L.Lock = field(default_factory=lambda: L.Lock("none"))
    agent: str | None = None
    agent_kind: str | None = None
    client_name: str | None = None
    made_by: list[str] = field(default_factory=list)
    session_ids: dict[str, str] = field(default_factory=dict)
    """session id -> where it was found."""
    codex: dict | None = None
    size: G.Size = field(default_factory=lambda: G.Size(None, None, note="not measured"))
    status: G.Status = field(default_factory=lambda: G.Status(error="not taken"))
    main_line: G.MainLine = field(default_factory=lambda: G.MainLine(None, None, "unknown: not looked"))
    merge: G.Merge = field(default_factory=lambda: G.Merge(error="not taken"))
    contents: C.Contents = field(default_factory=lambda: C.Contents(error="not taken"))
    """What removing its directory would take with it besides its checkout (contents.py)."""
    signals: list[Signal] = field(default_factory=list)
    category: str = "unknown"
    reason: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def diverged(self) -> bool | None:
        if self.merge.ahead is None or self.merge.behind is None:
            return None
        return self.merge.ahead > 0 and self.merge.behind > 0

    @property
    def live(self) -> bool:
        return any(s.positive for s in self.signals)

    @property
    def name(self) -> str:
        return self.branch or self.client_name or os.path.basename(self.path)


@dataclass
class Repo:
    path: str
    common_dir: str
    main_line: G.MainLine
    bare: bool = False
    found_by: list[str] = field(default_factory=list)
    worktrees: int = 0
    error: str | None = None

    def to_json(self) -> dict:
        return {"path": self.path, "common_dir": self.common_dir, "main_line": self.main_line.to_json(),
                "bare": self.bare, "found_by": self.found_by, "worktrees": self.worktrees, "error": self.error}


@dataclass
class Roots:
    claude: Path | None
    """None: not looked at (only --codex-home was named); `claude_source` says so."""
    claude_source: str
    codex: Path | None
    codex_source: str

    def of(self, agent: str | None) -> Path | None:
        """The root of ``agent``'s harness (None: not looked at, or not a harness the sweep reads)."""
        if not agent:
            return None
        return self.claude if agent == H.in_repo() else self.codex if agent == H.in_home() else None


NOT_LOOKED = "not looked at (pass {flag})"


def resolve_roots(claude_home: str | None, codex_home: str | None, home: str | None = None) -> Roots:
    """Each harness's root by its flag > `--home DIR` (DIR/.claude, DIR/.codex) > non-empty env var
    > default -- unless the command line names the other harness's root only: then this one is not
    looked at (the root rule)."""
    if home:  # both roots named: a flag given too wins for its harness
        cl, cl_src = H.repo_root(claude_home or str(Path(home).expanduser() / ".claude"))
        cx = Path(codex_home or Path(home).expanduser() / ".codex").expanduser()
        return Roots(cl, cl_src if claude_home else "--home",
                     cx, "--codex-home" if codex_home else "--home")
    named = bool(claude_home) or bool(codex_home)
    if claude_home or not named:
        cl, cl_src = H.repo_root(claude_home)
    else:
        cl, cl_src = None, NOT_LOOKED.format(flag="--claude-home")
    if codex_home:
        cx, src = Path(codex_home).expanduser(), "--codex-home"
    elif named:
        cx, src = None, NOT_LOOKED.format(flag="--codex-home")
    elif os.environ.get("CODEX_HOME"):
        cx, src = Path(os.environ["CODEX_HOME"]).expanduser(), "CODEX_HOME"
    else:
        cx, src = Path.home() / ".codex", "~/.codex"
    return Roots(cl, cl_src, cx, src)


@dataclass
class ScanReport:
    roots: Roots
    scope: str
    repos: list[Repo]
    worktrees: list[Worktree]
    listings: list[H.Listing]
    procs: P.ProcTable
    problems: list[tuple[str, str]] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    """Worktrees in a client's location that belong to repositories outside the named scope."""
    registered: set[str] = field(default_factory=set)
    """Real paths of every worktree (main ones too) the repositories in scope list."""

    @property
    def listings_ok(self) -> bool:
        return all(l.readable for l in self.listings)

    @property
    def stop_reason(self) -> str | None:
        bad = [l.stop_reason for l in self.listings if not l.readable]
        return "; ".join(bad) if bad else None

    def tally(self) -> dict[str, int]:
        return D.tally([w.category for w in self.worktrees])

    @property
    def diverged(self) -> list[Worktree]:
        return [w for w in self.worktrees if w.diverged]


# --- discovery -------------------------------------------------------------------------------


def _repo_of(path: str) -> tuple[str, str] | None:
    """(common dir, main worktree path) of the repository `path` is in; None if not in one."""
    try:
        common = G.common_dir(path)
        first = G.list_worktrees(path)
    except G.GitError:
        return None
    return common, first[0].path if first else path


def scan(repos: list[str] | tuple[str, ...] = (), claude_home: str | None = None, codex_home: str | None = None,
         measure_size: bool = True, workers: int = 4, home: str | None = None) -> ScanReport:
    roots = resolve_roots(claude_home, codex_home, home)
    problems: list[tuple[str, str]] = []
    found: dict[str, tuple[str, list[str]]] = {}  # common dir -> (main path, found_by)
    orphans: list[Worktree] = []

    def add(common: str, main: str, why: str) -> None:
        ent = found.setdefault(common, (main, []))
        if why not in ent[1]:
            ent[1].append(why)

    named = bool(repos)
    for r in repos:
        if not os.path.exists(r):
            raise TargetError(f"{r}: no such directory")
        got = _repo_of(r)
        if got is None:
            raise TargetError(f"{r}: not inside a git repository")
        add(got[0], got[1], "named")

    # the clients' own locations
    codex_roots, cp = H.home_worktree_roots(roots.codex) if roots.codex is not None else ([], [])
    problems += cp
    codex_repo_of: dict[str, str] = {}
    for wt in codex_roots:
        got = _repo_of(wt)
        if got is None:
            orphans.append(_orphan(wt, H.in_home(), "a directory under $CODEX_HOME/worktrees whose git repository "
                                               "cannot be read (its .git points nowhere?)"))
            continue
        codex_repo_of[wt] = got[0]
        if not named:
            add(got[0], got[1], "codex worktrees")
    claude_records, cp = H.repo_records(roots.claude) if roots.claude is not None else ([], [])
    problems += cp
    if not named and roots.claude is not None:
        cands = [(r["original_cwd"] or r["worktree"], "claude-code worktree-state records") for r in claude_records]
        for cwd in H.repo_listing_cwds(roots.claude):
            part = H.repo_worktrees_part()
            if part in cwd:
                cands.append((cwd.split(part)[0], "claude-code registry rows"))
        for path, why in cands:
            if isinstance(path, str) and os.path.isdir(path):
                got = _repo_of(path)
                if got is not None:
                    add(got[0], got[1], why)

    # processes first: no git child of ours runs while the snapshot is taken
    table = P.snapshot()
    cl_list, cl_rows, cx_list, cx_threads = read_listings(roots)

    repo_rows: list[Repo] = []
    wts: list[Worktree] = []
    registered: set[str] = set()
    for common, (main, why) in sorted(found.items(), key=lambda kv: kv[1][0]):
        try:
            listed = G.list_worktrees(main)
            ml = G.main_line(main)
        except G.GitError as exc:
            repo_rows.append(Repo(main, common, G.MainLine(None, None, "unknown: repository unreadable"),
                                  found_by=why, error=str(exc)))
            problems.append((main, str(exc)))
            continue
        adm = G.admin_dirs(common)
        repo = Repo(listed[0].path if listed else main, common, ml, bare=bool(listed and listed[0].bare), found_by=why)
        repo_rows.append(repo)
        paths = set()
        registered.update(os.path.realpath(lw.path) for lw in listed)
        for lw in listed[1:]:
            w = Worktree(repo.path, lw.path, head=lw.head, branch=G.short_branch(lw.branch), detached=lw.detached,
                         prunable=lw.prunable, lock=L.classify(lw.locked, lw.lock_reason), main_line=ml,
                         admin_dir=adm.get(os.path.normpath(lw.path)))
            w.exists = os.path.isdir(lw.path)
            paths.add(os.path.realpath(lw.path))
            wts.append(w)
            repo.worktrees += 1
        # client locations the repository does not list
        cdir = H.repo_worktrees(repo.path)
        try:
            for e in sorted(os.scandir(cdir), key=lambda e: e.name):
                if e.is_dir(follow_symlinks=False) and os.path.realpath(e.path) not in paths:
                    orphans.append(_orphan(e.path, H.in_repo(), "a directory under <repo>/.claude/worktrees that "
                                                                  "the repository does not list as a worktree",
                                           repo.path))
        except OSError:
            pass
        for wt, cm in codex_repo_of.items():
            if cm == common and os.path.realpath(wt) not in paths:
                orphans.append(_orphan(wt, H.in_home(), "a directory under $CODEX_HOME/worktrees that its repository "
                                                    "does not list as a worktree", repo.path))
    left_out = sorted(wt for wt, cm in codex_repo_of.items() if cm not in found)

    skip = {w.path for w in wts}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as ex:
        list(ex.map(lambda w: _facts(w, skip, measure_size, registered), wts))

    by_path = {}
    for rec in claude_records:
        by_path.setdefault(os.path.normpath(rec["worktree"]), []).append(rec)
    for w in wts:
        _attribute(w, roots, by_path)
    all_wts = wts + orphans
    # a listing whose home does not exist, while worktrees say that client made them, is not an
    # empty listing: the sessions keep it somewhere else (a wrong root is a dead battery)
    for lst, agent, flag in ((cl_list, H.in_repo(), "--claude-home"), (cx_list, H.in_home(), "--codex-home")):
        mine = sum(1 for w in all_wts if w.agent == agent)
        if lst.state == "absent" and lst.root and not Path(lst.root).is_dir() and mine:
            lst.state = (f"unreadable: its home {lst.root} does not exist, yet {mine} worktree(s) were made by "
                         f"{agent}: their listing is elsewhere (pass {flag})")
    orphaned = sum(1 for w in wts if w.agent == cl_list.harness and not w.session_ids)
    if orphaned and cl_list.readable:
        cl_list.note = ((cl_list.note + "; ") if cl_list.note else "") + (
            f"{orphaned} claude-code worktree(s) have no transcript under this home: if their sessions ran "
            f"under another CLAUDE_CONFIG_DIR, their registry rows are there (pass --claude-home)")
    listings = [cl_list, cx_list]
    ok = all(l.readable for l in listings)
    for w in wts:
        w.signals = _signals(w, table, cl_list, cl_rows, cx_list, cx_threads)
    for w in all_wts:
        w.category, w.reason = D.decide(w, ok)
    rep = ScanReport(roots, "named repositories" if named else "repositories the clients' records name",
                     repo_rows, all_wts, listings, table, problems, left_out, registered)
    return rep


def read_listings(roots: Roots):
    """(Claude Code listing, its rows, Codex listing, its threads); a harness not looked at gets
    a not-looked listing and nothing read."""
    cl, cl_rows = (H.claude_listing(roots.claude, roots.claude_source) if roots.claude is not None
                   else (H.not_looked(H.in_repo(), roots.claude_source), []))
    cx, cx_threads = (H.codex_listing(roots.codex, roots.codex_source) if roots.codex is not None
                      else (H.not_looked(H.in_home(), roots.codex_source), {}))
    return cl, cl_rows, cx, cx_threads


def _orphan(path: str, agent: str, note: str, repo: str | None = None) -> Worktree:
    w = Worktree(repo or "", path, registered=False, registration_note=note, agent=agent)
    w.made_by.append(f"in {agent}'s worktree location")
    w.exists = os.path.isdir(path)
    return w


def _facts(w: Worktree, skip: set[str], measure_size: bool, registered: set[str]) -> None:
    if w.exists:
        w.status = G.status(w.path, w.admin_dir)
        w.contents = C.walk(w.path, registered)
        if measure_size:
            w.size = G.disk_usage(w.path, skip - {w.path})
        else:
            w.size = G.Size(None, None, note="not measured (--no-size)")
    else:
        w.status = G.Status(error="directory missing")
        w.size = G.Size(None, None, note="directory missing")
    w.merge = G.merge_state(w.repo, w.main_line, w.head)
    w.codex, prob = H.home_metadata(w.admin_dir)
    if prob:
        w.problems.append(prob)


def _attribute(w: Worktree, roots: Roots, wt_records: dict[str, list[dict]]) -> None:
    """Which agent made it, and the session ids that belong to it."""
    if w.lock.state == "client":
        w.agent, w.agent_kind, w.client_name = w.lock.client, w.lock.kind, w.lock.name
        w.made_by.append(f"its lock reason is {w.lock.client}'s own ({w.lock.kind} {w.lock.name!r})")
    cdir = H.repo_worktrees(w.repo)
    if os.path.dirname(os.path.normpath(w.path)) == os.path.normpath(cdir):
        w.agent = w.agent or H.in_repo()
        w.client_name = w.client_name or os.path.basename(w.path).replace("+", "/")
        w.agent_kind = w.agent_kind or ("agent" if os.path.basename(w.path).startswith("agent-a") else "session")
        w.made_by.append("its path is in claude-code's worktree location <repo>/.claude/worktrees/")
    if w.codex is not None:
        w.agent = w.agent or H.in_home()
        w.agent_kind = w.agent_kind or "session"
        w.made_by.append(f"codex metadata {os.path.basename(w.codex['file'])}"
                         + (f" (manager {w.codex['manager']})" if w.codex.get("manager") else ""))
        if w.codex.get("owner_thread_id"):
            w.session_ids.setdefault(w.codex["owner_thread_id"], "codex ownerThreadId")
    home_wt = H.worktree_dir(H.in_home(), roots.codex)
    if home_wt is not None and P.inside(os.path.realpath(w.path), os.path.realpath(home_wt)):
        w.agent = w.agent or H.in_home()
        w.agent_kind = w.agent_kind or "session"
        w.made_by.append("its path is in codex's worktree location $CODEX_HOME/worktrees/")
    for sid in (H.repo_sessions_for(roots.claude, w.path) if roots.claude is not None else ()):
        w.session_ids.setdefault(sid, "claude-code transcript for this worktree path")
    for r in wt_records.get(os.path.normpath(w.path), []):
        if isinstance(r.get("session_id"), str):
            w.session_ids.setdefault(r["session_id"], "claude-code worktree-state record")


def _argv_names(argv: list[str], name: str, flags: tuple[str, ...]) -> bool:
    """``argv`` names worktree ``name`` with one of the client's ``flags`` (``--worktree NAME``,
    ``--worktree=NAME``)."""
    for i, a in enumerate(argv):
        if a in flags and i + 1 < len(argv) and argv[i + 1] == name:
            return True
        if any(a == f"{f}={name}" for f in flags if f.startswith("--")):
            return True
    return False


def _signals(w: Worktree, table: P.ProcTable, cl_list: H.Listing, cl_rows: list[H.LiveEntry],
             cx_list: H.Listing, cx_threads: dict[str, H.LiveEntry]) -> list[Signal]:
    real = os.path.realpath(w.path)
    spell = {real, os.path.normpath(w.path)}
    out: list[Signal] = []
    # 1. cwd
    if not table.available:
        out.append(Signal("cwd", "/proc", None, f"not taken: {table.error}"))
    else:
        pids = [p.pid for p in table.procs if p.cwd and any(P.inside(p.cwd, s) for s in spell)]
        blind = f"; {table.uninspectable} process(es) could not be inspected" if table.uninspectable else ""
        out.append(Signal("cwd", "/proc/<pid>/cwd", bool(pids),
                          (f"process(es) {pids} work inside it" if pids else
                           f"no process of {len(table.procs)} works inside it{blind}"), pids))
    # 2. argv
    ids = [s for s in w.session_ids if len(s) >= 8]
    flags = H.argv_flags(w.agent) if w.client_name else ()
    if not table.available:
        out.append(Signal("argv", "/proc", None, f"not taken: {table.error}"))
    else:
        hits: list[int] = []
        why: list[str] = []
        for p in table.procs:
            if not p.argv:
                continue
            sid = next((s for s in ids if any(s in a for a in p.argv)), None)
            if sid:
                hits.append(p.pid)
                why.append(f"pid {p.pid} carries session {sid}")
            elif flags and w.client_name and _argv_names(p.argv, w.client_name, flags):
                hits.append(p.pid)
                why.append(f"pid {p.pid} runs with {flags[0]} {w.client_name}")
        if hits:
            out.append(Signal("argv", "/proc/<pid>/cmdline", True, "; ".join(why), hits))
        else:
            looked = [f"its {len(ids)} session id(s)"] if ids else []
            if flags:
                looked.append(f"{flags[0]} {w.client_name}")
            out.append(Signal("argv", "/proc/<pid>/cmdline", False,
                              f"no process argv carries {' or '.join(looked)}" if looked
                              else "no session id or worktree name is known for it to look for"))
    # 3. harness listings
    if not cl_list.readable:
        out.append(Signal("harness", "claude-code registry", None, f"not taken: listing {cl_list.state}"))
    elif cl_list.state == "absent":
        out.append(Signal("harness", "claude-code registry", False, f"listing absent ({cl_list.note})"))
    else:
        mine = [r for r in cl_rows if (r.cwd and any(P.inside(os.path.normpath(r.cwd), s) for s in spell))
                or (r.session_id and r.session_id in w.session_ids)]
        keep = [r for r in mine if r.keeps]
        if keep:
            out.append(Signal("harness", "claude-code registry", True, "; ".join(
                f"row {os.path.basename(r.path)} (session {r.session_id}, pid {r.pid}: {r.state}, "
                f"guard {r.guard})" for r in keep), [r.pid for r in keep if r.pid]))
        else:
            stale = "; ".join(f"row {os.path.basename(r.path)} is stale (pid {r.pid} {r.state})" for r in mine)
            out.append(Signal("harness", "claude-code registry", False,
                              stale or f"no live row of {len(cl_rows)} names it"))
    if not cx_list.readable:
        out.append(Signal("harness", "codex thread locks", None, f"not taken: listing {cx_list.state}"))
    elif cx_list.state == "absent":
        out.append(Signal("harness", "codex thread locks", False, f"listing absent ({cx_list.note})"))
    else:
        held = [cx_threads[s] for s in w.session_ids if s in cx_threads and cx_threads[s].keeps]
        if held:
            out.append(Signal("harness", "codex thread locks", True, "; ".join(
                f"thread {t.session_id} lock held by pid(s) {t.pids}" for t in held),
                sorted({p for t in held for p in (t.pids or []) if p > 0})))
        else:
            codex_ids = [s for s in w.session_ids if s in cx_threads]
            out.append(Signal("harness", "codex thread locks", False,
                              f"thread lock(s) of {codex_ids} not held" if codex_ids
                              else f"none of {len(cx_threads)} thread locks belongs to it"))
    # the client's own lease in its lock reason
    if w.lock.state == "client":
        pr = H.lease_probe(w.lock.client, w.lock.pid, w.lock.start)
        if pr is None:
            out.append(Signal("lock-owner", "lock reason", None, f"not taken: {w.lock.client}'s reader probes no lease"))
        else:
            out.append(Signal("lock-owner", "lock reason", not pr.gone,
                              f"pid {w.lock.pid}: {pr.detail}" if pr.state == "alive" else
                              f"pid {w.lock.pid} {pr.state}: {pr.detail}", [w.lock.pid] if not pr.gone else []))
    return out
