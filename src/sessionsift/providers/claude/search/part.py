"""Claude Code's part of a search (its ``search`` capability): the lane scan over the selection's
Claude Code scope, -t/-T read as its labels (shared kinds translated: providers/claude/kinds.py),
a census answered from the index where it is fresh."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ...searchquery import Query


def lane_query(query: Query) -> Query:
    """`query` with -t/-T as Claude Code label selectors (a shared kind stands for its labels)."""
    from dataclasses import replace

    from ..kinds import claude_selectors

    return replace(query, include=claude_selectors(query.include), exclude=claude_selectors(query.exclude))


def scope_of(sel, empty: bool = False):
    """The Claude Code part of a selection as the deep model's Scope (an empty one when Claude Code
    was not looked at, its root is absent, or `empty`: the query can select none of its records)."""
    if sel.claude is not None and not empty:
        return sel.claude
    from ..discover import HomeChoice, Scope

    ce = sel.survey.entry("claude-code")
    path = ce.root.path if ce is not None and ce.root is not None and ce.root.path is not None else Path("-")
    src = ce.root.source if ce is not None and ce.root is not None else "default"
    sc = Scope(HomeChoice(path, "~/.claude" if src == "default" else src))  # type: ignore[arg-type]
    if sel.claude is not None:
        sc.index_off = sel.claude.index_off
    return sc


class LanePart:
    """The lane run (lanes.LaneRun) of the selection's Claude Code sessions, as a search part."""

    def __init__(self, sel, query: Query, use_index: bool = True, fulltext=None):
        from ....index.report import IndexReport
        from .lanes import lane_search

        q = lane_query(query)
        self.scope = scope_of(sel, empty=bool(query.include) and not q.include)
        self.index_report = IndexReport.for_root(self.scope.home.path, self.scope.index_off)
        on = use_index and self.index_report.on
        self.run = lane_search(q, self.scope, use_index=on, fulltext=fulltext if on else None)

    @property
    def summary(self):
        return self.run.summary

    @property
    def workers(self) -> int:
        return self.run.workers

    @property
    def tool_count(self) -> str:
        return self.run.plan.tool_count

    def outcomes(self, plain: bool = True) -> Iterator:
        return self.run.outcomes(plain)

    def census(self) -> dict:
        return self.run.census()

    def per_provider(self) -> dict[str, dict]:
        sm = self.run.summary
        return {"claude-code": {"sessions": sm.sessions, "files": sm.files, "bytes": sm.bytes, "lines": sm.lines,
                                "hits": sm.hits,
                                "sessions_with_hits": sm.sessions_with_hits}}

    def index_json(self) -> dict:
        """The summary's `index` (docs/index.md): transcripts answered (a census) or relabelled from
        the index, updated first, or scanned, and why a census transcript was scanned."""
        sm, irep = self.run.summary, self.index_report
        return {"enabled": irep.on, "off_reason": irep.off, "census": self.run.plan.use_index,
                "from_index": sm.index_counts.get("index", 0), "appended": sm.index_counts.get("appended", 0),
                "built": sm.index_counts.get("built", 0), "scanned": sm.index_counts.get("scanned", 0),
                "fulltext": sm.index_counts.get("fulltext", 0),
                "scanned_why": dict(sm.index_why) or None}

    def index_note(self) -> str | None:
        """A census that scanned some transcripts says so (a pattern search scans by nature). It
        indexes what it reads itself, so what is left is what no index answers (damaged lines, a
        torn tail, a fork's copies, an index that could not be read or written)."""
        sm = self.run.summary
        if not self.run.plan.use_index or not sm.index_why:
            return None
        n = sum(sm.index_why.values())
        return (f"index: {n} transcript(s) scanned without it ("
                + "; ".join(f"{k}: {v}" for k, v in sm.index_why.items())
                + ")")
