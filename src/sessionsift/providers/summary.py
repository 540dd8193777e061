"""What `list` shows of one session of any provider (``Provider.summarize``), re-exported by
providers/base.py."""

from __future__ import annotations

from dataclasses import dataclass, field

from .vocab import Problem


@dataclass
class SessionSummary:
    """What `list` shows of one session of any provider (Provider.summarize): its first and last
    prompt, its last agent message and its instants, with how much was read to know them. A
    figure the reading did not take is None (a reader that reads a head and a tail only counts no
    records), never 0."""

    first_prompt: str | None = None
    first_prompt_at: str | None = None
    last_prompt: str | None = None
    last_prompt_at: str | None = None
    last_agent_message: str | None = None
    last_agent_message_at: str | None = None
    first_at: str | None = None
    last_at: str | None = None
    project: str | None = None
    """The project the records name, where the reader found it (else the SessionRef's)."""
    version: str | None = None
    git_branch: str | None = None
    git_branch_recorded: bool = False
    """The client records a git branch per record (Claude Code): a None branch is then one the
    records did not name, not one the client never writes."""
    records: int | None = None
    """Records read (copies left out); None: the reader read only part of the session."""
    prompts: int | None = None
    models: list[str] | None = None
    size: int | None = None
    """Bytes on disk of the session's files (None: not attributable, rows of a shared database)."""
    mtime: float | None = None
    bytes_read: int = 0
    bytes_total: int | None = None
    """The bytes the reading chose its windows from (``bytes_read`` of them were read): a
    bounded reader's file size; a whole reading's own bytes."""
    files_read: int = 0
    subagents: int | None = None
    """Subagent lanes inside this session, where its client keeps subagents as lanes of one
    session (``subagents_are_lanes``); None there: not counted (``--no-subagents``) or the lanes
    could not be listed. A client whose subagents are sessions of their own leaves it None: the
    listing counts its child sessions."""
    subagents_are_lanes: bool = False
    omissions: dict[str, int] | None = None
    notes: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
