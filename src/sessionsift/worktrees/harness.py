"""The agent harnesses' own listings of the sessions they have running, as the sweep reads them:
each provider's ``session_listing`` (providers/<agent>/ knows what its client writes: Claude
Code's session registry rows, Codex CLI's held thread-writer locks), and the worktree facts the
two clients that make worktrees keep, asked of their readers as capabilities (``Provider.worktree_roots``,
``worktree_metadata``, ``worktree_records``, ``worktree_sessions``, ``listing_cwds``,
``lease_probe``, ``locate``). Rows are :class:`~sessionsift.providers.listing.LiveEntry` whatever the client.

A listing is `present` (read), `absent` (its directory does not exist: nothing ever registered
there), `unreadable: <why>` (it exists and could not be read, or one of its rows could not) or
`not looked at (pass --<flag>)`.
"""

from __future__ import annotations

from pathlib import Path

from ..providers.listing import Listing, LiveEntry, not_looked
from . import procs as P

__all__ = ["Listing", "LiveEntry", "listing", "not_looked", "claude_listing", "codex_listing"]



def in_repo() -> str:
    """The client that makes its worktrees under the repository (``Provider.worktree_repo_dir``)
    and lists its running sessions in a registry: one of the two the sweep knows (docs/worktrees.md)."""
    from ..providers import ROLES, having

    got = having("worktree_repo_dir")
    return got[0] if got else ROLES["worktree_repo_dir"][0]


def in_home() -> str:
    """The client that makes its worktrees under its own root (``Provider.worktree_dir``) and holds
    a thread lock while a session writes: the other one the sweep knows."""
    from ..providers import ROLES, having

    got = having("worktree_dir")
    return got[0] if got else ROLES["worktree_dir"][0]


def repo_worktrees(repo: str) -> str:
    """``<repo>/<dir>``: where :func:`in_repo`'s client makes its worktrees."""
    import os

    cls = convention(in_repo())
    sub = (cls.worktree_repo_dir if cls is not None else None) or ".claude/worktrees"
    return os.path.join(repo, *sub.split("/"))


def repo_worktrees_part() -> str:
    """``/<dir>/``, the part of a path inside :func:`repo_worktrees` of some repository."""
    cls = convention(in_repo())
    return "/" + ((cls.worktree_repo_dir if cls is not None else None) or ".claude/worktrees") + "/"


def convention(agent: str | None):
    """The worktree convention ``agent``'s reader declares (``Provider.worktree_argv_flags``,
    ``Provider.worktree_dir``), or None (no agent, or none loads)."""
    from ..providers import load

    return load(agent) if agent else None


def argv_flags(agent: str | None) -> tuple[str, ...]:
    cls = convention(agent)
    return cls.worktree_argv_flags if cls is not None else ()


def worktree_dir(agent: str | None, root: Path | None) -> Path | None:
    """The directory under ``root`` where ``agent``'s client makes its worktrees (None: none)."""
    cls = convention(agent)
    sub = cls.worktree_dir if cls is not None else None
    return root / sub if sub and root is not None else None


def metadata_fields(w) -> dict:
    """A worktree row's fields of the clients' own worktree metadata (docs/json.md worktrees:
    ``codex``, Codex's metadata file, null when none)."""
    return dict(codex=w.codex)  # the JSON field's name (docs/json.md), not a lookup


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
    return _must(in_repo(), home, source)


def codex_listing(home: Path, source: str) -> tuple[Listing, dict[str, LiveEntry]]:
    """Codex's held thread locks, by thread id."""
    lst, rows = _must(in_home(), home, source)
    return lst, {r.session_id: r for r in rows if r.session_id}


def _client(agent: str | None):
    cls = convention(agent)
    return cls() if cls is not None else None


def repo_root(explicit: str | None) -> tuple[Path | None, str]:
    """:func:`in_repo`'s client's root by its precedence (its flag's ``explicit`` value, its env
    var, ``~/<default_rel>``) and where it came from (None: no reader loads)."""
    prov = _client(in_repo())
    if prov is None:
        return None, "not looked at (its reader does not load)"
    r = prov.locate(explicit)
    return r.path, f"~/{prov.default_rel}" if r.source == "default" else r.source


def repo_records(home: Path) -> tuple[list[dict], list[tuple[str, str]]]:
    """:func:`in_repo`'s client's records naming the worktree a session works in
    (``Provider.worktree_records``)."""
    prov = _client(in_repo())
    return prov.worktree_records(home) if prov is not None else ([], [])


def repo_sessions_for(home: Path, worktree: str) -> list[str]:
    """The sessions :func:`in_repo`'s client keeps for ``worktree`` (``Provider.worktree_sessions``)."""
    prov = _client(in_repo())
    return prov.worktree_sessions(home, worktree) if prov is not None else []


def repo_listing_cwds(home: Path) -> list[str]:
    """The cwds of :func:`in_repo`'s client's listing rows (``Provider.listing_cwds``)."""
    prov = _client(in_repo())
    return prov.listing_cwds(home) if prov is not None else []


def lease_probe(agent: str | None, pid: int | None, start: str | None):
    """``agent``'s probe of the process its lock reason names (``Provider.lease_probe``; None:
    its reader probes none)."""
    prov = _client(agent)
    return prov.lease_probe(pid, start) if prov is not None else None


def home_metadata(admin: str | None) -> tuple[dict | None, str | None]:
    """:func:`in_home`'s client's ownership record in a worktree's git dir
    (``Provider.worktree_metadata``; (None, None): none, or no reader loads)."""
    cls = convention(in_home())
    return cls().worktree_metadata(admin) if cls is not None else (None, None)


def home_worktree_roots(home: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """The worktrees :func:`in_home`'s client made under its root ``home``
    (``Provider.worktree_roots``)."""
    cls = convention(in_home())
    return cls().worktree_roots(home) if cls is not None else ([], [])
