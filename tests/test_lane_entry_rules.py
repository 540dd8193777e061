"""What a lane index keeps of each record (providers/claude/model/lane.py `entry_from`, LaneIndex
access), on REAL transcripts (examples/claude-home, Claude Code 2.1.258) read field by field
against the raw JSON here; the few values no real record holds (a usage figure that is not an
integer, a uuid that is not a string) are set on a copy of a real record, said beside each."""
from __future__ import annotations

import copy
import json
from pathlib import Path

from sessionsift.providers.claude.discover import Lane
from sessionsift.providers.claude.model.lane import LaneIndex, entry_from

CH = Path(__file__).resolve().parents[1] / "examples" / "claude-home" / "projects"
FB = CH / "-tmp-ssift-rc-files-basic-work" / "8414eb07-cca2-5cca-9059-e9baedac31e1.jsonl"
INTER = CH / "-tmp-ssift-rc-interactive-work" / "dd7270d6-d04e-5744-ab2f-2e9ad4fab464.jsonl"


def _raw(p: Path) -> list[dict]:
    return [json.loads(x) for x in p.read_text().splitlines()]


def test_every_assistant_records_usage_tools_and_ids_are_kept_as_written():
    raw = _raw(FB)
    idx = LaneIndex.build(Lane(FB, FB.stem, "main", "main"))
    n = 0
    for no, r in enumerate(raw, 1):
        e = idx.entry_at_line(no)
        assert e is not None and e.no == no
        assert (e.type, e.uuid, e.parent) == (r.get("type"), r.get("uuid"), r.get("parentUuid"))
        if r.get("type") != "assistant":
            continue
        n += 1
        m = r["message"]
        u = m["usage"]
        assert e.usage == (u["input_tokens"], u["output_tokens"], u["cache_read_input_tokens"],
                           u["cache_creation_input_tokens"])
        tus = [b for b in m["content"] if b.get("type") == "tool_use"]
        assert e.tool_names == tuple(b["name"] for b in tus) and e.tool_use_ids == tuple(b["id"] for b in tus)
        assert (e.msg_id, e.model, e.stop_reason) == (m["id"], m["model"], m["stop_reason"])
    assert n >= 5
    assert idx.entry_at_line(len(raw) + 1) is None and idx.entry_at_line(0) is None
    names = {x for e in idx.entries for x in e.tool_names}
    assert names >= {"Write", "Read", "Edit", "Bash"}


def test_a_compaction_summary_is_marked_and_odd_values_are_unknown_not_kept():
    raw = _raw(INTER)
    summ = [r for r in raw if r.get("isCompactSummary") is True]
    assert summ  # the real client's compaction in the interactive scenario
    e = entry_from(summ[0], 1, 0, 10)
    assert e.is_compact_summary is True
    assert entry_from({**summ[0], "isCompactSummary": False}, 1, 0, 10).is_compact_summary is False
    asst = copy.deepcopy(next(r for r in _raw(FB) if r.get("type") == "assistant"))
    # a copy of a real assistant record: a usage figure as a float and a string, a uuid as a number
    asst["message"]["usage"].update(input_tokens=12.0, output_tokens="7")
    asst["uuid"] = 42
    e = entry_from(asst, 3, 0, 10)
    assert e.usage[:2] == (None, None) and e.usage[2:] == (0, 0)
    assert e.uuid is None
    # a stop reason that is not a string (null, as a record of a response still streaming may hold;
    # absent) is unknown -- every sampled 2.1.258 assistant record holds a string (mutation testing:
    # reading it unchecked passed)
    asst["message"]["stop_reason"] = None
    assert entry_from(asst, 3, 0, 10).stop_reason is None
    del asst["message"]["stop_reason"]
    assert entry_from(asst, 3, 0, 10).stop_reason is None
    # the real compaction boundary's logicalParentUuid, and on a copy the same as a number: unknown
    cb = next(r for r in raw if r.get("subtype") == "compact_boundary")
    assert entry_from(cb, 1, 0, 10).logical_parent == cb["logicalParentUuid"]
    assert entry_from({**cb, "logicalParentUuid": 42}, 1, 0, 10).logical_parent is None


def _lane(tmp_path: Path, recs: list[dict]) -> LaneIndex:
    p = tmp_path / "11111111-1111-4111-8111-111111111111.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return LaneIndex.build(Lane(p, p.stem, "main", "main"))


