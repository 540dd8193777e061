"""`usage ... --json`: the reports in the JSON shapes ccusage prints, so scripts written for it
move over unchanged (docs/usage.md "--json: ccusage's shapes").

Shapes, as ccusage 20 prints them (held against its own output by tests/test_usage_ccusage.py):
- every provider (ccusage's top-level `daily|weekly|monthly|session`): ``{"daily": [row...],
  "totals": {...}}``, a row ``{period, agent, metadata, modelsUsed, inputTokens, outputTokens,
  cacheCreationTokens, cacheReadTokens, totalTokens, totalCost, modelBreakdowns}``; a period row's
  agent is ``"all"`` and ``metadata.agents`` names the agents in it, a session row's agent is its
  own and ``metadata.lastActivity`` its last instant;
- Claude Code alone (``--provider claude-code``, ccusage's ``claude daily|weekly|monthly|session``):
  rows keyed ``date``/``week``/``month``, session rows ``{sessionId, ..., firstActivity,
  lastActivity, projectPath}`` under ``sessions``; ``--by project`` (ccusage's ``--instances``):
  ``{"projects": {name: [row...]}, "totals"}``;
- ``blocks``: ``{"blocks": [{id, startTime, endTime, actualEndTime, isActive, isGap, entries,
  tokenCounts, totalTokens, costUSD, models, burnRate, projection[, tokenLimitStatus]}]}``, with
  ccusage's gap blocks between windows more than a window's length apart.

Where the two tools' rules differ, the figures are ours (docs/usage.md): a value nobody recorded is
``null``, not 0, and a cost we have no price for is ``null`` with ``missingPricing`` (ccusage: 0);
``totals`` adds ``unpricedModels`` (as ccusage does), ``costIsLowerBound`` and
``messagesWithoutUsage``. Weeks are ISO weeks (Monday first; ccusage's default starts on Sunday),
named by their first day.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from .report import NO_INSTANT, Report, Row, Totals, session_id_of, week_start


def iso_ms(ts: float | None) -> str | None:
    """An instant as ccusage writes one: UTC, milliseconds, ``Z``."""
    if ts is None:
        return None
    d = datetime.fromtimestamp(ts, tz=timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


def _tokens(t: Totals) -> dict[str, Any]:
    return {"inputTokens": t.input, "outputTokens": t.output, "cacheCreationTokens": t.cache_write,
            "cacheReadTokens": t.cache_read, "totalTokens": t.total}


def _breakdowns(models: dict[str, Totals]) -> list[dict]:
    out = []
    for m, t in models.items():
        d = {"modelName": m, "inputTokens": t.input, "outputTokens": t.output,
             "cacheCreationTokens": t.cache_write, "cacheReadTokens": t.cache_read, "cost": t.cost()}
        if t.no_price:
            d["missingPricing"] = True
        out.append(d)
    # ccusage: most expensive first (an unknown cost last)
    out.sort(key=lambda d: (d["cost"] is None, -(d["cost"] or 0.0)))
    return out


def _period_name(rep: Report, row: Row) -> str:
    if rep.period == "weekly" and row.period != NO_INSTANT:
        return week_start(row.period) or row.period
    return row.period


def totals(t: Totals) -> dict:
    return {**_tokens(t), "totalCost": t.cost(), "unpricedModels": sorted(t.no_price),
            "costIsLowerBound": not t.cost_complete, "messagesWithoutUsage": t.without_usage}


_CLAUDE_KEY = {"daily": ("daily", "date"), "weekly": ("weekly", "week"), "monthly": ("monthly", "month")}


def period_document(rep: Report, agents: dict[str, str], claude_only: bool,
                    project_dirs: dict[tuple[str, str], str] | None = None, order: str | None = None) -> dict:
    """The report `rep` in ccusage's shape. `agents` maps a provider's name to ccusage's name for
    its agent (a provider ccusage does not read keeps ours). `claude_only`: ccusage's ``claude``
    shapes. `project_dirs` (session reports): (provider, session id) -> ccusage's projectPath.
    `order` (period rows come in the order of `rep`): sessions are in ccusage 20's order, most
    expensive first (`asc`: cheapest first), an unknown cost last."""
    name = lambda p: agents.get(p, p)  # noqa: E731
    if rep.period == "session":
        rows = []
        srt = sorted(rep.rows, key=lambda r: r.totals.cost() or 0.0, reverse=order != "asc")
        srt.sort(key=lambda r: r.totals.cost() is None)
        for r in srt:
            prov, sid = session_id_of(r)
            t = r.totals
            if claude_only:
                rows.append({"sessionId": sid, **_tokens(t), "totalCost": t.cost(),
                             "lastActivity": iso_ms(t.last_ts), "firstActivity": iso_ms(t.first_ts),
                             "modelsUsed": list(r.models), "modelBreakdowns": _breakdowns(r.models),
                             "projectPath": (project_dirs or {}).get((prov, sid))})
            else:
                rows.append({"period": sid, "agent": name(prov), "metadata": {"lastActivity": iso_ms(t.last_ts)},
                             "modelsUsed": sorted(r.models), **_tokens(t), "totalCost": t.cost(),
                             "modelBreakdowns": _breakdowns(r.models)})
        return {"sessions" if claude_only else "session": rows, "totals": totals(rep.totals)}
    key, field = _CLAUDE_KEY[rep.period]
    if claude_only:
        def row_doc(r: Row) -> dict:
            d = {field: _period_name(rep, r), **_tokens(r.totals), "totalCost": r.totals.cost(),
                 "modelsUsed": list(r.models), "modelBreakdowns": _breakdowns(r.models)}
            if rep.by == "project":
                d["project"] = r.group
            return d

        if rep.by == "project":
            projects: dict[str, list[dict]] = {}
            for r in rep.rows:
                projects.setdefault(r.group or "unknown", []).append(row_doc(r))
            return {"projects": dict(sorted(projects.items())), "totals": totals(rep.totals)}
        return {key: [row_doc(r) for r in rep.rows], "totals": totals(rep.totals)}

    def all_doc(r: Row) -> dict:
        d = {"period": _period_name(rep, r), "agent": "all",
             "metadata": {"agents": sorted({name(p) for p in r.providers})},
             "modelsUsed": sorted(r.models), **_tokens(r.totals), "totalCost": r.totals.cost(),
             "modelBreakdowns": _breakdowns(r.models)}
        if rep.by == "project":
            d["project"] = r.group
        return d

    if rep.by == "project":
        projects = {}
        for r in rep.rows:
            projects.setdefault(r.group or "unknown", []).append(all_doc(r))
        return {"projects": dict(sorted(projects.items())), "totals": totals(rep.totals)}
    return {key: [all_doc(r) for r in rep.rows], "totals": totals(rep.totals)}


def blocks_document(ws: list, length: float, limit: int | None, order: str = "asc") -> dict:
    """Windows (usage.blocks.Window, in time order) in ccusage's ``blocks`` shape, with its gap
    blocks (from a window's last response + `length` to the next window's first response, where
    more than `length` lies between them) and, given a token limit, ``tokenLimitStatus`` on the
    active window (ccusage: ok / warning above 80% / exceeds, of the projected total)."""
    from .blocks import limit_status

    out: list[dict] = []
    prev = None
    for w in ws:
        if prev is not None and prev.totals.last_ts is not None and w.totals.first_ts is not None \
                and w.totals.first_ts - prev.totals.last_ts > length:
            gs = prev.totals.last_ts + length
            out.append({"id": f"gap-{iso_ms(gs)}", "startTime": iso_ms(gs), "endTime": iso_ms(w.totals.first_ts),
                        "actualEndTime": None, "isActive": False, "isGap": True, "entries": 0,
                        "tokenCounts": {"inputTokens": 0, "outputTokens": 0, "cacheCreationInputTokens": 0,
                                        "cacheReadInputTokens": 0},
                        "totalTokens": 0, "costUSD": 0, "models": [], "burnRate": None, "projection": None})
        t = w.totals
        d = {"id": iso_ms(w.start), "startTime": iso_ms(w.start), "endTime": iso_ms(w.end),
             "actualEndTime": iso_ms(t.last_ts), "isActive": w.active, "isGap": False, "entries": t.messages,
             "tokenCounts": {"inputTokens": t.input, "outputTokens": t.output, "cacheCreationInputTokens": t.cache_write,
                             "cacheReadInputTokens": t.cache_read},
             "totalTokens": t.total, "costUSD": t.cost(), "models": list(w.models),
             "burnRate": None, "projection": None}
        if w.burn is not None:
            mins = w.burn["over_seconds"] / 60
            io = (t.input or 0) + (t.output or 0)
            d["burnRate"] = {"tokensPerMinute": w.burn["tokens_per_minute"],
                             "tokensPerMinuteForIndicator": round(io / mins, 1) if mins > 0 else None,
                             "costPerHour": w.burn["cost_usd_per_hour"]}
        if w.projection is not None:
            p = w.projection
            d["projection"] = {"totalTokens": p["total_tokens"], "totalCost": p["cost_usd"],
                               "remainingMinutes": int(round(p["seconds_left"] / 60))}
        if limit is not None and w.active:
            st = limit_status(w, limit)
            d["tokenLimitStatus"] = {"limit": limit, "projectedUsage": st["projected_tokens"],
                                     "percentUsed": st["projected_percent"], "status": st["status"]}
        out.append(d)
        prev = w
    if order == "desc":
        out.reverse()
    return {"blocks": out}
