"""Subagent topology: each lane joined to the Agent/Task/Workflow tool_use that spawned it.

Joins (catalog area subagents):
- A built-in lane's `agent-<id>.meta.json` names the spawning call in `toolUseId` (SUB-006);
  teammates and workflow agents carry none. Fallback: a parent tool_result whose
  `toolUseResult.agentId` (or `agentId: <id>` text) names the lane's agent id (SUB-002, BG-004).
- Trigger time = the parent's tool_use timestamp; start/end = the lane's first/last timestamped
  record (SUB-023: the child's first record lags the trigger).
- Returned message, exactly one carrier (SUB-018): the synchronous tool_result text, else (async
  launch ack) the lane's tail assistant text, else the workflow journal's `result`.
- Status: `completed` when a carrier says so (a sync tool_result, a terminal task-notification, a
  journal result), `running` when the lane is fresh (last record <= 300 s, last stop_reason not
  end_turn, TAIL-004/005), otherwise `unknown`. Never a guessed `failed`: a notification's own
  status is reported verbatim in `notified_status`.
- Nested spawns land flat in the same `subagents/` dir (SUB-003): the parent lane is the lane whose
  records hold the spawning tool_use.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..discover import Lane, Session
from ..model import record as R
from ....read.lines import read_records
from ....timefmt import parse_ts
from .verdict import CHILD_FRESH_SECS, read_tail

_AGENT_ID_TEXT = re.compile(r"agentId: ([A-Za-z0-9_-]+)")
_RUN_ID_TEXT = re.compile(r"^Run ID: (wf_[A-Za-z0-9_-]+)\s*$", re.M)


@dataclass
class Spawn:
    tool_use_id: str
    tool_name: str
    lane: Lane
    line: int
    timestamp: str | None
    input: dict
    result_text: str | None = None
    result_line: int | None = None
    async_ack: bool = False
    agent_id: str | None = None
    notified_status: str | None = None
    notification_result: str | None = None
    run_id: str | None = None
    """A Workflow call's run (`toolUseResult.runId`, else the result's `Run ID: wf_...` line): the
    directory `subagents/workflows/<run>/` its agents' lanes are written to."""


@dataclass
class AgentNode:
    lane: Lane
    meta: dict | None
    meta_state: str
    spawn: Spawn | None
    join: str | None
    """meta.json toolUseId | tool_result agentId | None (unjoined)."""
    parent_lane: str | None
    started_at: str | None
    ended_at: str | None
    duration_secs: float | None
    status: str
    status_why: str
    returned: str | None
    returned_via: str | None
    """sync-tool-result | async-child-tail | workflow-journal | None."""
    journal: dict | None = None
    files: list[str] = field(default_factory=list)
    agent_type: str | None = None
    """meta.json `agentType` (general-purpose, Explore, workflow-subagent, ...), else the spawn's
    `subagent_type`."""
    description: str | None = None
    """meta.json `description`, else the spawn's `description`, else (a workflow agent) its label in
    the run's `workflows/<run>.json`."""
    order: tuple = ()
    """Spawn order: (trigger time, index of the agent in its workflow run, lane start)."""


def _read_meta(lane: Lane) -> tuple[dict | None, str]:
    p = lane.path.with_name(lane.path.name[: -len(".jsonl")] + ".meta.json")
    try:
        obj = orjson.loads(p.read_bytes())
    except FileNotFoundError:
        return None, "absent"
    except (OSError, orjson.JSONDecodeError) as exc:
        return None, f"unreadable ({type(exc).__name__}; caught mid-write?)"
    return (obj, "present") if isinstance(obj, dict) else (None, "not a JSON object")


def _journals(session: Session) -> dict[str, dict]:
    """agentId -> {run, started, result, failed} from every workflow journal."""
    out: dict[str, dict] = {}
    for p in session.workflow_journals():
        try:
            for _, o in read_records(p):
                aid = o.get("agentId")
                if not isinstance(aid, str):
                    continue
                j = out.setdefault(aid, {"run": p.parent.name, "started": False, "result": None, "failed": False})
                t = o.get("type")
                if t == "started":
                    j["started"] = True
                elif t == "result":
                    r = o.get("result")
                    j["result"] = r if isinstance(r, str) else orjson.dumps(r).decode()
                elif t == "failed":
                    j["failed"] = True
        except OSError as exc:  # reported with the scope's problems: agents exits 3
            from ..discover import Problem

            pr = Problem(str(p), f"workflow journal unreadable: {exc.strerror}")
            if pr not in session.problems:
                session.problems.append(pr)
            continue
    return out


