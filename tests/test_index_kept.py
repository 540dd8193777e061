"""Answers kept per session for the agents read through shared records (index/kept.py): a second
`stats` or `usage` over an unchanged store reads no record of those sessions and answers exactly
what a reading gives; a session whose files changed is read again; the index off reads every time.

Data: the real clients' sessions under examples/home (Codex CLI, Gemini CLI, opencode, Crush, pi,
Qwen Code, Copilot CLI, Kilo Code), copied to a temp dir where a test changes them. The changes
are made to the clients' own files: a rollout cut back to an earlier point of the same session (a
prefix of its lines, as the client wrote it then), a database row the client wrote deleted."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.index import kept as K
from sessionsift.providers import deep_name
from sessionsift.providers.base import SessionRef
from sessionsift.providers.scope import RootRequest, select, survey

REPO = Path(__file__).resolve().parent.parent
HOME = REPO / "examples" / "home"


def _home_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "home"
    shutil.copytree(HOME, dst, symlinks=False)
    return dst


def _selection(home: Path):
    others = {}
    sv = survey(RootRequest(home=str(home)))
    sel = select(sv, [], None)
    return sel, others


def _counting(monkeypatch):
    """Count the sessions whose records are read by `stats` and by `usage`."""
    from sessionsift.providers import census as PC
    from sessionsift.usage import collect as UC

    seen = {"census": 0, "usage": 0}
    real_stats, real_read = PC.session_stats, UC.read_session

    def stats(prov, ref):
        seen["census"] += 1
        return real_stats(prov, ref)

    def read(name, prov, ref):
        seen["usage"] += 1
        return real_read(name, prov, ref)

    monkeypatch.setattr(PC, "session_stats", stats)
    monkeypatch.setattr(UC, "read_session", read)
    return seen


def _answers(home: Path):
    from sessionsift.stats import stats_of
    from sessionsift.usage.collect import collect_selection

    sel, _ = _selection(home)
    st = stats_of(sel)
    col = collect_selection(sel)
    shared = [s for s in st.shared.sessions if s.ref.provider != deep_name()]
    census = {(s.ref.provider, s.ref.session_id): (s.records, s.copies, dict(s.kinds or {}), s.prompts,
                                                    dict(s.tool_calls), dict(s.tool_errors), s.tokens_by_model,
                                                    s.tokens_unknown, dict(s.usage_units_by_model),
                                                    s.tokens_cumulative_by_model, s.turns, s.file_changes,
                                                    s.report.omissions(), s.ref)
              for s in shared}
    events = sorted(tuple(map(repr, e._values())) for e in col.ledger.events if e.provider != deep_name())
    unpaid = sorted(repr(u) for u in col.without_usage if u.provider != deep_name())
    tally = {k: vars(v) for k, v in col.tally.items()}
    return census, events, unpaid, tally, col.ledger.copies_merged, sorted(map(repr, col.problems))


def test_a_second_answer_reads_no_record_of_an_unchanged_session_and_equals_a_reading(tmp_path, monkeypatch):
    home = _home_copy(tmp_path)
    monkeypatch.setenv("SESSIONSIFT_NO_INDEX", "1")
    seen = _counting(monkeypatch)
    off = _answers(home)
    read_off = dict(seen)
    assert read_off["census"] >= 60 and read_off["usage"] >= 60, read_off  # every agent's sessions were read
    monkeypatch.delenv("SESSIONSIFT_NO_INDEX")
    first = _answers(home)
    assert seen["census"] == 2 * read_off["census"] and seen["usage"] == 2 * read_off["usage"]
    second = _answers(home)
    assert seen["census"] == 2 * read_off["census"], "the second stats read records of an unchanged session"
    assert seen["usage"] == 2 * read_off["usage"], "the second usage read records of an unchanged session"
    assert first == off
    assert second == off


def test_the_index_off_reads_every_time(tmp_path, monkeypatch):
    home = _home_copy(tmp_path)
    seen = _counting(monkeypatch)
    _answers(home)
    n = dict(seen)
    monkeypatch.setenv("SESSIONSIFT_NO_INDEX", "1")
    _answers(home)
    assert seen == {"census": 2 * n["census"], "usage": 2 * n["usage"]}


def _codex_rollout(home: Path) -> Path:
    rs = sorted((home / ".codex" / "sessions").rglob("rollout-*.jsonl"), key=lambda p: p.stat().st_size)
    return rs[-1]


def test_a_rollout_cut_back_to_an_earlier_point_is_read_again(tmp_path, monkeypatch):
    home = _home_copy(tmp_path)
    seen = _counting(monkeypatch)
    _answers(home)
    _answers(home)
    before = dict(seen)
    p = _codex_rollout(home)
    lines = p.read_bytes().splitlines(keepends=True)
    p.write_bytes(b"".join(lines[: len(lines) // 2]))
    warm = _answers(home)
    assert seen["census"] == before["census"] + 1 and seen["usage"] == before["usage"] + 1, seen
    monkeypatch.setenv("SESSIONSIFT_NO_INDEX", "1")
    assert warm == _answers(home)


def test_a_database_written_since_is_read_again(tmp_path, monkeypatch):
    """opencode's sessions live in one database: a write to it (here: its last message row
    deleted, as a client's revert does) makes every session of it be read again."""
    home = _home_copy(tmp_path)
    seen = _counting(monkeypatch)
    _answers(home)
    before = dict(seen)
    db = next((home / ".local" / "share" / "opencode").rglob("opencode.db"))
    con = sqlite3.connect(db)
    n_sessions = con.execute("SELECT count(*) FROM session").fetchone()[0]
    con.execute("DELETE FROM message WHERE id = (SELECT id FROM message ORDER BY time_created DESC LIMIT 1)")
    con.commit()
    con.close()
    warm = _answers(home)
    assert seen["census"] - before["census"] == n_sessions, (seen, before, n_sessions)
    monkeypatch.setenv("SESSIONSIFT_NO_INDEX", "1")
    assert warm == _answers(home)


