"""The opencode reader on data written by the REAL opencode client (1.18.33, offline; and the older
1.1.65, which writes the legacy JSON tree): every scenario's prompts, tool calls, exit codes, file
changes and tokens equal the ground truth of the script that drove the client."""
from __future__ import annotations

import hashlib

import pytest

from sessionsift.providers import ReadReport, get

pytestmark = pytest.mark.realclient


def _read(data_dir, want_ok=True):
    p = get("opencode")
    disc = p.discover(p.locate(explicit=str(data_dir)))
    if want_ok:
        assert disc.coverage.state == "ok", disc.coverage
        assert disc.coverage.sessions == len(disc.sessions)
    out = {}
    for ref in disc.sessions:
        rep = ReadReport()
        out[ref.session_id] = (ref, list(p.read(ref, rep, raw=True)), rep)
    return disc, out


def _expected_tokens(usage: dict) -> tuple:
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    rea = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens", 0)
    return (usage["prompt_tokens"] - cached, usage["completion_tokens"], cached, 0, rea,
            usage["prompt_tokens"] + usage["completion_tokens"])


def _tok(t) -> tuple:
    return (t.input, t.output, t.cache_read, t.cache_write, t.reasoning, t.total)


def _sessions_by_conversation(truth, sessions):
    """main session -> P1.., each child session -> its SUBAGENT marker (from its first user text)."""
    main = truth["session_ids_from_client_events"][0]
    conv = {}
    for sid, (ref, recs, _) in sessions.items():
        if sid == main:
            conv[sid] = "main"
            continue
        first = next(r.text for r in recs if r.role == "user" and r.native == "part/text")
        conv[sid] = next(m for m in truth["subagent_markers"] if m in first)
    return main, conv


def check_scenario(run, sessions, legacy=False):
    truth = run.truth
    main, conv = _sessions_by_conversation(truth, sessions)
    assert set(conv.values()) == {"main", *truth["subagent_markers"]}
    ref, recs, rep = sessions[main]
    assert rep.problems == [] and rep.omissions()["malformed_lines"] == 0
    assert ref.project == truth["cwd"] and ref.version == truth["client_version"]
    # prompts: exactly what was typed, in order, as the client stored it (quoted; see quirks)
    prompts = [r.text for r in recs if r.kind == "prompt"]
    typed = [f'"{p["text"]}"' for p in truth["prompts"]]
    assert [t.rstrip("\n") for t in prompts] == typed, truth["quirks"]
    assert [r.turn for r in recs if r.kind == "prompt"] == list(range(1, len(typed) + 1))
    # tool calls: ids, names, inputs; results: exit codes
    calls = {}
    results = {}
    for sid, (_, rs, _) in sessions.items():
        for r in rs:
            if r.kind == "tool_call":
                calls[r.call_id] = (r.tool_name, r.tool_input, conv[sid])
            elif r.kind == "tool_result":
                results[r.call_id] = r
    want = {c["id"]: (c["name"], c["input"], "main" if c["conversation"].startswith("P") else c["conversation"])
            for c in truth["tool_calls"]}
    if truth["killed"]:  # the stalled step never got to its tool calls
        assert set(want) <= set(calls)
    assert {k: v for k, v in calls.items() if k in want} == want
    assert set(calls) == set(want)
    for c in truth["tool_calls"]:
        res = results[c["id"]]
        if c["name"] == "bash":
            assert res.exit_code == c["expect_exit"], (c, res.text)
        assert res.is_error is False
    # file changes: replaying every recorded change gives the files the script implies
    files: dict[str, str] = {}
    for sid in sorted(sessions, key=lambda s: s != main):
        for r in sessions[sid][1]:
            for fc in r.file_changes:
                rel = fc.path[len(truth["cwd"]) + 1:]
                if fc.new_content is not None:
                    files[rel] = fc.new_content
                else:  # an edit: the diff is all 1.18 records; apply the scripted edit to check it
                    assert fc.action == "update" and fc.diff and "+second line" in fc.diff
                    files[rel] = files[rel].replace("first line\n", "first line\nsecond line\n", 1)
    for rel, content in files.items():
        exp = truth["expected_files"][rel]
        assert content == exp["content"]
        assert hashlib.sha256(content.encode()).hexdigest() == truth["disk_files"][rel]["sha256"]
    changed = {c["input"]["filePath"][len(truth["cwd"]) + 1:] for c in truth["tool_calls"]
               if c["name"] in ("write", "edit")}
    assert set(files) == changed
    # tokens: one usage per served step, in order, per conversation, equal to what the mock sent
    for sid, (_, rs, _) in sessions.items():
        steps = [s for s in truth["served_steps"]
                 if (s["conversation"].startswith("P") if conv[sid] == "main" else s["conversation"] == conv[sid])]
        toks = [r.tokens for r in rs if r.tokens is not None]
        assert len({t.dedup_key for t in toks}) == len(toks)
        if truth["killed"] and conv[sid] == "main":
            assert len(toks) == len(steps) - 1  # the step killed mid-stream recorded no usage
            last = [r for r in rs if r.native == "message/assistant"][-1]
            assert last.tokens is None and "finish" not in last.raw
            steps = steps[:-1]
        assert [_tok(t) for t in toks] == [_expected_tokens(s["usage"]) for s in steps]
    return main, conv


@pytest.mark.parametrize("name", ["shell_write", "continued", "failing", "subagent", "killed"])
def test_scenario_matches_ground_truth(opencode_corpus, name):
    run = opencode_corpus[name]
    disc, sessions = _read(run.data_dir)
    main, conv = check_scenario(run, sessions)
    assert all(r.extra["store"] == "sqlite" for r in disc.sessions)


def test_subagent_is_linked_to_its_parent(opencode_corpus):
    run = opencode_corpus["subagent"]
    disc, sessions = _read(run.data_dir)
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
    disc, sessions = _read(run.data_dir)
    assert list(sessions) == run.truth["session_ids_from_client_events"]
    recs = sessions[run.session_id][1]
    assert max(r.turn for r in recs) == 2


def test_killed_mid_turn(opencode_corpus):
    run = opencode_corpus["killed"]
    assert run.truth["runs"][0]["killed"] and run.truth["runs"][0]["rc"] == -9
    disc, sessions = _read(run.data_dir)
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
    disc, sessions = _read(run.data_dir)
    assert all(r.extra["store"] == "legacy-json" for r in disc.sessions)
    check_scenario(run, sessions, legacy=True)
