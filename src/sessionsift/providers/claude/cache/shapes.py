"""Which searches the index answers (providers/claude/cache/search.py), without importing it: `search` asks on
every run, and a census answered whole (providers/claude/cache/answers.py) never needs the rest."""

from __future__ import annotations

CENSUS_BY = ("total", "label", "session", "project", "model", "tool", "attachment", "day")
_PER_RECORD = ("model", "tool", "attachment", "day")


def usable(p) -> bool:
    """A query the index answers: an empty pattern, a census, no cap, no persisted outputs."""
    q = p.query
    return (p.regex is None and q.count_by in CENSUS_BY and q.max_count is None and not q.sessions_only
            and not q.resolve_persisted)


def per_record(p) -> bool:
    """The census reads per-record columns (not only the kinds' counts)."""
    return p.query.count_by in _PER_RECORD or p.since_ts is not None or p.until_ts is not None
