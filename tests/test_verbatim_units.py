"""`verbatim` units and slices.

`test_units_on_real_records` runs on REAL records of the committed corpus: the plan_mode session
(an AskUserQuestion answered in the TUI picker, the plan approval) followed by the interactive
session's manual /compact (its real boundary, summary, local-command records and the next turn),
the boundary's logicalParentUuid re-pointed at the plan_mode session's last record so the two real
pieces form one chain.

The `_write` fixture is HAND-MADE, for shapes the offline real client is not driven to produce: an
answer carrying a typed note (the picker's notes field), an ExitPlanMode rejection with a typed
instruction (the plan dialog's feedback box), a background-task notification delivered as a user
record (offline, the pinned client delivered every completion as a queued_command attachment), a
control character in a prompt, a unit too long for the budget, and a compaction summary that quotes
a prompt verbatim (the mock writes a fixed summary); the hand-made shapes are the ones the pinned
client writes (docs/claims.md: ELI-001, ELI-005, PLAN-010, TURN-013). The real-client behaviour (turns, compactions, budget,
hook delivery) is also in test_verbatim_realclient.py.
"""

from __future__ import annotations

import json
import os
import stat
import random
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.providers.claude.discover import resolve_targets
from sessionsift.providers.claude.show import pick_lane
from sessionsift.verbatim import slice_text, u16len, verbatim
from sessionsift.verbatim.slices import budget_for_slots, max_slices, trim_middle, u16_prefix, MIN_FILL

REPO = Path(__file__).resolve().parent.parent
SID = "33333333-3333-4333-8333-333333333333"
FIRST = "Please compare the two storage options for the cache layer."
REJECT = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
          "file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the "
          "user to tell you how to proceed. To tell you how to proceed, the user said:\nuse sqlite instead")
LONG = "".join(f"paragraph {i}: " + "x" * 80 + "\n" for i in range(250))  # ~23,000 chars


