"""Gemini CLI's plans and images (the ``plans`` / ``images`` capabilities, providers/artifacts.py), as the
client writes them (0.61.0, measured: tests/realclient/gemini/scenarios_plan_image.py).

- **plan**: a ``write_todos`` call's ``todos`` (``[{description, status}]``; status one of ``pending``,
  ``in_progress``, ``completed``, ``cancelled``, ``blocked``: the client's ``TODO_STATUSES``). The client
  refuses a list with two steps in progress (the call's ``status: "error"``, ``response.error``): a failed
  update. The list lives only in the calls (the tool's ``returnDisplay: {todos}``); there is no todo file.
- **plan mode**: ``enter_plan_mode``, the plan written into the session's plans dir
  (``<project tmp dir>/<session id>/plans/``, or ``general.plan.directory`` inside the project), then
  ``exit_plan_mode(plan_filename)``, whose result names the file ("The approved implementation plan is stored
  at: <path>", or "Plan rejected ... The plan is stored at: <path>"). The latest such call that succeeded binds
  the plan file (``kind: "file"``, ``source: "exit_plan_mode"``, ``path``, ``exists`` on disk now; a rejected
  plan says so in a note); a session's ``write_todos`` checklist is given beside it.
- **images**: ``inlineData`` parts (``mimeType``, base64 ``data``). An ``@file`` reference to an image in
  the prompt puts the file's bytes in the user message between "--- Content from referenced files ---"
  and "--- End of content ---" (carrier ``block``); ``read_file`` of an image answers a
  ``functionResponse`` ("Binary content provided (1 item(s)).") followed by the image as a sibling
  ``inlineData`` part, in ``toolCalls[].result`` and again in the user message that sends it back
  (carrier ``tool_result``; the second is a copy, not counted). A part nested in
  ``functionResponse.parts`` (the newer Content shape) is read too, and a ``fileData`` part (a
  ``fileUri``: no bytes on disk) is named with its URI.
"""
from __future__ import annotations

import os
import re

from ..base import Record, SessionRef

PLAN_TOOL = "write_todos"
_STORED_AT = re.compile(r"plan is stored at: (.+)")


def plan_update(record: Record):
    if record.kind != "tool_call" or record.tool_name != PLAN_TOOL:
        return None
    from ..artifacts import PlanUpdate

    inp = record.tool_input if isinstance(record.tool_input, dict) else {}
    todos = inp.get("todos")
    if not isinstance(todos, list):
        todos = []
    return PlanUpdate([{"step": t.get("description"), "status": t.get("status")} for t in todos
                       if isinstance(t, dict)], None)


def _image(p, carrier: str, out: list) -> None:
    from ..artifacts import RecordImage

    if not isinstance(p, dict):
        return
    d = p.get("inlineData")
    if isinstance(d, dict):
        data = d.get("data") if isinstance(d.get("data"), str) else None
        mt = d.get("mimeType") if isinstance(d.get("mimeType"), str) else None
        if mt is None or mt.startswith("image/"):
            out.append(RecordImage(carrier, mt, data, "base64" if data is not None else None))
        return
    f = p.get("fileData")
    if isinstance(f, dict):
        mt = f.get("mimeType") if isinstance(f.get("mimeType"), str) else None
        uri = f.get("fileUri") if isinstance(f.get("fileUri"), str) else None
        if mt is not None and mt.startswith("image/"):
            out.append(RecordImage(carrier, mt, None, "url", path=uri))


def _parts(v) -> list:
    if isinstance(v, list):
        return [p for p in v if isinstance(p, dict)]
    return [v] if isinstance(v, dict) else []


def record_images(ref: SessionRef, record: Record) -> list:
    raw = record.raw if isinstance(record.raw, dict) else None
    if raw is None:
        return []
    out: list = []
    if record.native == "user" and record.kind in ("prompt", "message"):
        parts = _parts(raw.get("content"))
        if not any("functionResponse" in p for p in parts):  # a prompt's own images, not a result's
            for p in parts:
                _image(p, "block", out)
        return out
    if record.kind != "tool_result":
        return out
    if record.native == "gemini:toolCall.result":
        parts = _parts(raw.get("result"))
    elif record.native == "user:functionResponse":
        parts = _parts(raw.get("content"))
        if sum(1 for p in parts if "functionResponse" in p) != 1:
            # several results in one message: only the images nested in this call's own response
            parts = [p for p in parts if isinstance(p.get("functionResponse"), dict)
                     and p["functionResponse"].get("id") == record.call_id]
    else:
        return out
    for p in parts:
        fr = p.get("functionResponse")
        if isinstance(fr, dict):
            for q in _parts(fr.get("parts")):
                _image(q, "tool_result", out)
        else:
            _image(p, "tool_result", out)
    return out


def plans(prov, refs: list[SessionRef], audit: bool = False):
    """The checklist (the default, :func:`plan_update`), then the plan file the latest successful
    ``exit_plan_mode`` names, which binds when there is one."""
    from ..artifacts import plans_from_records
    from ..base import ReadReport

    ans = plans_from_records(prov, refs, audit)
    for pl in ans.plans:
        ref = pl.ref
        if ref is None:
            continue
        calls: dict[str, Record] = {}
        last = None
        try:
            for r in prov.read(ref, ReadReport(), raw=True):
                if r.copy_of is not None:
                    continue
                if r.kind == "tool_call" and r.tool_name == "exit_plan_mode" and r.call_id:
                    calls[r.call_id] = r
                elif r.kind == "tool_result" and r.call_id in calls and r.is_error is not True:
                    m = _STORED_AT.search(r.text or "")
                    if m:
                        last = (calls[r.call_id], m.group(1).strip(), (r.text or "").startswith("Plan rejected"))
        except Exception:  # the checklist pass already named a reader failure
            continue
        if last is None:
            continue
        call, path, rejected = last
        if pl.kind == "checklist":
            pl.notes.append(f"the {pl.source} checklist ({pl.updates} update(s)) is given beside the plan file")
        else:
            pl.notes = [n for n in pl.notes if n != "no plan update recorded in this session"]
        pl.kind, pl.source, pl.path, pl.exists = "file", "exit_plan_mode", path, os.path.isfile(path)
        pl.line, pl.locator, pl.timestamp, pl.record = call.line, call.locator, call.instant, call
        if rejected:
            pl.notes.append("the user rejected this plan (exit_plan_mode's result: 'Plan rejected')")
    return ans
