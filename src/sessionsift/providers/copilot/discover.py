"""Which GitHub Copilot CLI sessions exist under a root (its ``COPILOT_HOME``, default ``~/.copilot``).

Layout (measured with 1.0.102; the paths are the native runtime's ``pathResolvedSessionStatePath``):

- ``session-state/<session id>/events.jsonl``: the session's append-only event log (one JSON object a
  line: ``{"type", "data", "id", "timestamp", "parentId"[, "agentId"]}``), with, beside it,
  ``workspace.yaml`` (id, cwd, name, summary_count, fork_count, created_at, updated_at),
  ``checkpoints/`` (``index.md`` and one ``NNN-*.md`` per compaction), ``rewind-file-snapshots/``
  (``index.json``, ``tracking.json``, ``backups/<sha256>``: files as they were before an edit), ``files/``,
  ``research/``, ``session.db`` (the ``sql`` tool's tables, written when used) and, while a client holds the
  session, ``inuse.<pid>.lock`` (the pid as text) and ``inuse.<pid>.hold``;
- ``session-state/.session-operation-locks/<session id>.lock``: an empty lock file per session, kept after exit;
- ``session-store.db`` (SQLite, WAL): the client's cross-session index (``sessions``, ``turns``,
  ``session_files``, an FTS ``search_index``, ``assistant_usage_events``): derived from the event logs, shared
  by every session, not read (the event log holds every fact it does and more).

A subagent (the ``task`` tool) runs inside its parent's session: its events are in the same log, each with
``agentId``, from ``subagent.started`` to ``subagent.completed``/``subagent.failed``. Each is listed as a
child session of its own (``session_id`` = the agentId, ``parent_session_id`` = the session, the same
``events.jsonl`` as its only path, ``size`` null: its bytes are its parent's), the way other providers'
subagents are child sessions.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson

from ..base import Discovery, Problem, SessionRef

PROVIDER = "copilot-cli"
HEAD_BYTES = 1 << 20
TAIL_BYTES = 1 << 16
_SUB = re.compile(rb'(?:^|\n)(\{"type":"subagent\.(?:started|completed|failed)"[^\n]*)')
_INUSE = re.compile(r"^inuse\.(\d+)\.lock$")


def discover(prov, root) -> Discovery:
    if root.path is None:
        return Discovery([], prov.coverage(root, "not_looked", reason="no root given"))
    base = Path(root.path)
    if not base.exists():
        return Discovery([], prov.coverage(root, "absent", 0, reason=f"{base} does not exist"))
    if not base.is_dir():
        return Discovery([], prov.coverage(root, "unreadable", reason=f"{base} is not a directory"))
    sdir = base / "session-state"
    if not sdir.exists():
        return Discovery([], prov.coverage(root, "absent", 0, reason="no session-state/ here"))
    try:
        entries = sorted(os.scandir(sdir), key=lambda e: e.name)
    except OSError as exc:
        return Discovery([], prov.coverage(root, "unreadable", reason=f"session-state/ cannot be listed: "
                                                                       f"{exc.strerror or exc}"))
    problems: list[Problem] = []
    refs: list[SessionRef] = []
    skipped = 0
    for e in entries:
        if e.name.startswith("."):
            continue  # .session-operation-locks/
        try:
            is_dir = e.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if not is_dir:
            problems.append(Problem(e.path, "not a session directory (session-state/<id>/events.jsonl): not read"))
            skipped += 1
            continue
        ev = Path(e.path) / "events.jsonl"
        if not ev.is_file():
            problems.append(Problem(e.path, "session directory without events.jsonl (nothing recorded): not counted"))
            skipped += 1
            continue
        try:
            main, kids = _session(ev, e.name)
        except OSError as exc:
            problems.append(Problem(str(ev), f"unreadable: {exc.strerror or exc}"))
            refs.append(SessionRef(PROVIDER, e.name, [ev], extra={"id_from": "directory name", "unreadable": True}))
            continue
        refs.append(main)
        refs += kids
    if not refs:
        if skipped:
            return Discovery([], prov.coverage(root, "unknown_format", reason=f"{skipped} entr(y/ies) in session-state/ "
                                                                                 "that are no session this reader knows"),
                             problems)
        return Discovery([], prov.coverage(root, "absent", 0, reason="session-state/ holds no session"), problems)
    reason = (f"a lower bound: {skipped} entr(y/ies) of session-state/ not counted (problem rows)" if skipped else None)
    return Discovery(refs, prov.coverage(root, "ok", sum(1 for r in refs if r.parent_session_id is None), reason),
                     problems)


def _first_line(path: Path) -> dict | None:
    with open(path, "rb") as f:
        head = f.read(HEAD_BYTES)
    line = head.split(b"\n", 1)[0].replace(b"\x00", b"")
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _last_instant(path: Path, size: int) -> str | None:
    with open(path, "rb") as f:
        f.seek(max(0, size - TAIL_BYTES))
        tail = f.read()
    for line in reversed(tail.split(b"\n")):
        line = line.replace(b"\x00", b"").strip()
        if not line:
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("timestamp"), str):
            return obj["timestamp"]
    return None


def workspace(path: Path) -> dict:
    """``workspace.yaml``: flat ``key: value`` lines as the client writes them (plain or single-quoted
    scalars); anything else is kept as the text after the colon. {} when absent or unreadable."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    out: dict = {}
    for line in text.splitlines():
        if not line or line[0] in " #-" or ":" not in line:
            continue
        k, _, text_v = line.partition(":")
        text_v = text_v.strip()
        v: Any = text_v
        if len(text_v) >= 2 and text_v[0] == text_v[-1] == "'":
            v = text_v[1:-1].replace("''", "'")
        elif len(text_v) >= 2 and text_v[0] == text_v[-1] == '"':
            try:
                v = orjson.loads(text_v)
            except orjson.JSONDecodeError:
                pass
        elif text_v in ("true", "false"):
            v = text_v == "true"
        elif text_v.isdigit():
            v = int(text_v)
        out[k.strip()] = v
    return out


