"""Reading SQLite stores safely: coverage states on real files (locked, corrupt, unknown schema,
unreadable), a row committed only in the -wal file, and a fuzz pass over mutated part JSON.

The databases are copies of the committed samples (opencode: written by the real client; Crush:
built from Crush's own migrations, tests/crush). The mutations (truncation, garbled header,
dropped columns, mutated JSON) are made on those copies: no client can produce a corrupt file
on demand, which is why they are made here. The one table typed in by hand is the "unknown
schema" case itself (a database of some other program that happens to have the file name).
"""
from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.providers import ReadReport, get
from tests.conftest import EXAMPLES, REPO

OC_DB = EXAMPLES / "opencode-home" / "opencode.db"


def _oc_home(tmp_path: Path) -> Path:
    d = tmp_path / "opencode"
    d.mkdir()
    shutil.copy2(OC_DB, d / "opencode.db")
    return d


def _discover(name: str, root: Path):
    p = get(name)
    return p, p.discover(p.locate(explicit=str(root)))


def _read_all(p, disc) -> tuple[int, ReadReport]:
    rep = ReadReport()
    n = 0
    for ref in disc.sessions:
        for _ in p.read(ref, rep, raw=True):
            n += 1
    return n, rep


def test_wal_only_commit_is_seen(tmp_path):
    d = _oc_home(tmp_path)
    base_sessions = _discover("opencode", d)[1].coverage.sessions
    w = sqlite3.connect(d / "opencode.db", isolation_level=None)
    w.execute("PRAGMA journal_mode=WAL")
    w.execute("PRAGMA wal_autocheckpoint=0")  # keep the commit in the -wal file
    sid = w.execute("SELECT id FROM session WHERE parent_id IS NULL ORDER BY id LIMIT 1").fetchone()[0]
    cols = [r[1] for r in w.execute("PRAGMA table_info(session)")]
    sel = ", ".join("'ses_walonly' " if c == "id" else f'"{c}"' for c in cols)
    w.execute(f"INSERT INTO session SELECT {sel} FROM session WHERE id = ?", (sid,))
    w.execute("INSERT INTO message SELECT 'msg_walonly', 'ses_walonly', time_created, time_updated, data "
              "FROM message WHERE session_id = ? ORDER BY id LIMIT 1", (sid,))
    try:
        assert (d / "opencode.db-wal").stat().st_size > 0
        assert b"ses_walonly" not in (d / "opencode.db").read_bytes()  # only in the -wal
        p, disc = _discover("opencode", d)
        assert disc.coverage.sessions == base_sessions + 1
        ref = next(r for r in disc.sessions if r.session_id == "ses_walonly")
        rep = ReadReport()
        assert [r.locator for r in p.read(ref, rep)] == ["message:msg_walonly"]
    finally:
        w.close()


def test_open_write_transaction_does_not_block_and_is_not_seen(tmp_path):
    """WAL mode: a writer mid-transaction never blocks a reader, who sees the last commit."""
    d = _oc_home(tmp_path)
    w = sqlite3.connect(d / "opencode.db", isolation_level=None)
    w.execute("PRAGMA journal_mode=WAL")
    base = _discover("opencode", d)[1].coverage.sessions
    w.execute("BEGIN IMMEDIATE")
    w.execute("UPDATE session SET title = 'uncommitted'")
    try:
        p, disc = _discover("opencode", d)
        assert disc.coverage.state == "ok" and disc.coverage.sessions == base
        assert "uncommitted" not in {r.title for r in disc.sessions}
        n, rep = _read_all(p, disc)
        assert n > 0 and rep.problems == []
    finally:
        w.execute("ROLLBACK")
        w.close()


