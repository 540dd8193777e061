"""The Codex CLI reader on rollouts written by the real client (tests/realclient/codex).

Every test runs twice: on the committed corpus ``examples/codex-home`` (``examples``) and on a
fresh run of the pinned client made by this test session (``live``; skipped naming the missing
prerequisite, failing under CI=true). Expectations come from each scenario's ground truth, which
the script that drove the client wrote (prompts typed, calls scripted with the exit code and file
changes they must produce, usage the mock reported per response id) -- never from the reader.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionsift.providers.base import ReadReport, Root
from sessionsift.providers.codex import Codex

CX = Codex()


@pytest.fixture(params=["examples", "live"], scope="module")
def corpus(request):
    return request.getfixturevalue("codex_examples" if request.param == "examples" else "codex_corpus")


def discover(home: Path):
    return CX.discover(Root(home, "test"))


def refs_of(run):
    d = discover(run.codex_home)
    by_path = {str(r.paths[0]): r for r in d.sessions}
    return [by_path[str(p)] for p in run.rollouts]


def read(ref, raw=False):
    rep = ReadReport()
    recs = list(CX.read(ref, rep, raw=raw))
    return recs, rep


def main_ref(run):
    """The scenario's root thread (the one the prompts went to)."""
    tid = run.ground_truth["thread_ids_reported"][0]
    return next(r for r in refs_of(run) if r.session_id == tid)


def originals(recs, kind):
    return [r for r in recs if r.kind == kind and r.copy_of is None]


# ---------------------------------------------------------------------------------------- discovery

def test_discovery_finds_every_rollout_with_its_facts(corpus):
    homes = {run.codex_home for run in corpus}
    found = {}
    for h in homes:
        d = discover(h)
        assert d.coverage.state == "ok" and d.coverage.sessions == len(d.sessions)
        assert d.problems == []
        found.update({str(r.paths[0]): r for r in d.sessions})
    expected = [p for run in corpus for p in run.rollouts]
    assert sorted(found) == sorted(map(str, expected))
    for run in corpus:
        gt = run.ground_truth
        refs = refs_of(run)
        ids = {r.session_id for r in refs}
        assert ids == set(gt["thread_ids_reported"]) | set(gt["spawned_agent_ids"])
        for r in refs:
            assert r.provider == "codex" and r.project == gt["cwd"] and r.version == gt["client_version"]
            assert "cwd" in r.project_source and r.size == r.paths[0].stat().st_size
            assert r.first_at <= r.last_at
        main = main_ref(run)
        assert main.parent_session_id is None
        assert main.title == gt["prompts"][0]["text"]  # the side store's title: the first prompt
        assert main.extra["archived"] is bool(gt["archived"])


def test_subagent_thread_is_linked_to_its_parent(corpus):
    run = corpus["subagent"]
    parent = main_ref(run)
    child = next(r for r in refs_of(run) if r.session_id in run.ground_truth["spawned_agent_ids"])
    assert child.parent_session_id == parent.session_id
    assert child.extra.get("agent_nickname")


def test_archived_and_killed_side_facts(corpus):
    archived = main_ref(corpus["failing_command"])
    assert archived.extra["archived"] is True and "archived_sessions" in str(archived.paths[0])
    assert archived.extra.get("archived_in_side_store") is True
    killed = main_ref(corpus["killed"])
    assert killed.extra["turn_statuses"] == {"inProgress": 1}  # the killed turn never completed
    assert main_ref(corpus["resumed"]).extra["turn_statuses"] == {"completed": 2}


def test_compressed_rollouts_in_the_committed_corpus(codex_examples):
    comp = main_ref(codex_examples["compaction"])
    assert comp.extra["compressed"] is True and str(comp.paths[0]).endswith(".jsonl.zst")
    killed = main_ref(codex_examples["killed"])
    assert killed.extra["compressed"] is False and killed.extra["shadowed"].endswith(".jsonl.zst")


# ---------------------------------------------------------------------------------------- transcript

@pytest.mark.parametrize("scenario", ["shell_and_patch", "resumed", "failing_command", "subagent", "killed",
                                      "compaction"])
