"""The query of `search`, for every agent (docs/search.md): what the question (sessionsift.search)
gives each provider's ``search`` capability (providers.base.Provider.search), and how counts merge."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

COUNT_BY = ("label", "tool", "attachment", "session", "project", "day", "model", "pairing")


@dataclass(frozen=True)
class Query:
    """One search. `patterns` empty = match every selected record."""

    patterns: tuple[str, ...] = ()
    ignore_case: bool = False
    fixed: bool = False
    include: tuple[str, ...] = ()
    """-t selectors (leaf, prefix, glob, bare role)."""
    exclude: tuple[str, ...] = ()
    """-T selectors."""
    attachments: bool = False
    """Also search attachment lines (harness.meta.attachment and hook-context attachments)."""
    additional_context: bool = False
    """Also search hook_additional_context attachments (harness.meta.hook)."""
    since: datetime | None = None
    until: datetime | None = None
    max_count: int | None = None
    """Hits per session (None = unlimited)."""
    subagents: bool = True
    context: bool = True
    """Attach the turn opener to every hit (needs a lane index for lanes with hits)."""
    count_by: str | None = None
    """None, "total" (-c) or one of COUNT_BY."""
    sessions_only: bool = False
    """-l: stop at the first hit of each session."""
    resolve_persisted: bool = False
    count_lines: bool = False
    """Count the physical lines of every transcript for the summary (costs a pass over every byte;
    without it `Summary.lines` is None: not counted)."""


def merge_counts(by: str, acc: dict, counts: dict) -> None:
    for k, v in counts.items():
        if by == "pairing":
            # (calls, returned, unreturned); None where a lane's results could not be read: the
            # sum is unknown, never the known part read as the whole
            row = acc.setdefault(k, [0, 0, 0])
            for i in range(3):
                row[i] = None if row[i] is None or v[i] is None else row[i] + v[i]
        else:
            acc[k] = acc.get(k, 0) + v
