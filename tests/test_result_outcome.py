"""Every provider's tool_result carries the call's outcome (exit_code, is_error) as the client recorded
it, so `search -t ...result` and per-tool error counts count the same thing on every provider
(docs/providers.md, "What is_error means"). On the real-client corpora of examples/: Codex CLI writes
the exit code on its call's outcome event (merged by call_id), opencode writes a command that exits
non-zero as status ``completed`` with ``metadata.exit`` N. Expected exits come from the ground truth
the driving scripts wrote (``expect_exit``), never from the reader.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionsift.providers.base import ReadReport, Root
from sessionsift.providers.codex import Codex
from sessionsift.providers.crush import Crush
from sessionsift.providers.gemini import GeminiCli as Gemini
from sessionsift.providers.opencode import Opencode

EX = Path(__file__).resolve().parent.parent / "examples"


def _records(provider, home: Path):
    d = provider.discover(Root(home, "test"))
    out = []
    for ref in d.sessions:
        out.extend(provider.read(ref, ReadReport()))
    return out


def _expected(gt_dir: str, key: str, sessions: str) -> dict[tuple[frozenset, str], int]:
    """(the scenario's session ids, call id) -> the exit the scenario's command was written to make
    (call ids repeat across scenarios; a subagent's call is in its own session)."""
    exp = {}
    for p in sorted((EX / gt_dir).glob("*.json")):
        gt = json.loads(p.read_text())
        sids = frozenset(gt[sessions]) | frozenset(gt.get("spawned_agent_ids") or ())
        for c in gt.get(key) or []:
            if isinstance(c, dict) and isinstance(c.get("expect_exit"), int):
                exp[(sids, c.get("call_id") or c.get("id"))] = c["expect_exit"]
    return exp


CASES = [(Codex, "codex-home", "codex-ground-truth", "calls", "thread_ids_reported"),
         (Opencode, "opencode-home", "opencode-ground-truth", "tool_calls", "session_ids_from_client_events")]


@pytest.mark.parametrize("cls,home,gt,key,sessions", CASES, ids=["codex", "opencode"])
def test_result_carries_the_exit_the_client_recorded(cls, home, gt, key, sessions):
    recs = _records(cls(), EX / home)
    exp = _expected(gt, key, sessions)
    assert any(v != 0 for v in exp.values()), "the corpus holds a failing command"
    results = [r for r in recs if r.kind == "tool_result" and r.copy_of is None]
    for (sids, cid), code in exp.items():
        (r,) = [r for r in results if r.session_id in sids and r.call_id == cid]
        assert (r.exit_code, r.is_error) == (code, code != 0), (cid, r.text)


ALL = [(Codex, "codex-home"), (Codex, "codex-legacy-home"), (Opencode, "opencode-home"),
       (Opencode, "opencode-legacy-home"), (Gemini, "gemini-home"), (Crush, "crush-home")]
ALL_IDS = ["codex", "codex-0.50.0", "opencode", "opencode-legacy", "gemini", "crush"]


@pytest.mark.parametrize("cls,home", ALL, ids=ALL_IDS)
def test_result_agrees_with_its_call(cls, home):
    recs = _records(cls(), EX / home)
    calls = {(r.session_id, r.call_id): r for r in recs if r.kind == "tool_call" and r.copy_of is None and r.call_id}
    paired = [(calls[(r.session_id, r.call_id)], r) for r in recs
              if r.kind == "tool_result" and r.copy_of is None and (r.session_id, r.call_id) in calls]
    assert paired
    for call, res in paired:
        if call.exit_code is not None:
            assert res.exit_code == call.exit_code, res.locator
        if call.is_error is not None:
            assert res.is_error == call.is_error, res.locator
        if res.exit_code is not None:
            assert res.is_error == (res.exit_code != 0), res.locator


@pytest.mark.parametrize("cls,home", ALL, ids=ALL_IDS)
def test_result_names_the_tool_of_its_call(cls, home):
    """A result row names its call's tool (Codex CLI's output records carry none: before, every Codex
    tool_result had tool_name null, so `search -t tool_result` rows could not be told apart by tool)."""
    recs = _records(cls(), EX / home)
    calls = {(r.session_id, r.call_id): r for r in recs if r.kind == "tool_call" and r.copy_of is None and r.call_id}
    results = [r for r in recs if r.kind == "tool_result" and r.copy_of is None]
    assert results
    for r in results:
        call = calls.get((r.session_id, r.call_id))
        if call is not None and call.tool_name is not None:
            assert r.tool_name == call.tool_name, r.locator
        else:  # a result without its call: nothing says the tool but the result itself
            assert r.tool_name is None or cls is not Codex, r.locator


def test_search_tool_result_finds_every_codex_failure():
    """`search -t tool_result --format json` rows: every command the Codex scripts made fail (ground
    truth's expect_exit != 0) is a row with that exit code, is_error true and its tool's name."""
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "sessionsift", "search", "", "-t", "tool_result", "--provider", "codex",
                        "--codex-home", str(EX / "codex-home"), "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    hits = [r for r in rows if r["kind"] == "hit"]
    assert p.returncode == 0 and hits, p.stderr
    exp = {k: v for k, v in _expected("codex-ground-truth", "calls", "thread_ids_reported").items() if v != 0}
    assert exp
    failed = [h for h in hits if h["is_error"] is True]
    for (sids, cid), code in exp.items():
        (h,) = [h for h in failed if h["session_id"] in sids and h["exit_code"] == code
                and "exited with code %d" % code in h["text"]]
        assert h["tool_name"] == "exec_command", h
    assert all(h["tool_name"] for h in hits)
