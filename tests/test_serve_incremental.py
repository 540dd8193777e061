"""serve's listing after a change reads only what changed (sessionsift.listing.list_sessions
with ``keep``, which serve's store passes): a session whose files keep their stat identity
(device, inode, size, mtime_ns) is not read again; a file appended, a session added or removed,
a database written (its ``-wal`` while a writer holds it open) is. The incremental answer must be
the answer a fresh listing gives, exactly (the whole Listing compared, rows, summaries,
lineage, problems), over a copy of examples/home: Claude Code transcripts the real client
wrote and opencode.db the real opencode wrote."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from sessionsift.listing import Kept, list_sessions
from sessionsift.providers.scope import RootRequest, select, survey

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def home(tmp_path, monkeypatch):
    for k in ("HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(k, str(tmp_path / k.lower()))
    for k in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB", "KILO_DB"):
        monkeypatch.delenv(k, raising=False)
    h = tmp_path / "store"
    shutil.copytree(REPO / "examples" / "home", h, symlinks=False)  # the links' targets copied
    return h


def _sel(home: Path):
    return select(survey(RootRequest(home=str(home)), light=frozenset({"claude-code"})), [], None)


def _prompt_line(path: Path, text: str) -> bytes:
    """A new genuine prompt after the transcript's last record: the shape of the real client's
    first prompt in that file (its own keys), with a new uuid, the last record as its parent."""
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    proto = next(o for o in lines if o.get("type") == "user" and isinstance((o.get("message") or {}).get("content"), str))
    last = [o for o in lines if isinstance(o.get("uuid"), str)][-1]
    o = dict(proto, uuid="0badc0de-2828-4828-8828-000000000028", parentUuid=last["uuid"],
             timestamp="2031-01-01T00:00:00.000Z", message={**proto["message"], "content": text})
    return json.dumps(o, separators=(",", ":")).encode() + b"\n"


def _check(home: Path, kept: Kept):
    got = list_sessions(_sel(home), keep=kept)
    fresh = list_sessions(_sel(home))
    assert got == fresh
    return got


def _row(lst, provider: str, sid: str):
    return next(r for r in lst.rows if r.ref.provider == provider and r.ref.session_id == sid)


def test_an_incremental_listing_is_a_fresh_one_after_appends_additions_removals_and_a_database_write(home):
    kept = Kept()
    first = _check(home, kept)
    n = len(first.rows)
    assert kept.read == n and kept.kept == 0 and n > 40
    again = _check(home, kept)
    assert kept.read == 0 and kept.kept == n and again == first

    # a real-client transcript appended: that session alone is read again
    t = home / ".claude" / "projects" / "-tmp-ssift-rc-files-basic-work" / "8414eb07-cca2-5cca-9059-e9baedac31e1.jsonl"
    with open(t, "ab") as f:
        f.write(_prompt_line(t, "incremental listing check 28"))
    lst = _check(home, kept)
    assert kept.read == 1
    assert _row(lst, "claude-code", t.stem).summary.last_prompt == "incremental listing check 28"
    assert lst != first

    # a new session in a project dir, and one removed
    new = t.with_name("11111111-2828-4828-8828-111111111111.jsonl")
    shutil.copy(t, new)
    gone = next(p for p in (home / ".claude" / "projects").glob("*/*.jsonl") if p not in (t, new))
    gone.unlink()
    lst = _check(home, kept)
    assert kept.read == 1 and len(lst.rows) == n
    assert not any(r.ref.session_id == gone.stem for r in lst.rows)

    # opencode.db written by a connection still open (WAL: the commit is in opencode.db-wal, the
    # main file unchanged): every session of that database is read again, the new prompt seen
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    main_before = db.stat()
    con = sqlite3.connect(db)
    try:
        assert con.execute("pragma journal_mode").fetchone()[0] == "wal"
        con.execute("pragma wal_autocheckpoint=0")
        sid, mid = con.execute("select m.session_id, m.id from message m join session s on s.id=m.session_id "
                               "where s.title='Shell and write' and m.data like '%\"role\":\"user\"%'").fetchone()
        top = con.execute("select max(time_created) from message where session_id=?", (sid,)).fetchone()[0]
        new_mid, when = mid[:-4] + "zz28", top + 1000
        data = json.loads(con.execute("select data from message where id=?", (mid,)).fetchone()[0])
        data["time"] = {"created": when}
        con.execute("insert into message values (?,?,?,?,?)", (new_mid, sid, when, when, json.dumps(data)))
        for pid, pdata in con.execute("select id, data from part where message_id=?", (mid,)).fetchall():
            p = json.loads(pdata)
            if p.get("type") == "text":
                p["text"] = "database prompt check 28"
            con.execute("insert into part values (?,?,?,?,?,?)", (pid[:-4] + "zz28", new_mid, sid, when, when,
                                                                   json.dumps(p)))
        # the session row is left as it was (a client writing parts as they stream): discovery's
        # ref is the same, only the database's files tell
        con.commit()
        assert (db.stat().st_size, db.stat().st_mtime_ns) == (main_before.st_size, main_before.st_mtime_ns)
        lst = _check(home, kept)
        ocs = sum(1 for r in lst.rows if r.ref.provider == "opencode")
        assert kept.read == ocs and ocs > 3
        assert _row(lst, "opencode", sid).summary.last_prompt == "database prompt check 28"
    finally:
        con.close()
    _check(home, kept)


def test_serves_store_lists_a_new_generation_as_a_fresh_listing(home):
    pytest.importorskip("starlette")
    from sessionsift.serve.store import Store

    store = Store(lambda targets: _sel(home))
    assert store.snapshot().listing == list_sessions(_sel(home))
    t = next((home / ".claude" / "projects").glob("*/*.jsonl"))
    with open(t, "ab") as f:
        f.write(_prompt_line(t, "a new generation 28"))
    store.bump([str(t)])
    snap = store.snapshot()
    assert snap.generation == 1 and store._kept.read == 1
    assert snap.listing == list_sessions(_sel(home))
    assert snap.by_key[("claude-code", t.stem)].summary.last_prompt == "a new generation 28"


def _verdicts(home: Path, now: float) -> list[dict]:
    from sessionsift.live.status import status

    return [v.to_json() for v in status(_sel(home), now=now).verdicts]


def _forget_live_reads() -> None:
    from sessionsift.providers.claude.live import verdict as V

    from sessionsift.providers.claude.live import todos

    V._SCANS.clear()
    V._TAIL_CACHE.clear()
    todos._TODO_CACHE.clear()


def test_the_live_status_with_kept_scans_is_a_fresh_one_after_an_append_and_a_cut(home):
    """serve's live page asks for every session's status after each change: Claude Code's
    background scan of a session is kept between assessments (only appended bytes read) and its
    tails by file identity; the verdicts must be those of a fresh process (the caches emptied)."""
    from sessionsift.providers.claude.live import verdict as V

    now = 1_900_000_000.0
    _forget_live_reads()
    first = _verdicts(home, now)
    t = home / ".claude" / "projects" / "-tmp-ssift-rc-files-basic-work" / "8414eb07-cca2-5cca-9059-e9baedac31e1.jsonl"
    other = next(k for k in V._SCANS if k != str(t))
    kept_other = V._SCANS[other][1]
    size0 = t.stat().st_size
    with open(t, "ab") as f:
        f.write(_prompt_line(t, "live incremental check 28"))
    kept = _verdicts(home, now)
    assert V._SCANS[other][1] is kept_other  # an unchanged session's scan was kept, not made again
    _forget_live_reads()
    assert kept == _verdicts(home, now)
    assert kept != first
    _verdicts(home, now)
    import os

    os.truncate(t, size0)  # shorter than the bytes scanned: that session's scan starts over
    kept = _verdicts(home, now)
    _forget_live_reads()
    assert kept == _verdicts(home, now) == first
