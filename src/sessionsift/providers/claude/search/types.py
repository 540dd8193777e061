"""The outcomes of Claude Code's lane scan: a hit with its lane position, line and turn context,
one lane's outcome, and the lane summary (docs/search.md)."""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass, field

from ...searchquery import COUNT_BY, LaneSummary, Query  # noqa: F401 - re-exported for the lane scan


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


Summary = LaneSummary
"""The lane scan's own name for it."""