def test_prompts_calls_exit_codes_and_file_changes_match_the_script(corpus, scenario):
    run = corpus[scenario]
    gt = run.ground_truth
    recs, rep = read(main_ref(run))
    assert rep.problems == [] and rep.malformed_lines == [] and sum(rep.unknown_kinds.values()) == 0
    assert [r.text for r in originals(recs, "prompt")] == [p["text"] for p in gt["prompts"]]
    assert [r.turn for r in originals(recs, "prompt")] == list(range(1, len(gt["prompts"]) + 1))
    calls = originals(recs, "tool_call")
    mine = [c for c in gt["calls"] if c["conversation"].startswith("P") and c["delivered"]]
    assert [(c.call_id, c.tool_name) for c in calls] == [(c["call_id"], c["name"]) for c in mine]
    for rec, want in zip(calls, mine):
        if want["type"] in ("function_call", "tool_search_call"):
            assert rec.tool_input == want["arguments"]
            if want["name"] == "exec_command":
                assert rec.exit_code == want["expect_exit"]
                assert rec.is_error is (want["expect_exit"] != 0)
        else:
            assert rec.tool_input == want["input"]
            got = [(f.path, f.action) for f in rec.file_changes]
            assert got == [(c["path"], c["action"]) for c in want["expect_changes"]]
            for f, c in zip(rec.file_changes, want["expect_changes"]):
                if c["action"] == "create":
                    assert f.new_content == c["content"]
                else:  # the recorded diff adds exactly the lines the script added, removes the ones it removed
                    diff = f.diff.splitlines()
                    added = [ln[1:] for ln in diff if ln.startswith("+")]
                    removed = [ln[1:] for ln in diff if ln.startswith("-")]
                    before, after = c["before"].splitlines(), c["content"].splitlines()
                    assert sorted(added) == sorted(set(after) - set(before))
                    assert sorted(removed) == sorted(set(before) - set(after))
            if want["expect_rejected"]:
                assert rec.file_changes == () and rec.is_error is True
            else:
                assert rec.is_error is False
    results = originals(recs, "tool_result")
    assert [r.call_id for r in results] == [c["call_id"] for c in mine]
    for path, want in gt["expected_files"].items():
        assert gt["disk_files"][path] == want  # the script's expectation held on disk


def test_subagent_task_is_a_message_not_a_prompt_and_its_calls_are_its_own(corpus):
    run = corpus["subagent"]
    child = next(r for r in refs_of(run) if r.session_id in run.ground_truth["spawned_agent_ids"])
    recs, rep = read(child)
    assert originals(recs, "prompt") == []
    task = [r for r in originals(recs, "message") if r.role == "user"]
    assert len(task) == 1 and "SUBAGENT-A" in task[0].text
    want = [c for c in run.ground_truth["calls"] if c["conversation"] == "agent-a"]
    calls = originals(recs, "tool_call")
    assert [(c.call_id, c.tool_name) for c in calls] == [(c["call_id"], c["name"]) for c in want]
    assert calls[0].exit_code == 0
    assert [(f.path, f.action, f.new_content) for f in calls[1].file_changes] == [
        (c["path"], c["action"], c["content"]) for c in want[1]["expect_changes"]]
    parent_calls = originals(read(main_ref(run))[0], "tool_call")
    assert [c.tool_name for c in parent_calls] == ["tool_search", "spawn_agent", "wait_agent"]
    assert json.loads(next(r for r in read(main_ref(run))[0] if r.kind == "tool_result"
                           and r.call_id == parent_calls[1].call_id).text)["agent_id"] == child.session_id


def test_injected_context_is_meta_never_a_prompt(corpus):
    recs, _ = read(main_ref(corpus["shell_and_patch"]))
    users = [r for r in recs if r.role == "user" and r.copy_of is None]
    meta = [r for r in users if r.kind == "meta"]
    assert any(r.text.startswith("# AGENTS.md instructions") for r in meta)  # AGENTS.md + environment_context
    assert any("<environment_context>" in r.text for r in meta)
    assert all(r.kind == "meta" for r in recs if r.role == "system")
    sub = read(main_ref(corpus["subagent"]))[0]
    notes = [r for r in sub if r.text and r.text.startswith("<subagent_notification>")]
    assert notes and all(r.kind == "meta" for r in notes)


# ---------------------------------------------------------------------------------------- counted once

@pytest.mark.parametrize("scenario", ["shell_and_patch", "resumed", "failing_command", "subagent", "killed",
                                      "compaction"])
