"""`plan`: the plan file bound to a session.

Binding: the latest `plan_mode` attachment's `planFilePath`, else the first record carrying a valid
`slug` (PLAN-006; `<plans dir>/<slug>.md`; the slug grammar is PLAN-007), else nothing is bound.
Plans directory: `plansDirectory` merged user < project < local settings (PLAN-008), refused by the
client when it escapes the project root (PLAN-018), default `<claude-home>/plans`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..discover import Scope
from ..paths import resolve_recorded
from .events import LaneEvents, lane_events, norm
from .touches import MUTATING

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,119}$")  # PLAN-007


@dataclass
class PlanBinding:
    session_id: str
    source: str | None            # plan_mode | slug | None (nothing binds)
    plan_path: str | None
    plan_exists: bool | None
    plan_exists_recorded: bool | None
    slug: str | None
    line: int | None
    minted_at_compaction: bool | None
    plans_dir: str
    plans_dir_source: str
    notes: list[str] = field(default_factory=list)
    audit: list[dict] = field(default_factory=list)
    plan_path_checked: str | None = None
    """The path whose existence plan_exists reports: the recorded one, or its counterpart under
    the current data root when the recorded one is absent (a moved root)."""


def valid_slug(s: object) -> bool:
    return isinstance(s, str) and bool(_SLUG.match(s))


def plans_dir(home: Path, cwd: str | None) -> tuple[str, str, list[str]]:
    """PLAN-008/018/019: user < project < local settings; contained in the project root."""
    notes = ["flag (--settings) and policy settings layers are not visible on disk and were not consulted"]
    val, src = None, None
    layers = [("userSettings", home / "settings.json")]
    if cwd:
        layers += [("projectSettings", Path(cwd) / ".claude" / "settings.json"),
                   ("localSettings", Path(cwd) / ".claude" / "settings.local.json")]
    for name, p in layers:
        try:
            d = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(d, dict) and isinstance(d.get("plansDirectory"), str) and d["plansDirectory"].strip():
            val, src = d["plansDirectory"], f"{name} ({p})"
    default = str(home / "plans")
    if val is None:
        return default, "default (<claude-home>/plans)", notes
    if cwd is None:
        notes.append("plansDirectory set but the session cwd is unknown; default used")
        return default, "default", notes
    root = norm(cwd)
    r = norm(os.path.join(root, os.path.expanduser(val)))
    if r != root and not r.startswith(root.rstrip("/") + "/"):
        notes.append(f"plansDirectory {val!r} from {src} escapes the project root: the client refuses it "
                     "and falls back to the default (PLAN-018)")
        return default, "default (configured value refused)", notes
    return r, src, notes


def bind(scope: Scope, audit: bool = False, lane_evs: dict[str, LaneEvents] | None = None) -> list[PlanBinding]:
    out = []
    home = scope.home.path
    all_bound: dict[str, str] = {}
    per: list[tuple[PlanBinding, LaneEvents, list[LaneEvents]]] = []
    for s in scope.sessions:
        le = lane_events(s.main)
        subs = [lane_events(l) for l in s.subagent_lanes()] if audit else []
        pdir, psrc, notes = plans_dir(home, le.first_cwd)
        pm = [a for a in le.attachments if a.kind == "plan_mode" and isinstance(a.payload.get("planFilePath"), str)]
        b = PlanBinding(s.session_id, None, None, None, None, None, None, None, pdir, psrc, notes)
        if pm:
            a = pm[-1]
            b.source, b.plan_path, b.line = "plan_mode", norm(a.payload["planFilePath"]), a.line
            b.plan_exists_recorded = a.payload.get("planExists") if isinstance(a.payload.get("planExists"), bool) else None
            b.slug = a.slug
            if len({x.payload["planFilePath"] for x in pm}) > 1:
                b.notes.append("plan_mode attachments name more than one path; the latest binds")
        else:
            first = next(((ln, sl, t, st) for ln, sl, t, st in le.slugs if valid_slug(sl)), None)
            bad = [sl for _, sl, _, _ in le.slugs if not valid_slug(sl)]
            if bad:
                b.notes.append(f"{len(bad)} record(s) carry an invalid slug (PLAN-007), skipped")
            if first is not None:
                ln, sl, t, st = first
                b.source, b.slug, b.line = "slug", sl, ln
                b.plan_path = norm(os.path.join(pdir, f"{sl}.md"))
                b.minted_at_compaction = (t == "system" and st == "compact_boundary")
            else:
                b.notes.append("no plan_mode attachment and no valid slug: no plan is bound")
        if b.plan_path:
            r = resolve_recorded(home, b.plan_path, also=[Path(pdir)])
            b.plan_path_checked, b.plan_exists = r.checked, r.exists
            all_bound[b.plan_path] = s.session_id
            all_bound[r.checked] = s.session_id
            if r.note:
                b.notes.append(r.note)
        out.append(b)
        per.append((b, le, subs))
    if audit:
        for b, le, subs in per:
            for lev in [le] + subs:
                for c in lev.calls:
                    if c.tool not in MUTATING or not c.path or not c.ok:
                        continue
                    cp = c.path
                    if not cp.startswith(b.plans_dir.rstrip("/") + "/") and not cp.startswith(str(home / "plans") + "/"):
                        cp = resolve_recorded(home, c.path).checked  # a moved root: re-rooted under plans/
                    in_dir = cp.startswith(b.plans_dir.rstrip("/") + "/") or cp.startswith(str(home / "plans") + "/")
                    if not in_dir or c.path == b.plan_path or cp == b.plan_path_checked:
                        continue
                    if lev.lane.is_subagent and b.plan_path and c.path == b.plan_path[:-3] + f"-agent-{lev.lane.agent_id}.md":
                        continue
                    b.audit.append({"path": c.path, "tool": c.tool, "line": c.pos, "lane": lev.lane.display,
                                    "is_subagent": lev.lane.is_subagent, "lane_path": str(lev.lane.path),
                                    "timestamp": c.result_ts or c.timestamp, "tool_use_id": c.tool_use_id,
                                    "bound_by": all_bound.get(c.path) or all_bound.get(cp)})
    return out