def live_locks(sess_dir: Path) -> list[dict]:
    """The ``inuse.<pid>.lock`` files the client holds while it has the session open (pid from the name and
    from the file's text). The client removes them at a clean exit; a killed client leaves them."""
    out: list[dict] = []
    try:
        names = sorted(os.listdir(sess_dir))
    except OSError:
        return out
    for n in names:
        m = _INUSE.match(n)
        if not m:
            continue
        try:
            text = (sess_dir / n).read_text(errors="replace").strip()
        except OSError:
            text = None
        out.append({"path": str(sess_dir / n), "pid": int(m.group(1)),
                    "pid_in_file": int(text) if text and text.isdigit() else None,
                    "hold": (sess_dir / f"inuse.{m.group(1)}.hold").exists()})
    return out


def _as_dict(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _session(ev: Path, dirname: str) -> tuple[SessionRef, list[SessionRef]]:
    size = ev.stat().st_size
    head: dict = _first_line(ev) or {}
    d = _as_dict(head.get("data"))
    is_start = head.get("type") == "session.start"
    sid_v = d.get("sessionId")
    sid: str = sid_v if is_start and isinstance(sid_v, str) else dirname
    ctx = _as_dict(d.get("context"))
    ws = workspace(ev.parent / "workspace.yaml")
    project = ctx.get("cwd") if isinstance(ctx.get("cwd"), str) else None
    source = "session.start.context.cwd" if project else None
    if project is None and isinstance(ws.get("cwd"), str):
        project, source = ws["cwd"], "workspace.yaml cwd"
    first = d.get("startTime") if isinstance(d.get("startTime"), str) else head.get("timestamp")
    last = _last_instant(ev, size) if size else None
    title = ws.get("name") if isinstance(ws.get("name"), str) else None
    checkpoints = ev.parent / "checkpoints"
    extra = {"workspace": ws or None, "events_version": d.get("version") if is_start else None,
             "producer": d.get("producer") if is_start else None,
             "git": {k: ctx.get(k) for k in ("gitRoot", "repository", "branch", "headCommit") if ctx.get(k)} or None,
             "live_locks": live_locks(ev.parent),
             "checkpoints": sorted(p.name for p in checkpoints.glob("[0-9]*.md")) if checkpoints.is_dir() else [],
             "first_event": head.get("type")}
    if not is_start:
        extra["id_from"] = "directory name"
    main = SessionRef(PROVIDER, sid, [ev], project=project, project_source=source, first_at=first, last_at=last,
                      size=size, title=title, version=d.get("copilotVersion") if is_start else None, extra=extra)
    return main, _subagents(ev, sid, project, source, size, main.version)


def _subagents(ev: Path, sid: str, project, source, size: int, version: str | None) -> list[SessionRef]:
    if not size:
        return []
    with open(ev, "rb") as f:
        data = f.read()  # bounded by the client's own session size; one pass of a C-speed regex
    kids: dict[str, SessionRef] = {}
    for m in _SUB.finditer(data):
        try:
            o = orjson.loads(m.group(1))
        except orjson.JSONDecodeError:
            continue
        aid = o.get("agentId") if isinstance(o, dict) else None
        dd = o.get("data") if isinstance(o.get("data"), dict) else {}
        if not isinstance(aid, str) or not aid:
            continue
        if o.get("type") == "subagent.started":
            kids.setdefault(aid, SessionRef(
                PROVIDER, aid, [ev], project=project, project_source=source, first_at=o.get("timestamp"),
                size=None, title=dd.get("agentDisplayName") or dd.get("agentDescription"), parent_session_id=sid,
                version=version,
                extra={"kind": "subagent", "agent_name": dd.get("agentName"), "agent_type": dd.get("agentType"),
                       "description": dd.get("agentDescription"), "tool_call_id": dd.get("toolCallId"),
                       "execution_mode": dd.get("executionMode"), "model": dd.get("model"), "outcome": None}))
        elif aid in kids:
            kids[aid].last_at = o.get("timestamp")
            kids[aid].extra["outcome"] = "completed" if o.get("type") == "subagent.completed" else "failed"
    return list(kids.values())