_HANDBACK = "The report follows:\n"


def _text_of_result(block: dict, tur: dict | None = None) -> str:
    # the structured echo holds the report alone (2.1.258 and 2.1.332); 2.1.332 adds a
    # `<tools-used-before-summary>` block there, which is not the report
    content = (tur or {}).get("content")
    if isinstance(content, list):
        parts = [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"
                 and isinstance(b.get("text"), str) and not b["text"].lstrip().startswith("<tools-used-before-summary>")]
        if parts:
            return "\n".join(parts)
    t = R.tool_result_text(block)
    # 2.1.332 frames the report ("[Subagent hand-back] ... The report follows:") and indents
    # every line of it by two spaces
    i = t.find(_HANDBACK)
    if i >= 0:
        t = "\n".join(x[2:] if x.startswith("  ") else x for x in t[i + len(_HANDBACK):].split("\n"))
    # drop the harness's continuation trailer ("agentId: ... (use SendMessage ...)" + usage), SUB-019
    i = t.find("\nagentId: ")
    return t[:i] if i >= 0 else t


def topology(session: Session, now: float | None = None, with_files: bool = False) -> list[AgentNode]:
    now = now or time.time()
    lanes = session.lanes()
    spawns: dict[str, Spawn] = {}
    by_agent: dict[str, Spawn] = {}
    notes: dict[str, dict] = {}
    files: dict[str, list[str]] = {}
    for lane in lanes:
        try:
            recs = read_records(lane.path)
            for line, o in recs:
                if o.get("type") == "assistant":
                    for b in R.tool_uses(o):
                        if not isinstance(b.get("name"), str):
                            continue
                        if b.get("name") in R.SPAWN_TOOLS and isinstance(b.get("id"), str):
                            spawns[b["id"]] = Spawn(b["id"], b["name"], lane, line.no, o.get("timestamp"),
                                                    b.get("input") if isinstance(b.get("input"), dict) else {})
                        if with_files and b.get("name") in R.MUTATING_FILE_TOOLS:
                            fp = R.file_tool_path(b.get("input"))
                            if isinstance(fp, str):
                                files.setdefault(str(lane.path), [])
                                if fp not in files[str(lane.path)]:
                                    files[str(lane.path)].append(fp)
                elif o.get("type") == "user":
                    tur = o.get("toolUseResult") if isinstance(o.get("toolUseResult"), dict) else {}
                    for b in R.tool_results(o):
                        tid = b.get("tool_use_id")
                        sp = spawns.get(tid) if isinstance(tid, str) else None
                        if sp is None:
                            continue
                        sp.result_line = line.no
                        if sp.tool_name == "Workflow":
                            rid = tur.get("runId") if isinstance(tur.get("runId"), str) else None
                            if rid is None:
                                m = _RUN_ID_TEXT.search(R.tool_result_text(b))
                                rid = m.group(1) if m else None
                            sp.run_id = rid
                        aid = tur.get("agentId") if isinstance(tur.get("agentId"), str) else None
                        if aid is None:
                            m = _AGENT_ID_TEXT.search(R.tool_result_text(b))
                            aid = m.group(1) if m else None
                        sp.agent_id = aid
                        if aid:
                            by_agent[aid] = sp
                        if tur.get("status") in ("async_launched", "teammate_spawned") or tur.get("isAsync") is True:
                            sp.async_ack = True
                        else:
                            sp.result_text = _text_of_result(b, tur)
                text = None
                if o.get("type") == "queue-operation" and o.get("operation") == "enqueue":
                    text = o.get("content")
                elif o.get("type") == "attachment" and isinstance(o.get("attachment"), dict):
                    text = o["attachment"].get("prompt")
                elif o.get("type") == "user":
                    text = R.string_text(o)
                if isinstance(text, str) and "<task-notification>" in text:
                    for f in R.parse_task_notification(text):
                        if "status" in f:
                            notes[f.get("tool-use-id") or f.get("task-id", "")] = f
                            if f.get("task-id"):
                                notes.setdefault(f["task-id"], f)
        except OSError:
            continue
    for sp in spawns.values():
        f = notes.get(sp.tool_use_id) or (notes.get(sp.agent_id) if sp.agent_id else None)
        if f:
            sp.notified_status = f.get("status")
            sp.notification_result = f.get("result")
    journals = _journals(session)
    runs = {sp.run_id: sp for sp in spawns.values() if sp.run_id}
    progress = _workflow_progress(session, {lane.workflow_run for lane in session.subagent_lanes() if lane.workflow_run})
    out: list[AgentNode] = []
    for lane in session.subagent_lanes():
        meta, mstate = _read_meta(lane)
        sp, join = None, None
        if meta and isinstance(meta.get("toolUseId"), str) and meta["toolUseId"] in spawns:
            sp, join = spawns[meta["toolUseId"]], "meta.json toolUseId"
        elif lane.agent_id in by_agent:
            sp, join = by_agent[lane.agent_id], "tool_result agentId"
        elif lane.workflow_run and lane.workflow_run in runs:
            sp, join = runs[lane.workflow_run], "Workflow run id"
        t = read_tail(lane.path)
        first_ts = None
        try:
            for _, o in read_records(lane.path):
                if isinstance(o.get("timestamp"), str):
                    first_ts = o["timestamp"]
                    break
        except OSError:
            pass
        a, b = parse_ts(first_ts), parse_ts(t.last_ts)
        dur = round((b - a).total_seconds(), 3) if a and b else None
        age = round(now - b.timestamp(), 1) if b else None
        j = journals.get(lane.agent_id or "")
        status, why, returned, via = "unknown", "no carrier says it ended and the lane is not fresh", None, None
        if j and j.get("result") is not None:
            status, why, returned, via = "completed", "workflow journal result", j["result"], "workflow-journal"
        elif sp and sp.result_text is not None:
            status, why, returned, via = "completed", "synchronous tool_result returned", sp.result_text, "sync-tool-result"
        elif sp and sp.notified_status:
            status = "completed"
            why = f"task-notification status={sp.notified_status}"
            returned, via = _tail_text(lane), "async-child-tail"
        elif age is not None and age <= CHILD_FRESH_SECS and not (t.last_stop_reason == "end_turn" and not t.pending):
            status, why = "running", f"lane fresh: last record {age:.0f}s old, last stop_reason={t.last_stop_reason}"
        if returned is None and via is None and sp and sp.async_ack and status != "running":
            txt = _tail_text(lane)
            if txt is not None:
                returned, via = txt, "async-child-tail"
        parent = sp.lane.display if sp else (f"workflow {lane.workflow_run}" if lane.workflow_run else None)
        wp = progress.get((lane.workflow_run, lane.agent_id)) if lane.workflow_run else None
        meta_d = meta or {}
        spin = sp.input if sp else {}
        atype = _str(meta_d.get("agentType")) or (_str(spin.get("subagent_type")) if sp and sp.tool_name != "Workflow" else None)
        desc = (_str(meta_d.get("description")) or (_str(spin.get("description")) if sp and sp.tool_name != "Workflow" else None)
                or (_str(wp.get("label")) if wp else None))
        order = (parse_ts(sp.timestamp).timestamp() if sp and parse_ts(sp.timestamp) else float("inf"),
                 wp.get("index") if wp and isinstance(wp.get("index"), int) else 0,
                 a.timestamp() if a else float("inf"), lane.display)
        out.append(AgentNode(lane, meta, mstate, sp, join, parent, first_ts, t.last_ts, dur, status, why,
                             returned, via, journal=j, files=files.get(str(lane.path), []),
                             agent_type=atype, description=desc, order=order))
    out.sort(key=lambda n: n.order)  # spawn order: the parent's call, then the run's own order
    return out


def _str(v) -> str | None:
    return v if isinstance(v, str) and v else None


def _workflow_progress(session: Session, run_ids: set) -> dict[tuple[str, str], dict]:
    """(run id, agent id) -> the agent's entry in `<session>/workflows/<run>.json` (`workflowProgress`:
    index, label, promptPreview, state), for the runs that have lanes."""
    out: dict[tuple[str, str], dict] = {}
    for rid in sorted(r for r in run_ids if r):
        try:
            obj = orjson.loads((session.sidecar_dir / "workflows" / f"{rid}.json").read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        prog = obj.get("workflowProgress") if isinstance(obj, dict) else None
        for e in prog if isinstance(prog, list) else []:
            if isinstance(e, dict) and isinstance(e.get("agentId"), str):
                out[(rid, e["agentId"])] = e
    return out


def _tail_text(lane: Lane) -> str | None:
    t = None
    try:
        for _, o in read_records(lane.path):
            if o.get("type") == "assistant":
                txt = [b.get("text") for b in R.blocks_of(o) if b.get("type") == "text" and isinstance(b.get("text"), str)]
                if txt:
                    t = "\n".join(txt)
    except OSError:
        return None
    return t
