"""opencode's (and Kilo Code's) plans and images: the ``plans`` / ``images`` capabilities (providers/artifacts.py),
as the client writes them (opencode 1.18.33, Kilo Code 7.7.7; measured:
tests/realclient/opencode/scenarios_plan_image.py).

- **plan**: a ``todowrite`` tool part's ``state.input.todos`` (``[{content, status, priority}]``; status
  ``pending``, ``in_progress``, ``completed``, ``cancelled``: the tool's schema). The tool also replaces the
  session's rows of the ``todo`` table (``session_id, content, status, priority, position``; the JSON store
  before the database: ``storage/todo/<session id>.json``, a list of the same objects): the list as it stands
  now. The calls hold every update and are the plan; the store is read beside them: it is the plan of a
  session whose calls are gone, and a store that differs from the last call is said in a note.
- **images**: a ``file`` part whose ``mime`` is ``image/*`` (``opencode run -f F`` attaches F as a synthetic
  file part of the prompt, ``url`` a ``data:`` URL; a ``file://`` URL names a path: no bytes in the store),
  carrier ``block``; a tool result's ``state.attachments`` (``read`` of an image answers "Image read
  successfully" with the image as a file attachment), carrier ``tool_result``.
"""
from __future__ import annotations

import json
from pathlib import Path

from .base import Record, SessionRef

PLAN_TOOL = "todowrite"


def _steps(todos) -> list[dict]:
    return [{"step": t.get("content"), "status": t.get("status")} for t in todos if isinstance(t, dict)] \
        if isinstance(todos, list) else []


def plan_update(record: Record):
    if record.kind != "tool_call" or record.tool_name != PLAN_TOOL:
        return None
    from .artifacts import PlanUpdate

    inp = record.tool_input if isinstance(record.tool_input, dict) else {}
    return PlanUpdate(_steps(inp.get("todos")), None)


def _file_image(f, carrier: str, out: list) -> None:
    from .artifacts import RecordImage, data_url

    if not isinstance(f, dict) or f.get("type", "file") != "file":
        return
    mime = f.get("mime") if isinstance(f.get("mime"), str) else None
    if mime is None or not mime.startswith("image/"):
        return
    u = f.get("url")
    url: str = u if isinstance(u, str) else ""
    name = f.get("filename") if isinstance(f.get("filename"), str) else None
    src = f.get("source")
    sp = src.get("path") if isinstance(src, dict) else None
    path = name or (sp if isinstance(sp, str) else None)
    mt, b64 = data_url(url)
    if b64 is not None:
        out.append(RecordImage(carrier, mt or mime, b64, "base64", path=path))
    elif url.startswith("file://"):
        out.append(RecordImage(carrier, mime, None, "path", path=url[7:]))
    else:
        out.append(RecordImage(carrier, mime, None, "url" if url else None, path=path or url or None))


def record_images(ref: SessionRef, record: Record) -> list:
    raw = record.raw if isinstance(record.raw, dict) else None
    if raw is None:
        return []
    out: list = []
    if record.native == "part/file":
        _file_image(raw, "block", out)
    elif record.native == "part/tool#output":
        st = raw.get("state")
        att = st.get("attachments") if isinstance(st, dict) else None
        for a in att if isinstance(att, list) else []:
            _file_image(a, "tool_result", out)
    return out


def stored_todos(prov, ref: SessionRef) -> tuple[list[dict], str] | None:
    """The session's todo list as the store keeps it now (steps, where), or None (no list stored, or no
    store of it: a database before the ``todo`` table)."""
    if ref.extra.get("store") == "legacy-json":
        from .opencode_json import storage_dir

        data_dir = ref.extra.get("data_dir")
        if not data_dir:
            return None
        f = storage_dir(Path(data_dir)) / "todo" / f"{ref.session_id}.json"
        try:
            todos = json.loads(f.read_bytes())
        except (OSError, ValueError):
            return None
        steps = _steps(todos)
        return (steps, str(f)) if steps else None
    from . import sqlite_ro
    from .opencode import NEED

    db = Path(ref.extra.get("db_path") or ref.paths[0])
    try:
        con, cols = prov._cons().get(db, NEED)
        if cols is None:
            return None
        with sqlite_ro.snapshot(con, db):
            tcols = sqlite_ro.retry(lambda: sqlite_ro.columns(con, "todo"), db)
            if not {"session_id", "content", "status", "position"} <= tcols:
                return None
            rows = sqlite_ro.retry(lambda: con.execute(
                "SELECT content, status FROM todo WHERE session_id = ? ORDER BY position", (ref.session_id,)).fetchall(), db)
    except Exception:  # the store is read beside the calls: an unreadable one says nothing more
        return None
    steps = [{"step": c, "status": s} for c, s in rows]
    return (steps, f"{db} (todo table)") if steps else None


def plans(prov, sel, audit: bool = False):
    from .artifacts import plans_from_records
    from .fileevents import refs_of

    refs = refs_of(sel, prov.name)
    if not refs:
        return None
    ans = plans_from_records(prov, refs, audit)
    for pl in ans.plans:
        got = stored_todos(prov, pl.ref) if pl.ref is not None else None
        if got is None:
            continue
        steps, where = got
        if pl.kind is None:
            pl.kind, pl.source, pl.steps = "checklist", "todo store", steps
            pl.notes = [f"no todowrite call recorded: the list as the store keeps it now ({where})"]
        elif steps != pl.steps:
            pl.notes.append(f"the store's list ({where}) differs from the last todowrite call")
    return ans