def test_every_unanswered_abandoned_sibling_prompt_is_a_draft_and_an_answered_one_is_not(tmp_path):
    # hand-made in files_basic's record shapes: the TUI's prompt edits that leave several unsent
    # siblings are not reproducible offline (examples/captured holds one rewound, answered prompt)
    fb = _raw(FB)
    user = next(r for r in fb if r.get("type") == "user" and isinstance(r["message"]["content"], str))
    asst = next(r for r in fb if r.get("type") == "assistant")
    n = [0]

    def rec(base, uuid, parent, text=None):
        n[0] += 1
        r = copy.deepcopy(base)
        r.update(uuid=uuid, parentUuid=parent, timestamp=f"2026-11-30T04:25:{n[0]:02d}.000Z")
        if text is not None:
            r["message"]["content"] = text
        return r

    recs = [rec(user, "p0", None, "hello"), rec(asst, "a0", "p0"),
            rec(user, "d1", "a0", "first draft"), rec(user, "d2", "a0", "second draft"),
            rec(user, "r1", "a0", "rewound but answered"), rec(asst, "a1", "r1"),
            rec(user, "p1", "a0", "the prompt kept"), rec(asst, "a2", "p1")]
    idx = _lane(tmp_path, recs)
    got = {e.uuid: (e.survival, "user.unsent" in e.labels) for e in idx.entries}
    assert got == {"p0": ("live", False), "a0": ("live", False), "d1": ("abandoned", True),
                   "d2": ("abandoned", True), "r1": ("abandoned", False), "a1": ("abandoned", False),
                   "p1": ("live", False), "a2": ("live", False)}


def test_each_records_instant_is_its_own_or_its_snapshots_and_none_when_it_has_neither():
    # the captured real rewind (2.1.258): file-history-snapshot lines carry their instant inside
    # `snapshot`, mode/cost-state/last-prompt lines none (REC-005)
    cap = next((CH.parents[1] / "captured" / "reply-before-prompt" / "projects").glob("*/43d862be-*.jsonl"))
    for p in (FB, cap):
        idx = LaneIndex.build(Lane(p, p.stem, "main", "main"))
        raw = _raw(p)
        want = [r.get("timestamp") if isinstance(r.get("timestamp"), str)
                else (r.get("snapshot") or {}).get("timestamp") for r in raw]
        assert [idx.entry_at_line(no).timestamp for no in range(1, len(raw) + 1)] == want
        if p == cap:
            assert sum(1 for r in raw if r.get("type") == "file-history-snapshot") == 3
            assert want.count(None) >= 5


def test_a_records_turn_is_the_count_of_typed_prompts_up_to_it():
    # files_basic's three prompts (print mode, --resume, --continue): each record with a uuid is in
    # the turn of the last typed prompt at or before it; turn_entries gives each turn's records
    raw = _raw(FB)
    idx = LaneIndex.build(Lane(FB, FB.stem, "main", "main"))
    k, want = 0, {}
    for no, r in enumerate(raw, 1):
        if r.get("type") == "user" and isinstance(r["message"]["content"], str) and not r.get("isMeta"):
            k += 1
        if "uuid" in r:
            want[no] = k
    assert k == 3 == idx.turns
    assert {no: idx.entry_at_line(no).turn for no in want} == want
    for t in (1, 2, 3):
        assert [e.no for e in idx.turn_entries(t)] == [e.no for e in idx.entries if e.turn == t]
        assert {no for no, v in want.items() if v == t} <= {e.no for e in idx.turn_entries(t)}
    assert idx.turn_entries(None) == [] and idx.turn_entries(0) == [] and idx.turn_entries(4) == []


def test_records_before_the_first_prompt_are_in_no_turn_and_a_negative_turn_names_none():
    # interactive's first records (before its first typed prompt) are in no turn: turn_entries(None)
    # gives exactly them, and a negative turn number names no record (not the no-turn ones); the
    # index says how many bytes it was built from (the file's whole size: nothing torn)
    raw = _raw(INTER)
    idx = LaneIndex.build(Lane(INTER, INTER.stem, "main", "main"))
    first = next(no for no, r in enumerate(raw, 1)
                 if r.get("type") == "user" and isinstance(r["message"]["content"], str) and not r.get("isMeta"))
    assert [e.no for e in idx.turn_entries(None)] == list(range(1, first)) and first > 1
    assert (idx.turn_entries(-1), idx.turn_entries(-2)) == ([], [])
    assert idx.size == INTER.stat().st_size