def test_a_session_written_while_it_is_read_is_not_kept(tmp_path):
    # hand-made: a one-line file and a reading that appends to it -- no client can be timed here to
    # write in the middle of one reading; the rule under test is the tracer's, not a reader's
    p = tmp_path / "s.jsonl"
    p.write_text('{"a": 1}\n')
    ref = SessionRef("codex", "s", [p])

    def read_and_grow():
        with open(p, "a") as f:
            f.write('{"b": 2}\n')
        return "value"

    value, ident = K.taken(ref, read_and_grow)
    assert value == "value"
    assert ident is None
    value, ident = K.taken(ref, lambda: p.read_text())
    assert ident is not None and dict(ident)[str(p)] is not None


def test_every_field_of_a_session_ref_is_in_its_digest():
    # hand-made refs: the rule is about the SessionRef type (a field added later must count), not data
    base = SessionRef("codex", "s", [Path("/a")], project="/p", project_source="x", first_at="1", last_at="2",
                      size=3, title="t", parent_session_id="q", version="v", extra={"k": 1}, helper="h")
    d0 = K.ref_digest(base)
    other = {"provider": "gemini-cli", "session_id": "s2", "paths": [Path("/b")], "project": "/p2",
             "project_source": "y", "first_at": "9", "last_at": "8", "size": 4, "title": "u",
             "parent_session_id": "r", "version": "w", "extra": {"k": 2}, "helper": "i"}
    names = [f.name for f in dataclasses.fields(SessionRef)]
    assert sorted(names) == sorted(other)
    for name in names:
        assert K.ref_digest(dataclasses.replace(base, **{name: other[name]})) != d0, name


def test_another_code_empties_what_was_kept(tmp_path, monkeypatch):
    home = _home_copy(tmp_path)
    seen = _counting(monkeypatch)
    _answers(home)
    n = dict(seen)
    monkeypatch.setattr(K, "_CODE", [b"another sessionsift"])
    _answers(home)
    assert seen == {"census": 2 * n["census"], "usage": 2 * n["usage"]}
    con = sqlite3.connect(K.db_path())
    assert con.execute("SELECT v FROM meta WHERE k='code'").fetchone()[0] == b"another sessionsift"


