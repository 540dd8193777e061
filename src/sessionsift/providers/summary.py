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


def from_records(prov, ref) -> SessionSummary:
    """``Provider.summarize``'s default: every record of the session read in order (the interface
    has no head/tail window), copies left out."""
    from ..timefmt import parse_ts
    from .record import ReadReport

    rep = ReadReport()
    out = SessionSummary(size=ref.size, version=ref.version, models=[], records=0, prompts=0)
    first_d = last_d = None  # each instant is parsed once
    for r in prov.read(ref, rep):
        if r.copy_of is not None:
            continue
        out.records += 1  # type: ignore[operator]
        inst = r.instant
        if inst:
            d = parse_ts(inst)
            if out.first_at is None or (d is not None and (first_d is None or d < first_d)):
                out.first_at, first_d = inst, d
            if out.last_at is None or (last_d is not None and (d is None or last_d < d)):
                out.last_at, last_d = inst, d
        if r.model and r.model not in out.models:  # type: ignore[operator]
            out.models.append(r.model)  # type: ignore[union-attr]
        if r.kind == "prompt" and r.lane == "main":
            out.prompts += 1  # type: ignore[operator]
            if out.first_prompt is None:
                out.first_prompt, out.first_prompt_at = r.text, r.instant
            out.last_prompt, out.last_prompt_at = r.text, r.instant
        elif r.kind == "message" and r.role == "assistant" and r.lane == "main" and r.text:
            out.last_agent_message, out.last_agent_message_at = r.text, r.instant
    out.first_at = out.first_at or ref.first_at
    out.last_at = out.last_at or ref.last_at
    out.bytes_read, out.bytes_total, out.files_read = rep.bytes, rep.bytes, rep.files
    out.omissions = rep.omissions()
    if out.first_prompt is None:
        out.notes.append("no prompt in the session's records")
    if out.last_agent_message is None:
        out.notes.append("no agent message in the session's records")
    for p in rep.problems:
        out.notes.append(f"unreadable: {p.path}: {p.why}")
    out.problems = list(rep.problems)
    return out
