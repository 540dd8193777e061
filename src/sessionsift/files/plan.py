"""`plan`: the plan each session keeps, for every agent (docs/files.md).

:func:`plans` asks each provider in the selection for its plans (the ``plans`` capability,
providers/artifacts.py): a plan file bound to the session (Claude Code's plan mode), or the
checklist a plan tool recorded last (Codex CLI's ``update_plan``, Gemini CLI's ``write_todos``,
opencode's ``todowrite``, ...). A provider that reads none says why (``Provider.lacks["plans"]``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class PlanResult:
    sel: Any
    plans: list = field(default_factory=list)
    """providers/artifacts.py ``Plan`` rows, one per session, survey order."""
    lacks: dict[str, str] = field(default_factory=dict)
    """Provider display name -> why its data cannot answer (its sessions are in the selection)."""
    problems: list = field(default_factory=list)


def plans(sel, audit: bool = False) -> PlanResult:
    out = PlanResult(sel)
    counts = sel.counts()
    for e in sel.survey.entries:
        if e.provider is None:
            continue
        got = e.provider.plans(sel, audit)
        if got is None:
            if counts.get(e.name):
                out.lacks[e.display] = type(e.provider).lacks.get(
                    "plans", "its reader reads no plan (no plan tool or plan file named: Provider.plan_update)")
            continue
        out.plans.extend(got.plans)
        out.problems.extend(got.problems)
    return out
