"""The opencode reader on data written by the REAL opencode client (1.18.33, offline; and the older
1.1.65, which writes the legacy JSON tree): every scenario's prompts, tool calls, exit codes, file
changes and tokens equal the ground truth of the script that drove the client."""
from __future__ import annotations

import pytest

from tests.realclient.opencode.checks import _read, _sessions_by_conversation, check_scenario

pytestmark = pytest.mark.realclient


@pytest.mark.parametrize("name", ["shell_write", "continued", "failing", "subagent", "killed", "compacted"])
def test_scenario_matches_ground_truth(opencode_corpus, name):
    run = opencode_corpus[name]
    disc, sessions = _read(run.data_dir, run.truth["cwd"])
    main, conv = check_scenario(run, sessions)
    assert all(r.extra["store"] == "sqlite" for r in disc.sessions)


def test_subagent_is_linked_to_its_parent(opencode_corpus):
    run = opencode_corpus["subagent"]
    disc, sessions = _read(run.data_dir, run.truth["cwd"])
    main, conv = _sessions_by_conversation(run.truth, sessions)
    child = [sid for sid, c in conv.items() if c != "main"]
    assert len(child) == 1
    ref, recs, _ = sessions[child[0]]
    assert ref.parent_session_id == main
    # the child's prompt was written by the parent model, not typed: meta, never a prompt
    first = next(r for r in recs if r.native == "part/text" and r.role == "user")
    assert first.kind == "meta" and "SUBAGENT-A" in first.text
    assert not [r for r in recs if r.kind == "prompt"]
    # and the parent's task call result names the child session
    task = next(r for r in sessions[main][1] if r.kind == "tool_result" and r.tool_name == "task")
    assert child[0] in task.text


def test_continued_session_is_one_session_with_two_turns(opencode_corpus):
    run = opencode_corpus["continued"]
    disc, sessions = _read(run.data_dir, run.truth["cwd"])
    assert list(sessions) == run.truth["session_ids_from_client_events"]
    recs = sessions[run.session_id][1]
    assert max(r.turn for r in recs) == 2


def test_killed_mid_turn(opencode_corpus):
    run = opencode_corpus["killed"]
    assert run.truth["runs"][0]["killed"] and run.truth["runs"][0]["rc"] == -9
    disc, sessions = _read(run.data_dir, run.truth["cwd"])
    recs = sessions[run.session_id][1]
    last_msg = [r for r in recs if r.native == "message/assistant"][-1]
    assert "completed" not in last_msg.raw["time"]
    # the write before the kill is recorded and on disk
    fc = [f for r in recs for f in r.file_changes]
    assert [f.path.rsplit("/", 1)[1] for f in fc] == ["before-kill.txt"]


@pytest.mark.parametrize("name", ["shell_write", "subagent"])
def test_legacy_json_tree_from_older_client(opencode_legacy_corpus, name):
    run = opencode_legacy_corpus[name]
    assert not (run.data_dir / "opencode.db").exists()
    disc, sessions = _read(run.data_dir, run.truth["cwd"])
    assert all(r.extra["store"] == "legacy-json" for r in disc.sessions)
    check_scenario(run, sessions, legacy=True)


def test_compaction(opencode_corpus):
    """A real auto-compaction: the client's compaction message, summary and synthetic continuation
    are not prompts and open no turn; the summary is marked; every step's usage is counted."""
    run = opencode_corpus["compacted"]
    disc, sessions = _read(run.data_dir, run.truth["cwd"])
    recs = sessions[run.session_id][1]
    assert [r.kind for r in recs if r.native == "part/compaction"] == ["meta"]
    summary = [r for r in recs if r.native == "part/text/summary"]
    assert [r.text for r in summary] == [run.truth["summary_text"]] and summary[0].kind == "message"
    synthetic = [r for r in recs if r.native == "part/text" and r.role == "user" and r.kind != "prompt"]
    assert synthetic and all(r.kind == "meta" and r.raw.get("synthetic") for r in synthetic)
    assert {r.turn for r in recs} == {1}
    assert len([r for r in recs if r.tokens]) == 3  # the step, the summary, the continuation
