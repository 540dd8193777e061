"""The shared vocabulary every reader and every question speaks (re-exported by providers/base.py,
where readers take it from): who a record speaks for (``Role``), what it is (``Kind``), what a
reader found where it looked (``CoverageState``, ``Coverage``, ``Root``, ``Problem``) and what a
change did to a file (``FileAction``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Role = Literal["user", "assistant", "system", "tool", "harness"]
"""Who a record speaks for: ``user`` (a person, or text delivered as the user turn), ``assistant``
(the model), ``system`` (system/developer instructions), ``tool`` (a tool's result), ``harness``
(the client's own bookkeeping: metadata, snapshots, events)."""

Kind = Literal["prompt", "message", "reasoning", "tool_call", "tool_result", "meta", "unknown"]
"""What a record is, in the shared vocabulary. ``prompt`` is only what a person typed (never the
synthetic context a client injects as a user message: that is ``meta`` with role ``user``)."""

CoverageState = Literal["ok", "absent", "unreadable", "unknown_format", "no_adapter", "not_looked"]
"""``ok``: read, count known. ``absent``: we looked where the client keeps data and found none (a
true 0). ``unreadable``: the store exists but could not be read (permissions, corrupt, locked).
``unknown_format``: a format/schema version the reader does not know. ``no_adapter``: no reader
for this client. ``not_looked``: the caller narrowed the question (``--provider``, or explicit
roots for other providers only) -- named so an answer narrower than the question says so."""

FileAction = Literal["create", "update", "delete", "move", "unknown", "read"]
"""``read``: no change, a whole view of the file a record holds (recover's anchors, never a `files` row)."""


@dataclass(frozen=True)
class Root:
    """Where one provider's data was looked for, and why there."""

    path: Path | None
    source: str
    """How it was chosen, e.g. ``--codex-home``, ``--home``, ``CODEX_HOME``, ``default``."""
    explicit: bool = False
    """True when the user named it on the command line (flag or ``--home``)."""


@dataclass
class Problem:
    """Something we looked for and could not read."""

    path: str
    why: str


@dataclass
class Coverage:
    """What one provider contributed to an answer. ``sessions`` is None unless counted."""

    provider: str
    display: str
    state: CoverageState
    sessions: int | None = None
    reason: str | None = None
    root: str | None = None
    root_source: str | None = None
    subagents: int | None = None
    """Its subagents in the answer, counted apart from ``sessions`` (Claude Code's subagent lanes,
    another provider's child sessions that are agents); None when not counted."""
    helpers: int | None = None
    """Its helper sessions in the answer (``SessionRef.helper``: child sessions the client made
    for its own bookkeeping, not agent lanes, e.g. Crush's title-generation sessions), counted
    apart from both; None when not counted."""

    def __post_init__(self) -> None:
        if self.state in ("ok", "absent"):
            if self.sessions is None:
                raise ValueError(f"coverage {self.provider}: state {self.state} needs a count")
        elif self.sessions is not None:
            raise ValueError(f"coverage {self.provider}: state {self.state} must not carry a count")
        if self.state == "absent" and self.sessions != 0:
            raise ValueError("absent means 0 sessions")

    def to_json(self) -> dict:
        return {"provider": self.provider, "display": self.display, "state": self.state,
                "sessions": self.sessions, "subagents": self.subagents, "helper_sessions": self.helpers,
                "reason": self.reason,
                "root": self.root, "root_source": self.root_source}
