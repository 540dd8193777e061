"""`verbatim` as one question for every agent (docs/verbatim.md).

:func:`answer` asks the session's provider for its compactions and turns (the ``compactions``
capability, providers/compaction.py) and walks them within the budget (walk.py); a provider that
cannot give them answers with its reason (``Provider.lacks["compactions"]``). :func:`verbatim` is
the same walk over a history the caller already holds, or over a deeper model's lane (Claude Code's
``Lane``, whose ``compactions()`` gives its lane history).
"""

from __future__ import annotations

from ..providers.compaction import Compaction, TurnHistory, Unit
from .walk import (AGENT_MSG_MODES, DEFAULT_BUDGET, DEFAULT_MAX_UNIT, DEFAULT_WINDOW, Accounting, AgentMsgs,
                   VerbatimResult, check, lacking, walk)

__all__ = ["answer", "verbatim", "VerbatimResult", "Unit", "Compaction", "Accounting", "AGENT_MSG_MODES",
           "DEFAULT_BUDGET", "DEFAULT_MAX_UNIT", "DEFAULT_WINDOW", "LACKS_DEFAULT"]

LACKS_DEFAULT = ("its reader names no compaction record (Provider.compaction_of), so the turns a summary "
                 "condensed cannot be told from the others")


def verbatim(lane, budget: int = DEFAULT_BUDGET, max_compactions: int | None = None,
             agent_msgs: AgentMsgs = "longest", max_unit: int = DEFAULT_MAX_UNIT, index=None,
             pending_compaction: bool = False, target: str | None = None) -> VerbatimResult:
    """The most recent turns of `lane` verbatim within `budget` UTF-16 units: `lane` is a
    :class:`TurnHistory` or a deeper model's lane (its ``compactions(index)`` gives the history;
    `index`: its prebuilt lane index). Raises UsageError on a bad argument."""
    check(budget, max_compactions, agent_msgs, max_unit)
    hist = lane if isinstance(lane, TurnHistory) else lane.compactions(index=index)
    return walk(hist, target or hist.target or hist.session_id, budget=budget, max_compactions=max_compactions,
                agent_msgs=agent_msgs, max_unit=max_unit, pending_compaction=pending_compaction)


def answer(provider, ref, *, lane: str | None = None, target: str | None = None, budget: int = DEFAULT_BUDGET,
           max_compactions: int | None = None, agent_msgs: AgentMsgs = "longest", max_unit: int = DEFAULT_MAX_UNIT,
           pending_compaction: bool = False) -> VerbatimResult:
    """`verbatim` for one session `ref` of `provider` (providers.base.Provider): its compactions and
    turns from :meth:`Provider.compactions`; where the provider cannot give them, the answer holds
    no units and its reason (``VerbatimResult.lacks``, stopped_by ``lacks``)."""
    check(budget, max_compactions, agent_msgs, max_unit)
    t = target or ref.session_id
    hist = provider.compactions(ref, lane=lane)
    if hist is None:
        why = type(provider).lacks.get("compactions", LACKS_DEFAULT)
        return lacking(ref.session_id, provider.display, why, t, budget, max_compactions, agent_msgs, max_unit)
    return walk(hist, t, budget=budget, max_compactions=max_compactions, agent_msgs=agent_msgs,
                max_unit=max_unit, pending_compaction=pending_compaction)