def _write(tmp_path: Path, extra_tail: list[dict] | None = None) -> Path:
    recs: list[dict] = []
    prev = [None]

    def add(rec: dict) -> str:
        u = f"00000000-0000-4000-8000-{len(recs) + 1:012d}"
        rec = {"uuid": u, "parentUuid": prev[0], "sessionId": SID, "timestamp": f"2026-09-02T10:00:{len(recs):02d}Z",
               **rec}
        recs.append(rec)
        prev[0] = u
        return u

    add({"type": "user", "message": {"role": "user", "content": FIRST}})
    add({"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_A", "name": "AskUserQuestion", "input": {"questions": []}}]}})
    q = {"question": "Which store?", "header": "Store", "multiSelect": False,
         "options": [{"label": "Postgres", "description": "relational"}, {"label": "Redis", "description": "kv"}]}
    add({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_A", "content": "User has answered your questions: ..."}]},
        "toolUseResult": {"questions": [q], "answers": {"Which store?": "Postgres"},
                          "annotations": {"Which store?": {"notes": "prefer managed"}}}})
    add({"type": "assistant", "message": {"id": "m2", "role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_P", "name": "ExitPlanMode",
         "input": {"plan": "1. do it", "planFilePath": "/cfg/plans/brave-new-plan.md"}}]}})
    add({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_P", "is_error": True, "content": REJECT}]}})
    add({"type": "assistant", "message": {"id": "m3", "role": "assistant", "content": [{"type": "text", "text": LONG}]}})
    add({"type": "user", "message": {"role": "user", "content":
        "<task-notification><task-id>b7</task-id><status>completed</status>"
        "<summary>Background command \"sleep 1\" completed (exit code 0)</summary></task-notification>"}})
    last = recs[-1]["uuid"]
    prev[0] = None
    b = add({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
             "logicalParentUuid": last, "compactMetadata": {"trigger": "manual", "preTokens": 1234}})
    add({"type": "user", "isCompactSummary": True, "isVisibleInTranscriptOnly": True, "message": {
        "role": "user", "content": f"This session is being continued...\n6. All user messages:\n - {FIRST}\n"}})
    add({"type": "user", "message": {"role": "user", "content": "after the compaction: red \x1b[31mALERT"}})
    add({"type": "assistant", "message": {"id": "m4", "role": "assistant", "content": [{"type": "text", "text": "ok"}]}})
    for r in extra_tail or []:
        add(r)
    proj = tmp_path / "projects" / "-tmp-handmade"
    proj.mkdir(parents=True, exist_ok=True)
    p = proj / f"{SID}.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return p


def _lane(tmp_path: Path, path: Path):
    return pick_lane(resolve_targets([str(path)], str(tmp_path)))


def test_user_turn_shapes(tmp_path):
    res = verbatim(_lane(tmp_path, _write(tmp_path)))
    kinds = [(u.kind, u.line) for u in res.units if u.kind != "fold"]
    assert kinds == [("user", 1), ("answer", 3), ("rejection", 5), ("agent", 6), ("pulse", 7), ("user", 10),
                     ("agent", 11)]
    ans = next(u for u in res.units if u.kind == "answer")
    for part in ("[AskUserQuestion · 1 question]", "Q1 [Store]: Which store?", "- Postgres — relational",
                 "- Redis — kv", "A1: Postgres", "note: prefer managed"):
        assert part in ans.text
    rej = next(u for u in res.units if u.kind == "rejection")
    assert rej.text == "[rejected ExitPlanMode] use sqlite instead [plan: /cfg/plans/brave-new-plan.md]"
    assert rej.plan_path == "/cfg/plans/brave-new-plan.md"
    pulse = next(u for u in res.units if u.kind == "pulse")
    assert pulse.text.startswith("[background-command b7 completed]")
    assert "<task-notification>" not in res.text and "<summary>" not in res.text
    # control characters never reach the text raw (principle 4)
    assert "\x1b" not in res.text and "\\e[31mALERT" in res.text
    first = res.units[0]
    assert first.quoted_in_summary == 9


EXAMPLES = REPO / "examples" / "claude-home" / "projects"


def test_units_on_real_records(tmp_path):
    plan = [json.loads(x) for x in (EXAMPLES / "-tmp-ssift-rc-plan-mode-work" /
                                    "ec27c29c-095c-5e46-ad22-2abf8d79741a.jsonl").read_text().splitlines()]
    inter = [json.loads(x) for x in (EXAMPLES / "-tmp-ssift-rc-interactive-work" /
                                     "dd7270d6-d04e-5744-ab2f-2e9ad4fab464.jsonl").read_text().splitlines()]
    b = next(i for i, o in enumerate(inter) if o.get("subtype") == "compact_boundary")
    last = [o["uuid"] for o in plan if isinstance(o.get("uuid"), str)][-1]
    tail = [dict(o) for o in inter[b:]]
    tail[0]["logicalParentUuid"] = last  # the one edit: the real boundary continues the real plan session
    proj = tmp_path / "projects" / "-tmp-real-splice"
    proj.mkdir(parents=True)
    p = proj / "ec27c29c-095c-5e46-ad22-2abf8d79741a.jsonl"
    p.write_text("".join(json.dumps(o) + "\n" for o in plan + tail))
    res = verbatim(_lane(tmp_path, p))
    assert res.has_compaction and [c.boundary_line for c in res.compactions if c.spanned] == [len(plan) + 1]
    kinds = [u.kind for u in res.units]
    assert kinds[0] == "user" and "answer" in kinds and "command" in kinds and kinds[-1] == "agent"
    ans = next(u for u in res.units if u.kind == "answer")
    auq = next(o for o in plan if o.get("type") == "user" and isinstance(o.get("toolUseResult"), dict)
               and o["toolUseResult"].get("answers"))
    (q, a), = auq["toolUseResult"]["answers"].items()
    assert f"{q}" in ans.text and f"A1: {a}" in ans.text and ans.line == plan.index(auq) + 1
    cmd = next(u for u in res.units if u.kind == "command")
    assert cmd.text.endswith("/compact") and "<command-name>" not in res.text
    # the prompt typed after the boundary is the one user unit before the agent's last answer
    assert [(i, u.kind) for i, u in enumerate(res.units) if "What did we do?" in u.text] == [(len(res.units) - 2, "user")]


def test_long_unit_trimmed_in_the_middle_with_marker(tmp_path):
    res = verbatim(_lane(tmp_path, _write(tmp_path)), max_unit=2000)
    ag = next(u for u in res.units if u.kind == "agent" and u.line == 6)
    assert ag.chars == u16len(LONG) and ag.trimmed_chars > 0
    assert u16len(ag.text) <= 2000
    assert ag.text.startswith("paragraph 0: ") and ag.text.rstrip().endswith("x" * 20)
    assert f"{ag.trimmed_chars} of {ag.chars} chars trimmed from the middle" in ag.text
    assert f"sessionsift show {SID} --line 6" in ag.text
    assert res.accounting.units_trimmed == 1
    untrimmed = verbatim(_lane(tmp_path, _write(tmp_path)), max_unit=0, budget=100_000)
    assert next(u for u in untrimmed.units if u.line == 6).text == LONG


def test_newest_turn_squeezed_into_a_small_budget(tmp_path):
    big = {"type": "user", "message": {"role": "user", "content": "N" * 5000}}
    res = verbatim(_lane(tmp_path, _write(tmp_path, [big])), budget=1500, max_unit=0)
    assert res.accounting.turns_selected == 1
    assert res.accounting.chars_used <= 1500
    u = res.units[0]
    assert u.trimmed_chars > 0 and "trimmed from the middle" in u.text


def test_pending_compaction(tmp_path):
    p = _write(tmp_path)
    on_disk = verbatim(_lane(tmp_path, p))
    assert [c.pending for c in on_disk.compactions] == [False]
    # a turn after the summary, then a hook fires for a compaction not yet written
    pend = verbatim(_lane(tmp_path, p), pending_compaction=True)
    assert [c.pending for c in pend.compactions] == [False, True]
    assert pend.accounting.boundaries_spanned == 2
    assert "summary not yet written (it will follow L11)" in pend.text


# ---------------------------------------------------------------------------------- slices


def test_u16_arithmetic():
    s = "a🚀東"
    assert u16len(s) == 4 and len(s) == 3
    assert u16_prefix(s, 2) == "a"  # never half a surrogate pair
    assert u16_prefix(s, 3) == "a🚀"
    t, removed = trim_middle("0123456789" * 10, 40, lambda r, n: f"[-{r}/{n}]")
    assert u16len(t) <= 40 and removed == 100 - (u16len(t) - len(f"[-{removed}/100]"))
    assert t.startswith("0123") and t.endswith("789")


def test_slices_round_trip_and_bound():
    rng = random.Random(7)
    alphabet = ["a", "b", " ", "\n", "東", "🚀", "é"]
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 3000)))
        window = rng.randint(100, 900)
        parts = slice_text(text, window)
        assert "".join(parts) == text
        assert all(0 < u16len(p) <= window for p in parts)
        assert len(parts) <= max_slices(u16len(text), window)
        assert all(u16len(p) >= int(window * MIN_FILL) for p in parts[:-1])


