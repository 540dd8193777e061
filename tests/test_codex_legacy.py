"""The Codex CLI reader on rollouts of an OLDER release (0.50.0), written by the real client.

0.50.0 writes what many people's ~/.codex still holds: no ``token_usage_record`` (usage only in
``token_count``, whose running total restarts in each client process), no turn ids (one
``turn_context`` per model request), no ``item_completed`` (the UI layer is ``user_message``,
``agent_message``, ``agent_reasoning``), shell output as JSON with ``metadata.exit_code``, and no
record of applied file changes but the patch and the client's "Success." answer. Runs on the
committed corpus (examples/codex-legacy-home) and on a fresh run of 0.50.0 (skipped naming the
missing prerequisite; fails under CI=true). Expectations come from the ground truth.
"""
from __future__ import annotations

import json

import pytest

from sessionsift.cli import main
from sessionsift.providers.base import ReadReport, Root
from sessionsift.providers.codex import Codex

CX = Codex()


@pytest.fixture(params=["examples", "live"], scope="module")
def legacy(request):
    c = request.getfixturevalue("codex_legacy_examples" if request.param == "examples" else "codex_legacy_corpus")
    return c["legacy"]


def read_main(run):
    d = CX.discover(Root(run.codex_home, "test"))
    (ref,) = [r for r in d.sessions if r.session_id == run.ground_truth["thread_ids_reported"][0]]
    rep = ReadReport()
    return ref, d, list(CX.read(ref, rep)), rep


def orig(recs, kind):
    return [r for r in recs if r.kind == kind and r.copy_of is None]


def test_discovery_without_side_stores(legacy):
    ref, d, _, _ = read_main(legacy)
    gt = legacy.ground_truth
    assert (d.coverage.state, d.coverage.sessions) == ("ok", 1)
    assert ref.version == gt["client_version"] == "0.50.0" and ref.project == gt["cwd"] and ref.title is None
    assert "no state_*.sqlite" in ref.extra["side_store_notes"]


def test_prompts_open_turns_and_ui_events_are_copies(legacy):
    _, _, recs, rep = read_main(legacy)
    gt = legacy.ground_truth
    assert sum(rep.unknown_kinds.values()) == 0 and rep.problems == []
    prompts = orig(recs, "prompt")
    assert [p.text for p in prompts] == [p["text"] for p in gt["prompts"]] and [p.turn for p in prompts] == [1, 2]
    by_loc = {r.locator: r for r in recs}
    legacy_events = [r for r in recs if r.native in ("event_msg/user_message", "event_msg/agent_message",
                                                     "event_msg/agent_reasoning")]
    assert legacy_events and all(r.copy_of and by_loc[r.copy_of].kind == r.kind for r in legacy_events)
    assert rep.duplicates == len(legacy_events)
    assert max(r.turn or 0 for r in recs) == 2  # one turn_context per model request opens no turn


def test_calls_exit_codes_and_changes_from_the_applied_patch(legacy):
    _, _, recs, _ = read_main(legacy)
    gt = legacy.ground_truth
    calls = orig(recs, "tool_call")
    want = [c for c in gt["calls"] if c["delivered"]]
    assert [(c.call_id, c.tool_name) for c in calls] == [(c["call_id"], c["name"]) for c in want]
    for rec, w in zip(calls, want):
        if w["name"] == "shell":
            assert rec.tool_input == w["arguments"] and rec.exit_code == w["expect_exit"]
            assert rec.is_error is (w["expect_exit"] != 0)
            continue
        assert rec.tool_input == w["input"]
        if w["expect_rejected"]:
            assert rec.file_changes == () and rec.is_error is True
            continue
        assert [(f.path, f.action) for f in rec.file_changes] == [(c["path"], c["action"]) for c in w["expect_changes"]]
        for f, c in zip(rec.file_changes, w["expect_changes"]):
            if c["action"] == "create":
                assert f.new_content == c["content"]
            else:
                diff = f.diff.splitlines()
                before, after = c["before"].splitlines(), c["content"].splitlines()
                assert sorted(ln[1:] for ln in diff if ln.startswith("+")) == sorted(set(after) - set(before))
                assert sorted(ln[1:] for ln in diff if ln.startswith("-")) == sorted(set(before) - set(after))
    for path, w in gt["expected_files"].items():
        assert gt["disk_files"][path] == w


def test_usage_from_token_count_once_per_response_across_a_restarted_total(legacy):
    _, _, recs, _ = read_main(legacy)
    gt = legacy.ground_truth
    per = {}
    for r in recs:
        if r.tokens is not None and not r.tokens.cumulative:
            assert per.setdefault(r.tokens.dedup_key, r.tokens) == r.tokens
    got = sorted((t.input, t.cache_read, t.output, t.reasoning, t.total) for t in per.values())
    want = sorted((u["input_tokens"] - u["input_tokens_details"]["cached_tokens"],
                   u["input_tokens_details"]["cached_tokens"], u["output_tokens"],
                   u["output_tokens_details"]["reasoning_tokens"], u["total_tokens"])
                  for u in (x["usage"] for x in gt["responses"]))
    assert got == want
    answers = [r for r in orig(recs, "message") if r.role == "assistant"]
    assert answers and all(a.tokens is not None for a in answers)  # each answer carries its response's usage
    cum = [r.tokens.total for r in recs if r.tokens is not None and r.tokens.cumulative]
    assert any(b < a for a, b in zip(cum, cum[1:]))  # the resumed process started its total again


def test_usage_command_counts_each_response_once_and_agrees_with_the_restarted_totals(codex_legacy_examples):
    import io
    from contextlib import redirect_stdout

    run = codex_legacy_examples["legacy"]
    buf = io.StringIO()
    with redirect_stdout(buf):
        try:
            main(["usage", "session", "--codex-home", str(run.codex_home), "--provider", "codex", "--format", "json"])
        except SystemExit:
            pass
    s = json.loads(buf.getvalue().splitlines()[-1])
    us = [x["usage"] for x in run.ground_truth["responses"]]
    assert s["total_tokens"] == sum(u["total_tokens"] for u in us) and s["messages"] == len(us)
    assert s["messages_without_usage"] == 0 and s["notes"] == []
