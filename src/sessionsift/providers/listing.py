"""A client's own listing of the sessions it has running (``Provider.session_listing``), in one
agent-neutral shape the questions read (clean's activity gate, the worktrees sweep).

A listing is ``present`` (read), ``absent`` (its directory does not exist: nothing ever registered
there), ``unreadable: <why>`` (it exists and could not be read, or one of its rows could not) or
``not looked at (pass --<flag>)``. Each :class:`LiveEntry` is one row of it: a session the client
says it runs, with the process(es) behind it and whether they are alive.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Listing:
    harness: str
    """The provider whose listing this is (its ``name``)."""
    path: str
    root: str
    root_source: str
    state: str
    """`present` | `absent` | `unreadable: <why>` | `not looked at (pass --<flag>)`."""
    entries: int | None = 0
    """Rows read; None when the listing was not looked at."""
    live: int | None = 0
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    note: str | None = None
    source: str = ""
    """What the listing is, for evidence rows (``claude-code registry``, ``codex thread locks``)."""

    @property
    def looked(self) -> bool:
        return not self.state.startswith("not looked at")

    @property
    def readable(self) -> bool:
        """Read (present or absent). An unread listing -- unreadable, or not looked at because
        only another harness's root was named -- proves nothing about running sessions."""
        return self.looked and not self.state.startswith("unreadable")

    @property
    def stop_reason(self) -> str | None:
        if self.readable:
            return None
        at = f" at {self.path}" if self.path else ""
        return f"the {self.harness} listing of running sessions{at} is {self.state}"

    def to_json(self) -> dict:
        return {"harness": self.harness, "path": self.path, "root": self.root, "root_source": self.root_source,
                "state": self.state, "entries": self.entries, "live": self.live,
                "unreadable": [{"path": p, "why": w} for p, w in self.unreadable], "note": self.note}


@dataclass
class LiveEntry:
    """One session the client's listing names, with the process(es) behind it."""

    session_id: str | None
    path: str
    """The row or lock file."""
    pids: list[int] = field(default_factory=list)
    cwd: str | None = None
    keeps: bool = False
    """Alive, or not provably dead (another pid domain, an unprobeable pid): it keeps what it names."""
    unprobeable: bool = False
    """Its process cannot be probed from here (another pid namespace)."""
    state: str | None = None
    """How its process was found (``alive``, ``gone``, ``unprobeable``, ``held`` ...)."""
    guard: str | None = None
    detail: str = ""

    @property
    def pid(self) -> int | None:
        return self.pids[0] if self.pids else None


def not_looked(harness: str, source: str, label: str = "") -> Listing:
    """The listing of a harness whose root the command line did not name while it named
    another's (the root rule, docs/cli.md "Data roots"): never read, so never this machine's own."""
    return Listing(harness, "", "", source, source, entries=None, live=None, source=label)
