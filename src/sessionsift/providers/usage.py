"""One usage event per API response, as a provider's usage extraction yields it (the record every
reader's usage maps to; usage/events.py merges the copies of one key before anything is summed)."""

from __future__ import annotations

from dataclasses import dataclass

TOKEN_FIELDS = ("input", "output", "cache_read", "cache_write", "cache_write_1h", "reasoning")


@dataclass(slots=True)
class Event:
    provider: str
    session_id: str
    lane: str
    """"main", or the subagent lane (agent id) the response was written in."""
    project: str | None
    model: str | None
    ts: float | None
    """Epoch seconds (UTC) of the response; None when the record had no readable instant."""
    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    """All cache writes (5-minute and 1-hour)."""
    cache_write_1h: int | None = None
    """The 1-hour share of `cache_write`, where recorded."""
    reasoning: int | None = None
    """Reasoning tokens where recorded (inside `output`)."""
    speed: str | None = None
    geo: str | None = None
    service_tier: str | None = None
    client_cost: float | None = None
    """The cost the provider itself recorded for this response (Claude Code `costUSD`, opencode)."""
    key: str | None = None
    copies: int = 1
    path: str | None = None

    def total(self) -> int:
        return (self.input or 0) + (self.output or 0) + (self.cache_read or 0) + (self.cache_write or 0)

    def has_tokens(self) -> bool:
        return any(getattr(self, f) is not None for f in TOKEN_FIELDS)
