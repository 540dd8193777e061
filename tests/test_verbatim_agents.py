"""`verbatim` for the agents other than Claude Code, on data their REAL clients wrote offline (the
sample corpora under examples/, each made by tests/realclient/<client>/ with a compaction scenario):

- Codex CLI 0.171.0 (scenario ``compaction``: an automatic compaction mid-turn, a ``compacted`` line
  with ``replacement_history``, then a resumed prompt);
- pi 0.73.1 (scenario ``compaction``: an automatic compaction, a ``compaction`` entry with
  ``firstKeptEntryId``, then ``pi -c``);
- Qwen Code 0.24.4 (scenario ``compaction``: ``/compress``, a ``chat_compression`` record);
- opencode 1.18.33 (scenario ``compacted``: an automatic compaction, the compaction agent's
  ``summary`` message; rows of a database, no lines).

Before: `verbatim` refused every session but Claude Code's ("`verbatim` reads Claude Code's own
surfaces", exit 2). Each test checks what the client's own script says happened (the ground-truth
files beside each corpus, the scenario's prompts and the mock's summary), not what the reader says.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def jrows(p) -> list[dict]:
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows and rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary", (p.stdout[-600:], p.stderr)
    return rows


def gt(name: str) -> dict:
    return json.loads((EX / name).read_text())


def _u16(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def run(sid: str, *more: str):
    p = cli("verbatim", sid, "--home", str(EX / "home"), "--format", "json", *more)
    assert p.returncode == 0, (p.returncode, p.stdout[-800:], p.stderr[-800:])
    rows = jrows(p)
    return rows, [r for r in rows if r["kind"] == "compaction_boundary"], [r for r in rows if r["kind"] == "unit"]


def test_codex_cli_gives_back_the_turn_its_compaction_condensed():
    from tests.realclient.codex.mock_api import Script

    g = gt("codex-ground-truth/compaction.json")
    (sid,) = g["thread_ids_reported"]
    rows, bounds, units = run(sid)
    assert [b["native"] for b in bounds] == ["compacted"] and bounds[0]["provider"] == "codex"
    b = bounds[0]
    # the summary as the model reads it next: the client's handoff preamble, then the mock's summary
    assert b["summary_chars"] > _u16(Script.summary) and b["trigger"] is None and b["pre_tokens"] is None
    users = [u for u in units if u["unit"] == "user"]
    assert [u["text"] for u in users] == [p["text"] for p in g["prompts"]]  # each prompt once: no replacement copy
    # the first prompt and its two calls predate the summary; the turn's closing message follows it
    p1 = users[0]
    assert p1["line"] < b["line"] and p1["turn"] == 1
    folds = [u for u in units if u["unit"] == "fold" and u["turn"] == 1]
    calls_p1 = [c for c in g["calls"] if c["conversation"] == "P1"]
    assert sum(f["tool_calls"] for f in folds) == len(calls_p1) == 2 and all(f["line"] < b["line"] for f in folds)
    after = [u for u in units if u["unit"] == "agent" and u["turn"] == 1]
    assert [u["text"] for u in after] == ["Both checked."] and after[0]["line"] > b["line"]
    s = rows[-1]
    assert (s["boundaries_total"], s["boundaries_spanned"], s["turns_total"], s["stopped_by"]) == (1, 1, 2,
                                                                                                   "start_of_session")
    assert s["lacks"] is None and s["latest_summary_line"] == b["line"]
    # every refetch command names the session's root and fetches that very record
    again = cli(*__import__("shlex").split(p1["refetch"])[1:], "--format", "json")
    recs = [r for r in jrows(again) if r["kind"] == "record"]
    assert [r["text"] for r in recs if r["record_kind"] == "prompt"][:1] == [p1["text"]]


def test_codex_cli_text_names_the_summary_line_between_the_turns():
    g = gt("codex-ground-truth/compaction.json")
    (sid,) = g["thread_ids_reported"]
    p = cli("verbatim", sid, "--home", str(EX / "home"))
    assert p.returncode == 0, p.stderr
    t = p.stdout
    first, after = "== compaction boundary · summary at L", "· (turns below follow it) =="
    assert t.index(first) < t.index(g["prompts"][0]["text"]) < t.index(after) < t.index("Both checked.")
    assert t.count(g["prompts"][0]["text"]) == 1  # the copy in replacement_history is not shown again


def test_pi_gives_back_its_compacted_turns_with_the_first_kept_entry():
    g = gt("pi-ground-truth/compaction.json")
    (sess,) = g["sessions"]
    rows, bounds, units = run(sess["id"])
    assert len(bounds) == 1 and bounds[0]["native"] == "compaction"
    b = bounds[0]
    # the summary pi wrote is the mock's, in pi's frame ("Summary: ..." inside its split-turn text)
    assert b["summary_chars"] >= _u16(g["summary_text"])
    # tokensBefore: the prompt + completion of the step that crossed the threshold, as served
    last_p1 = [s for s in g["served_steps"] if s["conversation"] == "P1"][-1]["usage"]
    assert b["pre_tokens"] == last_p1["total_tokens"]
    # firstKeptEntryId names an entry of the file, given back as its locator (the reply before the summary)
    assert b["first_kept"] is not None and b["first_kept"].startswith("L")
    kept_line = int(b["first_kept"][1:].split("#")[0])
    assert kept_line < b["line"]
    users = [u for u in units if u["unit"] == "user"]
    assert [u["text"] for u in users] == [p["text"] for p in g["prompts"]]
    assert users[0]["line"] < b["line"] < users[1]["line"]
    folds = [u for u in units if u["unit"] == "fold"]
    assert sum(f["tool_calls"] for f in folds) == len(g["tool_calls"])
    assert rows[-1]["chars_used"] <= rows[-1]["budget"]


def test_qwen_code_gives_back_the_turns_before_compress():
    g = gt("qwen-ground-truth/compaction.json")
    (sess,) = g["sessions"]
    rows, bounds, units = run(sess["id"])
    assert len(bounds) == 1 and bounds[0]["native"] == "system/chat_compression"
    b = bounds[0]
    assert b["trigger"] == "manual"  # the scenario ran /compress
    assert b["summary_chars"] >= _u16(g["summary_text"])
    typed = [p["text"] for p in g["prompts"] if not p["text"].startswith("/")]
    users = [u for u in units if u["unit"] == "user"]
    assert [u["text"] for u in users] == typed
    assert users[0]["line"] < b["line"] < users[1]["line"]
    folds = [u for u in units if u["unit"] == "fold" and u["line"] < b["line"]]
    assert sum(f["tool_calls"] for f in folds) == len(g["tool_calls"]) == 3


def test_opencode_gives_back_rows_of_its_database_by_locator():
    g = gt("opencode-ground-truth/compacted.json")
    (sid,) = g["session_ids_from_client_events"]
    rows, bounds, units = run(sid)
    assert len(bounds) == 1 and bounds[0]["native"] == "part/text/summary"
    b = bounds[0]
    assert b["line"] is None and b["locator"].startswith("part:")
    assert b["trigger"] == "auto"  # the first step's prompt tokens overflowed the context
    assert b["summary_chars"] == _u16(g["summary_text"])
    users = [u for u in units if u["unit"] == "user"]
    assert len(users) == 1 and g["prompts"][0]["marker"] in users[0]["text"] and users[0]["line"] is None
    assert users[0]["locator"].startswith("part:") and "--locator" in users[0]["refetch"]
    # the summary is no agent message of the turn; the continuation's reply follows the summary
    agents = [u for u in units if u["unit"] == "agent"]
    assert g["summary_text"] not in [a["text"] for a in agents] and [a["text"] for a in agents] == ["Done."]
    t = cli("verbatim", sid, "--home", str(EX / "home"))
    assert t.returncode == 0 and f"summary at {b['locator']}" in t.stdout and "--locator LOC" in t.stdout


@pytest.mark.parametrize("sid_of", [
    lambda: gt("codex-ground-truth/compaction.json")["thread_ids_reported"][0],
    lambda: gt("pi-ground-truth/compaction.json")["sessions"][0]["id"],
], ids=["codex", "pi"])
def test_slices_of_another_agents_answer_are_its_text_exactly(sid_of):
    sid = sid_of()
    whole = cli("verbatim", sid, "--home", str(EX / "home"))
    assert whole.returncode == 0
    rows, _b, _u = run(sid, "--slices", "--window", "300")
    sl = [r for r in rows if r["kind"] == "slice"]
    assert len(sl) >= 3 and "".join(r["text"] for r in sl) == whole.stdout
    assert all(r["chars"] <= 300 for r in sl) and rows[-1]["slices"] == len(sl)
    k = cli("verbatim", sid, "--home", str(EX / "home"), "--slice", "2", "--window", "300")
    assert k.returncode == 0 and k.stdout == sl[1]["text"]


def test_a_session_without_compaction_says_so_for_every_agent():
    sid = gt("codex-ground-truth/shell_and_patch.json")["thread_ids_reported"][0]
    p = cli("verbatim", sid, "--home", str(EX / "home"), "--format", "json")
    assert p.returncode == 1, p.stderr
    s = jrows(p)[-1]
    assert s["stopped_by"] == "no_compaction" and s["units"] == 0 and s["lacks"] is None


def test_github_copilot_cli_gives_back_the_turn_its_background_compaction_condensed():
    """GitHub Copilot CLI 1.0.102 (scenario ``compacted``: its own context estimate passes the threshold
    set by COPILOT_PROVIDER_MAX_PROMPT_TOKENS; it compacts in the background during the turn)."""
    g = gt("copilot-ground-truth/compacted.json")
    (sid,) = g["session_ids_on_disk"]
    rows, bounds, units = run(sid)
    assert [b["native"] for b in bounds] == ["session.compaction_complete"]
    b = bounds[0]
    summary = next(s["text"] for s in g["served_steps"] if s["conversation"] == "summary")
    assert b["summary_chars"] == _u16(summary) == _u16(g["summary_text"]) and b["trigger"] == "threshold"
    users = [u for u in units if u["unit"] == "user"]
    assert [u["text"] for u in users] == [p["text"] for p in g["prompts"]] and users[0]["line"] < b["line"]
    folds = [u for u in units if u["unit"] == "fold"]
    assert sum(f["tool_calls"] for f in folds) == len(g["tool_calls"]) == 2
    last = [s["text"] for s in g["served_steps"] if s["conversation"] == "P1" and s["text"]][-1]
    agents = [u for u in units if u["unit"] == "agent"]
    assert [a["text"] for a in agents] == [last] and agents[0]["line"] > b["line"]


def test_kilo_code_gives_back_rows_of_its_database_as_opencode_does():
    """Kilo Code 7.7.9 (built from opencode's code: the same compaction agent and rows)."""
    g = gt("kilo-ground-truth/compacted.json")
    (sid,) = g["session_ids_from_client_events"]
    rows, bounds, units = run(sid)
    assert [b["native"] for b in bounds] == ["part/text/summary"] and bounds[0]["provider"] == "kilo-code"
    b = bounds[0]
    assert b["line"] is None and b["summary_chars"] == _u16(g["summary_text"]) and b["trigger"] == "auto"
    users = [u for u in units if u["unit"] == "user"]
    assert len(users) == 1 and g["prompts"][0]["marker"] in users[0]["text"] and "--kilo-home" in users[0]["refetch"]
    assert [a["text"] for a in units if a["unit"] == "agent"] == ["Done."]
