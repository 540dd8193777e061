"""The agent harnesses' own listings of the sessions they have running, and what ties a session
to a worktree.

Claude Code (2.1.258, measured with the real client, print and interactive mode): every running
session has a registry row `<claude-home>/sessions/<pid>.json` whose `cwd` is the worktree when
it runs with `--worktree` (the process also chdirs there); the row is deleted at exit. Its
transcripts live in `<claude-home>/projects/<encoded worktree path>/<session>.jsonl`, and a
`{"type":"worktree-state","worktreeSession":{worktreePath, originalCwd, worktreeName,
sessionId, ...}}` record names the worktree. Rows are probed with providers/claude/live/registry.py (pid alive
and start time matching; a row from another pid namespace cannot be probed and keeps what it
names).

Codex CLI (0.171.0, measured with the real client): `codex exec --worktree` creates
`$CODEX_HOME/worktrees/<4 hex>/<repo name>` (detached HEAD, no lock), writes
`{"version":1,"ownerThreadId":"<thread id>"}` to `codex-thread.json` in the worktree's git dir,
and - the measured blind spot - keeps its OWN cwd in the original checkout, with no thread id
in its argv. While a thread is being written the process holds a `flock` on
`$CODEX_HOME/thread-writer-locks/<thread id>.lock` (released at exit, file left behind): that
held lock is its listing of running sessions, read from /proc/locks without taking the lock.

A listing is `present` (read), `absent` (its directory does not exist: nothing ever registered
there) or `unreadable: <why>` (it exists and could not be read, or one of its rows could not).
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..providers.claude.discover import canonical_cwd, sanitize
from ..providers.claude.live import registry as REG
from . import procs as P


@dataclass
class Listing:
    harness: str
    path: str
    root: str
    root_source: str
    state: str
    """`present` | `absent` | `unreadable: <why>` | `not looked at (pass --<flag>)`."""
    entries: int | None = 0
    """Rows read; None when the listing was not looked at."""
    live: int | None = 0
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    note: str | None = None

    @property
    def looked(self) -> bool:
        return not self.state.startswith("not looked at")

    @property
    def readable(self) -> bool:
        """Read (present or absent). An unread listing -- unreadable, or not looked at because
        only the other harness's root was named -- proves nothing about running sessions."""
        return self.looked and not self.state.startswith("unreadable")

    @property
    def stop_reason(self) -> str | None:
        if self.readable:
            return None
        at = f" at {self.path}" if self.path else ""
        return f"the {self.harness} listing of running sessions{at} is {self.state}"

    def to_json(self) -> dict:
        return {"harness": self.harness, "path": self.path, "root": self.root, "root_source": self.root_source,
                "state": self.state, "entries": self.entries, "live": self.live,
                "unreadable": [{"path": p, "why": w} for p, w in self.unreadable], "note": self.note}


# --- Claude Code -----------------------------------------------------------------------------


@dataclass
class ClaudeRow:
    path: str
    session_id: str | None
    pid: int | None
    cwd: str | None
    probe: REG.PidProbe

    @property
    def keeps(self) -> bool:
        """Alive, or not provably dead (another pid domain, an unprobeable pid)."""
        return not self.probe.gone


def not_looked(harness: str, source: str) -> Listing:
    """The listing of a harness whose root the command line did not name while it named the
    other's (the root rule, docs/cli.md "Data roots"): never read, so never this machine's own."""
    return Listing(harness, "", "", source, source, entries=None, live=None)


def claude_listing(home: Path, source: str) -> tuple[Listing, list[ClaudeRow]]:
    look = REG.all_rows(home)
    lst = Listing("claude-code", look.directory, str(home), source, look.dir_state, entries=look.scanned)
    rows: list[ClaudeRow] = []
    if look.dir_state == "absent":
        lst.note = ("no session registry directory: no Claude Code session ever registered under this home"
                    if home.is_dir() else "the Claude Code home itself does not exist")
        return lst, rows
    if look.unreadable:
        lst.unreadable = list(look.unreadable)
        lst.state = f"unreadable: {len(look.unreadable)} registry row(s) could not be read"
    for r in look.rows:
        d = r.data
        pid = r.pid
        if not isinstance(pid, int):
            lst.unreadable.append((r.path, "row names no pid"))
            lst.state = "unreadable: a registry row names no pid"
            continue
        cwd = d.get("cwd") if isinstance(d.get("cwd"), str) else None
        sid = d.get("sessionId") if isinstance(d.get("sessionId"), str) else None
        probe = REG.probe_pid(pid, d.get("procStart"), d.get("pidDomain"))
        row = ClaudeRow(r.path, sid, pid, cwd, probe)
        if row.keeps and cwd is None and sid is None:
            lst.unreadable.append((r.path, "a live row names neither cwd nor sessionId"))
            lst.state = "unreadable: a live registry row names neither cwd nor sessionId"
        rows.append(row)
    lst.live = sum(1 for r in rows if r.keeps)
    return lst, rows


def claude_sessions_for(home: Path, worktree: str) -> list[str]:
    """Session ids whose transcripts Claude Code keeps under the worktree's encoded project dir.
    The encoding is lossy (every non-alphanumeric is '-'), so this can name a session of another
    path that encodes the same: only used to KEEP a worktree (signal 2), never to free one."""
    d = Path(home) / "projects" / sanitize(canonical_cwd(worktree))
    try:
        return sorted(e.name[:-6] for e in os.scandir(d) if e.name.endswith(".jsonl") and e.is_file())
    except OSError:
        return []


WT_STATE = b'"type":"worktree-state"'


