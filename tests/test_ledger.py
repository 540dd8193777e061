"""The ledger (sessionsift.ledger): private append-only file, fingerprints over real sessions'
footprints, is_kept only while the session's current bytes match and the written file is intact."""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from sessionsift import ledger
from sessionsift.providers.claude import ClaudeCode
from sessionsift.providers.base import Root

EX = Path(__file__).resolve().parent.parent / "examples"
SUB = "23ad8bf1-66ec-5135-af96-82f74ddb4db0"  # the real subagents session: transcript + <sid>/ folder


@pytest.fixture
def home_copy(tmp_path) -> Path:
    d = tmp_path / "claude"
    shutil.copytree(EX / "claude-home", d, symlinks=True)
    return d


def _ref(home: Path, sid: str):
    d = ClaudeCode().discover(Root(home, "--claude-home", True))
    return next(r for r in d.sessions if r.session_id == sid)


def test_data_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "x"))
    assert ledger.data_dir() == tmp_path / "x" / "sessionsift"
    monkeypatch.setenv("XDG_DATA_HOME", "")
    assert ledger.data_dir() == Path(os.environ["HOME"]) / ".local" / "share" / "sessionsift"


def test_fingerprint_covers_the_whole_footprint_and_survives_a_moved_root(home_copy, tmp_path):
    prov = ClaudeCode()
    ref = _ref(home_copy, SUB)
    fp = prov.footprint(ref)
    assert any(p.is_dir() for p in fp), "the subagents session has its <sid>/ folder"
    f0 = ledger.fingerprint(fp)
    assert f0.startswith("sha256:") and f0 == ledger.fingerprint(fp)
    moved = tmp_path / "moved"
    shutil.copytree(home_copy, moved, symlinks=True)
    assert ledger.fingerprint(prov.footprint(_ref(moved, SUB))) == f0
    # one byte appended to a subagent lane (inside the folder) changes it
    lane = next((fp[1] / "subagents").glob("agent-*.jsonl"))
    with open(lane, "ab") as f:
        f.write(b"\n")
    f1 = ledger.fingerprint(fp)
    assert f1 != f0
    # a renamed file changes it too, with the same bytes
    lane.rename(lane.with_name("agent-renamed.jsonl"))
    assert ledger.fingerprint(fp) not in (f0, f1)


def test_record_is_private_and_is_kept_follows_the_current_bytes(home_copy, tmp_path):
    root = tmp_path / "data" / "sessionsift"
    prov = ClaudeCode()
    ref = _ref(home_copy, SUB)
    fp = ledger.fingerprint(prov.footprint(ref))
    assert ledger.is_kept("claude-code", SUB, fp, root=root)[2] == "not_provably_kept: no ledger entry for this session"
    out = tmp_path / "export.md"
    out.write_text("# an export\n")
    e = ledger.record(kind="export", provider="claude-code", session_id=SUB, fingerprint=fp, path=out,
                      format="markdown", root=root)
    assert e["sha256"] == ledger.sha256_file(out)[0] and e["size"] == out.stat().st_size
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(root / ledger.FILE).st_mode) == 0o600
    kept, ev, why = ledger.is_kept("claude-code", SUB, fp, root=root)
    assert (kept, why) == (True, "kept_provably") and ev[0]["path"] == str(out)
    assert ledger.current("claude-code", SUB, root=root)["fingerprint"] == fp
    # the session grows: the export no longer covers it
    with open(ref.paths[0], "ab") as f:
        f.write(b'{"type":"x"}\n')
    fp2 = ledger.fingerprint(prov.footprint(ref))
    kept, _, why = ledger.is_kept("claude-code", SUB, fp2, root=root)
    assert not kept and "changed after it was kept" in why
    # the export file is edited: not kept either, even for the old bytes
    out.write_text("# edited\n")
    kept, _, why = ledger.is_kept("claude-code", SUB, fp, root=root)
    assert not kept and why == "not_provably_kept: the matching export is gone or changed"
    # another provider's entry with the same id never counts
    assert not ledger.is_kept("gemini-cli", SUB, fp, root=root)[0]


def test_a_torn_last_line_is_counted_and_the_next_append_starts_clean(tmp_path):
    root = tmp_path / "d"
    out = tmp_path / "o.txt"
    out.write_text("x")
    ledger.record(kind="export", provider="codex", session_id="s1", fingerprint="sha256:" + "0" * 64,
                  path=out, format="text", root=root)
    with open(root / ledger.FILE, "ab") as f:
        f.write(b'{"kind":"export","provi')  # killed mid-append
    ledger.record(kind="export", provider="codex", session_id="s2", fingerprint="sha256:" + "1" * 64,
                  path=out, format="text", root=root)
    es = ledger.read_all(root)
    assert [e["session_id"] for e in es.rows] == ["s1", "s2"] and es.torn == 1


def test_record_refuses_what_is_not_a_fingerprint(tmp_path):
    with pytest.raises(ValueError):
        ledger.record(kind="export", provider="codex", session_id="s", fingerprint="abc", path=tmp_path,
                      format="x", root=tmp_path / "d")
    with pytest.raises(ValueError):
        ledger.record(kind="deleted", provider="codex", session_id="s", fingerprint="sha256:" + "0" * 64,
                      path=tmp_path, format="x", root=tmp_path / "d")
