"""The answer of the ``reinjection`` capability (`audit reinjection`, providers/base.py
``Provider.reinjection``): per lane, the files whose changed-on-disk contents the client re-sent into
context -- each delivery, the flushes that carried them, the structured writes that ended an
episode -- and what could not be read. A reader that names such records fills it (Claude Code's
``edited_text_file`` attachments: providers/claude/reinjection.py); the question (sessionsift.audit)
merges the readers' answers and names every other provider with why its data holds none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..read.lines import ReadStats
from .vocab import Problem


@dataclass
class Delivery:
    """One `edited_text_file` record."""
    line: int
    timestamp: str | None
    flush_line: int
    chars: int | None               # len(snippet) in characters (the client's cap counts characters)
    bytes: int | None               # UTF-8 bytes of the snippet; None when the record is unreadable
    sha256: str | None
    empty: bool | None              # snippet == "" (FH-033: blanked by the cumulative 16,384-char budget)
    truncated_lines: int | None     # N of the `... [N lines truncated] ...` tail (FH-034); None = no tail
    regions: int | None             # runs of consecutive gutter line numbers; None = not parseable
    episode: int = 0
    repeat: bool | None = None      # byte-identical to the previous delivery of this file in this episode
    grew: bool | None = None        # longer than the previous delivery in this episode
    readable: bool = True
    why: str | None = None


@dataclass
class Exit:
    """A structured write of the file by the session (the observed way out of the set)."""
    line: int
    tool: str
    tool_use_id: str | None
    timestamp: str | None
    result_line: int | None = None
    is_error: bool | None = None    # None: no tool_result recorded


@dataclass
class FileReport:
    filename: str
    deliveries: list[Delivery] = field(default_factory=list)
    writes: list[Exit] = field(default_factory=list)        # every structured write of the file in the lane
    exits: list[Exit] = field(default_factory=list)         # the writes that ended an episode

    @property
    def flushes(self) -> int:
        return len({d.flush_line for d in self.deliveries})

    @property
    def lines(self) -> list[int]:
        return [d.line for d in self.deliveries]

    @property
    def bytes_total(self) -> int | None:
        if any(d.bytes is None for d in self.deliveries):
            return None
        return sum(d.bytes for d in self.deliveries)

    @property
    def repeat_bytes(self) -> int | None:
        if any(d.repeat is None for d in self.deliveries):
            return None
        return sum(d.bytes for d in self.deliveries if d.repeat)

    @property
    def repeats(self) -> int | None:
        if any(d.repeat is None for d in self.deliveries):
            return None
        return sum(1 for d in self.deliveries if d.repeat)

    @property
    def waste_share(self) -> float | None:
        return _share(self.repeat_bytes, self.bytes_total)

    @property
    def grew(self) -> bool | None:
        flags = [d.grew for d in self.deliveries]
        if any(f is True for f in flags):
            return True
        if any(f is None for f in flags):
            return None
        return False

    @property
    def episodes(self) -> int:
        return len({d.episode for d in self.deliveries})

    @property
    def left_by(self) -> Exit | None:
        """The successful structured write after the LAST delivery (None: still pending at the end)."""
        if not self.deliveries:
            return None
        last = self.deliveries[-1].line
        for x in self.exits:
            if x.line > last:
                return x
        return None

    @property
    def unreadable_lines(self) -> list[int]:
        return [d.line for d in self.deliveries if not d.readable]


@dataclass
class Flush:
    line: int                        # line of its first delivery
    timestamp: str | None
    deliveries: list[tuple[str, Delivery]] = field(default_factory=list)   # (filename, delivery)

    @property
    def bytes_total(self) -> int | None:
        if any(d.bytes is None for _, d in self.deliveries):
            return None
        return sum(d.bytes for _, d in self.deliveries)

    @property
    def repeat_bytes(self) -> int | None:
        if any(d.repeat is None for _, d in self.deliveries):
            return None
        return sum(d.bytes for _, d in self.deliveries if d.repeat)


@dataclass
class LaneReport:
    lane: Any
    """The lane read (its reader's own lane: ``path``, ``session_id``, ``kind``, ``display``...)."""
    files: list[FileReport] = field(default_factory=list)
    flushes: list[Flush] = field(default_factory=list)
    unreadable: list[tuple[int, str]] = field(default_factory=list)   # (line, why) with no filename
    read: ReadStats = field(default_factory=ReadStats)
    last_line: int | None = None
    last_timestamp: str | None = None
    framed: bool = True          # False: the bytes hold no `edited_text_file`, lines were not framed

    @property
    def deliveries(self) -> int:
        return sum(len(f.deliveries) for f in self.files)

    @property
    def bytes_total(self) -> int | None:
        vals = [f.bytes_total for f in self.files]
        return None if any(v is None for v in vals) else sum(vals)

    @property
    def repeat_bytes(self) -> int | None:
        vals = [f.repeat_bytes for f in self.files]
        return None if any(v is None for v in vals) else sum(vals)

    @property
    def duplicated_share(self) -> float | None:
        return _share(self.repeat_bytes, self.bytes_total)

    @property
    def pending(self) -> list[FileReport]:
        return [f for f in self.files if f.left_by is None]

    @property
    def complete(self) -> bool:
        return not self.unreadable and not any(f.unreadable_lines for f in self.files)


@dataclass
class AuditResult:
    lanes: list[LaneReport] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    lacks: dict[str, str] = field(default_factory=dict)
    """Provider display name -> why its data holds no re-injection to audit (its sessions are in the
    selection, read through the shared records: ``Provider.lacks["reinjection"]``)."""

    @property
    def with_deliveries(self) -> list[LaneReport]:
        return [lr for lr in self.lanes if lr.files or lr.unreadable]


def _share(part: int | None, whole: int | None) -> float | None:
    if part is None or whole is None or whole == 0:
        return None
    return round(part / whole, 4)