def claude_worktree_records(home: Path) -> tuple[list[dict], list[tuple[str, str]]]:
    """`worktree-state` records of transcripts in project dirs that encode a `.claude/worktrees/`
    path (the only dirs such a session's transcript can be in). Each: {worktree, original_cwd,
    name, session_id, transcript}. Bytes are prefiltered; only matching lines are parsed."""
    out: list[dict] = []
    problems: list[tuple[str, str]] = []
    proj = Path(home) / "projects"
    try:
        dirs = [e for e in os.scandir(proj) if "-claude-worktrees-" in e.name and e.is_dir()]
    except FileNotFoundError:
        return out, problems
    except OSError as exc:
        return out, [(str(proj), f"unreadable: {exc.strerror}")]
    for d in dirs:
        try:
            files = [e.path for e in os.scandir(d.path) if e.name.endswith(".jsonl") and e.is_file()]
        except OSError as exc:
            problems.append((d.path, f"unreadable: {exc.strerror}"))
            continue
        for f in files:
            try:
                with open(f, "rb") as fh:
                    if os.fstat(fh.fileno()).st_size == 0:
                        continue
                    with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
                        pos = m.find(WT_STATE)
                        while pos >= 0:
                            a = m.rfind(b"\n", 0, pos) + 1
                            b = m.find(b"\n", pos)
                            b = len(m) if b < 0 else b
                            try:
                                o = orjson.loads(m[a:b])
                            except orjson.JSONDecodeError:
                                o = None
                            ws = o.get("worktreeSession") if isinstance(o, dict) else None
                            if isinstance(ws, dict) and isinstance(ws.get("worktreePath"), str):
                                out.append({"worktree": ws["worktreePath"], "original_cwd": ws.get("originalCwd"),
                                            "name": ws.get("worktreeName"),
                                            "session_id": ws.get("sessionId") or o.get("sessionId"),
                                            "transcript": f})
                            pos = m.find(WT_STATE, b)
            except OSError as exc:
                problems.append((f, f"unreadable: {exc.strerror}"))
    return out, problems


# --- Codex CLI -------------------------------------------------------------------------------


@dataclass
class CodexThread:
    thread_id: str
    path: str
    holders: list[int] | None
    """pids /proc/locks names as holding the lock; [] = not held."""

    @property
    def running(self) -> bool:
        return bool(self.holders)


def codex_listing(home: Path, source: str) -> tuple[Listing, dict[str, CodexThread]]:
    d = Path(home) / "thread-writer-locks"
    lst = Listing("codex", str(d), str(home), source, "present")
    threads: dict[str, CodexThread] = {}
    try:
        names = sorted(os.listdir(d))
    except FileNotFoundError:
        lst.state = "absent"
        lst.note = ("no thread-writer-locks directory: no Codex thread was ever written under this home"
                    if Path(home).is_dir() else "the Codex home itself does not exist")
        return lst, threads
    except OSError as exc:
        lst.state = f"unreadable: {exc.strerror}"
        return lst, threads
    locks, err = P.held_locks()
    if locks is None:
        lst.state = f"unreadable: {err}"
        return lst, threads
    for n in names:
        if not n.endswith(".lock") or n.startswith("."):
            continue
        p = d / n
        lst.entries += 1
        try:
            st = os.stat(p)
        except FileNotFoundError:
            continue
        except OSError as exc:
            lst.unreadable.append((str(p), f"unreadable: {exc.strerror}"))
            lst.state = "unreadable: a thread lock file could not be read"
            continue
        holders = locks.get((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino), [])
        threads[n[:-5]] = CodexThread(n[:-5], str(p), holders)
    lst.live = sum(1 for t in threads.values() if t.running)
    return lst, threads


CODEX_META = ("codex-thread.json", "codex-worktree.json")


def codex_metadata(admin: str | None) -> tuple[dict | None, str | None]:
    """Codex's ownership metadata in a worktree's git dir: ({file, owner_thread_id, manager},
    problem). `codex-thread.json` is what 0.171.0 writes; `codex-worktree.json` is the newer
    manager's (openai/codex codex-rs/worktree/src/metadata.rs)."""
    if not admin:
        return None, None
    found: dict | None = None
    for name in CODEX_META:
        p = os.path.join(admin, name)
        try:
            with open(p, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            continue
        except OSError as exc:
            return found, f"{p}: unreadable: {exc.strerror}"
        try:
            o = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return found or {"file": p, "owner_thread_id": None, "manager": None}, f"{p}: not JSON"
        if not isinstance(o, dict):
            continue
        tid = o.get("ownerThreadId")
        cur = {"file": p, "owner_thread_id": tid if isinstance(tid, str) and tid else None,
               "manager": o.get("manager") if isinstance(o.get("manager"), str) else None}
        if found is None or (found["owner_thread_id"] is None and cur["owner_thread_id"]):
            found = cur
    return found, None


def codex_worktree_roots(home: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """Directories under `$CODEX_HOME/worktrees/` (up to three levels, as Codex's own manager
    looks) that hold a `.git` entry."""
    root = Path(home) / "worktrees"
    out: list[str] = []
    problems: list[tuple[str, str]] = []

    def walk(d: str, depth: int) -> None:
        try:
            entries = list(os.scandir(d))
        except FileNotFoundError:
            return
        except OSError as exc:
            problems.append((d, f"unreadable: {exc.strerror}"))
            return
        for e in entries:
            if not e.is_dir(follow_symlinks=False):
                continue
            if os.path.lexists(os.path.join(e.path, ".git")):
                out.append(e.path)
            elif depth < 3:
                walk(e.path, depth + 1)

    walk(str(root), 1)
    return sorted(out), problems
