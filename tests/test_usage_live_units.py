"""`usage blocks --live`'s incremental reading when a refresh cannot list the sessions.

The transcripts are the real client's (examples/claude-home, Claude Code 2.1.258), copied. The
failure of discovery is injected (no client makes `projects/` unlistable between two refreshes of
ours; as root a chmod does not either), so the listing is made to raise here."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

from sessionsift.providers.claude import discover as D
from sessionsift.usage.live import Incremental

HOME = Path(__file__).resolve().parent.parent / "examples" / "claude-home"
TODOS = "-tmp-ssift-rc-todos-work/934337bf-5048-5090-a52a-998dd6ed05bb.jsonl"
NEW = "11111111-2222-4333-8444-555555555555"


def _home(tmp_path: Path) -> Path:
    dst = tmp_path / "claude"
    shutil.copytree(HOME / "projects", dst / "projects")
    return dst


def test_a_failed_listing_keeps_the_last_set_known_and_says_so(tmp_path, monkeypatch):
    home = _home(tmp_path)
    inc = Incremental(D.resolve_targets([], home=str(home)), tuple())
    assert inc.refresh() is True
    first = len(inc.col.events)
    # a new session appears (a copy of a real transcript under a new id, its message ids changed
    # so its responses are its own) and the next refresh reads it
    src = (home / "projects" / TODOS).read_bytes()
    new = home / "projects" / TODOS.split("/")[0] / f"{NEW}.jsonl"
    new.write_bytes(src.replace(b'"id":"msg_', b'"id":"msg_new'))
    assert inc.refresh() is True
    assert len(inc.col.events) == first + 4

    real = D.resolve_targets

    def broken(*a, **k):
        raise OSError(errno.EIO, "Input/output error")
    monkeypatch.setattr(D, "resolve_targets", broken)
    # the new session grows while the listing fails: it is still read (the last set known, not
    # the start's), and the refresh says its set may be stale
    new.write_bytes(new.read_bytes() + src.replace(b'"id":"msg_', b'"id":"msg_more').splitlines(keepends=True)[7])
    assert inc.refresh() is True
    assert len(inc.col.events) == first + 5  # the stale start set (without the new session): first + 4
    assert inc.stale is not None and "could not be listed" in inc.stale and "OSError" in inc.stale
    assert [p.why for p in inc.problems.values()] == [inc.stale]
    monkeypatch.setattr(D, "resolve_targets", real)
    inc.refresh()
    assert inc.stale is None
