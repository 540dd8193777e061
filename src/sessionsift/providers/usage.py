"""One usage event per API response, as a provider's usage extraction yields it (the record every
reader's usage maps to; usage/events.py merges the copies of one key before anything is summed)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the statusline's light scan imports neither typing nor dataclasses
    from typing import Any

def instant_ts(s: "Any") -> "float | None":
    """A record's ISO 8601 instant (a trailing ``Z`` read as UTC) as a POSIX timestamp; None when it
    is no string or no instant."""
    if not isinstance(s, str):
        return None
    from datetime import datetime

    try:
        return datetime.fromisoformat(s).timestamp() if s[-1:] != "Z" else datetime.fromisoformat(s[:-1] + "+00:00").timestamp()
    except ValueError:
        return None


TOKEN_FIELDS = ("input", "output", "cache_read", "cache_write", "cache_write_1h", "reasoning")

_FIELDS = ("provider", "session_id", "lane", "project", "model", "ts", "input", "output", "cache_read", "cache_write",
           "cache_write_1h", "reasoning", "speed", "geo", "service_tier", "client_cost", "key", "copies", "path")


class Event:
    """One response's usage. A plain class with slots, written out rather than a dataclass: the
    statusline after a turn builds a few of these and imports no dataclasses (~12 ms with inspect).

    Fields: `lane` "main" or the subagent lane (agent id) the response was written in; `ts` epoch
    seconds (UTC) of the response, None when the record had no readable instant; `cache_write` all
    cache writes (5-minute and 1-hour), `cache_write_1h` the 1-hour share where recorded;
    `reasoning` reasoning tokens where recorded (inside `output`); `client_cost` the cost the
    provider itself recorded for this response (Claude Code `costUSD`, opencode)."""

    __slots__ = _FIELDS

    def __init__(self, provider: str, session_id: str, lane: str, project: str | None, model: str | None,
                 ts: float | None, input: int | None = None, output: int | None = None, cache_read: int | None = None,
                 cache_write: int | None = None, cache_write_1h: int | None = None, reasoning: int | None = None,
                 speed: str | None = None, geo: str | None = None, service_tier: str | None = None,
                 client_cost: float | None = None, key: str | None = None, copies: int = 1,
                 path: str | None = None) -> None:
        self.provider = provider
        self.session_id = session_id
        self.lane = lane
        self.project = project
        self.model = model
        self.ts = ts
        self.input = input
        self.output = output
        self.cache_read = cache_read
        self.cache_write = cache_write
        self.cache_write_1h = cache_write_1h
        self.reasoning = reasoning
        self.speed = speed
        self.geo = geo
        self.service_tier = service_tier
        self.client_cost = client_cost
        self.key = key
        self.copies = copies
        self.path = path

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in _FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __repr__(self) -> str:
        return "Event(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in _FIELDS) + ")"

    def total(self) -> int:
        return (self.input or 0) + (self.output or 0) + (self.cache_read or 0) + (self.cache_write or 0)

    def has_tokens(self) -> bool:
        return any(getattr(self, f) is not None for f in TOKEN_FIELDS)


class ClientRecorded:
    """The client's own totals of a session, as its last record of them says (Claude Code's last
    `cost-state` record, opencode's `session.cost`, Crush's `sessions.cost`). (A plain class, not a
    dataclass: the statusline's light scan imports no dataclasses.)"""

    __slots__ = ("cost_usd", "by_model", "path", "offset", "source")

    def __init__(self, cost_usd: float | None, by_model: dict[str, dict[str, Any]], path: str, offset: int | None,
                 source: str = "cost-state"):
        self.cost_usd = cost_usd
        self.by_model = by_model
        self.path = path
        self.offset = offset
        self.source = source
        """Where the client wrote it: Claude Code `cost-state`, opencode `session.cost`, Crush `sessions.cost`."""

    def as_dict(self) -> dict[str, Any]:
        """Its fields (a copy; `ClientRecorded(**d)` makes it again)."""
        return {"cost_usd": self.cost_usd, "by_model": {k: dict(v) for k, v in self.by_model.items()},
                "path": self.path, "offset": self.offset, "source": self.source}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClientRecorded) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return "ClientRecorded(" + ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items()) + ")"