def test_every_ui_echo_is_a_copy_of_a_real_record(corpus, scenario):
    for ref in refs_of(corpus[scenario]):
        recs, rep = read(ref)
        by_loc = {r.locator: r for r in recs}
        assert len(by_loc) == len(recs)  # locators are unique
        copies = [r for r in recs if r.copy_of is not None]
        assert rep.duplicates == len(copies) and rep.records == len(recs)
        for c in copies:
            orig = by_loc[c.copy_of]
            assert orig.copy_of is None
            assert orig.kind == c.kind or orig.native == "compacted"
        # every event_msg that repeats history is a copy: UserMessage/AgentMessage/Reasoning/CommandExecution/...
        for r in recs:
            if r.native.startswith("event_msg/item_completed/") and not r.native.endswith(("ContextCompaction",)):
                assert r.copy_of is not None, r
        # one original per model-facing item
        texts = [(r.kind, r.text) for r in recs if r.copy_of is None and r.kind in ("prompt", "message", "reasoning")]
        assert len(texts) == len(set(texts))


def test_compaction_replacement_history_is_copies(corpus):
    recs, rep = read(main_ref(corpus["compaction"]))
    comp = [r for r in recs if r.native == "compacted"]
    assert len(comp) == 1 and comp[0].kind == "meta" and "summary" in comp[0].text
    repl = [r for r in recs if r.native.startswith("compacted/replacement_history/")]
    assert repl and all(r.copy_of is not None for r in repl)
    assert [r.locator for r in repl] == [f"{comp[0].locator}#{i}" for i in range(1, len(repl) + 1)]
    prompt_copies = [r for r in repl if r.kind == "prompt"]
    assert [r.text for r in prompt_copies] == [corpus["compaction"].ground_truth["prompts"][0]["text"]]
    summary = [r for r in recs if r.native == "response_item/message" and r.role == "assistant" and r.kind == "meta"]
    assert len(summary) == 1  # the compaction request's answer is bookkeeping, not a reply


# ---------------------------------------------------------------------------------------- tokens

@pytest.mark.parametrize("scenario", ["shell_and_patch", "resumed", "failing_command", "subagent", "killed",
                                      "compaction"])
def test_tokens_per_response_equal_what_the_mock_reported(corpus, scenario):
    run = corpus[scenario]
    gt = run.ground_truth
    per_key = {}
    for ref in refs_of(run):
        recs, _ = read(ref)
        for r in recs:
            if r.tokens is not None and not r.tokens.cumulative:
                # the usage record and the response's assistant message repeat one Tokens under one key
                assert per_key.setdefault(r.tokens.dedup_key, r.tokens) == r.tokens
                assert r.native in ("token_usage_record", "response_item/message") and r.copy_of is None
        for r in recs:
            if r.role == "assistant" and r.native == "response_item/message":
                assert r.tokens is not None, r  # every delivered answer had its response's usage recorded
    want = {f"codex:response:{x['response_id']}": x["usage"] for x in gt["responses"]}
    assert set(per_key) == set(want)
    for k, u in want.items():
        t = per_key[k]
        cached = u["input_tokens_details"]["cached_tokens"]
        assert (t.input, t.cache_read, t.output, t.reasoning, t.total) == (
            u["input_tokens"] - cached, cached, u["output_tokens"], u["output_tokens_details"]["reasoning_tokens"],
            u["total_tokens"])


@pytest.mark.parametrize("scenario", ["shell_and_patch", "resumed", "compaction"])
def test_cumulative_total_is_the_sum_and_never_a_per_response_figure(corpus, scenario):
    run = corpus[scenario]
    recs, _ = read(main_ref(run))
    cum = [r.tokens for r in recs if r.tokens is not None and r.tokens.cumulative]
    assert cum and all(t.dedup_key is None for t in cum)
    last = cum[-1]
    us = [x["usage"] for x in run.ground_truth["responses"]]
    assert last.total == sum(u["total_tokens"] for u in us)
    assert last.cache_read == sum(u["input_tokens_details"]["cached_tokens"] for u in us)
    assert last.input == sum(u["input_tokens"] - u["input_tokens_details"]["cached_tokens"] for u in us)
    assert all(r.model == run.ground_truth["model"] for r in recs if r.tokens is not None)


# ---------------------------------------------------------------------------------------- the killed session

def test_killed_session_reads_to_its_last_complete_line(corpus):
    run = corpus["killed"]
    recs, rep = read(main_ref(run))
    assert rep.torn_tail_bytes == 0 and rep.problems == []
    assert not any(r.native == "event_msg/task_complete" for r in recs)
    (call,) = originals(recs, "tool_call")
    assert call.exit_code == 0 and originals(recs, "tool_result")[0].call_id == call.call_id
    assert originals(recs, "message") == []  # the held answer was never delivered
