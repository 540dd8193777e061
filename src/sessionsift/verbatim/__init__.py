"""`verbatim`: give back the turns a compaction summary clipped, for every agent whose data keeps
them (api.py: the question; walk.py: budget, walk and rendering; slices.py: UTF-16 arithmetic and
hook-sized slices). Each agent's compactions come from its provider (providers/compaction.py;
Claude Code's lane model: providers/claude/verbatim.py)."""

from .api import answer, verbatim
from .walk import (DEFAULT_BUDGET, DEFAULT_MAX_UNIT, DEFAULT_WINDOW, Accounting, Compaction, Unit,
                   VerbatimResult)
from .slices import budget_for_slots, max_slices, slice_text, u16len

__all__ = ["verbatim", "answer", "VerbatimResult", "Unit", "Compaction", "Accounting", "slice_text", "u16len",
           "max_slices", "budget_for_slots", "DEFAULT_BUDGET", "DEFAULT_WINDOW", "DEFAULT_MAX_UNIT"]
