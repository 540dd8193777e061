"""The archive and its manifest under hostile or unlucky conditions: names that are not UTF-8,
relative roots, a missing key or manifest, damaged captures and forged manifests. Sessions are
copies of real transcripts (examples/, written by Claude Code 2.1.258 and Codex CLI offline); a
case that no client can produce (a renamed file, a forged manifest line) says so beside it."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.clean_util import EX, losses, snapshot
from tests.clean_util import cli as _cli


def cli(*args, **kw):
    return _cli(*args, agents=False, **kw)  # these tests are of the archive, not of the activity gate

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


# -- restore of a damaged capture: all or nothing, nothing staged in the client's folders -------

SUB = "23ad8bf1-66ec-5135-af96-82f74ddb4db0"  # Claude Code subagents: transcript + <sid>/subagents/ (5 files)
SUB_PROJ = "projects/-tmp-ssift-rc-subagents-work"
STRAY = __import__("re").compile(r"\.ssift-(restore|del|conflict)")  # what a run of ours may leave at a client


def _captured_sub(tmp_path: Path) -> tuple[Path, Path, dict[str, bytes]]:
    from tests.clean_util import corpus

    home = corpus(tmp_path / "h", (".claude",))
    before = {p: Path(p).read_bytes() for p in snapshot(home) if SUB in p}
    data = tmp_path / "d"
    r = cli("clean", "capture", SUB, "--apply", "--waive-kept", "--older-than", "1m", "--home", str(home),
            "--data-dir", str(data))
    assert r.returncode == 0, r.stderr
    assert len(before) == 5 and not any(os.path.exists(p) for p in before)
    return home, data, before


def _cap_entry(data: Path) -> dict:
    return next(json.loads(l) for l in (data / "archive/manifest.jsonl").read_bytes().splitlines()
                if b'"type":"capture"' in l)


def _obj(data: Path, sha: str) -> Path:
    return data / "archive/objects" / sha[:2] / f"{sha}.zst"


def _nothing_restored(home: Path, before: dict[str, bytes]) -> None:
    assert not any(os.path.lexists(p) for p in before), [p for p in before if os.path.lexists(p)]
    stray = [os.path.join(d, n) for d, ds, fs in os.walk(home) for n in ds + fs if STRAY.search(n)]
    assert stray == []


def test_a_damaged_capture_restores_nothing_and_a_retry_after_repair_restores_all(tmp_path):
    home, data, before = _captured_sub(tmp_path)
    files = [i for i in _cap_entry(data)["items"] if i["type"] == "file"]
    last = _obj(data, files[-1]["sha256"])
    good = last.read_bytes()
    for damage in ("corrupt", "missing"):
        if damage == "corrupt":
            last.write_bytes(good[:-6] + b"\0" * 6)
        else:
            last.unlink()
        r = cli("clean", "restore", SUB, "--data-dir", str(data))
        assert r.returncode == 4, (damage, r.returncode, r.stderr)
        assert ("does not verify (it does not decompress" if damage == "corrupt" else "...) is missing: nothing restored") in r.stderr, r.stderr
        _nothing_restored(home, before)
    last.write_bytes(good)
    r = cli("clean", "restore", SUB, "--data-dir", str(data))
    assert r.returncode == 0, r.stderr
    assert {p: Path(p).read_bytes() for p in before} == before


def test_a_compression_bomb_is_stopped_at_the_recorded_size(tmp_path):
    """An object replaced by a zstd frame that decompresses to 64 MiB (no client writes this; an
    attacker with write access to the archive can): restore stops at the size the manifest
    records -- it never writes more (the file size limit of the process is 16 MiB here)."""
    import resource
    import subprocess
    import sys

    import zstandard

    home, data, before = _captured_sub(tmp_path)
    files = [i for i in _cap_entry(data)["items"] if i["type"] == "file"]
    c = zstandard.ZstdCompressor(level=3).compressobj()
    zeros = b"\0" * (1 << 20)
    bomb = b"".join(c.compress(zeros) for _ in range(64)) + c.flush()
    assert len(bomb) < 64 * 1024
    _obj(data, files[0]["sha256"]).write_bytes(bomb)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 20, 16 << 20))

    r = subprocess.run([sys.executable, "-m", "sessionsift", "clean", "restore", SUB, "--data-dir", str(data)],
                       capture_output=True, text=True, preexec_fn=limit, timeout=300)
    assert r.returncode == 4, (r.returncode, r.stderr[-800:])
    assert "more than" in r.stderr, r.stderr
    _nothing_restored(home, before)
    staged = [os.path.join(d, n) for d, ds, fs in os.walk(data / "archive/tmp") for n in fs]
    assert staged == []


def test_a_restore_interrupted_mid_way_is_all_or_nothing_and_a_retry_finishes(tmp_path, monkeypatch):
    from sessionsift.clean.archive import Archive, archive_dir
    from sessionsift.clean.restore import restore

    home, data, before = _captured_sub(tmp_path)
    real = os.link
    n = [0]

    def link(*a, **k):
        n[0] += 1
        if n[0] == 3:
            raise OSError(5, "Input/output error (injected at the third file)")
        return real(*a, **k)

    monkeypatch.setattr(os, "link", link)
    arch = Archive(archive_dir(data))
    try:
        restore(arch, SUB)
    except OSError as exc:
        assert "injected" in str(exc)
    else:
        raise AssertionError("the injected error did not surface")
    monkeypatch.undo()
    _nothing_restored(home, before)
    r = restore(arch, SUB)
    assert r.files == 5
    assert {p: Path(p).read_bytes() for p in before} == before


KILL_AT_LINK = """
import os, signal, sys
real = os.link
n = [0]
def link(*a, **k):
    n[0] += 1
    if n[0] == int(sys.argv[1]):
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*a, **k)
os.link = link
from sessionsift.cli import main
main(sys.argv[2:])
"""


def test_a_restore_killed_mid_way_is_finished_by_a_retry(tmp_path):
    """SIGKILL after two of five files were linked into place: nothing rolls back, so the retry
    must take what is already there with its captured bytes as restored, and put the rest."""
    import subprocess
    import sys

    home, data, before = _captured_sub(tmp_path)
    p = subprocess.run([sys.executable, "-c", KILL_AT_LINK, "3", "clean", "restore", SUB, "--data-dir", str(data)],
                       capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parents[1])
    assert p.returncode == -9, p.stderr
    assert sum(1 for q in before if os.path.lexists(q)) == 2
    r = cli("clean", "restore", SUB, "--data-dir", str(data))
    assert r.returncode == 0, r.stderr
    assert {q: Path(q).read_bytes() for q in before} == before
    stray = [os.path.join(d, n) for d, ds, fs in os.walk(home) for n in ds + fs if STRAY.search(n)]
    assert stray == []
    # and again: everything is there as captured, nothing to do, nothing overwritten
    assert cli("clean", "restore", SUB, "--data-dir", str(data)).returncode == 0
    # a file changed since: never overwritten
    t = next(q for q in before if q.endswith(f"{SUB}.jsonl"))
    with open(t, "ab") as f:
        f.write(b"{}\n")
    r = cli("clean", "restore", SUB, "--data-dir", str(data))
    assert r.returncode == 2 and "never overwrites" in r.stderr, r.stderr


# -- a forged manifest (someone holding the key) never writes outside the root -----------------


def _forge(data: Path, entry: dict) -> dict:
    """Append an authenticated, chained line as the archive would (the test holds the key)."""
    import hashlib
    import hmac

    import orjson

    man = data / "archive/manifest.jsonl"
    key = (data / "archive/key").read_bytes()
    last = json.loads(man.read_bytes().splitlines()[-1])
    e = dict(entry, prev=last["hmac"])
    e["hmac"] = hmac.new(key, orjson.dumps(e, option=orjson.OPT_SORT_KEYS), hashlib.sha256).hexdigest()
    with open(man, "ab") as f:
        f.write(orjson.dumps(e) + b"\n")
    return e


def test_a_forged_symlink_item_never_leads_a_file_outside_the_root(tmp_path):
    home, data, _before = _captured_sub(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    real = _cap_entry(data)
    f = next(i for i in real["items"] if i["type"] == "file")
    root = real["scan_root"]
    link = {"top": 0, "path": f"{root}/{SUB_PROJ}/evil", "rel": f"{SUB_PROJ}/evil", "type": "symlink", "mode": 0o777,
            "mtime_ns": f["mtime_ns"], "size": 0, "target": str(outside)}
    under = dict(f, top=0, path=f"{root}/{SUB_PROJ}/evil/pwned", rel=f"{SUB_PROJ}/evil/pwned")
    forged = dict(real, id="f0f0f0f0f0f0f0f0", top=[link["path"]], items=[link, under], session_id="forged-1")
    forged.pop("hmac")
    forged.pop("prev")
    _forge(data, forged)
    r = cli("clean", "restore", "f0f0f0f0f0f0f0f0", "--data-dir", str(data))
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert list(outside.iterdir()) == []
    assert not os.path.lexists(f"{root}/{SUB_PROJ}/evil")


def test_a_forged_provider_name_never_leads_rows_outside_into(tmp_path):
    home, data, _before = _captured_sub(tmp_path)
    real = _cap_entry(data)
    f = next(i for i in real["items"] if i["type"] == "file")
    rowsrec = {"sha256": f["sha256"], "size": f["size"], "stored_size": f["stored_size"], "records": 1,
               "format": "jsonl", "db_path": None}
    forged = dict(real, id="e0e0e0e0e0e0e0e0", provider="../../escape", session_id="s", top=[], items=[],
                  rows=rowsrec, delete=False)
    forged.pop("hmac")
    forged.pop("prev")
    _forge(data, forged)
    into = tmp_path / "a" / "b" / "into"
    r = cli("clean", "restore", "e0e0e0e0e0e0e0e0", "--into", str(into), "--data-dir", str(data))
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "provider" in r.stderr and "refused" in r.stderr, r.stderr
    assert list(tmp_path.rglob("*escape*")) == []


def test_recovery_never_acts_on_a_forged_entry_outside_its_scan_root(tmp_path):
    """A forged capture whose footprint entry lies outside its recorded scan root, with its
    unlink-begin event and a hidden sibling beside that entry: recovery touches none of it."""
    home, data, _before = _captured_sub(tmp_path)
    real = _cap_entry(data)
    victim_dir = tmp_path / "elsewhere"
    victim_dir.mkdir()
    cid = "d0d0d0d0d0d0d0d0"
    hidden = victim_dir / f".victim.ssift-del-{cid}"
    hidden.write_bytes(b"not ours\n")
    it = {"top": 0, "path": str(victim_dir / "victim"), "rel": "../elsewhere/victim", "type": "file", "mode": 0o600,
          "mtime_ns": hidden.stat().st_mtime_ns, "size": hidden.stat().st_size, "sha256": "0" * 64, "stored_size": 1}
    forged = dict(real, id=cid, top=[str(victim_dir / "victim")], items=[it], session_id="forged-2")
    forged.pop("hmac")
    forged.pop("prev")
    _forge(data, forged)
    _forge(data, {"v": 1, "type": "event", "event": "unlink-begin", "capture_id": cid, "instant": real["instant"]})
    r = cli("clean", "capture", "--apply", "--older-than", "1m", "--home", str(home), "--data-dir", str(data),
            "--format", "json")
    assert hidden.read_bytes() == b"not ours\n"
    assert not (victim_dir / "victim").exists()
    rec = [x for x in rows(r.stdout) if x["kind"] == "recovered"]
    assert [(x["capture_id"], x["status"]) for x in rec] == [(cid, "failed")], rec
    assert "outside" in rec[0]["reason"]


def test_clean_list_says_a_size_it_does_not_have_is_unknown_not_zero(tmp_path):
    """A capture line whose file items carry no size (an older or damaged writer; here an
    authenticated line appended by the test, which holds the key): `clean list` said 0 B, as if
    the capture held nothing. Before: bytes 0, stored_bytes 0."""
    home, data, _before = _captured_sub(tmp_path)
    real = _cap_entry(data)
    items = [{k: v for k, v in i.items() if k not in ("size", "stored_size")} if i["type"] == "file" else i
             for i in real["items"]]
    forged = dict(real, id="d0d0d0d0d0d0d0d0", items=items, session_id="sizeless")
    forged.pop("hmac")
    forged.pop("prev")
    _forge(data, forged)
    r = cli("clean", "list", "--data-dir", str(data), "--format", "json")
    rows = {x["capture_id"]: x for x in map(json.loads, r.stdout.splitlines()) if x.get("kind") == "capture"}
    assert rows["d0d0d0d0d0d0d0d0"]["bytes"] is None and rows["d0d0d0d0d0d0d0d0"]["stored_bytes"] is None
    assert rows[real["id"]]["bytes"] == sum(i["size"] for i in real["items"] if i["type"] == "file") > 0
    t = cli("clean", "list", "--data-dir", str(data))
    assert any("d0d0d0d0d0d0d0d0" in l and "size ? -> size ?" in l for l in t.stdout.splitlines()), t.stdout
