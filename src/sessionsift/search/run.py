"""`search` for every agent: one question, one answer (docs/search.md).

:func:`search` never asks which agent a session belongs to: it asks each provider of the selection
for its ``search`` capability (providers.base.Provider.search). A provider with a deeper model
answers with a part of its own -- Claude Code's lane scan and index census
(providers/claude/search), whose outcomes are ``(Lane, LaneOutcome)`` -- and every other
provider's sessions are searched through their shared records in one pass (records.py:
``(SessionRef, SessionOutcome)``), ruled out first by their bytes (gate.py). The outcomes, the
census and ONE summary (summary.py ``SearchSummary``) cover every part.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..errors import UsageError
from .summary import LaneSummary, SearchSummary
from .types import COUNT_BY, Query, merge_counts


def check(query: Query) -> None:
    """The usage errors of `query`, raised before any data is touched: the pattern (RE2, linear
    time), --count-by, --max-count, the time window and every -t/-T selector."""
    from ..read.pattern import compile_regex

    if query.count_by not in (None, "total") and query.count_by not in COUNT_BY:
        raise UsageError(f"unknown --count-by {query.count_by!r}; valid: {', '.join(COUNT_BY)}")
    if query.max_count is not None and query.max_count < 1:
        raise UsageError("--max-count must be at least 1")
    compile_regex(query.patterns, query.ignore_case, query.fixed)
    if query.since and query.until and query.since > query.until:
        raise UsageError("--since is after --until: the window is empty")
    selected_kinds(query)


def selected_kinds(query: Query) -> frozenset[str]:
    """The shared kinds -t/-T select (labels and roles mapped to their nearest kind by the reader whose
    record labels the selectors take: providers/searchquery.py ``selected_kinds``)."""
    from ..providers.searchquery import selected_kinds as kinds

    return kinds(tuple(query.include), tuple(query.exclude))


def record_query(query: Query, roots: tuple | None = None, keep: tuple | None = None):
    """The record search's query (records.py) for `query`; `roots`: the data roots searched, when
    the full-text index may pick the sessions (None: it is not used); `keep`: the data roots
    searched when a counting query's per-session outcomes may be kept by the index (it is on)."""
    from ..read.needles import needles_for
    from ..read.pattern import compile_regex
    from .records import SharedQuery

    regex = compile_regex(query.patterns, query.ignore_case, query.fixed)
    needles, ci = needles_for(query.patterns, query.ignore_case, query.fixed) if regex is not None else (None, False)
    lits = None
    if regex is not None and roots is not None:
        from ..index.fulltext import literals

        lits = literals(query.patterns, query.ignore_case, query.fixed)
    return SharedQuery(regex=regex, kinds=selected_kinds(query), since=query.since, until=query.until,
                       max_count=query.max_count, count_by=query.count_by, sessions_only=query.sessions_only,
                       needles=tuple(needles) if needles else None, needles_ci=ci,
                       fulltext=roots if regex is not None else None, literals=tuple(lits) if lits else None,
                       keep=keep)


class SearchRun:
    """The result of :func:`search`: iterate :meth:`outcomes` (or take :meth:`census` for a
    counting query); `summary` is complete after."""

    def __init__(self, query: Query, parts: list, records):
        self.query = query
        self.parts = parts
        """Every part in selection order: a provider's own (deep) part, or the record part."""
        self.records = records
        """The record part (records.RecordPart), or None when no session is searched through its records."""
        self.lanes = next((p for p in parts if p is not records), None)
        """The deep part (a provider's own ``search``), or None."""
        self.summary = SearchSummary()

    @property
    def workers(self) -> int:
        return max([getattr(p, "workers", 1) for p in self.parts] or [1])

    @property
    def tool_count(self) -> str:
        """What --count-by tool counts: "calls", or "results" when -t selects result leaves only."""
        return getattr(self.lanes, "tool_count", None) or (
            "results" if self.records is not None and "tool_result" in self.records.query.kinds
            and "tool_call" not in self.records.query.kinds else "calls")

    def outcomes(self, plain: bool = True) -> Iterator[tuple[Any, Any]]:
        """(unit, outcome) of every part in order: a deep part's (Lane, LaneOutcome), the record
        part's (SessionRef, SessionOutcome); `plain=False`: not the outcomes with nothing to show
        (the summary counts them all the same)."""
        for p in self.parts:
            yield from p.outcomes(plain)
        self._finish()

    def census(self) -> dict:
        """A counting query's merged counts over every part (empty for "total")."""
        counts: dict = {}
        for p in self.parts:
            merge_counts(self.query.count_by or "total", counts, p.census())
        self._finish()
        return counts

    def _finish(self) -> None:
        sm = self.summary
        lanes = self.lanes.summary if self.lanes is not None else LaneSummary()
        sm.lanes = lanes
        rec = self.records.summary if self.records is not None else None
        if rec is not None:
            sm.records = rec
        r = sm.records
        sm.sessions = lanes.sessions + r.sessions - r.child_sessions
        sm.child_sessions = r.child_sessions
        sm.sessions_with_hits = lanes.sessions_with_hits + r.sessions_with_hits
        sm.hits = lanes.hits + r.hits
        sm.files = lanes.files + r.files
        sm.bytes = lanes.bytes + r.bytes
        sm.lines = lanes.lines if not r.sessions else None
        sm.unreadable = list(lanes.unreadable) + [{"path": p.path, "why": p.why} for p in r.problems]
        if lanes.fulltext is not None or r.fulltext is not None:
            from ..index.fulltext import merged

            sm.fulltext = merged([lanes.fulltext, r.fulltext])
        sm.providers = {}
        for p in self.parts:
            for name, d in p.per_provider().items():
                sm.providers[name] = d


def search(query: Query, sel, use_index: bool = True) -> SearchRun:
    """`query` over every session of the selection `sel` (providers.scope.Selection, or a dataset's
    selection of the same shape); raises UsageError on a bad query. `use_index`: a provider may
    answer from its index where it is fresh (Claude Code's census)."""
    check(query)
    parts: list = []
    records = None
    by_records: dict = {}
    at = None
    picker = None
    if use_index and query.patterns and all(query.patterns):
        from ..index import config

        if config.enabled(getattr(sel, "index_off", None)):
            from ..index.fulltext import Picker, literals
            from .records import index_texts

            picker = Picker(literals(query.patterns, query.ignore_case, query.fixed),
                            tuple(e.root.path for e in sel.survey.entries if e.root is not None and e.root.path is not None),
                            index_texts())
    for e in sel.survey.entries:
        prov = e.provider
        if prov is None:
            continue
        hook = getattr(prov, "search", None)
        if hook is None:
            part = None
        elif picker is not None:
            part = hook(sel, query, use_index, fulltext=picker)
        else:
            part = hook(sel, query, use_index)
        if part is not None:
            parts.append(part)
        else:
            at = len(parts) if at is None else at
            by_records[prov.name] = prov
    pairs = [(by_records[r.provider], r) for r in sel.refs if r.provider in by_records]
    if pairs:
        from .records import RecordPart

        roots = None
        if picker is not None:
            roots = picker.roots
        from ..index import config
        from ..index.kept import roots_of

        keep = roots_of(sel) if use_index and config.enabled(getattr(sel, "index_off", None)) else None
        records = RecordPart(pairs, record_query(query, roots, keep))
        parts.insert(at if at is not None else len(parts), records)
    return SearchRun(query, parts, records)
