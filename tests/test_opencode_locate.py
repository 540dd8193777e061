"""Where the opencode reader looks (the precedence its docs state), and what a data dir holds."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from sessionsift.providers import ReadReport, get
from tests.conftest import EXAMPLES

N = len(list((EXAMPLES / "opencode-ground-truth").glob("*.json"))) + 1  # + the subagent's child


def test_locate_precedence(tmp_path, monkeypatch):
    p = get("opencode")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("OPENCODE_DB", "custom.db")
    assert p.locate(explicit=str(tmp_path / "x")).source == "--opencode-home"
    assert p.locate(home=str(tmp_path)).path == tmp_path / ".local/share/opencode"
    r = p.locate()
    assert (r.path, r.source) == (tmp_path / "xdg" / "opencode" / "custom.db", "OPENCODE_DB")
    monkeypatch.setenv("OPENCODE_DB", str(tmp_path / "abs.db"))
    assert p.locate().path == tmp_path / "abs.db"
    monkeypatch.setenv("OPENCODE_DB", ":memory:")
    assert (p.locate().path, p.locate().source) == (tmp_path / "xdg" / "opencode", "XDG_DATA_HOME")
    monkeypatch.delenv("OPENCODE_DB")
    monkeypatch.delenv("XDG_DATA_HOME")
    assert (p.locate().path, p.locate().source) == (Path.home() / ".local/share/opencode", "default")


def test_channel_databases_and_a_database_file_as_root(tmp_path):
    d = tmp_path / "opencode"
    d.mkdir()
    shutil.copy2(EXAMPLES / "opencode-home" / "opencode.db", d / "opencode-dev.db")  # another channel's store
    p = get("opencode")
    disc = p.discover(p.locate(explicit=str(d)))
    assert disc.coverage.sessions == N and {r.extra["db_path"] for r in disc.sessions} == {str(d / "opencode-dev.db")}
    disc = p.discover(p.locate(explicit=str(d / "opencode-dev.db")))
    assert disc.coverage.sessions == N
    assert p.discover(p.locate(explicit=str(tmp_path / "none"))).coverage.state == "absent"
    (tmp_path / "emptydir").mkdir()
    cov = p.discover(p.locate(explicit=str(tmp_path / "emptydir"))).coverage
    assert (cov.state, cov.sessions) == ("absent", 0)


def test_archived_session_is_listed_and_marked(tmp_path):
    d = tmp_path / "opencode"
    d.mkdir()
    shutil.copy2(EXAMPLES / "opencode-home" / "opencode.db", d / "opencode.db")
    con = sqlite3.connect(d / "opencode.db")
    sid = con.execute("SELECT id FROM session ORDER BY id LIMIT 1").fetchone()[0]
    con.execute("UPDATE session SET time_archived = time_updated WHERE id = ?", (sid,))
    con.commit()
    con.close()
    p = get("opencode")
    disc = p.discover(p.locate(explicit=str(d)))
    ref = next(r for r in disc.sessions if r.session_id == sid)
    assert disc.coverage.sessions == N and ref.extra["archived"] and ref.extra["time_archived"]
    assert all(not r.extra["archived"] for r in disc.sessions if r.session_id != sid)
    assert p.footprint(ref) == []  # rows in a shared database: nothing to delete without writing to it


def test_unknown_part_type_is_kept_and_counted(tmp_path):
    d = tmp_path / "opencode"
    d.mkdir()
    shutil.copy2(EXAMPLES / "opencode-home" / "opencode.db", d / "opencode.db")
    con = sqlite3.connect(d / "opencode.db")
    pid, data = con.execute("SELECT id, data FROM part WHERE data LIKE '%\"step-start\"%' LIMIT 1").fetchone()
    con.execute("UPDATE part SET data = replace(data, '\"step-start\"', '\"hologram\"') WHERE id = ?", (pid,))
    con.commit()
    con.close()
    p = get("opencode")
    disc = p.discover(p.locate(explicit=str(d)))
    seen = []
    total = ReadReport()
    for ref in disc.sessions:
        rep = ReadReport()
        seen += [r for r in p.read(ref, rep, raw=True) if r.locator == f"part:{pid}"]
        total.merge(rep)
    assert [(r.kind, r.native) for r in seen] == [("unknown", "part/hologram")]
    assert total.unknown_kinds == {"part/hologram": 1}


def test_rows_of_the_newer_session_tables_are_kept_as_unknown(tmp_path):
    """session_message / session_input exist in 1.18.33's schema but stayed empty in every run
    measured; rows there (a later release) must surface as unknown records, never vanish."""
    d = tmp_path / "opencode"
    d.mkdir()
    shutil.copy2(EXAMPLES / "opencode-home" / "opencode.db", d / "opencode.db")
    con = sqlite3.connect(d / "opencode.db")
    sid = con.execute("SELECT id FROM session ORDER BY id LIMIT 1").fetchone()[0]
    con.execute("INSERT INTO session_message VALUES ('smsg_1', ?, 'user', 1, 1, 1, '{\"text\": \"v2\"}')", (sid,))
    con.execute("INSERT INTO session_input VALUES ('sin_1', ?, 'queued prompt', 'queue', 1, NULL, 1)", (sid,))
    con.commit()
    con.close()
    p = get("opencode")
    ref = next(r for r in p.discover(p.locate(explicit=str(d))).sessions if r.session_id == sid)
    rep = ReadReport()
    recs = [r for r in p.read(ref, rep) if r.kind == "unknown"]
    assert [(r.locator, r.native) for r in recs] == [("session_message:smsg_1", "session_message/user"),
                                                     ("session_input:sin_1", "session_input/queue")]
    assert rep.unknown_kinds == {"session_message/user": 1, "session_input/queue": 1}


def test_data_dir_with_uri_metacharacters_in_its_name(tmp_path):
    """The database is opened through a file: URI; a path holding ? # % or spaces must still name
    that file (quoted), never be cut at the ? into other URI parameters."""
    d = tmp_path / "we?ird #dir %20&mode=rwc" / "opencode"
    d.mkdir(parents=True)
    shutil.copy2(EXAMPLES / "opencode-home" / "opencode.db", d / "opencode.db")
    p = get("opencode")
    disc = p.discover(p.locate(explicit=str(d)))
    assert disc.coverage.state == "ok" and disc.coverage.sessions == N
    assert sorted(x.name for x in d.iterdir()) == ["opencode.db"]  # and nothing was created beside it
