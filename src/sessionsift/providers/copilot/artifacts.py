"""GitHub Copilot CLI's plans and images (the ``plans`` / ``images`` capabilities, providers/artifacts.py), as the
client keeps them (1.0.102; measured: tests/realclient/copilot/scenarios_plan_image.py).

- **plan**: the client's todo list is a table of the session's own SQLite database,
  ``session-state/<id>/session.db`` ``todos`` (``id, title, description, status`` with status ``pending``,
  ``in_progress``, ``done`` or ``blocked``, ``created_at``/``updated_at``; the runtime creates it with the
  database), written by the model through the ``sql`` tool. The table is the plan as it stands now (its rows in
  insertion order); the ``sql`` calls whose query names ``todos`` are its updates (a failed one: a failed
  update), the last one binding the row's locator. ``session.todos_changed`` is ephemeral (never on disk). Plan
  mode's ``plan.md`` in the session directory (free text; ``session.plan_changed`` records each
  create/update/delete; ``exit_plan_mode.requested`` is ephemeral) is named in a note when present, its text
  not read as a checklist.
- **images**: a ``view`` of an image answers ``result.binaryResultsForLlm: [{type: "image", assetId,
  mimeType, byteLength}]`` and the bytes are in a ``session.binary_asset`` event (``assetId``
  ``sha256:<hex>``, base64 ``data``) written just before the result; a user message's attachments
  (``blob`` with inline ``data`` or an ``assetId``; ``file`` with an ``assetId`` when its bytes were sent) the
  same way (per the session-events schema: ``-p`` does not read ``@file``, so not produced here). Each image is
  given at the record that references it (carrier ``tool_result`` with the call's id, or ``block``); an asset
  no record references is given at its own event.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..base import Problem, ReadReport, Record, SessionRef

_TODOS = re.compile(r"\btodos\b", re.I)


def _session_dir(ref: SessionRef) -> Path | None:
    return Path(ref.paths[0]).parent if ref.paths and not ref.parent_session_id else None


def stored_todos(ref: SessionRef) -> tuple[list[dict] | None, str | None, str | None]:
    """(steps, where, why not): the ``todos`` rows of the session's session.db."""
    d = _session_dir(ref)
    if d is None:
        return None, None, "a subagent's todo list is its parent session's (one session.db per session)"
    db = d / "session.db"
    if not db.exists():
        return None, None, "no session.db in the session directory (the sql tool was never used)"
    from .. import sqlite_ro

    try:
        con = sqlite_ro.connect(db)
        try:
            with sqlite_ro.snapshot(con, db):
                cols = sqlite_ro.retry(lambda: sqlite_ro.columns(con, "todos"), db)
                if not {"title", "status"} <= cols:
                    return None, None, f"{db} holds no todos table"
                rows = sqlite_ro.retry(lambda: con.execute(
                    "SELECT title, status FROM todos ORDER BY rowid").fetchall(), db)
        finally:
            con.close()
    except Exception as e:  # said in the row's notes; the plan answer goes on
        reason = e.reason if isinstance(e, sqlite_ro.StoreError) else f"{type(e).__name__}: {e}"
        return None, None, f"{db} unreadable: {reason}"
    return [{"step": t, "status": s} for t, s in rows], f"{db} (todos table)", None


def _is_todo_call(r: Record) -> bool:
    inp = r.tool_input if isinstance(r.tool_input, dict) else {}
    q = inp.get("query")
    return r.kind == "tool_call" and r.tool_name == "sql" and isinstance(q, str) and bool(_TODOS.search(q))


