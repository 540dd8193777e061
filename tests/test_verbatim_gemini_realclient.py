"""`verbatim` for Gemini CLI on a chat compression the REAL client wrote offline: Gemini CLI 0.61.0,
scenario tests/realclient/gemini/scenarios_compress.py ``compressed`` (prompt 1's long shell output,
then prompt 2 resumed above ``model.compressionThreshold``: the client compresses prompt 1 into the
mock's summary and appends the new history as a ``$set.messages``).

Before: Gemini CLI declared ``lacks["compactions"]`` (no compression in the samples) and `verbatim`
answered no boundary; the summary message of the ``$set`` read as a third typed prompt and the
client's "Got it. Thanks for the additional context!" as an agent message.

Skips with the missing prerequisite (root, unshare, npm) but FAILS under CI=true."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCENARIO = "tests.realclient.gemini.scenarios_compress:compressed"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def jrows(p) -> list[dict]:
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows and rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary", (p.stdout[-600:], p.stderr)
    return rows


def _u16(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


@pytest.fixture(scope="module")
def gem(tmp_path_factory):
    from tests.realclient.common import host
    from tests.realclient.gemini import client as gemini_client
    from tests.realclient.gemini import runner as gemini_runner

    host.require(gemini_client, gemini_client.PINNED_VERSION, "Gemini CLI real-client")
    return gemini_runner.run_scenario(SCENARIO, tmp_path_factory.mktemp("verbatim-gem"))


def test_gemini_cli_gives_back_the_turn_its_compression_condensed(gem):
    from tests.realclient.gemini.scenarios_compress import SUMMARY

    # the client did compress: the summary and its verification were asked of the mock
    assert [s["key"] for s in gem["summary_served"]] == ["summary#0", "summary#1"]
    (sid,) = gem["session_ids"]
    p = cli("verbatim", sid, "--gemini-home", gem["gemini_dir"], "--format", "json")
    assert p.returncode == 0, (p.stdout[-800:], p.stderr[-800:])
    rows = jrows(p)
    bounds = [r for r in rows if r["kind"] == "compaction_boundary"]
    units = [r for r in rows if r["kind"] == "unit"]
    assert [b["native"] for b in bounds] == ["user:compression_summary"] and bounds[0]["provider"] == "gemini-cli"
    b = bounds[0]
    assert b["summary_chars"] == _u16(SUMMARY) and b["trigger"] is None and b["pre_tokens"] is None
    users = [u for u in units if u["unit"] == "user"]
    assert [u["text"] for u in users] == [x["text"] for x in gem["prompts"]]
    assert users[0]["line"] < b["line"] < users[1]["line"]
    folds = [u for u in units if u["unit"] == "fold"]
    assert sum(f["tool_calls"] for f in folds) == len(gem["tool_calls"]) == 1 and folds[0]["line"] < b["line"]
    agents = [u for u in units if u["unit"] == "agent"]
    scripted = [r["text"] for r in gem["responses"] if r["text"]]
    assert [a["text"] for a in agents] == scripted == ["There are 2500 lines.", "The last number was 2500."]
    assert agents[0]["line"] < b["line"] < agents[1]["line"]
    s = rows[-1]
    assert (s["boundaries_total"], s["boundaries_spanned"], s["turns_total"], s["stopped_by"]) == (1, 1, 2,
                                                                                                   "start_of_session")
    assert s["lacks"] is None and s["latest_summary_line"] == b["line"]


def test_gemini_cli_compression_summary_is_no_prompt_and_its_ack_no_agent_message(gem):
    (sid,) = gem["session_ids"]
    p = cli("show", sid, "--gemini-home", gem["gemini_dir"], "--format", "json")
    assert p.returncode == 0, p.stderr[-800:]
    turns = [r for r in jrows(p) if r["kind"] == "turn"]
    assert [t["turn"] for t in turns] == [None, 1, 2]  # before: a third turn opened at the summary
    items = [it for t in turns for it in t["items"]]
    assert [it["text"] for it in items if it["kind"] == "prompt"] == [x["text"] for x in gem["prompts"]]
    assert [it["text"] for it in items if it["kind"] == "message"] == ["There are 2500 lines.",
                                                                       "The last number was 2500."]
