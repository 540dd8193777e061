"""The Crush reader on databases built with Crush's OWN schema and queries.

How these databases are made, and why: Crush cannot run on this machine (its npm package
``@charmland/crush`` is a wrapper whose install script downloads the binary from GitHub, which is
unreachable here, and no other registry carries it). So tests/crush/crushdb.py creates each
``crush.db`` by applying Crush's goose migrations (vendored verbatim from its source,
tests/crush/vendor/SOURCE.md) with its connection pragmas, and fills it only through its sqlc
queries and the part shapes its ``internal/message`` package marshals (text, reasoning, tool_call,
tool_result, finish, shell_command, image_url, binary), driven the way its agent loop writes a turn
(tests/crush/scenarios.py). No table or row is typed in by hand; the ground truth is what the
driving script did (the files it really wrote, the commands it really ran and their exit codes).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sessionsift.providers import ReadReport, get
from tests.crush.scenarios import build


@pytest.fixture(scope="module")
def crush_corpus(tmp_path_factory):
    base = tmp_path_factory.mktemp("crush")
    truth = build(base)
    return base / "crush-home", truth


def _read(home):
    p = get("crush")
    disc = p.discover(p.locate(explicit=str(home)))
    out = {}
    for ref in disc.sessions:
        rep = ReadReport()
        out[ref.session_id] = (ref, list(p.read(ref, rep, raw=True)), rep)
    return disc, out


def test_every_session_matches_the_driving_script(crush_corpus):
    home, truth = crush_corpus
    disc, sessions = _read(home)
    assert disc.coverage.state == "ok" and disc.coverage.sessions == len(truth.sessions) == 8
    assert set(sessions) == set(truth.sessions)
    for sid, t in truth.sessions.items():
        ref, recs, rep = sessions[sid]
        assert rep.problems == [] and sum(rep.omissions().values()) == 0, (sid, rep)
        assert ref.parent_session_id == t["parent"]
        assert ref.title == t.get("title")
        assert [r.text for r in recs if r.kind == "prompt"] == t["prompts"]
        assert [r.turn for r in recs if r.kind == "prompt"] == list(range(1, len(t["prompts"]) + 1))
        calls = [(r.call_id, r.tool_name, r.tool_input) for r in recs
                 if r.kind == "tool_call" and r.tool_name != "shell_command"]
        assert calls == [(c["id"], c["name"], c["input"]) for c in t["tool_calls"]]
        results = {r.call_id: r for r in recs if r.kind == "tool_result"}
        for c in t["tool_calls"]:
            if t.get("killed") and c["id"] not in results:
                continue
            if c["name"] == "bash":
                assert results[c["id"]].exit_code == c["exit"], results[c["id"]].text
        # the file history is a complete view: the last new_content per path is the file on disk
        last = {}
        for r in recs:
            for fc in r.file_changes:
                assert fc.new_content is not None and fc.old_content is not None
                last[fc.path] = fc.new_content
        assert last == t["files"]
        for path, content in last.items():
            assert Path(path).read_text() == content
        # Crush's file tracker: the paths each session read or wrote, relative to the project
        reads = [r.text for r in recs if r.native == "read_files"]
        assert sorted(set(reads)) == sorted(set(t.get("reads", []))) and len(reads) == len(set(reads))
        # usage: Crush keeps the last step's counts and a summed cost, nothing per record
        assert all(r.tokens is None for r in recs)
        if t["usage"]:
            assert (ref.extra["last_prompt_tokens"], ref.extra["last_completion_tokens"]) == tuple(t["usage"])
        assert ref.extra["recorded_cost"] == pytest.approx(t["cost"])


def test_file_history_rows_follow_their_tool_result(crush_corpus):
    home, truth = crush_corpus
    disc, sessions = _read(home)
    for sid, (ref, recs, _) in sessions.items():
        for i, r in enumerate(recs):
            if r.native == "files/version":
                back = [x for x in recs[:i] if x.kind == "tool_result"]
                assert back and back[-1].tool_name in ("write", "edit")
                path = r.file_changes[0].path
                call = next(x for x in recs if x.kind == "tool_call" and x.call_id == back[-1].call_id)
                assert call.tool_input["file_path"] == path
    notes = next(s for s in truth.sessions if truth.sessions[s].get("scenario") == "continued")
    actions = [fc.action for r in sessions[notes][1] for fc in r.file_changes]
    assert actions == ["create", "update"]


def test_subagent_and_title_sessions_link_to_their_parent(crush_corpus):
    home, truth = crush_corpus
    disc, sessions = _read(home)
    child = next(s for s, t in truth.sessions.items() if t.get("scenario") == "subagent_child")
    parent = truth.sessions[child]["parent"]
    ref, recs, _ = sessions[child]
    assert ref.extra["session_kind"] == "task" and ref.parent_session_id == parent
    assert child.endswith("$$" + truth.sessions[parent]["tool_calls"][0]["id"])
    first = next(r for r in recs if r.native == "part/text")
    assert first.kind == "meta" and first.text == truth.sessions[child]["task_prompt"]
    title = "title-" + parent
    assert sessions[title][0].extra["session_kind"] == "title" and sessions[title][0].parent_session_id == parent


def test_killed_turn_and_other_part_shapes(crush_corpus):
    home, truth = crush_corpus
    disc, sessions = _read(home)
    killed = next(s for s, t in truth.sessions.items() if t.get("killed"))
    recs = sessions[killed][1]
    last_call = [r for r in recs if r.kind == "tool_call"][-1]
    assert last_call.raw["data"]["finished"] is False
    assert last_call.call_id not in {r.call_id for r in recs if r.kind == "tool_result"}
    att = next(s for s, t in truth.sessions.items() if t.get("scenario") == "attachments")
    recs = sessions[att][1]
    natives = [r.native for r in recs]
    assert natives.count("part/binary") == 2 and "part/image_url" in natives
    prompt = next(r for r in recs if r.kind == "prompt")
    assert prompt.text == "Describe the picture and the notes <b>&</b> the logo."  # Go's \u003c escapes undone
    sh = next(r for r in recs if r.native == "part/shell_command")
    assert (sh.role, sh.kind, sh.exit_code, sh.tool_input) == (
        "user", "tool_call", truth.sessions[att]["shell_commands"][0]["exit"], {"command": "echo from-the-user; exit 4"})
    assert sh.text == "from-the-user\n"
    err = [r for r in recs if r.native == "part/finish" and r.is_error]
    assert len(err) == 1 and "Provider error" in err[0].text


def test_moved_corpus_is_found_by_path_tail_and_said_so(tmp_path):
    build(tmp_path / "orig")
    moved = tmp_path / "elsewhere" / "crush-home"
    moved.parent.mkdir()
    shutil.move(tmp_path / "orig" / "crush-home", moved)  # the recorded paths are gone now
    disc, sessions = _read(moved)
    assert disc.coverage.state == "ok" and disc.coverage.sessions == 8
    assert "moved corpus" in disc.coverage.reason
    ref, _, rep = next(iter(sessions.values()))
    assert ref.extra["relocated_from"] and Path(ref.extra["db_path"]).is_relative_to(moved)
    assert any("found by the path's tail" in n for n in rep.notes)


def test_listed_project_without_database_is_a_problem_not_dropped(crush_corpus, tmp_path):
    home, truth = crush_corpus
    h = tmp_path / "crush-home"
    shutil.copytree(home, h)
    pj = json.loads((h / "projects.json").read_text())
    pj["projects"].append({"path": "/nonexistent/gone", "data_dir": "/nonexistent/gone/.crush",
                           "last_accessed": "2026-01-01T00:00:00Z"})
    (h / "projects.json").write_text(json.dumps(pj))
    disc, _ = _read(h)
    assert disc.coverage.sessions == 8 and "lower bound" in disc.coverage.reason
    assert any("/nonexistent/gone/.crush/crush.db" == p.path for p in disc.problems)


def test_absent_and_empty_homes(tmp_path):
    p = get("crush")
    d = p.discover(p.locate(explicit=str(tmp_path / "nope")))
    assert (d.coverage.state, d.coverage.sessions) == ("absent", 0)
    (tmp_path / "empty").mkdir()
    d = p.discover(p.locate(explicit=str(tmp_path / "empty")))
    assert (d.coverage.state, d.coverage.sessions) == ("absent", 0)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "projects.json").write_text("{not json")
    d = p.discover(p.locate(explicit=str(tmp_path / "bad")))
    assert d.coverage.state == "unreadable" and d.coverage.sessions is None and "projects.json" in d.coverage.reason


def test_locate_precedence(tmp_path, monkeypatch):
    p = get("crush")
    monkeypatch.setenv("CRUSH_GLOBAL_DATA", str(tmp_path / "g"))
    assert p.locate(explicit=str(tmp_path / "x")).source == "--crush-home"
    assert p.locate(home=str(tmp_path)).path == tmp_path / ".local/share/crush"
    assert p.locate().path == tmp_path / "g" and p.locate().source == "CRUSH_GLOBAL_DATA"
    monkeypatch.delenv("CRUSH_GLOBAL_DATA")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert p.locate().path == tmp_path / "xdg" / "crush"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert p.locate().path == Path.home() / ".local/share/crush" and p.locate().source == "default"


def test_committed_sample_reads_back_as_its_ground_truth():
    """examples/crush-home, built the same way (tests/crush/make_examples.py; its README says so)."""
    from tests.conftest import EXAMPLES

    gt = json.loads((EXAMPLES / "crush-ground-truth.json").read_text())
    disc, sessions = _read(EXAMPLES / "crush-home")
    assert disc.coverage.state == "ok" and disc.coverage.sessions == len(gt["sessions"])
    assert "moved corpus" in disc.coverage.reason  # the build dir is gone: found by path tail
    for sid, t in gt["sessions"].items():
        ref, recs, rep = sessions[sid]
        assert ref.extra["relocated_from"] and ref.parent_session_id == t["parent"]
        assert [r.text for r in recs if r.kind == "prompt"] == t["prompts"]
        assert [(r.call_id, r.tool_name, r.tool_input) for r in recs
                if r.kind == "tool_call" and r.tool_name != "shell_command"] == \
            [(c["id"], c["name"], c["input"]) for c in t["tool_calls"]]
        last = {fc.path: fc.new_content for r in recs for fc in r.file_changes}
        assert last == t["files"]
        for path, content in last.items():  # the files the sessions wrote were copied with the sample
            rel = Path(path).relative_to(gt["built_at"])
            assert (EXAMPLES / rel).read_text() == content


def test_title_session_is_a_helper_not_a_subagent_and_its_cost_is_the_parents(tmp_path):
    """Crush's ``title-<parent>`` row is session.go's CreateTitleSession (parent set, title
    "Generate a title"): the parent's title generation, not an agent lane. Crush 37f36e93 never
    fills it (GenerateTitle writes the title and ADDS its tokens and cost to the parent's row:
    UpdateSessionTitleAndUsage); its open PR #3494 saves the same cost on the title row as well
    ("the parent keeps the money"). So the title row is a helper, and usage does not add its
    cost to the parent's again. Data: the committed sample (Crush's own migrations and queries);
    the PR's second write is made here through Crush's own UpdateSession query on a copy."""
    import sqlite3
    import subprocess
    import sys

    from tests.crush.crushdb import queries

    home = tmp_path / "crush-home"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "crush-home", home)
    disc, sessions = _read(home)
    parent = "592afbcf-a292-4429-91dd-c27824bf49fa"
    title = sessions["title-" + parent][0]
    assert (title.helper, title.is_subagent, title.parent_session_id) == ("title generation", False, parent)
    task = next(r for r, _, _ in sessions.values() if r.extra["session_kind"] == "task")
    assert task.is_subagent and task.helper is None
    db = home / "projects" / "app" / ".crush" / "crush.db"
    con = sqlite3.connect(db, isolation_level=None)
    q = queries()
    con.execute(q["UpdateSessionTitleAndUsage"], ("Delegated", 40, 4, 0.0005, parent))  # GenerateTitle
    row = con.execute("SELECT title, summary_message_id, todos FROM sessions WHERE id = ?", (title.session_id,)).fetchone()
    con.execute(q["UpdateSession"], (row[0], 40, 4, row[1], 0.0005, row[2], title.session_id))  # PR #3494's mirror
    parent_cost, child_cost = (con.execute("SELECT cost FROM sessions WHERE id = ?", (sid,)).fetchone()[0]
                               for sid in (parent, task.session_id))
    con.close()
    p = subprocess.run([sys.executable, "-m", "sessionsift", "usage", "session", "--crush-home", str(home),
                        "--format", "json"], capture_output=True, text=True, timeout=300)
    rows = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    got = next(r for r in rows if r.get("kind") == "session" and r["session_id"] == parent)
    assert got["client_recorded"]["cost_usd"] == pytest.approx(parent_cost + child_cost)  # the title's once, on its parent
    text = subprocess.run([sys.executable, "-m", "sessionsift", "list", "--crush-home", str(home), "--verbose"],
                          capture_output=True, text=True, timeout=300).stdout  # the helper's own row
    assert f"title generation for {parent} (a helper session, not a subagent)" in text
    assert "1 subagent" in next(ln for ln in text.splitlines() if ln.startswith(parent))
    assert "Crush 6 sessions (+1 subagent, +1 helper session)" in text.rstrip().splitlines()[-1].split(" · ")
