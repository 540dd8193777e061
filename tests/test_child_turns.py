"""A child session (a subagent's) opens turn 1 at the task its parent delegated (review finding
5): `show '<child>' --turn 1` was refused with "it has 0 turns" because only a person's prompt
opened a turn, and a child session has none. Each reader decides from its own records which one
is the delegated task: Gemini CLI the subagent session's user message, opencode the child's user
message, Crush the agent task's user text part; Codex CLI numbers turns by its `task_started`.

Data: examples/home -- Codex, Gemini and opencode sessions written by the real clients offline;
Crush's database is built by Crush's own migrations from a scripted run (tests/crush/: Crush
cannot run here), the task text is its ground truth's `task_prompt`.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"
HOME = EX / "home"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def jrows(p) -> list[dict]:
    return [json.loads(x) for x in p.stdout.splitlines()]


def _children() -> dict[str, tuple[str, str]]:
    """provider -> (child session id, the task text its parent delegated), from the ground truths."""
    rows = jrows(cli("list", "--home", str(HOME), "--format", "json"))
    kids = {r["session_id"]: r for r in rows if r["kind"] == "session" and r["is_subagent"]}
    out = {}
    crush = json.loads((EX / "crush-ground-truth.json").read_text())["sessions"]
    for sid, t in crush.items():
        if t["parent"] and t.get("task_prompt"):
            out["crush"] = (sid, t["task_prompt"])
    for prov, marker in (("codex", "SUBAGENT-A"), ("gemini-cli", "SUBAGENT-A"), ("opencode", "SUBAGENT-A")):
        sid = next(k for k, r in kids.items() if r["provider"] == prov)
        out[prov] = (sid, marker)
    assert set(out) == {"codex", "gemini-cli", "opencode", "crush"}
    return out


CHILDREN = _children()


@pytest.mark.parametrize("provider", sorted(CHILDREN))
def test_a_child_session_opens_turn_1_at_its_delegated_task(provider):
    sid, task = CHILDREN[provider]
    p = cli("show", sid, "--turn", "1", "--home", str(HOME), "--format", "json")
    assert p.returncode == 0, p.stderr
    recs = [r for r in jrows(p) if r["kind"] == "record"]
    assert recs and all(r["turn"] == 1 for r in recs)
    assert any(task in (r["text"] or "") and r["role"] == "user" and r["record_kind"] != "prompt" for r in recs), \
        [(r["locator"], r["record_kind"], (r["text"] or "")[:40]) for r in recs]
    assert any(r["record_kind"] == "tool_call" for r in recs)  # the work the task asked for is in the turn
    last = cli("show", sid, "--turn", "-1", "--home", str(HOME), "--format", "json")
    assert last.returncode == 0 and [r["locator"] for r in jrows(last) if r["kind"] == "record"] == [r["locator"] for r in recs]
    two = cli("show", sid, "--turn", "2", "--home", str(HOME))
    assert two.returncode == 2 and "(it has 1 turn)" in two.stderr, two.stderr  # no such record
    st = [r for r in jrows(cli("stats", sid, "--home", str(HOME), "--format", "json"))
          if r["kind"] == "session" and r.get("session_id") == sid]
    assert st and st[0]["turns"] == 1 and st[0]["prompts"] == 0  # a turn, and still no person's prompt
