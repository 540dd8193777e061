"""The summaries of `search`: one for every agent (`SearchSummary`: sessions, files, bytes, lines,
hits over every provider's sessions), made of the parts' own: a deep lane scan's (`LaneSummary`,
providers/searchquery.py: Claude Code's lanes) and the record search's (`SharedSummary`, every provider searched through its
shared records). In a module of its own: an answer with no session to search loads no scan."""

from __future__ import annotations

from typing import Any

from collections import Counter
from dataclasses import dataclass, field

from ..providers.base import Problem
from ..providers.searchquery import LaneSummary


@dataclass
class SharedSummary:
    """The record search's summary (search/records.py): every session searched through its shared
    records, whatever its provider."""

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
    sessions_indexed_out: int = 0
    """Sessions the full-text index ruled out (no record's text holds the pattern's literal): not parsed."""
    fulltext: Any = None
    """The full-text index's verdicts (index/fulltext.py Verdicts), None: not asked."""
    sessions_read: int = 0
    """Sessions parsed: ``records`` counts theirs (so it depends on the pattern)."""
    truncated: Counter | None = None
    """Per provider: records searched whose text its client cut on disk (the cut part is nowhere);
    None when no provider in scope writes a truncation mark its reader knows (not counted)."""
    omissions: Counter = field(default_factory=Counter)
    problems: list[Problem] = field(default_factory=list)


@dataclass
class SearchSummary:
    """One summary for every agent (docs/json.md, `search` summary): the totals count every
    provider's sessions, files and bytes alike; `lanes` and `records` are the parts' own."""

    sessions: int = 0
    """Top-level sessions in scope, every provider's (child sessions apart)."""
    child_sessions: int = 0
    """Other providers' child sessions searched (rows of their own)."""
    sessions_with_hits: int = 0
    hits: int = 0
    files: int = 0
    """Files read: every lane transcript, and every file or database a record session was read from."""
    bytes: int = 0
    lines: int | None = None
    """Physical lines in the files read (--count-lines); None = not counted: without --count-lines,
    or when a session was read through its shared records (a store that is not a line file)."""
    unreadable: list[dict] = field(default_factory=list)
    """`{path, why}` of every file, directory or row that could not be read, every provider's."""
    lanes: LaneSummary = field(default_factory=LaneSummary)
    """The deep lane scan's summary (Claude Code's lanes; empty when none was searched)."""
    records: SharedSummary = field(default_factory=SharedSummary)
    """The record search's summary (every provider searched through its shared records)."""
    providers: dict[str, dict] = field(default_factory=dict)
    """Per provider: {sessions, files, bytes, lines, hits, sessions_with_hits} (`lines` None: not counted)."""
    fulltext: Any = None
    """The full-text index's verdicts over every part (index/fulltext.py Verdicts), None: not asked
    (--no-index, or no pattern)."""
