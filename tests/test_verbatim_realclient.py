"""`verbatim` and its SessionStart(compact) hook on a REAL Claude Code session (2.1.258, offline
against the mock API, inside `unshare -n`): an interactive session compacted twice with `/compact`,
with the shipped hook installed. See tests/realclient/scenarios_verbatim.py.

Skips with the exact missing prerequisite; fails instead under CI=true.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.providers.claude.discover import resolve_targets
from sessionsift.providers.claude.show import pick_lane
from sessionsift.verbatim import slice_text, u16len, verbatim
from sessionsift.verbatim.slices import budget_for_slots

REPO = Path(__file__).resolve().parent.parent
THRESHOLD = 10_000


@pytest.fixture(scope="session")
def twice(tmp_path_factory):
    from tests.realclient import scenarios_verbatim as sv
    from tests.realclient.common.host import prereq

    root = tmp_path_factory.mktemp("rc-verbatim")
    truth = prereq(sv.run_verbatim_scenario, "verbatim_twice", root)
    truth["records"] = [json.loads(l) for l in Path(truth["transcript"]).read_text().splitlines()]
    return truth


def lane_of(truth, path=None):
    scope = resolve_targets([path or truth["transcript"]], truth["config_dir"])
    return pick_lane(scope)


def hook_contexts(truth):
    """(line, content entries) of every hook_additional_context attachment, in file order."""
    return [(i, r["attachment"]["content"]) for i, r in enumerate(truth["records"], 1)
            if r.get("type") == "attachment" and r["attachment"].get("type") == "hook_additional_context"]


def boundaries(truth):
    return [i for i, r in enumerate(truth["records"], 1) if r.get("subtype") == "compact_boundary"]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "sessionsift", "verbatim", *args], capture_output=True,
                          text=True, cwd=REPO)


# ---------------------------------------------------------------------------------- the units


def test_units_in_order_across_two_compactions(twice):
    res = verbatim(lane_of(twice))
    b = boundaries(twice)
    assert len(b) == 2
    # every compaction appends boundary then summary on the next line (CMP-018)
    assert [c.summary_line for c in res.compactions] == [b[0] + 1, b[1] + 1]
    users = [u for u in res.units if u.kind == "user"]
    prompts = [p for p in twice["prompts"] if p != "/compact"]
    assert [u.text for u in users] == prompts  # each user turn whole, in forward order
    # forward order: turn by turn, each led by its opener (2.1.258 writes a turn's first assistant
    # call on the line ABOVE its prompt; that call still folds into the prompt's turn)
    assert [u.turn for u in res.units] == sorted(u.turn for u in res.units)
    for t in {u.turn for u in res.units}:
        mine = [u for u in res.units if u.turn == t]
        assert mine[0].kind in ("user", "command") and mine[0].line == min(u.line for u in mine if u.kind != "fold")
    # every unit's line really holds what the unit says it holds
    for u in users:
        rec = twice["records"][u.line - 1]
        assert rec["message"]["content"] == u.text
    acc = res.accounting
    assert (acc.boundaries_spanned, acc.boundaries_total) == (2, 2)
    assert acc.stopped_by == "start_of_session"
    assert acc.turns_selected == acc.turns_total == 4
    # banners name the summary lines, in forward order, with the turns between them
    t = res.text
    first = f"== compaction boundary · summary at L{b[0] + 1} · (turns below predate it) =="
    mid = f"== compaction boundary · summary at L{b[1] + 1} · (turns below follow the summary at L{b[0] + 1}"
    after = f"== summary at L{b[1] + 1} · (turns below follow it) =="
    assert t.index(first) < t.index(prompts[0]) < t.index(prompts[1]) < t.index(mid) < t.index(prompts[2]) \
        < t.index(after) < t.index(prompts[3])


def test_agent_message_selection_and_folds(twice):
    from tests.realclient.scenarios_verbatim import LONG_AGENT

    ln = lane_of(twice)
    longest = [u for u in verbatim(ln).units if u.kind == "agent" and u.turn == 1]
    last = [u for u in verbatim(ln, agent_msgs="last").units if u.kind == "agent" and u.turn == 1]
    allm = [u for u in verbatim(ln, agent_msgs="all").units if u.kind == "agent" and u.turn == 1]
    assert [u.text for u in longest] == [LONG_AGENT]
    assert [u.text for u in last] == ["Wrote plan.md."]
    assert [u.text for u in allm] == [LONG_AGENT, "Wrote plan.md."]
    folds = [u for u in verbatim(ln).units if u.kind == "fold" and u.turn == 1]
    # turn 1: Read, then Write after the long message; the closing message is folded as hidden
    assert sum(f.tool_calls for f in folds) == 2
    assert sum(f.hidden_agent_messages for f in folds) == 1
    assert "raw" not in verbatim(ln).text and "<command-name>" not in verbatim(ln).text


def test_quoted_verbatim_marking(twice):
    res = verbatim(lane_of(twice))
    b = boundaries(twice)
    p1, p2 = [u for u in res.units if u.kind == "user"][:2]
    # the scripted summary quotes prompt 1 whole, prompt 2 only with an ellipsis
    assert p1.quoted_in_summary == b[0] + 1
    assert p2.quoted_in_summary is None
    assert f"[quoted verbatim in the summary at L{b[0] + 1}]" in res.text


def test_budget_accounting_and_max_compactions(twice):
    ln = lane_of(twice)
    full = verbatim(ln)
    b = boundaries(twice)
    small = verbatim(ln, budget=1500)
    assert small.accounting.chars_used <= 1500
    assert small.accounting.stopped_by == "budget"
    assert small.accounting.boundaries_spanned < 2 and small.accounting.boundaries_total == 2
    assert small.accounting.turns_selected < full.accounting.turns_selected
    # recency first: what the small budget kept is the newest turns
    assert [u.line for u in small.units] == [u.line for u in full.units][-len(small.units):]
    one = verbatim(ln, max_compactions=1)
    assert (one.accounting.boundaries_spanned, one.accounting.stopped_by) == (1, "max_compactions")
    assert min(u.line for u in one.units) > b[0] + 1
    zero = verbatim(ln, max_compactions=0)
    assert zero.accounting.boundaries_spanned == 0
    assert all(u.line > b[1] + 1 for u in zero.units)
    for r in (full, small, one, zero):
        assert r.accounting.chars_used == u16len(r.text) <= r.accounting.budget
    # the emoji in prompt 4 counts 2 UTF-16 units (MISC-012)
    assert u16len(full.text) == len(full.text) + full.text.count("🚀")
    assert full.text.count("🚀") >= 2


def test_slice_round_trip_cli(twice):
    whole = cli(twice["transcript"], "--claude-home", twice["config_dir"])
    assert whole.returncode == 0, whole.stderr
    for window in (300, 700, 9000):
        n = cli(twice["transcript"], "--claude-home", twice["config_dir"], "--slices", "--window", str(window))
        count = int(n.stdout)
        parts = [cli(twice["transcript"], "--claude-home", twice["config_dir"], "--slice", str(k), "--window",
                     str(window)).stdout for k in range(1, count + 1)]
        assert "".join(parts) == whole.stdout
        assert all(0 < u16len(p) <= window for p in parts)
    beyond = cli(twice["transcript"], "--claude-home", twice["config_dir"], "--slice", "99")
    assert beyond.returncode == 1 and beyond.stdout == ""
    js = cli(twice["transcript"], "--claude-home", twice["config_dir"], "--format", "json")
    rows = [json.loads(l) for l in js.stdout.splitlines()]
    assert rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary"
    assert [r["line"] for r in rows if r["kind"] == "compaction_boundary"] == [b + 1 for b in boundaries(twice)]
    assert rows[-1]["boundaries_spanned"] == 2 and rows[-1]["chars_used"] == u16len(whole.stdout)


def test_no_compaction_says_so(twice, tmp_path):
    # a real-client prefix: the session as it stood before its first /compact
    b = boundaries(twice)
    proj = tmp_path / "projects" / Path(twice["transcript"]).parent.name
    proj.mkdir(parents=True)
    lines = Path(twice["transcript"]).read_text().splitlines(keepends=True)
    cut = next(i for i, r in enumerate(twice["records"]) if r.get("type") == "user"
               and r["message"]["content"] == "/compact")
    (proj / Path(twice["transcript"]).name).write_text("".join(lines[:cut]))
    assert cut < b[0]
    r = cli(str(proj / Path(twice["transcript"]).name), "--claude-home", str(tmp_path))
    assert r.returncode == 1
    assert "has no compaction" in r.stdout and "--turn" in r.stdout


# ---------------------------------------------------------------------------------- the hook


def test_hook_delivers_reconstruction_in_order(twice, tmp_path):
    """After each /compact the next records carry our reconstruction as hook_additional_context,
    every slice in order, nothing lost or repeated at the seams: equal to what `verbatim
    --pending-compaction` gives for the session as it stood when the hook ran."""
    from tests.realclient.scenarios_verbatim import HOOK_WINDOW

    ctxs = hook_contexts(twice)
    b = boundaries(twice)
    assert len(ctxs) == 2
    assert b[0] < ctxs[0][0] < b[1] < ctxs[1][0]  # one injection per compaction, right after it
    lines = Path(twice["transcript"]).read_text().splitlines(keepends=True)
    name = Path(twice["transcript"]).name
    for k, ((_, entries), bnd) in enumerate(zip(ctxs, b), 1):
        injected = "".join(entries)
        # the client fires the hook before it appends boundary + summary: the hook saw L1..L<bnd-1>
        assert f"summary not yet written (it will follow L{bnd - 1})" in injected
        home = tmp_path / f"at-{k}"
        proj = home / "projects" / Path(twice["transcript"]).parent.name
        proj.mkdir(parents=True)
        (proj / name).write_text("".join(lines[:bnd - 1]))
        expect = verbatim(lane_of({"config_dir": str(home)}, str(proj / name)), pending_compaction=True,
                          budget=min(40_000, budget_for_slots(6, HOOK_WINDOW)))
        text = expect.text.replace(str(proj / name), twice["transcript"])
        # the header states the text's own length, which moves with the path: compare around it
        used = re.compile(r"· \d+ of (\d+) chars")
        assert used.sub("· N of \\1 chars", injected, 1) == used.sub("· N of \\1 chars", text, 1)
        assert f"· {u16len(injected)} of " in injected.split("\n")[1]
        assert entries == slice_text(injected, HOOK_WINDOW)  # each slice its own entry, in slice order
        assert len(entries) >= 3
        assert all(u16len(e) <= HOOK_WINDOW < THRESHOLD for e in entries)
        assert expect.accounting.boundaries_spanned == k  # compacted once, then twice
    # the slots that printed completed in slot order. Only slots with output are compared: the
    # client records hook_success for some empty slots and not others (seen: slot 5 recorded with
    # empty stdout after one compaction, slots 5-6 absent after the next), so a fixed-size window of
    # the last records is not a sound instrument.
    prev = 0
    for (ln, entries) in ctxs:
        succ = [r["attachment"] for r in twice["records"][prev:ln]
                if r.get("type") == "attachment" and r["attachment"].get("type") == "hook_success"
                and "--slot " in str(r["attachment"].get("command", ""))]
        printed = [int(a["command"].split("--slot ")[1].split()[0]) for a in succ if a.get("stdout")]
        assert printed == list(range(1, len(entries) + 1))
        prev = ln


def test_hook_ignores_other_sources(tmp_path):
    hook = REPO / "hooks" / "verbatim_slice_hook.py"
    for src in ("startup", "resume", "clear", "fork"):
        r = subprocess.run([sys.executable, str(hook), "--slot", "1", "--slots", "1", "--spool", str(tmp_path)],
                           input=json.dumps({"hook_event_name": "SessionStart", "source": src,
                                             "session_id": "x", "transcript_path": "/nonexistent.jsonl"}),
                           capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout == ""
    assert not any(tmp_path.iterdir())


def test_installed_settings_match_snippet(twice):
    settings = json.loads((Path(twice["config_dir"]) / "settings.json").read_text())
    groups = settings["hooks"]["SessionStart"]
    assert [g["matcher"] for g in groups] == ["compact"]
    cmds = [h["command"] for h in groups[0]["hooks"]]
    assert len(cmds) == 6 and all(c.startswith("'/") for c in cmds)  # absolute interpreter path
    assert settings["skipDangerousModePermissionPrompt"] is True  # the harness's own key survived the merge
