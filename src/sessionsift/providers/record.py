"""The shared record shape every reader yields (re-exported by providers/base.py, where the
Provider interface that yields them lives): a :class:`Record` with its :class:`FileChange` rows
and :class:`Tokens`, and the :class:`ReadReport` of what a reading did not take in."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .vocab import FileAction, Kind, Problem, Role


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str
    action: FileAction
    new_content: str | None = None
    """The whole file after the change, where the record holds it (a complete view)."""
    old_content: str | None = None
    """The whole file before the change, where the record holds it."""
    diff: str | None = None
    """A unified diff or patch text, where that is all the record holds."""
    move_to: str | None = None


@dataclass(frozen=True, slots=True)
class Tokens:
    """Usage as the provider wrote it. ``None`` = the field was absent, never 0."""

    input: int | None = None
    """Input tokens NOT read from cache (normalised so input + cache_read = prompt tokens)."""
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    """Reasoning tokens, where recorded (included in ``output`` unless the provider says not)."""
    total: int | None = None
    dedup_key: str | None = None
    """One usage object per this key: later records with the same key repeat it."""
    cumulative: bool = False
    """A running total (never summed with per-response usage)."""


@dataclass(slots=True)
class Record:
    """One record of one session in the shared shape."""

    provider: str
    session_id: str
    locator: str
    """Back to the bytes: ``L<n>`` (1-based physical line of ``path``), optionally ``L<n>#<i>``
    for the i-th item of a line; or ``<table>:<id>`` for a database row (``part:prt_...``)."""
    role: Role
    kind: Kind
    native: str
    """The provider's own type, e.g. ``response_item/function_call``, ``gemini``, ``part/tool``."""
    path: str | None = None
    line: int | None = None
    offset: int | None = None
    length: int | None = None
    lane: str = "main"
    """``main``, or the name of a subagent lane inside this session (Claude Code's ``agent-<id>``).
    Consumers read any other value as a subagent's; a provider whose subagents are sessions of
    their own leaves it ``main``."""
    instant: str | None = None
    """ISO-8601 UTC where known."""
    text: str | None = None
    tool_name: str | None = None
    tool_input: Any = None
    call_id: str | None = None
    exit_code: int | None = None
    is_error: bool | None = None
    file_changes: tuple[FileChange, ...] = ()
    tokens: Tokens | None = None
    model: str | None = None
    copy_of: str | None = None
    """Set when this record repeats another (the original's locator): count it once."""
    turn: int | None = None
    """The turn it belongs to, where the reader can tell (1-based; a turn opens at a prompt, and in
    a child session -- a subagent's -- at the task its parent delegated, which is no prompt)."""
    truncated: bool = False
    """The client wrote that it cut this record's text (e.g. Codex CLI's ``…N tokens truncated…``):
    the cut part is not on disk at all, so no search can find it there."""
    rewound: bool = False
    """The client rewound its conversation past this record (Gemini CLI's ``/rewind``): it
    happened (its tokens were spent, its tools ran) but the conversation no longer holds it."""
    message_id: str | None = None
    """The provider's message this record is one part of, where one message spans several records
    (opencode: a message's text, reasoning, tool and step-finish parts). Usage is recorded once
    per message, on one of its records, so a record without ``tokens`` whose message has them is
    not a message without usage (usage/collect.py). None: the record is its own unit."""
    raw: Any = None
    """The raw record (parsed JSON object or row dict); None when the caller did not ask."""


@dataclass
class ReadReport:
    """What a reading did and did not take in. Zero entries are real zeros: we looked."""

    files: int = 0
    bytes: int = 0
    records: int = 0
    malformed_lines: list[str] = field(default_factory=list)
    """Locators of lines that are not JSON objects (file:line)."""
    zero_filled_lines: int = 0
    invalid_utf8_lines: int = 0
    torn_tail_bytes: int = 0
    unknown_kinds: Counter = field(default_factory=Counter)
    """Native types the reader does not know: kept (kind=unknown) and counted here."""
    duplicates: int = 0
    """Records yielded with ``copy_of`` set."""
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def omissions(self) -> dict[str, int]:
        return {"malformed_lines": len(self.malformed_lines), "zero_filled_lines": self.zero_filled_lines,
                "invalid_utf8_lines": self.invalid_utf8_lines, "torn_tail_bytes": self.torn_tail_bytes,
                "unknown_kinds": sum(self.unknown_kinds.values())}

    def add_read(self, path, st, files: int) -> None:
        """Account one file's line-level read (`read.lines.ReadStats`): ``files`` files, its bytes and
        every line it could not take (malformed lines named ``path:line``)."""
        self.files += files
        self.bytes += st.bytes
        self.malformed_lines.extend(f"{path}:{n}" for n in st.malformed_lines)
        self.zero_filled_lines += st.zero_filled_lines
        self.invalid_utf8_lines += st.invalid_utf8_lines
        self.torn_tail_bytes += st.torn_tail_bytes

    def merge(self, o: "ReadReport") -> None:
        self.files += o.files
        self.bytes += o.bytes
        self.records += o.records
        self.malformed_lines.extend(o.malformed_lines)
        self.zero_filled_lines += o.zero_filled_lines
        self.invalid_utf8_lines += o.invalid_utf8_lines
        self.torn_tail_bytes += o.torn_tail_bytes
        self.unknown_kinds.update(o.unknown_kinds)
        self.duplicates += o.duplicates
        self.problems.extend(o.problems)
        self.notes.extend(o.notes)