def plans(prov, refs: list[SessionRef]):
    from ..artifacts import Plan, PlanAnswer

    out = PlanAnswer()
    for ref in refs:
        rep = ReadReport()
        pl = Plan(prov.name, ref.session_id, None, None, ref.is_subagent, ref.parent_session_id, ref=ref)
        calls: dict[str, Record] = {}
        ok: list[Record] = []
        try:
            for r in prov.read(ref, rep, raw=True):
                if r.copy_of is not None:
                    continue
                if _is_todo_call(r) and r.call_id:
                    calls[r.call_id] = r
                elif r.kind == "tool_result" and r.call_id in calls:
                    if r.is_error is True:
                        pl.failed_updates += 1
                    else:
                        ok.append(calls[r.call_id])
        except Exception as exc:  # a reader's bug: this session is unreadable, the answer goes on
            out.problems.append(Problem(str(ref.paths[0]) if ref.paths else ref.session_id,
                                        f"reader failed: {type(exc).__name__}: {exc}"))
        out.reports.append(rep)
        out.problems.extend(rep.problems)
        steps, where, why = stored_todos(ref)
        pl.updates = len(ok)
        if steps:
            pl.kind, pl.source, pl.steps = "checklist", "session.db todos", steps
            if ok:
                r = ok[-1]
                pl.line, pl.locator, pl.timestamp, pl.record = r.line, r.locator, r.instant, r
            pl.notes.append(f"the list as {where} keeps it now")
        elif why is not None and ok:
            pl.notes.append(f"{len(ok)} sql update(s) of todos recorded, but {why}")
        else:
            pl.notes.append("no todo list recorded in this session" + (f": {why}" if why else ""))
        if pl.failed_updates:
            pl.notes.append(f"{pl.failed_updates} plan update(s) failed (the client refused them): not counted")
        d = _session_dir(ref)
        plan_md = d / "plan.md" if d is not None else None
        if plan_md is not None and plan_md.is_file():
            pl.notes.append(f"plan mode's plan file: {plan_md} ({plan_md.stat().st_size} bytes, free text: not read)")
        out.plans.append(pl)
    return out


def _d(v) -> dict:
    return v if isinstance(v, dict) else {}


def images(prov, refs: list[SessionRef]):
    from ..artifacts import Image, ImageAnswer, decode

    out = ImageAnswer()
    for ref in refs:
        rep = ReadReport()
        assets: dict[str, tuple[Record, str | None, str | None]] = {}
        used: set[str] = set()
        got: list[tuple[Record, str, str | None, str | None, str | None]] = []  # rec, carrier, mime, b64, path

        def take(r: Record, carrier: str, item: dict) -> None:
            aid = item.get("assetId") if isinstance(item.get("assetId"), str) else None
            mime = item.get("mimeType") if isinstance(item.get("mimeType"), str) else None
            if mime is not None and not mime.startswith("image/") and item.get("type") != "image":
                return
            data = item.get("data") if isinstance(item.get("data"), str) else None
            if data is None and aid in assets:
                data, mime = assets[aid][1], mime or assets[aid][2]
            if aid:
                used.add(aid)
            path = item.get("path") if isinstance(item.get("path"), str) else None
            got.append((r, carrier, mime, data, path))

        try:
            for r in prov.read(ref, rep, raw=True):
                if r.copy_of is not None or not isinstance(r.raw, dict):
                    continue
                d = _d(r.raw.get("data"))
                if r.native == "session.binary_asset":
                    aid = d.get("assetId")
                    if isinstance(aid, str):
                        assets[aid] = (r, d.get("data") if isinstance(d.get("data"), str) else None,
                                       d.get("mimeType") if isinstance(d.get("mimeType"), str) else None)
                elif r.native == "tool.execution_complete":
                    for b in _d(d.get("result")).get("binaryResultsForLlm") or []:
                        if isinstance(b, dict):
                            take(r, "tool_result", b)
                elif r.native == "user.message":
                    for a in d.get("attachments") or []:
                        if isinstance(a, dict) and a.get("type") in ("blob", "file") and (
                                a.get("type") == "blob" or a.get("assetId")):
                            take(r, "block", a)
        except Exception as exc:  # a reader's bug: this session is unreadable, the answer goes on
            out.problems.append(Problem(str(ref.paths[0]) if ref.paths else ref.session_id,
                                        f"reader failed: {type(exc).__name__}: {exc}"))
        for aid, (r, data, mime) in assets.items():
            if aid not in used and (mime is None or mime.startswith("image/")):
                got.append((r, "block", mime, data, None))
        got.sort(key=lambda g: (g[0].line or 0))
        per: dict[str, int] = {}
        for r, carrier, mime, data, path in got:
            per[r.locator] = per.get(r.locator, 0) + 1
            b = decode(data)
            out.images.append(Image(
                f"{r.locator}i{per[r.locator]}", r.line, carrier, mime, "base64" if data is not None else None,
                len(b) if b is not None else None, hashlib.sha256(b).hexdigest() if b is not None else None,
                None, r.instant, r.call_id if carrier == "tool_result" else None, b, ref=ref, record=r, path=path))
        out.reports.append(rep)
        out.problems.extend(rep.problems)
    return out
