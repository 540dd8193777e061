"""`verbatim`: give back the turns a compaction summary clipped (see api.py), and cut the result
into hook-sized slices (slices.py)."""

from .api import (DEFAULT_BUDGET, DEFAULT_MAX_UNIT, DEFAULT_WINDOW, Accounting, Compaction, Unit,
                  VerbatimResult, verbatim)
from .slices import budget_for_slots, max_slices, slice_text, u16len

__all__ = ["verbatim", "VerbatimResult", "Unit", "Compaction", "Accounting", "slice_text", "u16len",
           "max_slices", "budget_for_slots", "DEFAULT_BUDGET", "DEFAULT_WINDOW", "DEFAULT_MAX_UNIT"]
