"""The query of `search`, for every agent (docs/search.md): what the question (sessionsift.search)
gives each provider's ``search`` capability (providers.base.Provider.search), how counts merge, and
the summary a reader's own part gives back (``LaneSummary``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

COUNT_BY = ("label", "tool", "attachment", "session", "project", "day", "model", "pairing")

SHARED_KINDS = ("prompt", "message", "reasoning", "tool_call", "tool_result", "meta", "unknown")
DEFAULT_KINDS = frozenset(("prompt", "message", "reasoning", "tool_call", "tool_result"))
"""Searched when no -t is given (meta and unknown records are named in the summary as not searched)."""
ROLE_TO_KINDS = {"user": ("prompt",), "agent": ("message", "reasoning", "tool_call", "tool_result"),
                 "harness": ("meta",)}


def shared_selected_kinds(include: tuple[str, ...], exclude: tuple[str, ...]) -> frozenset[str]:
    """``Provider.selected_kinds``'s default: the shared kinds -t/-T select (`include` empty: the
    default kinds), each value a shared kind or a role."""
    from ..errors import UsageError

    def kinds(sels: tuple[str, ...]) -> set[str]:
        out: set[str] = set()
        for s in sels:
            s = s.strip()
            if s in SHARED_KINDS:
                out.add(s)
            elif s in ROLE_TO_KINDS:
                out.update(ROLE_TO_KINDS[s])
            else:
                raise UsageError(f"unknown selector {s!r}: use a shared kind ({', '.join(SHARED_KINDS)})")
        return out

    inc = kinds(include) if include else set(DEFAULT_KINDS)
    return frozenset(inc - kinds(exclude))


def selected_kinds(include: tuple[str, ...], exclude: tuple[str, ...]) -> frozenset[str]:
    """The shared kinds -t/-T select for every agent's records: shared kinds, roles, and the record
    labels of the reader whose labels the selectors also take (``Provider.record_labels``: Claude
    Code's, docs/labels.md), each mapped to its nearest kind by that reader
    (``Provider.selected_kinds``)."""
    from . import having, load
    from .base import Provider

    owner = having("record_labels")
    cls = load(owner[0]) if owner else None
    return (cls or Provider).selected_kinds(include, exclude)


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


@dataclass
class LaneSummary:
    """A deep lane scan's summary: the ``summary`` of a reader's own search part (Provider.search;
    Claude Code's: providers/claude/search), which the question's summary is made of."""

    files: int = 0
    lines: int | None = None
    """Physical lines in the files read; None = not counted (Query.count_lines)."""
    bytes: int = 0
    sessions: int = 0
    sessions_with_hits: int = 0
    hits: int = 0
    records_parsed: int = 0
    malformed_lines: int = 0
    bridged_records: int = 0
    """Records bridged across omitted lines in the lane views built for hits (LaneOutcome.bridged)."""
    bridged_transcripts: int = 0
    omitted_lines: int = 0
    """Zero-filled and malformed lines those lane views found (records lost: not searched)."""
    unchained_transcripts: int = 0
    """Transcripts with hits and omitted lines met by the scan whose hits got no lane view (turns
    not computed: bridges not looked for)."""
    unchained_unknown: int = 0
    """Transcripts with hits whose zero-fill check could not read the file again: whether they
    are unchained is unknown (`unchained_transcripts` is then a lower bound)."""
    shape_skipped: int = 0
    """Candidate lines whose record type (or tool-result shape) read from the first bytes put them
    outside the selection, so they were not parsed."""
    shape_counted: int = 0
    """Hits counted from their bytes without parsing (counting plans: assistant records and
    tool-result carriers in Claude Code's compact form)."""
    undated_skipped: int = 0
    copies_skipped: int = 0
    """Hits left out because their record copies a record of another session in scope (a
    `--fork-session` fork): each original record is counted once, on its first session."""
    unreadable: list[dict] = field(default_factory=list)
    persisted_unresolved: list[dict] = field(default_factory=list)
    unknown_type_lines: dict = field(default_factory=dict)
    """Candidate lines (lines holding the pattern's literal needle; every line when there is none)
    whose record type sessionsift does not interpret, by type. They are never matched: 2.1.332's
    `api-request-blob` holds wire copies of prompts and harness system text (docs/search.md)."""
    prefilter: list[str] | None = None
    """The byte needles used to pick candidate lines (None = every line was a candidate)."""
    gated_hits: dict = field(default_factory=dict)
    """Left-out kind -> further hits counted (the raw sums behind `left_out`)."""
    left_out: list[dict] = field(default_factory=list)
    """Kinds and sources this query did not search: `{kind, flag, further_hits}` each, `flag` the
    option that adds it, `further_hits` the hits it would add (None = not counted: the pattern has no
    literal needle, or -m/-l stopped the scan early). See left_out_kinds in providers/claude/search/plan.py."""
    left_out_note: str | None = None
    """Why `further_hits` are null, when they are."""
    index_counts: dict = field(default_factory=dict)
    """Transcripts answered from the index ("index", "appended": updated first) or "scanned"."""
    index_why: dict = field(default_factory=dict)
    """Why census transcripts were scanned rather than answered from the index."""
    fulltext: Any = None
    """The full-text index's verdicts on the transcripts (index/fulltext.py Verdicts), None: not asked."""
