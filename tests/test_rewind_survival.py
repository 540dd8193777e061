"""Survival and turns on a REAL rewind (examples/captured/reply-before-prompt: Claude Code 2.1.258,
scenario robust_rewind_fork of tests/realclient/scenarios_robust.py, copied unchanged): P1 writes
a.txt; P2 writes b.txt and edits a.txt and is answered; Esc Esc rewinds to before P2 (code and
conversation); P3 is typed on the restored branch. The client flushed P1's first reply two lines
before P1 itself. docs/claims.md REC-033 (the live branch is the leaf's chain), TURN-022 (an
answered prompt rewound past is no draft), MISC-006 (non-conversation records inherit)."""
from __future__ import annotations

import json
from pathlib import Path

from sessionsift.providers.claude.discover import Lane
from sessionsift.providers.claude.model.lane import LaneIndex

DIR = (Path(__file__).resolve().parents[1] / "examples" / "captured" / "reply-before-prompt" / "projects"
       / "-var-tmp-lead-rr-robust-rc0-robust-rewind-fork-work")
PARENT = DIR / "43d862be-7c57-5677-87e1-3657469384d9.jsonl"


def _raw() -> list[dict]:
    return [json.loads(x) for x in PARENT.read_text().splitlines()]


def _prompt_line(raw: list[dict], tag: str) -> int:
    (n,) = [i for i, o in enumerate(raw, 1) if o.get("type") == "user" and isinstance(o["message"]["content"], str)
            and o["message"]["content"].startswith(tag)]
    return n


def test_the_rewound_branch_is_abandoned_and_the_restored_one_live():
    raw = _raw()
    idx = LaneIndex.build(Lane(PARENT, PARENT.stem, "main", "main"))
    p1, p2, p3 = (_prompt_line(raw, f"[robust_rewind_fork P{k}]") for k in (1, 2, 3))
    assert (p1, p2, p3) == (6, 15, 27)
    # P2's branch: every uuid-bearing record from P2 up to P3's prompt, which forks from P1's end
    branch = [i for i in range(p2, p3) if raw[i - 1].get("uuid")]
    assert raw[p3 - 1]["parentUuid"] == raw[p2 - 1]["parentUuid"]  # P3 is P2's sibling: the rewind
    surv = {i: idx.entry_at_line(i).survival for i in range(1, len(raw) + 1)}
    assert {i for i, s in surv.items() if s == "abandoned"} == set(branch)
    assert {i for i, s in surv.items() if s == "live"} == {i for i, o in enumerate(raw, 1) if o.get("uuid")} - set(branch)
    assert {surv[i] for i, o in enumerate(raw, 1) if not o.get("uuid")} == {None}
    # P2 was answered before the rewind: it stays the operator's prompt, not a draft
    assert idx.entry_at_line(p2).labels[0] == "user.message"
    assert not any("user.unsent" in e.labels for e in idx.entries)


def test_turns_count_the_prompts_of_the_live_branch_and_the_early_reply_is_p1s():
    raw = _raw()
    idx = LaneIndex.build(Lane(PARENT, PARENT.stem, "main", "main"))
    assert idx.turns == 2
    assert [idx.entries[s].no for s in idx.opener_slots()] == [6, 27]
    # the reply the client flushed before P1 (line 4, parent P1's last attachment) is P1's turn
    assert raw[3]["type"] == "assistant" and idx.entry_at_line(4).turn == 1
    assert [idx.entry_at_line(i).turn for i in (6, 13, 15, 25, 27, 35)] == [1, 1, 1, 1, 2, 2]
    t2 = idx.turn_entries(2)
    assert t2[0].no == 27 and {e.no for e in t2} == set(range(27, len(raw) + 1))


def test_each_result_names_the_call_it_answers_and_each_reply_its_usage():
    raw = _raw()
    idx = LaneIndex.build(Lane(PARENT, PARENT.stem, "main", "main"))
    calls = {i: e.tool_use_ids for i in range(1, len(raw) + 1) if (e := idx.entry_at_line(i)).tool_use_ids}
    results = {i: e.tool_result_ids for i in range(1, len(raw) + 1) if (e := idx.entry_at_line(i)).tool_result_ids}
    want_calls = {i: tuple(b["id"] for b in o["message"]["content"] if b.get("type") == "tool_use")
                  for i, o in enumerate(raw, 1) if o.get("type") == "assistant"
                  and any(b.get("type") == "tool_use" for b in o["message"]["content"])}
    want_results = {i: tuple(b["tool_use_id"] for b in o["message"]["content"] if b.get("type") == "tool_result")
                    for i, o in enumerate(raw, 1) if o.get("type") == "user" and isinstance(o["message"]["content"], list)
                    and any(b.get("type") == "tool_result" for b in o["message"]["content"])}
    assert (calls, results) == (want_calls, want_results) and len(calls) == len(results) == 4
    assert sorted(x for v in results.values() for x in v) == sorted(x for v in calls.values() for x in v)
    for i, o in enumerate(raw, 1):
        if o.get("type") == "assistant":
            u = o["message"]["usage"]
            assert idx.entry_at_line(i).usage == (u["input_tokens"], u["output_tokens"], u["cache_read_input_tokens"],
                                                  u["cache_creation_input_tokens"]), i