def test_hook_and_library_agree_on_slot_capacity():
    sys.path.insert(0, str(REPO / "hooks"))
    try:
        import verbatim_slice_hook as hook
    finally:
        sys.path.pop(0)
    assert hook.MIN_FILL == MIN_FILL
    for slots in (1, 5, 6, 9):
        for window in (300, 700, 9000):
            assert hook.budget_for_slots(slots, window) == budget_for_slots(slots, window)
            assert max_slices(budget_for_slots(slots, window), window) <= slots
    assert budget_for_slots(6, 9000) >= 40_000  # the shipped 6 slots carry the default budget


def test_hook_slots_print_in_order_when_started_in_reverse(tmp_path):
    """Six slot processes started last-first; completion order (what the client concatenates,
    MISC-013) must still be slot order and the concatenation the whole pending reconstruction."""
    p = _write(tmp_path)
    payload = json.dumps({"hook_event_name": "SessionStart", "source": "compact", "session_id": SID,
                          "transcript_path": str(p)})
    procs = []
    for k in range(6, 0, -1):
        pr = subprocess.Popen([sys.executable, str(REPO / "hooks" / "verbatim_slice_hook.py"), "--slot", str(k),
                               "--slots", "6", "--window", "300", "--spool", str(tmp_path / "spool")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        pr.stdin.write(payload)
        pr.stdin.close()
        procs.append((k, pr))
    done = []
    by_pid = {pr.pid: (k, pr) for k, pr in procs}
    while by_pid:  # the order they end in, from the kernel (blocking, no polling interval)
        pid, status = os.waitpid(-1, 0)
        if pid in by_pid:
            k, pr = by_pid.pop(pid)
            pr.returncode = os.waitstatus_to_exitcode(status)
            done.append((k, pr.stdout.read()))
    assert [k for k, _ in done] == [1, 2, 3, 4, 5, 6]
    outs = [json.loads(o) for _, o in done if o]
    assert all(o["hookSpecificOutput"]["hookEventName"] == "SessionStart" for o in outs)
    got = "".join(o["hookSpecificOutput"]["additionalContext"] for o in outs)
    # the hook names the data root (--claude-home), which here is not the one a command finds by itself
    # (tests point CLAUDE_CONFIG_DIR elsewhere): the commands the text points at carry it
    want = verbatim(_lane(tmp_path, p), pending_compaction=True, budget=budget_for_slots(6, 300),
                    target=f"{SID} --claude-home {tmp_path}").text
    assert got == want and len(outs) >= 3
    assert not any((tmp_path / "spool").rglob("slice.*"))  # the last slot cleaned up


def _hook_run(tmp_path, spool: Path, slot: int = 1, slots: int = 1) -> subprocess.CompletedProcess:
    p = _write(tmp_path)
    payload = json.dumps({"hook_event_name": "SessionStart", "source": "compact", "session_id": SID,
                          "transcript_path": str(p)})
    return subprocess.run([sys.executable, str(REPO / "hooks" / "verbatim_slice_hook.py"), "--slot", str(slot),
                           "--slots", str(slots), "--window", "300", "--spool", str(spool)],
                          input=payload, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("how", ["world-writable", "other-owner", "symlink"])
def test_hook_refuses_a_spool_dir_it_does_not_own_alone(tmp_path, how):
    """`sessionsift-verbatim-<uid>` in a shared /tmp can be created first by another local user
    (to read the slices or plant its own). The hook used mkdir(exist_ok=True) and went on; it now
    checks the directory (ours, 0700, not a symlink) and refuses, saying so once in the context."""
    spool = tmp_path / "spool"
    spool.mkdir()
    root = spool / f"sessionsift-verbatim-{os.getuid()}"
    if how == "symlink":
        (tmp_path / "elsewhere").mkdir()
        root.symlink_to(tmp_path / "elsewhere")
    else:
        root.mkdir()
        os.chmod(root, 0o777 if how == "world-writable" else 0o700)
        if how == "other-owner":
            if os.getuid() != 0:
                pytest.skip("chown to another uid needs root")
            os.chown(root, 65534, 65534)
    r = _hook_run(tmp_path, spool)
    assert r.returncode == 0
    assert "not a private directory" in r.stderr
    ctx = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert ctx.startswith("[sessionsift verbatim hook: not run:")
    assert not list(root.iterdir()) and not list((tmp_path / "elsewhere").glob("*") if how == "symlink" else [])


def test_hook_creates_its_spool_dir_private(tmp_path):
    spool = tmp_path / "spool"
    r = _hook_run(tmp_path, spool)
    root = spool / f"sessionsift-verbatim-{os.getuid()}"
    assert r.returncode == 0 and json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    st = os.lstat(root)
    assert stat.S_ISDIR(st.st_mode) and st.st_mode & 0o777 == 0o700 and st.st_uid == os.getuid()