def test_the_cli_answers_equal_with_the_index_off_cold_and_warm(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SESSIONSIFT_NO_INDEX"}
    env.update(HOME=str(tmp_path / "h"), SESSIONSIFT_INDEX_DIR=str(tmp_path / "idx"), NO_COLOR="1")
    (tmp_path / "h").mkdir()

    def run(args, off=False):
        e = dict(env, SESSIONSIFT_NO_INDEX="1") if off else env
        p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--home", str(HOME), "--format", "json"],
                           capture_output=True, env=e, cwd=REPO)
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        rows = [json.loads(x) for x in p.stdout.decode().splitlines()]
        for r in rows:
            r.pop("index", None)  # where the answer came from: the only field meant to differ
        return rows

    for args in (["stats"], ["usage", "daily", "--by", "project"], ["usage", "session"]):
        off = run(args, off=True)
        assert run(args) == off, args
        assert run(args) == off, args


def test_index_status_counts_the_kept_answers_and_clear_drops_them(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SESSIONSIFT_NO_INDEX"}
    env.update(HOME=str(tmp_path / "h"), SESSIONSIFT_INDEX_DIR=str(tmp_path / "idx"), NO_COLOR="1")
    (tmp_path / "h").mkdir()

    def run(*args):
        p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--home", str(HOME), "--format", "json"],
                           capture_output=True, env=env, cwd=REPO)
        rows = [json.loads(x) for x in p.stdout.decode().splitlines()]
        return p.returncode, rows

    code, rows = run("index", "status")
    assert code == 0
    assert rows[-1]["kept"] is None  # none yet: no stats or usage has run
    code, rows = run("stats")
    assert code == 0
    shared = rows[-1]["shared"]["sessions"] - sum(1 for r in rows if r.get("kind") == "session"
                                                 and r.get("provider") == deep_name())
    code, rows = run("index", "status")
    assert code == 0
    kept = rows[-1]["kept"]
    assert kept["answers"] == {"census": shared}
    assert kept["db_bytes"] > 0
    code, rows = run("index", "clear")
    assert code == 0
    assert rows[-1]["kept_answers_dropped"] == shared
    code, rows = run("index", "status")
    assert rows[-1]["kept"]["answers"] == {}


