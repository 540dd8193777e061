"""The summary of a search over the shared records (questions/search.py), in a module of its own:
`search` with no session of another provider in scope returns an empty one without loading the
search machinery (cli/cmd_shared.search_shared)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..providers.base import Problem


@dataclass
class SharedSummary:
    sessions: int = 0
    """Sessions searched, each file/row: child sessions included (``child_sessions`` of them)."""
    child_sessions: int = 0
    sessions_with_hits: int = 0
    hits: int = 0
    records: int = 0
    searched: int = 0
    copies: int = 0
    bytes: int = 0
    files: int = 0
    not_searched: Counter = field(default_factory=Counter)
    not_searched_hits: Counter = field(default_factory=Counter)
    undated_skipped: int = 0
    sessions_prefiltered: int = 0
    """Sessions ruled out by their bytes: not parsed, so their records are not in ``records``."""
    sessions_read: int = 0
    """Sessions parsed: ``records`` counts theirs (so it depends on the pattern)."""
    truncated: Counter | None = None
    """Per provider: records searched whose text its client cut on disk (the cut part is nowhere);
    None when no provider in scope writes a truncation mark its reader knows (not counted)."""
    omissions: Counter = field(default_factory=Counter)
    problems: list[Problem] = field(default_factory=list)
