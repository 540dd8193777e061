"""Claude Code's own listing of its running sessions, and what ties a session to a worktree.

Claude Code (2.1.258, measured with the real client, print and interactive mode): every running
session has a registry row ``<claude-home>/sessions/<pid>.json`` (``cwd``, ``sessionId``, ``pid``,
``procStart``, ``pidDomain``); the row is deleted at exit. Rows are probed with live/registry.py
(pid alive and start time matching; a row from another pid namespace cannot be probed and keeps
what it names). With ``--worktree`` the row's ``cwd`` is the worktree (the process chdirs there);
its transcripts live in ``<claude-home>/projects/<encoded worktree path>/<session>.jsonl``, and a
``{"type":"worktree-state","worktreeSession":{worktreePath, originalCwd, worktreeName, sessionId,
...}}`` record names the worktree.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

import orjson

from .discover import canonical_cwd, sanitize
from ..listing import Listing, LiveEntry
from .live import registry as REG

SOURCE = "claude-code registry"


def session_listing(home: Path, source: str) -> tuple[Listing, list[LiveEntry]]:
    look = REG.all_rows(home)
    lst = Listing("claude-code", look.directory, str(home), source, look.dir_state, entries=look.scanned,
                  source=SOURCE)
    rows: list[LiveEntry] = []
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
        row = LiveEntry(sid, r.path, [pid], cwd, keeps=not probe.gone, unprobeable=probe.state == "unprobeable",
                        state=probe.state, guard=probe.guard, detail=probe.detail)
        if row.keeps and cwd is None and sid is None:
            lst.unreadable.append((r.path, "a live row names neither cwd nor sessionId"))
            lst.state = "unreadable: a live registry row names neither cwd nor sessionId"
        rows.append(row)
    lst.live = sum(1 for r in rows if r.keeps)
    return lst, rows


def encodes_to(cwd: str, project_dir: str) -> bool:
    """Whether a process working in ``cwd`` writes its transcripts into ``project_dir`` (the
    client encodes its cwd into the project dir's name; lossy, so it only ever blocks)."""
    return sanitize(canonical_cwd(cwd)) == os.path.basename(project_dir)


def sessions_for(home: Path, worktree: str) -> list[str]:
    """Session ids whose transcripts Claude Code keeps under the worktree's encoded project dir.
    The encoding is lossy (every non-alphanumeric is '-'), so this can name a session of another
    path that encodes the same: only used to KEEP a worktree, never to free one."""
    d = Path(home) / "projects" / sanitize(canonical_cwd(worktree))
    try:
        return sorted(e.name[:-6] for e in os.scandir(d) if e.name.endswith(".jsonl") and e.is_file())
    except OSError:
        return []


WT_STATE = b'"type":"worktree-state"'


def worktree_records(home: Path) -> tuple[list[dict], list[tuple[str, str]]]:
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
