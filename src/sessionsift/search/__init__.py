"""`search`: linear-time regex over every agent's sessions (docs/search.md).

``search(Query, Selection) -> SearchRun``: iterate ``run.outcomes()`` (or take ``run.census()``),
then read ``run.summary`` -- one summary for every agent (summary.py). Each provider answers
through its ``search`` capability (providers.base.Provider.search); the floor plan:

- run.py: the question (check, the parts, the outcomes, the census, the one summary);
- types.py: the Query; summary.py: the summaries;
- pattern.py: the pattern (RE2, validated and combined); needles.py: the literal byte needles
  every match contains and the candidate lines that hold one;
- records.py: the record search (every provider searched through its shared records) and
  gate.py: its byte gate (sessions ruled out by their bytes).
"""

from .run import SearchRun, check, search
from .summary import SearchSummary
from .types import COUNT_BY, Query

__all__ = ["COUNT_BY", "Query", "SearchRun", "SearchSummary", "check", "search"]
