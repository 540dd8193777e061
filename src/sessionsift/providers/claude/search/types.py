"""The outcomes of Claude Code's lane scan: a hit with its lane position, line and turn context,
one lane's outcome, and the lane summary (docs/search.md)."""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass, field

from ...searchquery import COUNT_BY, Query  # noqa: F401 - re-exported for the lane scan


@dataclass
class Opener:
    line: int
    uuid: str | None
    labels: list[str]
    timestamp: str | None
    text: str


@dataclass
class Hit:
    """One matching record."""

    lane_pos: int
    """Position of the lane in the scan order (stable output order)."""
    line: int
    offset: int
    length: int
    uuid: str | None
    timestamp: str | None
    labels: list[str]
    tool_names: list[str]
    text: str
    span: tuple[int, int] | None
    """Where the first pattern match sits in `text` (None for the empty pattern)."""
    type: str | None = None
    attachment: str | None = None
    model: str | None = None
    turn: int | None = None
    survival: str | None = None
    opener: Opener | None = None
    persisted: list[str] = field(default_factory=list)
    """Paths of persisted outputs whose text was substituted before matching."""


@dataclass
class LaneOutcome:
    """What scanning one transcript produced."""

    pos: int
    bytes: int = 0
    lines: int | None = None
    """Physical lines (None = not counted: Query.count_lines off)."""
    parsed: int = 0
    malformed: int = 0
    hits: list[Hit] = field(default_factory=list)
    hit_count: int = 0
    counts: dict = field(default_factory=dict)
    """count key -> count (or for pairing: tool -> [uses, returned, unreturned])."""
    unreadable: str | None = None
    persisted_problems: list[dict] = field(default_factory=list)
    undated_skipped: int = 0
    indexed: bool = False
    shape_skipped: int = 0
    """Candidate lines left out from their bytes without parsing (prefilter.HEAD_TYPE/CARRIER)."""
    shape_counted: int = 0
    """Hits counted from their bytes without parsing (counting plans only)."""
    unknown_type_lines: dict = field(default_factory=dict)
    """Candidate lines of record types sessionsift does not interpret (never matched), by type."""
    copies_skipped: int = 0
    """Hits on records that copy a record of another in-scope session (a fork's copies)."""
    gated_hits: dict = field(default_factory=dict)
    """Gated leaf (or "persisted-output") -> hits it would add if its flag were given (counted only
    when Plan.count_left_out)."""
    from_index: str | None = None
    """"index" / "appended" when the lane's answer (or its hits' labels) came from the index."""
    index_why: str | None = None
    """Why a census lane was scanned instead (no index yet, changed, damaged lines, ...)."""
    view: object = None
    """The index view a census lane was answered from (kept in the root summary, providers/claude/cache/summary.py)."""
    bridged: int | None = None
    """Records the lane view built for the hits bridged across omitted lines (providers/claude/model/lane.py: their
    parent lay in a zero-filled or malformed line), so the hits' turns and survival are joined
    across them; None when no lane view was built."""
    omitted: int | None = None
    """Zero-filled and malformed lines that lane view found (their records are lost: never
    searched); None when no lane view was built."""
    unchained: int | None = 0
    """Omitted lines the scan met in a lane whose hits got no lane view (no turns computed, so no
    bridge was looked for); None when the file could not be read again to look for them."""
    reread_failed: str | None = None
    """Why reading the transcript again after its scan failed (the tool results a pairing count
    needs, the tool names of result carriers, the zero-fill check): what rests on that read is
    unknown (null), never empty."""

    def plain(self) -> bool:
        """Nothing but its size, line count and why the index was not used: most lanes of a
        selective search (the file does not hold the needle)."""
        return (not self.hit_count and not self.hits and not self.counts and self.unreadable is None
                and not self.parsed and not self.malformed and not self.persisted_problems
                and not self.undated_skipped and not self.indexed and not self.shape_skipped
                and not self.shape_counted and not self.unknown_type_lines and not self.copies_skipped
                and not self.gated_hits and self.from_index is None and self.bridged is None
                and self.omitted is None and self.unchained == 0 and self.view is None
                and self.reread_failed is None)

    def __reduce__(self):
        # a forked worker sends back one outcome per lane: a plain one as four values (pickling
        # the dataclass state of ~10k lanes costs the parent ~0.1 s of unpickling)
        if self.plain():
            return _plain_outcome, (self.pos, self.bytes, self.lines, self.index_why)
        return _outcome_from_state, (dict(self.__dict__),)


def _plain_outcome(pos: int, size: int, lines: int | None, why: str | None) -> LaneOutcome:
    return LaneOutcome(pos=pos, bytes=size, lines=lines, index_why=why)


def _outcome_from_state(state: dict) -> LaneOutcome:
    o = LaneOutcome.__new__(LaneOutcome)
    o.__dict__.update(state)
    return o


@dataclass
class LaneSummary:
    """A deep lane scan's summary (Claude Code's: providers/claude/search)."""

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


Summary = LaneSummary
"""The lane scan's own name for it."""
