"""What discovery finds of one provider's data root (providers/base.py ``Provider.discover``): a
:class:`SessionRef` per session (the files that hold it, what discovery read of it without
parsing the transcript) and the :class:`Discovery` of the root (its sessions, its coverage and
the problems met). Re-exported by base.py, where every reader takes them from."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .vocab import Coverage, Problem


@dataclass
class SessionRef:
    """One session of one provider, as discovery found it (no transcript content parsed beyond
    what discovery needs)."""

    provider: str
    session_id: str
    paths: list[Path]
    """The files that hold this session's records (transcripts, or the database)."""
    project: str | None = None
    """The working directory the session recorded, where it recorded one."""
    project_source: str | None = None
    """Where ``project`` came from (e.g. ``session_meta.cwd``, ``projects.json``)."""
    first_at: str | None = None
    last_at: str | None = None
    size: int | None = None
    """Bytes on disk of ``paths`` (None for rows inside a shared database: not attributable)."""
    title: str | None = None
    parent_session_id: str | None = None
    """For a subagent/child session: the session that spawned it."""
    version: str | None = None
    """The client version that wrote it, where recorded."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Provider-specific facts (e.g. ``archived``, ``compressed``, ``db_path``)."""
    helper: str | None = None
    """For a child session the client made for its own bookkeeping rather than as an agent lane:
    what it is for (Crush's ``title-<parent>`` rows: ``"title generation"``). A helper is no
    subagent and no session of its own in counts (``Coverage.helpers``); it belongs to its
    parent, whose usage holds what it cost."""

    @property
    def is_subagent(self) -> bool:
        """A child session that is an agent lane (``parent_session_id`` set, not a helper)."""
        return self.parent_session_id is not None and self.helper is None


@dataclass
class Discovery:
    sessions: list[SessionRef]
    coverage: Coverage
    problems: list[Problem] = field(default_factory=list)