def _shapes():
    """files_basic's prompt, assistant and attachment records, as rec(kind, uuid, parent, text)."""
    fb = _raw(FB)
    base = {"user": next(r for r in fb if r.get("type") == "user" and isinstance(r["message"]["content"], str)),
            "assistant": next(r for r in fb if r.get("type") == "assistant"),
            "attachment": next(r for r in fb if r.get("type") == "attachment")}
    n = [0]

    def rec(kind, uuid, parent, text=None):
        n[0] += 1
        r = copy.deepcopy(base[kind])
        r.update(uuid=uuid, parentUuid=parent, timestamp=f"2026-11-30T04:26:{n[0]:02d}.000Z")
        if text is not None:
            r["message"]["content"] = text
        return r

    return rec


def test_an_off_chain_record_whose_parent_comes_later_inherits_through_it_to_the_first_line(tmp_path):
    # HAND-MADE order (files_basic's shapes): the only forward parent reference in the samples is
    # the captured reply-before-prompt assistant record, a conversation child; here an attachment
    # on line 2 names the attachment of line 3 as its parent, which hangs off the prompt on line 1
    # (slot 0). Both inherit the prompt's survival (mutation testing: the walk past a resolved
    # record, a parent at slot 0 read as none, and the empty-parent test inverted each made them
    # abandoned, and passed)
    rec = _shapes()
    idx = _lane(tmp_path, [rec("user", "p0", None, "hello"), rec("attachment", "x", "y"),
                           rec("attachment", "y", "p0"), rec("assistant", "a0", "p0")])
    assert {e.uuid: e.survival for e in idx.entries} == {"p0": "live", "x": "live", "y": "live", "a0": "live"}


def test_a_record_joins_its_parents_turn_even_after_the_next_prompt(tmp_path):
    # HAND-MADE (files_basic's shapes): attachments written after a later prompt, hanging off an
    # earlier turn's records -- one off turn 1's reply (memoised when that reply was numbered), one
    # off a record whose parent is in no file (its turn by file order: 3); each joins its parent's
    # turn, not the turn of the prompt above it in the file (mutation testing: a memo hit taken as
    # unresolved, and a memo sentinel equal to turn 3, passed)
    rec = _shapes()
    recs = [rec("user", "p1", None, "one"), rec("assistant", "a1", "p1"),
            rec("user", "p2", "a1", "two"), rec("assistant", "a2", "p2"),
            rec("attachment", "z", "a1"), rec("attachment", "z2", "z"),
            rec("user", "p3", "a2", "three"), rec("assistant", "a3", "p3"), rec("attachment", "j", "not-in-this-file"),
            rec("user", "p4", "a3", "four"), rec("attachment", "i", "j"), rec("assistant", "a4", "p4")]
    idx = _lane(tmp_path, recs)
    got = {e.uuid: e.turn for e in idx.entries}
    assert got == {"p1": 1, "a1": 1, "p2": 2, "a2": 2, "z": 1, "z2": 1, "p3": 3, "a3": 3, "j": 3, "p4": 4, "i": 3,
                   "a4": 4}


def test_an_empty_parent_uuid_is_no_parent_even_where_a_record_has_the_empty_uuid(tmp_path):
    # HAND-MADE: no client writes an empty uuid; a record with parentUuid "" has no parent (it is a
    # root, before the first turn: turn None) even when a record holds uuid "" (mutation testing:
    # the look-up of the empty uuid made it join that record's turn, and passed)
    rec = _shapes()
    recs = [rec("user", "p1", None, "one"), rec("assistant", "a1", "p1"), rec("user", "p2", "a1", "two"),
            rec("attachment", "", "p2"), rec("assistant", "a2", "p2"), rec("user", "p3", "a2", "three"),
            rec("attachment", "c", ""), rec("assistant", "a3", "p3")]
    idx = _lane(tmp_path, recs)
    assert [(e.uuid, e.turn) for e in idx.entries] == [("p1", 1), ("a1", 1), ("p2", 2), ("", 2), ("a2", 2),
                                                       ("p3", 3), ("c", None), ("a3", 3)]


def test_an_answered_first_line_prompt_is_no_draft(tmp_path):
    # HAND-MADE: the file's first line (slot 0) a prompt whose parent is in no file (a transcript
    # continuing another), answered, then rewound to a sibling prompt: it is abandoned, not a draft
    # (mutation testing: the walk up from its answer stopping before slot 0 made it user.unsent)
    rec = _shapes()
    recs = [rec("user", "d0", "gone", "first"), rec("assistant", "a0", "d0"),
            rec("user", "d1", "gone", "again"), rec("assistant", "a1", "d1")]
    idx = _lane(tmp_path, recs)
    got = {e.uuid: (e.survival, "user.unsent" in e.labels) for e in idx.entries}
    assert got == {"d0": ("abandoned", False), "a0": ("abandoned", False), "d1": ("live", False),
                   "a1": ("live", False)}
