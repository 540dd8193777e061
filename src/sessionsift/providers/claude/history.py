"""Claude Code's prompt history (``<config dir>/history.jsonl``) and the sessions it outlives.

At startup (a few seconds in, once a day) the client deletes transcripts whose mtime is older
than ``cleanupPeriodDays`` (default 30) -- its background housekeeping, seen in the pinned
2.1.258 and run by tests/realclient/scenarios_history.py. ``history.jsonl`` is not swept: each
prompt typed in the TUI stays as one line ``{"display", "pastedContents", "timestamp" (epoch
ms), "project" (the cwd), "sessionId"}``. A ``sessionId`` there with no transcript left under
``projects/`` is a session the client deleted: its prompts (day, project) are known, its usage
is not. Print-mode prompts (``claude -p``) are not written to it, so this is a lower bound on
the sessions deleted, never a count of them all.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import orjson

from ..base import Problem

FILE = "history.jsonl"


@dataclass
class DeletedSession:
    """A session ``history.jsonl`` names whose transcript is no longer on disk."""

    session_id: str
    project: str | None
    prompts: list[float] = field(default_factory=list)
    """Epoch seconds of each of its prompts the history keeps (a line with no timestamp: not here)."""
    first_prompt: str | None = None
    undated_prompts: int = 0
    provider: str = "claude-code"

    @property
    def first_ts(self) -> float | None:
        return min(self.prompts) if self.prompts else None

    @property
    def last_ts(self) -> float | None:
        return max(self.prompts) if self.prompts else None


def history_path(home: Path) -> Path:
    return Path(home) / FILE


def deleted_sessions(home: Path, on_disk: Iterable[str], problems: list[Problem]) -> list[DeletedSession]:
    """The sessions of ``home``'s history with no transcript among ``on_disk`` (every session id
    with a transcript under the home, not only those a command selected), in first-prompt order.
    An unreadable history is a problem (its deleted sessions unknown), an absent one none."""
    p = history_path(home)
    have = set(on_disk)
    out: dict[str, DeletedSession] = {}
    try:
        f = open(p, "rb")
    except FileNotFoundError:
        return []
    except OSError as exc:
        problems.append(Problem(str(p), f"{exc.strerror or exc}: sessions the client deleted are unknown"))
        return []
    bad = 0
    with f:
        for line in f:
            try:
                d = orjson.loads(line)
            except orjson.JSONDecodeError:
                bad += line.strip() != b""
                continue
            if not isinstance(d, dict):
                bad += 1
                continue
            sid = d.get("sessionId")
            if not isinstance(sid, str) or not sid or sid in have:
                continue  # an older client's line names no session: not attributable
            ds = out.get(sid)
            if ds is None:
                proj = d.get("project")
                disp = d.get("display")
                ds = out[sid] = DeletedSession(sid, proj if isinstance(proj, str) else None,
                                               first_prompt=disp if isinstance(disp, str) else None)
            ts = d.get("timestamp")
            if isinstance(ts, (int, float)) and not isinstance(ts, bool) and ts > 0:
                ds.prompts.append(float(ts) / 1000.0)
            else:
                ds.undated_prompts += 1
    if bad:
        problems.append(Problem(str(p), f"{bad} line(s) are not JSON objects: sessions they name are unknown"))
    return sorted(out.values(), key=lambda s: (s.first_ts is None, s.first_ts or 0.0, s.session_id))


def transcript_ids(home: Path) -> set[str]:
    """Every session id with a main transcript under ``home/projects`` (one listing per dir).
    Raises OSError when a project dir cannot be listed: its sessions would read as deleted."""
    ids: set[str] = set()
    root = Path(home) / "projects"
    try:
        dirs = list(os.scandir(root))
    except FileNotFoundError:
        return ids
    for d in dirs:
        if not d.is_dir(follow_symlinks=False):
            continue
        for e in os.scandir(d.path):
            if e.name.endswith(".jsonl"):
                ids.add(e.name[:-6])
    return ids


def deleted_of_selection(sel, problems: list[Problem]) -> "tuple[list[DeletedSession], str | None]":
    """The deleted sessions of a Selection's Claude Code home, and a note when they are not
    counted. Counted only when the answer covers the whole home (every transcript on disk
    selected, no filter): a part of it would make every other session look deleted."""
    scope = getattr(sel, "claude", None)
    if scope is None:
        return [], None
    home = Path(scope.home.path)
    if not history_path(home).exists():
        return [], None
    try:
        on_disk = transcript_ids(home)
    except OSError as exc:
        problems.append(Problem(str(home / "projects"), f"{exc.strerror or exc}: sessions the client deleted are unknown"))
        return [], None
    if sel.targeted or sel.narrowed is not None or {s.session_id for s in scope.sessions} != on_disk:
        return [], ("sessions the client deleted (history.jsonl) are not counted: the answer covers part of the "
                    "Claude Code home")
    return deleted_sessions(home, on_disk, problems), None
