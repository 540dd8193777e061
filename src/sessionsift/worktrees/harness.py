"""The agent harnesses' own listings of the sessions they have running, as the sweep reads them:
each provider's ``session_listing`` (providers/<agent>/ knows what its client writes: Claude
Code's session registry rows, Codex CLI's held thread-writer locks), and the worktree facts the
two clients that make worktrees keep (their readers' modules). Rows are
:class:`~sessionsift.providers.listing.LiveEntry` whatever the client.

A listing is `present` (read), `absent` (its directory does not exist: nothing ever registered
there), `unreadable: <why>` (it exists and could not be read, or one of its rows could not) or
`not looked at (pass --<flag>)`.
"""

from __future__ import annotations

from pathlib import Path

from ..providers.listing import Listing, LiveEntry, not_looked
from . import procs as P

__all__ = ["Listing", "LiveEntry", "listing", "not_looked", "claude_listing", "codex_listing"]

CLAUDE, CODEX = "claude-code", "codex"
"""The two clients whose worktrees the sweep knows (docs/worktrees.md)."""


def listing(name: str, root: Path, source: str) -> tuple[Listing, list[LiveEntry]] | None:
    """Provider ``name``'s listing under ``root`` (None: its client keeps none). A reader that
    raises gives an unreadable listing: it proves nothing, and the sweep stops."""
    from ..providers import get

    prov = get(name)
    try:
        got = prov.session_listing(Path(root), source, P.held_locks)
    except Exception as exc:  # noqa: BLE001 - a reader's bug: unread, never empty
        return Listing(name, "", str(root), source, f"unreadable: the reader failed: {type(exc).__name__}: {exc}"), []
    return got


def _must(name: str, root: Path, source: str) -> tuple[Listing, list[LiveEntry]]:
    got = listing(name, root, source)
    if got is None:  # a reader that stopped keeping one: unread, never empty
        return Listing(name, "", str(root), source, "unreadable: its reader offers no listing"), []
    return got


def claude_listing(home: Path, source: str) -> tuple[Listing, list[LiveEntry]]:
    return _must(CLAUDE, home, source)


def codex_listing(home: Path, source: str) -> tuple[Listing, dict[str, LiveEntry]]:
    """Codex's held thread locks, by thread id."""
    lst, rows = _must(CODEX, home, source)
    return lst, {r.session_id: r for r in rows if r.session_id}


def claude_sessions_for(home: Path, worktree: str) -> list[str]:
    from ..providers.claude.running import sessions_for

    return sessions_for(home, worktree)


def claude_worktree_records(home: Path):
    from ..providers.claude.running import worktree_records

    return worktree_records(home)


def codex_metadata(admin: str | None):
    from ..providers.codex.listing import worktree_metadata

    return worktree_metadata(admin)


def codex_worktree_roots(home: Path):
    from ..providers.codex.listing import worktree_roots

    return worktree_roots(home)
