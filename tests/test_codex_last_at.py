"""A Codex CLI session whose last instant cannot be read has `last_at` null with a problem saying
why, never its first instant in silence. The rollouts are the real Codex CLI 0.171.0's
(examples/codex-home); the failure of the tail read is injected (no client makes a rollout
unreadable between our head and tail reads: a file removed meanwhile, a disk error)."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import sessionsift.providers.codex as CX
from sessionsift.providers.base import Root
from sessionsift.providers.codex import files as rf

HOME = Path(__file__).resolve().parent.parent / "examples" / "codex-home"
SID = "01a230e8-bc39-7361-bf95-c92a2609c471"


def _discover(home: Path):
    d = CX.Codex().discover(Root(path=home, source="test"))
    return next(r for r in d.sessions if r.session_id == SID), d.problems


def test_last_at_unknown_when_the_tail_cannot_be_read(tmp_path, monkeypatch):
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    ref, problems = _discover(home)
    assert ref.last_at is not None and ref.last_at > ref.first_at and problems == []

    monkeypatch.setattr(rf, "peek", lambda path, want=4: None)  # head and tail read apart, as for a large file

    def gone(path, *a, **k):
        raise OSError(errno.ENOENT, "No such file or directory", str(path))
    monkeypatch.setattr(rf, "tail_lines", gone)
    ref, problems = _discover(home)
    assert ref.last_at is None  # before: the first instant, as if the session had ended there
    mine = [p for p in problems if SID in p.path]
    assert len(mine) == 1 and mine[0].why.startswith("last activity unknown") and "No such file" in mine[0].why