def test_exclusively_locked_rollback_database_is_null_with_reason(tmp_path):
    """A rollback-journal database under an EXCLUSIVE lock cannot be read: after the bounded
    retry the coverage is null ('locked'), never 0 sessions."""
    d = _oc_home(tmp_path)
    w = sqlite3.connect(d / "opencode.db", isolation_level=None)
    w.execute("PRAGMA journal_mode=DELETE")
    w.execute("BEGIN EXCLUSIVE")
    w.execute("UPDATE session SET title = title")
    try:
        p, disc = _discover("opencode", d)
        assert disc.coverage.state == "unreadable" and disc.coverage.sessions is None
        assert "locked" in disc.coverage.reason
        assert disc.problems and "locked" in disc.problems[0].why
    finally:
        w.execute("ROLLBACK")
        w.close()
    assert _discover("opencode", d)[1].coverage.state == "ok"  # and readable once released


@pytest.mark.parametrize("how", ["truncated", "garbled_header", "empty_file"])
def test_corrupt_database_is_null_with_reason(tmp_path, how):
    d = _oc_home(tmp_path)
    f = d / "opencode.db"
    b = f.read_bytes()
    f.write_bytes(b[: len(b) // 3] if how == "truncated" else
                  b"garbage garbage!" + b[16:] if how == "garbled_header" else b"")
    p, disc = _discover("opencode", d)
    if how == "empty_file":  # a 0-byte file is an empty database (a client about to set it up): a true 0
        assert (disc.coverage.state, disc.coverage.sessions) == ("ok", 0)
    else:
        assert disc.coverage.state == "unreadable" and disc.coverage.sessions is None
        assert disc.coverage.reason.startswith("opencode.db: corrupt")


def test_unknown_schema_is_null_with_reason(tmp_path):
    d = _oc_home(tmp_path)
    con = sqlite3.connect(d / "opencode.db")
    con.execute("ALTER TABLE session DROP COLUMN title")
    con.commit()
    con.close()
    p, disc = _discover("opencode", d)
    assert disc.coverage.state == "unknown_format" and disc.coverage.sessions is None
    assert "session.(title)" in disc.coverage.reason
    other = tmp_path / "other"
    other.mkdir()
    con = sqlite3.connect(other / "opencode.db")  # some other program's database under that name
    con.execute("CREATE TABLE notes (id TEXT)")
    con.commit()
    con.close()
    assert _discover("opencode", other)[1].coverage.state == "unknown_format"


def test_crush_corrupt_and_unknown_schema(tmp_path):
    src = EXAMPLES / "crush-home"
    home = tmp_path / "crush-home"
    shutil.copytree(src, home)
    db = home / "projects" / "app" / ".crush" / "crush.db"
    b = db.read_bytes()
    db.write_bytes(b"garbage garbage!" + b[16:])
    p, disc = _discover("crush", home)
    assert disc.coverage.state == "unreadable" and disc.coverage.sessions is None and "corrupt" in disc.coverage.reason
    assert len(disc.sessions) == 1  # the other project's sessions are still listed
    db.write_bytes(b)
    con = sqlite3.connect(db)
    con.execute("ALTER TABLE messages RENAME COLUMN parts TO content")
    con.commit()
    con.close()
    p, disc = _discover("crush", home)
    assert disc.coverage.state == "unknown_format" and "messages.(parts)" in disc.coverage.reason


def test_unreadable_permissions_is_null_with_reason(tmp_path):
    """Run discovery as root WITHOUT the capabilities that override file permissions."""
    if os.geteuid() != 0 or not shutil.which("capsh"):
        pytest.skip("needs root and capsh to drop cap_dac_override/cap_dac_read_search (as non-root the chmod "
                    "below is enough, but then this machine's user would need to own the file)")
    d = _oc_home(tmp_path)
    (d / "opencode.db").chmod(0)
    code = ("import json,sys; from sessionsift.providers import get; p=get('opencode'); "
            "c=p.discover(p.locate(explicit=sys.argv[1])).coverage; print(json.dumps(c.to_json()))")
    r = subprocess.run(["capsh", "--drop=cap_dac_override,cap_dac_read_search", "--", "-c",
                        f"{sys.executable} -c \"{code}\" {d}"], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    import json
    cov = json.loads(r.stdout)
    assert cov["state"] == "unreadable" and cov["sessions"] is None and "permission denied" in cov["reason"]


# ----------------------------------------------------------------------------- fuzz

def _mutate(rng: random.Random, s: str) -> str:
    choice = rng.randrange(7)
    if choice == 0:
        return s[: rng.randrange(len(s) + 1)]  # torn JSON
    if choice == 1:
        return "\x1b[31m\u202e" + s  # hostile bytes in front
    import copy
    import json
    try:
        obj = json.loads(s)
    except ValueError:
        return s[::-1]
    junk = [None, 0, -1, 1.5, True, "", "\x00\x07\r\n", [], {}, [1, {"a": None}], {"type": 7}, "x" * 3000]

    def walk(o, depth=0):
        if isinstance(o, dict) and o:
            k = rng.choice(list(o))
            if rng.random() < 0.3:
                del o[k]
            elif depth < 4 and isinstance(o[k], (dict, list)) and rng.random() < 0.6:
                walk(o[k], depth + 1)
            else:
                o[k] = copy.deepcopy(rng.choice(junk))
        elif isinstance(o, list) and o:
            i = rng.randrange(len(o))
            if depth < 4 and isinstance(o[i], (dict, list)) and rng.random() < 0.6:
                walk(o[i], depth + 1)
            else:
                o[i] = copy.deepcopy(rng.choice(junk))
        return o

    for _ in range(rng.randrange(1, 4)):
        obj = walk(obj) if choice != 6 else copy.deepcopy(rng.choice(junk))
    return json.dumps(obj)


@pytest.mark.parametrize("seed", range(6))
def test_fuzz_opencode_parts_never_crash(tmp_path, seed):
    rng = random.Random(seed)
    d = _oc_home(tmp_path)
    con = sqlite3.connect(d / "opencode.db")
    for table in ("part", "message"):
        rows = con.execute(f"SELECT id, data FROM {table}").fetchall()
        for rid, data in rng.sample(rows, k=len(rows) // 2):
            con.execute(f"UPDATE {table} SET data = ? WHERE id = ?", (_mutate(rng, data), rid))
    con.commit()
    con.close()
    p, disc = _discover("opencode", d)
    assert disc.coverage.state == "ok"
    n, rep = _read_all(p, disc)
    assert n > 0 and rep.problems == []


@pytest.mark.parametrize("seed", range(6))
def test_fuzz_crush_parts_never_crash(tmp_path, seed):
    rng = random.Random(seed)
    home = tmp_path / "crush-home"
    shutil.copytree(EXAMPLES / "crush-home", home)
    for db in home.glob("projects/*/.crush/crush.db"):
        con = sqlite3.connect(db)
        rows = con.execute("SELECT id, parts FROM messages").fetchall()
        for rid, parts in rng.sample(rows, k=len(rows) // 2):
            con.execute("UPDATE messages SET parts = ? WHERE id = ?", (_mutate(rng, parts), rid))
        con.commit()
        con.close()
    p, disc = _discover("crush", home)
    assert disc.coverage.state == "ok"
    n, rep = _read_all(p, disc)
    assert n > 0 and rep.problems == []


@pytest.mark.parametrize("seed", range(4))
def test_fuzz_opencode_legacy_json_never_crash(tmp_path, seed):
    rng = random.Random(seed)
    d = tmp_path / "legacy"
    shutil.copytree(EXAMPLES / "opencode-legacy-home", d)
    files = sorted((d / "storage").rglob("*.json"))
    for f in rng.sample(files, k=len(files) // 2):
        f.write_text(_mutate(rng, f.read_text()))
    p, disc = _discover("opencode", d)
    n, rep = _read_all(p, disc)
    assert n >= 0


def test_interleaved_reads_share_one_connection_safely(tmp_path):
    """Two sessions of one database read in lockstep from one provider object (its connection is
    shared): the inner read shares the outer snapshot, nothing fails, both read in full."""
    d = _oc_home(tmp_path)
    p, disc = _discover("opencode", d)
    a, b = disc.sessions[0], disc.sessions[1]
    alone = [len(list(p.read(r, ReadReport()))) for r in (a, b)]
    ra, rb = ReadReport(), ReadReport()
    ga, gb = p.read(a, ra), p.read(b, rb)
    got = {"a": 0, "b": 0}
    for x, y in __import__("itertools").zip_longest(ga, gb):
        got["a"] += x is not None
        got["b"] += y is not None
    assert [got["a"], got["b"]] == alone and ra.problems == rb.problems == []


def test_a_replaced_database_file_is_reopened(tmp_path):
    d = _oc_home(tmp_path)
    p, disc = _discover("opencode", d)
    before = disc.coverage.sessions
    fresh = tmp_path / "fresh.db"
    shutil.copy2(d / "opencode.db", fresh)
    con = sqlite3.connect(fresh)
    con.execute("DELETE FROM session WHERE parent_id IS NOT NULL")
    con.commit()
    con.close()
    os.replace(fresh, d / "opencode.db")  # a new inode under the same name
    assert p.discover(p.locate(explicit=str(d))).coverage.sessions == before - 1


def test_crush_row_committed_only_in_the_wal_is_seen(tmp_path):
    """Crush's own code writes through a WAL connection (internal/db/connect.go): a message it has
    committed but not yet checkpointed lives only in crush.db-wal, and must be read."""
    from tests.crush import crushdb as c

    con = c.create_db(tmp_path / "proj" / ".crush")
    con.execute("PRAGMA wal_autocheckpoint=0")
    k = c.Crush(con)
    sid = k.create_session("WAL only")
    k.create_message(sid, "user", [c.text("only in the wal")])
    home = tmp_path / "crush-home"
    home.mkdir()
    (home / "projects.json").write_text(
        '{"projects": [{"path": "%s", "data_dir": "%s", "last_accessed": "2026-01-01T00:00:00Z"}]}'
        % (tmp_path / "proj", tmp_path / "proj" / ".crush"))
    try:
        wal = tmp_path / "proj" / ".crush" / "crush.db-wal"
        assert wal.stat().st_size > 0 and b"only in the wal" not in (wal.parent / "crush.db").read_bytes()
        p, disc = _discover("crush", home)
        assert disc.coverage.sessions == 1
        recs = list(p.read(disc.sessions[0], ReadReport()))
        assert [r.text for r in recs if r.kind == "prompt"] == ["only in the wal"]
    finally:
        con.close()


def test_legacy_footprint_is_exactly_the_session_files():
    p = get("opencode")
    disc = p.discover(p.locate(explicit=str(EXAMPLES / "opencode-legacy-home")))
    assert disc.coverage.sessions >= 2
    owned: dict[Path, str] = {}
    for ref in disc.sessions:
        fp = p.footprint(ref)
        assert fp and all(f.exists() for f in fp)
        assert fp[0].name == f"{ref.session_id}.json"
        mids = {r.locator.split(":", 1)[1] for r in p.read(ref, ReadReport()) if r.locator.startswith("message:")}
        parts_dirs = {f.name for f in fp if f.parent.name == "part"}
        assert parts_dirs <= mids
        for f in fp:
            assert f not in owned, f"{f} claimed by {owned.get(f)} and {ref.session_id}"
            owned[f] = ref.session_id


def test_quiet_database_is_read_without_leaving_files_and_a_later_writer_is_seen(tmp_path):
    """No -wal/-shm beside a WAL database: nobody has it open; it is read immutable (a plain
    read-only open would create both files and leave them). When a client opens it afterwards and
    commits, the same provider object drops that connection and sees the new rows."""
    d = _oc_home(tmp_path)
    p, disc = _discover("opencode", d)
    n = disc.coverage.sessions
    assert sorted(x.name for x in d.iterdir()) == ["opencode.db"]
    w = sqlite3.connect(d / "opencode.db", isolation_level=None)
    w.execute("PRAGMA wal_autocheckpoint=0")
    cols = [r[1] for r in w.execute("PRAGMA table_info(session)")]
    sel = ", ".join("'ses_later' " if c == "id" else f'"{c}"' for c in cols)
    w.execute(f"INSERT INTO session SELECT {sel} FROM session LIMIT 1")
    try:
        assert (d / "opencode.db-wal").exists()
        assert p.discover(p.locate(explicit=str(d))).coverage.sessions == n + 1
    finally:
        w.close()
