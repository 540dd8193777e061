"""The archive and its manifest under hostile or unlucky conditions: names that are not UTF-8,
relative roots, a missing key or manifest, damaged captures and forged manifests. Sessions are
copies of real transcripts (examples/, written by Claude Code 2.1.258 and Codex CLI offline); a
case that no client can produce (a renamed file, a forged manifest line) says so beside it."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.clean_util import EX, cli, losses, snapshot

FB = "8414eb07-cca2-5cca-9059-e9baedac31e1"  # Claude Code files_basic: one transcript, no sidecars
FB_SRC = EX / "claude-home/projects/-tmp-ssift-rc-files-basic-work" / f"{FB}.jsonl"


def rows(stdout: str) -> list[dict]:
    return [json.loads(l) for l in stdout.splitlines() if l.strip()]


def test_a_file_name_that_is_not_utf8_is_captured_restored_and_stops_nothing(tmp_path):
    """A transcript renamed to bytes that are not UTF-8 (any process can name a file so; no client
    does), in a project dir sorted BEFORE a normal session: both are captured and removed, listed,
    verified, and the odd one restores under its exact byte name."""
    home = tmp_path / "h"
    bad = os.fsencode(home / ".claude/projects/-tmp-a-bad")
    good = home / ".claude/projects/-tmp-b-good"
    os.makedirs(bad)
    good.mkdir(parents=True)
    name = b"ab\xffcd.jsonl"
    shutil.copy2(FB_SRC, os.path.join(bad, name))
    shutil.copy2(FB_SRC, good / f"{FB}.jsonl")
    data = tmp_path / "d"
    before = snapshot(home)
    r = cli("clean", "capture", "--apply", "--waive-kept", "--older-than", "1m", "--home", str(home),
            "--data-dir", str(data), "--format", "json")
    assert r.returncode == 0, r.stderr[-2000:]
    acts = [x for x in rows(r.stdout) if x["kind"] == "action"]
    assert sorted(a["status"] for a in acts) == ["removed", "removed"], acts
    assert not os.path.lexists(os.path.join(bad, name)) and not (good / f"{FB}.jsonl").exists()
    assert losses(before, home, data) == []
    lst = cli("clean", "list", "--data-dir", str(data), "--format", "json")
    assert lst.returncode == 0, lst.stderr
    caps = [x for x in rows(lst.stdout) if x["kind"] == "capture"]
    assert len(caps) == 2
    assert cli("clean", "verify", "--data-dir", str(data)).returncode == 0
    odd = next(c for c in caps if c["session_id"] != FB)
    assert odd["session_id"] == {"bytes": "YWL/Y2Q="}  # docs/json.md: a non-UTF-8 string as its bytes
    back = cli("clean", "restore", odd["capture_id"], "--data-dir", str(data))
    assert back.returncode == 0, back.stderr
    with open(os.path.join(bad, name), "rb") as f:
        assert f.read() == FB_SRC.read_bytes()


def test_a_relative_root_is_recorded_absolute_and_restores_from_anywhere(tmp_path):
    """`--home h` given relative: the manifest records the resolved absolute scan root and paths,
    so a restore run from another directory puts the session back where it was."""
    work = tmp_path / "work"
    proj = work / "h/.claude/projects/-tmp-p"
    proj.mkdir(parents=True)
    shutil.copy2(FB_SRC, proj / f"{FB}.jsonl")
    data = tmp_path / "d"
    r = cli("clean", "capture", FB, "--apply", "--waive-kept", "--older-than", "1m", "--home", "h",
            "--data-dir", str(data), cwd=work)
    assert r.returncode == 0, r.stderr
    assert not (proj / f"{FB}.jsonl").exists()
    man = [json.loads(l) for l in (data / "archive/manifest.jsonl").read_bytes().splitlines()]
    cap = next(e for e in man if e["type"] == "capture")
    assert cap["scan_root"] == str(work / "h/.claude")
    assert all(os.path.isabs(p) for p in cap["top"]) and all(os.path.isabs(i["path"]) for i in cap["items"])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    b = cli("clean", "restore", FB, "--data-dir", str(data), cwd=elsewhere)
    assert b.returncode == 0, b.stderr
    assert (proj / f"{FB}.jsonl").read_bytes() == FB_SRC.read_bytes()
    assert list(elsewhere.iterdir()) == []


def _captured(tmp_path: Path) -> tuple[Path, Path]:
    proj = tmp_path / "h/.claude/projects/-tmp-p"
    proj.mkdir(parents=True)
    shutil.copy2(FB_SRC, proj / f"{FB}.jsonl")
    data = tmp_path / "d"
    r = cli("clean", "capture", FB, "--apply", "--waive-kept", "--older-than", "1m", "--home", str(tmp_path / "h"),
            "--data-dir", str(data))
    assert r.returncode == 0, r.stderr
    return proj, data


def test_verify_fails_when_the_manifest_is_gone_or_unreadable(tmp_path):
    _proj, data = _captured(tmp_path)
    man = data / "archive/manifest.jsonl"
    assert cli("clean", "verify", "--data-dir", str(data)).returncode == 0
    good = man.read_bytes()
    # deleted while the ledger records a capture into this archive
    man.unlink()
    r = cli("clean", "verify", "--data-dir", str(data))
    assert r.returncode == 4, r.stdout
    assert "the ledger records 1 capture" in r.stdout
    # a directory where the manifest should be (unreadable)
    man.mkdir()
    r = cli("clean", "verify", "--data-dir", str(data), "--format", "json")
    assert r.returncode == 4, r.stdout
    assert rows(r.stdout)[-1]["manifest_state"].startswith("unreadable")
    man.rmdir()
    man.write_bytes(good)
    assert cli("clean", "verify", "--data-dir", str(data)).returncode == 0
    # an empty data dir: nothing was ever captured, nothing to verify
    r = cli("clean", "verify", "--data-dir", str(tmp_path / "empty"))
    assert r.returncode == 0 and "nothing captured" in r.stdout


def test_a_deleted_key_is_never_replaced(tmp_path):
    proj, data = _captured(tmp_path)
    key = data / "archive/key"
    saved = key.read_bytes()
    # a second session to act on
    other = proj.parent / "-tmp-q"
    other.mkdir()
    sid2 = "3f0c9a54-1111-5222-8333-944455556666"  # the same transcript under another id (no client does this)
    shutil.copy2(FB_SRC, other / f"{sid2}.jsonl")
    key.unlink()
    for action in ("capture", "protect"):
        r = cli("clean", action, sid2, "--apply", "--waive-kept", "--older-than", "1m", "--home",
                str(tmp_path / "h"), "--data-dir", str(data))
        assert r.returncode == 4, (action, r.returncode, r.stdout[-800:], r.stderr)
        assert "key" in r.stderr and "refus" in r.stderr and "backup" in r.stderr, r.stderr
        assert not key.exists(), "no new key was made"
        assert (other / f"{sid2}.jsonl").read_bytes() == FB_SRC.read_bytes()
    key.write_bytes(saved)
    os.chmod(key, 0o600)
    lst = cli("clean", "list", "--data-dir", str(data), "--format", "json")
    assert lst.returncode == 0, lst.stdout
    assert [c["session_id"] for c in rows(lst.stdout) if c["kind"] == "capture"] == [FB]
    assert cli("clean", "restore", FB, "--data-dir", str(data)).returncode == 0
