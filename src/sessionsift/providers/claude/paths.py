"""Absolute paths the client recorded under its data root, resolved against the CURRENT data root.

Claude Code writes absolute paths into its records: a plan file (`plan_mode.planFilePath`), a
persisted tool output (`toolUseResult.persistedOutputPath`, `Full output saved to: ...`), a write
to a file under `plans/`, the transcript named by a compaction summary. They point under the data
root the session ran with. People read copies, backups and restored homes: there the recorded path
is absent, and its counterpart under the current root is the file meant. `resolve_recorded` is the
one place that decides, and says what it checked.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

ROOT_SUBTREES = ("projects", "plans", "file-history", "tasks", "todos", "shell-snapshots", "session-env",
                 "sessions", "plugins", "jobs")
"""Top-level directories of a Claude Code data root: a recorded path is re-rooted at the last of
these it passes through."""


@dataclass(frozen=True)
class Resolved:
    recorded: str
    """The path as the record holds it."""
    checked: str
    """The path whose existence `exists` reports: the recorded one, or its counterpart under the
    current data root when the recorded one is absent (a moved root)."""
    exists: bool
    moved: bool
    """`checked` is the counterpart under the current data root, not the recorded path."""
    looked: tuple[str, ...] = ()
    """The counterparts under the current data root that were looked at (when the recorded path is absent)."""

    @property
    def note(self) -> str | None:
        if self.moved:
            return (f"the recorded path {self.recorded} is absent; resolved against the current data root: "
                    f"{self.checked} exists (the data root was moved or copied since the session ran)")
        if not self.exists and self.looked:
            return (f"the recorded path {self.recorded} is absent, and so is its counterpart under the current "
                    f"data root ({', '.join(self.looked)})")
        return None


def counterparts(home: Path, recorded: str, also: Iterable[Path] = ()) -> list[Path]:
    """Where a recorded absolute path would be under the data root `home`: re-rooted at the last
    data-root directory it passes through (`.../config/plans/x.md` -> `<home>/plans/x.md`), then
    its name in each directory of `also` (a configured plans dir, a session's tool-results/)."""
    parts = Path(posixpath.normpath(recorded)).parts
    out: list[Path] = []
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] in ROOT_SUBTREES:
            out.append(Path(home, *parts[i:]))
            break
    name = parts[-1] if parts else ""
    for d in also:
        out.append(Path(d) / name)
    seen, uniq = set(), []
    for p in out:
        if str(p) != recorded and str(p) not in seen:
            seen.add(str(p))
            uniq.append(p)
    return uniq


def resolve_recorded(home: Path | str, recorded: str, also: Iterable[Path] = ()) -> Resolved:
    """The recorded path if it exists, else the first counterpart under the current root that does
    (`moved`), else the recorded path (absent; `looked` names the counterparts tried)."""
    rp = os.path.expanduser(recorded)
    if os.path.exists(rp):
        return Resolved(recorded, rp, True, False)
    cands = counterparts(Path(home), rp, also)
    for c in cands:
        if c.exists():
            return Resolved(recorded, str(c), True, True, tuple(str(x) for x in cands))
    return Resolved(recorded, rp, False, False, tuple(str(x) for x in cands))