def test_stats_says_how_many_sessions_came_from_kept_answers(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SESSIONSIFT_NO_INDEX"}
    env.update(HOME=str(tmp_path / "h"), SESSIONSIFT_INDEX_DIR=str(tmp_path / "idx"), NO_COLOR="1")
    (tmp_path / "h").mkdir()

    def shared_sessions(off=False):
        e = dict(env, SESSIONSIFT_NO_INDEX="1") if off else env
        p = subprocess.run([sys.executable, "-m", "sessionsift", "stats", "--home", str(HOME), "--format", "json"],
                           capture_output=True, env=e, cwd=REPO)
        assert p.returncode == 0
        rows = [json.loads(x) for x in p.stdout.decode().splitlines()]
        n = sum(1 for r in rows if r.get("kind") == "session" and r.get("provider") != deep_name())
        return rows[-1]["index"]["shared_sessions"], n

    assert shared_sessions(off=True)[0] is None
    first, n = shared_sessions()
    assert first == {"from_kept": 0, "read": n}
    second, _ = shared_sessions()
    assert second == {"from_kept": n, "read": 0}


def test_a_second_list_reads_no_record_of_an_unchanged_session_and_equals_a_reading(tmp_path, monkeypatch):
    """`list` summarizes a session of a reader without a bounded read (Provider.summarize's
    default: every record) once; Claude Code's head-and-tail read is not kept."""
    from sessionsift.listing import list_sessions
    from sessionsift.providers import summary as PS

    home = _home_copy(tmp_path)
    n = {"read": 0}
    real = PS.from_records

    def counted(prov, ref):
        n["read"] += 1
        return real(prov, ref)

    monkeypatch.setattr(PS, "from_records", counted)

    def rows():
        sel, _ = _selection(home)
        lst = list_sessions(sel)
        return [(r.ref, r.summary) for r in lst.rows], sorted(map(repr, lst.problems))

    monkeypatch.setenv("SESSIONSIFT_NO_INDEX", "1")
    off = rows()
    read_off = n["read"]
    assert read_off >= 60
    monkeypatch.delenv("SESSIONSIFT_NO_INDEX")
    assert rows() == off
    assert n["read"] == 2 * read_off
    assert rows() == off
    assert n["read"] == 2 * read_off, "the second list read records of an unchanged session"
    p = _codex_rollout(home)
    lines = p.read_bytes().splitlines(keepends=True)
    p.write_bytes(b"".join(lines[: len(lines) // 2]))
    warm = rows()
    assert n["read"] == 2 * read_off + 1
    monkeypatch.setenv("SESSIONSIFT_NO_INDEX", "1")
    assert warm == rows()


def test_a_forks_parent_appearing_since_makes_the_fork_be_read_again(tmp_path, monkeypatch):
    """pi finds a fork's parent by the path its header records, else beside the fork
    (providers/pi/read.py parent_file: an existence test, announced as an input through
    read/probe.py). The real pi client's fork sample: its parent moved away, the fork's census is
    kept without it (its copies counted as its own); the parent put back, the fork is read again and
    the answer equals a reading."""
    home = _home_copy(tmp_path)
    fork_dir = home / ".pi" / "agent" / "sessions" / "--tmp-ssift-pi-sample-fork-work--"
    forks = [p for p in fork_dir.glob("*.jsonl") if b'"parentSession"' in p.read_bytes()[:2000]]
    assert len(forks) == 1
    header = json.loads(forks[0].read_bytes().split(b"\n", 1)[0])
    assert not Path(header["parentSession"]).exists()  # the path the client recorded: only its name is used
    parent = fork_dir / Path(header["parentSession"]).name
    aside = tmp_path / parent.name
    parent.rename(aside)
    seen = _counting(monkeypatch)
    without = _answers(home)
    before = dict(seen)
    aside.rename(parent)
    warm = _answers(home)
    assert seen["census"] - before["census"] == 2, (seen, before)  # the parent, back, and its fork
    monkeypatch.setenv("SESSIONSIFT_NO_INDEX", "1")
    fresh = _answers(home)
    assert warm == fresh
    assert warm[0] != without[0]  # the fork's census did change with its parent back


def test_a_second_census_reads_no_record_and_another_query_reads_again(tmp_path, monkeypatch):
    """A counting search (`--count`, `--count-by`) keeps each shared session's outcome under its
    query: the same census again reads no record of an unchanged session and answers the same;
    another census, or a changed session, is read again. A search that shows hits keeps nothing."""
    from sessionsift.search import records as SR
    from sessionsift.search.run import search
    from sessionsift.providers.searchquery import Query

    home = _home_copy(tmp_path)
    n = {"read": 0}
    real = SR.search_session

    def counted(prov, ref, q, ruled_out=None):
        n["read"] += 1
        return real(prov, ref, q, ruled_out)

    monkeypatch.setattr(SR, "search_session", counted)

    def census(count_by):
        sel, _ = _selection(home)
        run = search(Query(count_by=count_by), sel)
        return repr(run.census())

    monkeypatch.setenv("SESSIONSIFT_NO_INDEX", "1")
    off = census("tool")
    read_off = n["read"]
    assert read_off >= 50
    monkeypatch.delenv("SESSIONSIFT_NO_INDEX")
    assert census("tool") == off
    assert census("tool") == off
    assert n["read"] == 2 * read_off, "the second census read records of an unchanged session"
    census("day")
    assert n["read"] == 3 * read_off  # another query: read again
    p = _codex_rollout(home)
    lines = p.read_bytes().splitlines(keepends=True)
    p.write_bytes(b"".join(lines[: len(lines) // 2]))
    warm = census("day")
    assert n["read"] == 3 * read_off + 1
    monkeypatch.setenv("SESSIONSIFT_NO_INDEX", "1")
    assert warm == census("day")


def test_nothing_is_kept_when_the_index_would_lie_inside_a_data_root(tmp_path, monkeypatch):
    """The index never writes under a data root it reads (store.usable_for): with its directory
    inside the Codex home, stats, usage, list and a census answer from the records and keep
    nothing there."""
    from sessionsift.listing import list_sessions
    from sessionsift.providers.searchquery import Query
    from sessionsift.search.run import search

    home = _home_copy(tmp_path)
    monkeypatch.setenv("SESSIONSIFT_INDEX_DIR", str(home / ".codex" / "idx"))
    _answers(home)
    sel, _ = _selection(home)
    list_sessions(sel)
    search(Query(count_by="tool"), sel).census()
    assert not K.db_path().exists()


# -- Codex discovery's peeks (index/kept.py Peeks) ------------------------------------------------


def _codex_refs(home: Path, index_off=None) -> list:
    if index_off is None:
        K.Kept.open().close()  # a question that keeps answers has run (a discovery alone creates none)
    sv = survey(RootRequest(roots={"codex": str(home / ".codex")}, only=("codex",), index_off=index_off))
    return sv.entry("codex").sessions


def _counting_peeks(monkeypatch) -> list:
    from sessionsift.providers.codex import files as RF

    peeked: list = []
    real = RF.peek

    def peek(path, *a, **k):
        peeked.append(os.fspath(path))
        return real(path, *a, **k)

    monkeypatch.setattr(RF, "peek", peek)
    return peeked


def test_a_second_codex_discovery_peeks_at_no_unchanged_rollout_and_equals_a_reading(tmp_path, monkeypatch):
    home = _home_copy(tmp_path)
    peeked = _counting_peeks(monkeypatch)
    off = _codex_refs(home, "--no-index")
    n = len(peeked)
    assert n == len(off) and n >= 5, (n, len(off))
    first = _codex_refs(home)
    assert len(peeked) == 2 * n
    second = _codex_refs(home)
    assert len(peeked) == 2 * n, "the second discovery peeked at an unchanged rollout again"
    assert [K.ref_digest(r) for r in second] == [K.ref_digest(r) for r in off]
    assert second == off and first == off
    _codex_refs(home, "--no-index")
    assert len(peeked) == 3 * n  # the index off peeks every time


def test_a_codex_rollout_cut_back_since_is_peeked_at_again(tmp_path, monkeypatch):
    home = _home_copy(tmp_path)
    peeked = _counting_peeks(monkeypatch)
    _codex_refs(home)
    n = len(peeked)
    p = _codex_rollout(home)
    lines = p.read_bytes().splitlines(keepends=True)
    p.write_bytes(b"".join(lines[: len(lines) // 2]))
    warm = _codex_refs(home)
    assert peeked[n:] == [str(p)]
    assert warm == _codex_refs(home, "--no-index")


def test_a_codex_rollout_written_while_it_is_peeked_at_is_not_kept(tmp_path, monkeypatch):
    # hand-made timing: the real client's rollout, appended to (a copy of its own last line) in the
    # middle of discovery's peek -- no client can be timed to write exactly then
    from sessionsift.providers.codex import files as RF

    home = _home_copy(tmp_path)
    p = _codex_rollout(home)
    real = RF.peek
    grown: list = []

    def peek(path, *a, **k):
        out = real(path, *a, **k)
        if os.fspath(path) == str(p) and not grown:
            grown.append(True)
            with open(p, "ab") as f:
                f.write(p.read_bytes().splitlines(keepends=True)[-1])
        return out

    monkeypatch.setattr(RF, "peek", peek)
    _codex_refs(home)
    peeked = _counting_peeks(monkeypatch)
    warm = _codex_refs(home)
    assert peeked == [str(p)]
    assert warm == _codex_refs(home, "--no-index")
