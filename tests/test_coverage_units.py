"""The coverage line counts in one unit for every provider (review finding 2): top-level
sessions, their subagents apart -- "Claude Code 1 session (+2 subagents)" and "Gemini CLI 1
session (+1 subagent)", where it read "Claude Code 1 session · Gemini CLI 2" (a child session of
another provider counted as a session, Claude Code's lanes not at all). And `--no-subagents`
leaves every provider's subagents out (finding 3: `list --no-subagents` still listed other
providers' child rows).

Data: the real clients' corpora in examples/home; the parents named are the subagent scenarios
the clients ran (examples/ground-truth/subagents.json, examples/gemini-ground-truth/subagent.json).
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HOME = REPO / "examples" / "home"
CLAUDE_PARENT = "23ad8bf1-66ec-5135-af96-82f74ddb4db0"  # [subagents P1]: two helper lanes
GEMINI_PARENT = "d5aeb447-2f8e-418c-8102-6372942efd74"  # [subagent P1]: one generalist subagent


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def rows(*args: str) -> list[dict]:
    p = cli(*args, "--format", "json")
    assert p.returncode == 0, p.stderr
    return [json.loads(x) for x in p.stdout.splitlines()]


def cov(rs: list[dict]) -> dict[str, dict]:
    return {c["provider"]: c for c in rs[-1]["coverage"]}


def test_the_same_shape_reads_the_same_in_claude_code_and_gemini_cli():
    cgt = json.loads((REPO / "examples" / "ground-truth" / "subagents.json").read_text())
    ggt = json.loads((REPO / "examples" / "gemini-ground-truth" / "subagent.json").read_text())
    assert cgt["session_id"] == CLAUDE_PARENT and len(cgt["subagents"]) == 2  # what the scripts spawned
    assert ggt["session_ids"] == [GEMINI_PARENT] and [s["kind"] for s in ggt["sessions_on_disk"]].count("subagent") == 1
    c = cov(rows("list", CLAUDE_PARENT, "--home", str(HOME)))["claude-code"]
    g = cov(rows("list", GEMINI_PARENT, "--home", str(HOME)))["gemini-cli"]
    assert (c["sessions"], c["subagents"]) == (1, 2), c
    assert (g["sessions"], g["subagents"]) == (1, 1), g
    assert "coverage: Claude Code 1 session (+2 subagents) · " in cli("list", CLAUDE_PARENT, "--home", str(HOME)).stdout
    t = cli("list", GEMINI_PARENT, "--home", str(HOME)).stdout
    assert " · Gemini CLI 1 (+1 subagent) · " in t, t.splitlines()[-1]


@pytest.mark.parametrize("cmd", [("list",), ("stats",), ("files",), ("search", "-F", "zzqqzz")])
def test_every_provider_counts_top_level_sessions_and_subagents_apart(cmd):
    listed = rows("list", "--home", str(HOME))
    sess = [r for r in listed if r["kind"] == "session"]
    top = Counter(r["provider"] for r in sess if r["parent_session_id"] is None)
    helpers = Counter(r["provider"] for r in sess if r.get("helper"))
    assert helpers == {"crush": 1}  # Crush's title-generation row: neither a session nor a subagent
    kids = Counter(r["provider"] for r in sess if r["is_subagent"])
    kids["claude-code"] = sum(r["subagents"] for r in sess if r["provider"] == "claude-code")
    assert all(kids[p] > 0 for p in ("claude-code", "codex", "gemini-cli", "opencode", "crush")), kids
    # a child row's parent counts it as its subagent, as a Claude Code row counts its lanes
    for r in sess:
        if r["provider"] != "claude-code":
            assert r["subagents"] == sum(1 for x in sess if x["parent_session_id"] == r["session_id"]
                                         and x["provider"] == r["provider"] and x["is_subagent"]), r["session_id"]
    p = cli(*cmd, "--home", str(HOME), "--format", "json")
    c = cov([json.loads(x) for x in p.stdout.splitlines()])
    for name in top:
        assert (c[name]["sessions"], c[name]["subagents"], c[name]["helper_sessions"]) == (
            top[name], kids[name], helpers[name]), (name, c[name])


@pytest.mark.parametrize("cmd", [("list",), ("stats",), ("files",), ("search", "-F", "zzqqzz"), ("usage",)])
def test_no_subagents_leaves_every_providers_subagents_out(cmd):
    p = cli(*cmd, "--home", str(HOME), "--no-subagents", "--format", "json")
    rs = [json.loads(x) for x in p.stdout.splitlines()]
    assert not [r for r in rs if r.get("is_subagent") is True or r.get("parent_session_id")], cmd
    c = cov(rs)
    assert all(x["subagents"] is None for x in c.values()), c
    full = cov([json.loads(x) for x in cli(*cmd, "--home", str(HOME), "--format", "json").stdout.splitlines()])
    assert {k: v["sessions"] for k, v in c.items()} == {k: v["sessions"] for k, v in full.items()}
    t = cli(*cmd, "--home", str(HOME), "--no-subagents").stdout
    line = [x for x in t.splitlines() if x.startswith("coverage: ")][-1]
    assert "subagent" not in line and f"Codex CLI {full['codex']['sessions']} · " in line, line
