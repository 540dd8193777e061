"""`stats` counts every agent's sessions in one census (stats.stats_of over Provider.census): Claude
Code's from its lane census, every other agent's from its shared records, on the sessions the real
clients wrote. The lane census's figures for a Claude Code session equal the shared-records
reading of it (`--shared`) where both count the same thing, and follow the scenario's ground truth
where they differ (a subagent's task is no typed prompt)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples"
HOMES = [EX / "claude-home", EX / "newest-client" / "2.1.332" / "claude-home"]


def stats(*args, home: Path) -> list[dict]:
    env = dict(os.environ, HOME=str(home), XDG_CACHE_HOME=str(home / "c"), XDG_DATA_HOME=str(home / "d"))
    p = subprocess.run([sys.executable, "-m", "sessionsift", "stats", *args, "--format", "json"], capture_output=True,
                       text=True, env=env, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    return [json.loads(x) for x in p.stdout.splitlines()]


def _sessions(rows):
    return {r["session_id"]: r for r in rows if r["kind"] == "session"}


@pytest.mark.parametrize("claude_home", HOMES, ids=lambda p: p.parent.name)
def test_lane_census_equals_the_shared_reading_where_both_count_the_same(tmp_path, claude_home):
    lane = _sessions(stats("--claude-home", str(claude_home), home=tmp_path))
    shared = _sessions(stats("--claude-home", str(claude_home), "--shared", home=tmp_path))
    assert set(lane) == set(shared) and len(lane) >= 5
    for sid, a in lane.items():
        b = shared[sid]
        for k in ("records", "copies", "tool_calls", "tool_errors", "tokens_by_model", "usage_units_by_model"):
            assert a[k] == b[k], (sid, k)
        assert a["kinds"] is None and a["file_changes"] is None  # not counted by the lane census: null, never 0
        assert isinstance(b["kinds"], dict)


def test_a_claude_sessions_prompts_are_those_typed_not_its_subagents_tasks(tmp_path):
    rows = _sessions(stats("--claude-home", str(EX / "claude-home"), home=tmp_path))
    for gt in sorted((EX / "ground-truth").glob("*.json")):
        truth = json.loads(gt.read_text())
        typed = [p for p in truth["prompts"] if not p["text"].startswith("/")]
        assert rows[truth["session_id"]]["prompts"] == len(typed), gt.name


def test_every_agents_sessions_are_in_one_total(tmp_path):
    rows = stats("--home", str(EX / "home"), home=tmp_path)
    sm = rows[-1]
    env = dict(os.environ, HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "c"))
    listed = [json.loads(x) for x in subprocess.run(
        [sys.executable, "-m", "sessionsift", "list", "--home", str(EX / "home"), "--format", "json"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300).stdout.splitlines()]
    every = {(r["provider"], r["session_id"]) for r in listed if r["kind"] == "session"}
    got = {(r["provider"], r["session_id"]) for r in rows if r["kind"] == "session"}
    assert got == every
    assert sm["shared"]["sessions"] == len(every)
    assert sm["shared"]["providers"] == sorted({p for p, _s in every})
    claude = sum(1 for p, _s in every if p == "claude-code")
    assert sm["shared"]["kinds_unknown_sessions"] == claude and claude == 8
    # the Claude Code lane totals still stand beside it
    assert sum(sm["tool_calls"].values()) == sum(sum(r["tool_calls"].values()) for r in rows
                                                 if r["kind"] == "session" and r["provider"] == "claude-code")
