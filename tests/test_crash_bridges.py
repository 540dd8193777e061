"""Damaged lines do not break the chain: crash artefacts made from a REAL transcript (the
files_basic print-mode session, 3 turns, finished) by zero-filling one record's line
(tests/realclient/mutations.py: destroyed_tool_result, destroyed_prompt, destroyed_assistant).

Before bridging, a record whose parent lay on the destroyed line ended the chain walk: every
earlier record was `abandoned`, `stats` said 0 (or 1, 2) turns, `show --turn 1` failed, `search`
gave the prompt turn `-`, and `status` said `running - mid-tool` over a call whose result was the
destroyed line although the session ended with an end_turn reply. Each case is checked against the
undamaged transcript: same turns, same survival, same turn of every record."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.providers.claude.stats import lane_stats, lane_stats_indexed
from sessionsift.providers.claude.discover import Lane
from sessionsift.providers.claude.model.lane import LaneIndex

REPO = Path(__file__).resolve().parents[1]
CRASH = REPO / "examples" / "crash"
MAN = json.loads((CRASH / "manifest.json").read_text())
SRC = REPO / "examples" / MAN["source"]
SID = "8414eb07-cca2-5cca-9059-e9baedac31e1"
CASES = ["destroyed_tool_result", "destroyed_prompt", "destroyed_assistant"]


def _lane(p: Path) -> Lane:
    return Lane(p, SID, "main", "main")


@pytest.mark.parametrize("name", CASES)
def test_bridged_chain_keeps_turns_and_survival(name):
    m = MAN["mutations"][name]
    good = LaneIndex.build(_lane(SRC))
    bad = LaneIndex.build(_lane(CRASH / f"{name}.jsonl"))
    assert good.turns == 3
    assert bad.stats.zero_filled_lines == 1
    assert bad.turns == good.turns, name
    g = {e.no: e for e in good.entries}
    for e in bad.entries:
        assert e.survival == g[e.no].survival, (name, e.no, e.survival)
        assert e.turn == g[e.no].turn, (name, e.no, e.turn, g[e.no].turn)
    # the bridge is declared: the destroyed line's child, the omitted line, the record before it
    assert len(bad.stats.bridges) == 1 and bad.stats.omissions()["bridged_records"] == 1
    child, omitted, target, _opener = bad.stats.bridges[0]
    assert omitted == m["line_no"] and child == m["children"][0]
    assert target == max(e.no for e in good.entries if e.uuid and e.no < omitted)
    assert bad.entry_at_line(child).bridged_to == target
    assert "bridged to" in bad.stats.bridge_notes()[0] and f"L{omitted}" in bad.stats.bridge_notes()[0]
    # the streaming census (stats) agrees with the index
    for ls in (lane_stats(_lane(CRASH / f"{name}.jsonl")), lane_stats_indexed(_lane(CRASH / f"{name}.jsonl"))):
        assert ls.turns == 3 and ls.read.bridges == bad.stats.bridges, name


def test_a_destroyed_prompt_opens_its_turn_through_its_first_surviving_record():
    """The prompt of turn 2 was destroyed after turn 1 had ended (end_turn): the first record
    bridged across it (its attachment) opens turn 2 in its place, so turn 2 still exists."""
    m = MAN["mutations"]["destroyed_prompt"]
    bad = LaneIndex.build(_lane(CRASH / "destroyed_prompt.jsonl"))
    (child, omitted, _t, opener), = bad.stats.bridges
    assert opener and omitted == m["line_no"]
    assert min(e.no for e in bad.turn_entries(2) if e.uuid) == child
    # the destroyed prompt's enqueue/dequeue lines (no uuid) above it are turn 2's too
    assert [e.type for e in bad.turn_entries(2) if e.no < child] == ["queue-operation"] * 2
    # the other two destroy records that open no turn
    for name in ("destroyed_tool_result", "destroyed_assistant"):
        assert not LaneIndex.build(_lane(CRASH / f"{name}.jsonl")).stats.bridges[0][3], name


def _home(tmp_path: Path, name: str) -> Path:
    home = tmp_path / "h"
    d = home / "projects" / "-tmp-ssift-rc-files-basic-work"
    d.mkdir(parents=True)
    shutil.copy(CRASH / f"{name}.jsonl", d / f"{SID}.jsonl")
    return home


def _run(home: Path, *args: str) -> tuple[int, list[dict]]:
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--claude-home", str(home), "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    return p.returncode, [json.loads(x) for x in p.stdout.splitlines()]


@pytest.mark.parametrize("name", CASES)
def test_commands_on_a_crash_artefact(tmp_path, name):
    home = _home(tmp_path, name)
    rc, rows = _run(home, "stats")
    lane = next(r for r in rows if r["kind"] == "lane")
    assert rc == 0 and lane["turns"] == 3 and lane["omissions"]["bridged_records"] == 1
    assert lane["bridges"][0]["omitted_line"] == MAN["mutations"][name]["line_no"]
    rc, rows = _run(home, "show", SID, "--turn", "1")
    assert rc == 0 and rows[1]["turn"] == 1 and rows[-1]["bridges"]
    rc, rows = _run(home, "search", "files_basic P1", "-t", "user.message")
    hit = next(r for r in rows if r["kind"] == "hit")
    assert hit["turn"] == 1 and hit["survival"] == "live"


def test_status_judges_the_tail_not_a_call_whose_result_was_destroyed(tmp_path):
    """The destroyed tool_result answered the Bash call of the last turn; the session then ended
    with an end_turn reply. The tail is that reply: idle-eot, and the lost result is a note."""
    home = _home(tmp_path, "destroyed_tool_result")
    rc, rows = _run(home, "status")
    v = next(r for r in rows if r["kind"] == "session")
    assert v["verdict"] == "idle-eot", v["reason"]
    tail = next(e for e in v["evidence"] if e["surface"] == "tail")
    assert tail["pending"] == [] and [p["name"] for p in tail["superseded"]] == ["Bash"]
    assert any("has no result on disk, but the conversation went on" in n for n in v["notes"])


def _text(home: Path, *args: str) -> str:
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--claude-home", str(home)],
                       capture_output=True, text=True, timeout=120)
    return p.stdout


def test_search_summary_declares_the_bridges_it_used_and_the_chains_it_skipped(tmp_path):
    """A search over a crash artefact said '2 hits in 1 transcript (...; 0 unreadable)' and
    nothing else: the destroyed prompt's record is not searchable and the turns shown were joined
    across its line, or (a census that builds no chain) were not computed at all. The summary now
    says which (an answer narrower than the question says what it left out). Data: the real
    files_basic transcript with its P2 prompt zero-filled (tests/realclient/mutations.py)."""
    home = _home(tmp_path, "destroyed_prompt")
    rc, rows = _run(home, "search", "files_basic", "-t", "user.message")
    hits = [r for r in rows if r["kind"] == "hit"]
    assert [h["turn"] for h in hits] == [1, 3]  # P2 is lost; P3 keeps its turn through the bridge
    assert rows[-1]["bridges"] == {"records": 1, "transcripts": 1, "omitted_lines": 1, "unchained_transcripts": 0,
                                      "unchained_unknown": 0}
    t = _text(home, "search", "files_basic", "-t", "user.message")
    assert "1 omitted line (zero-filled or malformed: their records are lost, not searched); turns and survival " \
           "joined across them: 1 record bridged in 1 transcript" in t, t
    rc, rows = _run(home, "search", "", "-t", "user.message", "--count")  # a census: no chain is built
    assert rows[-1]["hits"] == 2 and rows[-1]["bridges"] == {"records": 0, "transcripts": 0, "omitted_lines": 0,
                                                            "unchained_transcripts": 1, "unchained_unknown": 0}
    t = _text(home, "search", "", "-t", "user.message", "--count")
    assert "1 transcript with hits holds omitted lines" in t and "no bridge looked for" in t, t
    # the undamaged transcript: nothing to declare
    good = tmp_path / "g"
    d = good / "projects" / "-tmp-ssift-rc-files-basic-work"
    d.mkdir(parents=True)
    shutil.copy(SRC, d / f"{SID}.jsonl")
    rc, rows = _run(good, "search", "files_basic", "-t", "user.message")
    assert rows[-1]["hits"] == 3 and rows[-1]["bridges"]["records"] == 0 and rows[-1]["bridges"]["omitted_lines"] == 0
    assert "omitted line" not in _text(good, "search", "", "-t", "user.message", "--count")


def test_a_prompt_bridged_after_an_ended_turn_is_not_an_inferred_opener(tmp_path):
    """The same crash (a line NUL-filled at its length, as tests/realclient/mutations.py makes)
    over the REAL interactive transcript's turn_duration record (line 17: the system record Claude
    Code writes after the end_turn reply, the parent of the typed prompt on line 18): the prompt is
    bridged across it, after an ended turn, and it is an opener of its own -- the bridge infers no
    opener (mutation testing: building the skeleton without the records' own opener flag passed)."""
    src = REPO / "examples" / "claude-home" / "projects" / "-tmp-ssift-rc-interactive-work" / (
        "dd7270d6-d04e-5744-ab2f-2e9ad4fab464.jsonl")
    lines = src.read_bytes().split(b"\n")
    assert json.loads(lines[16])["subtype"] == "turn_duration"
    assert json.loads(lines[17])["parentUuid"] == json.loads(lines[16])["uuid"]
    lines[16] = b"\0" * len(lines[16])
    bad = tmp_path / src.name
    bad.write_bytes(b"\n".join(lines))
    good = LaneIndex.build(Lane(src, src.stem, "main", "main"))
    idx = LaneIndex.build(Lane(bad, bad.stem, "main", "main"))
    assert idx.stats.bridges == [(18, 17, 16, False)]
    assert idx.turns == good.turns
    assert {e.no: e.turn for e in idx.entries if e.no != 17} == {e.no: e.turn for e in good.entries if e.no != 17}
