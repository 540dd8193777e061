"""`stats` and `usage` count each API response once over one store, on sessions written by the REAL
Claude Code client (tests/realclient/scenarios_usage.py, offline) that hold the same responses:

- `usage_forks`: a session with a subagent, resumed once, then forked twice (`--resume <id>
  --fork-session`): each fork starts with copies of the session's records, message ids kept;
- `usage_fork_elsewhere`: the fork is run from a subdirectory, so the client writes it under ANOTHER
  project directory (what it copies is the same).

The expected figures are computed here, independently: a whole-line json parse of every transcript,
grouped by message.id (per-field maximum over the copies). Skips naming the missing prerequisite;
FAILS under CI=true."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realclient import runner
from tests.realclient import scenarios_usage as SU
from tests.realclient.common.host import prereq, run_parallel

NAMES = ("usage_forks", "usage_fork_elsewhere")
FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("usage-copies")
    gts = prereq(run_parallel, lambda n: runner.run_scenario(n, root, module=SU.MODULE), NAMES, 2)
    return {g["scenario"]: g for g in gts}


def _cli(*args: str) -> tuple[int, list[dict]]:
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--format", "json"], capture_output=True,
                       text=True, timeout=300)
    return p.returncode, [json.loads(x) for x in p.stdout.splitlines() if x.strip()]


def _independent(cfg: Path) -> tuple[dict[str, int], dict[str, set[str]]]:
    """Per usage field, the sum over distinct message ids of every transcript (main and subagent
    lanes of every project); and session id -> the message ids its files hold."""
    per: dict[str, dict[str, int]] = {}
    held: dict[str, set[str]] = {}
    for f in sorted((cfg / "projects").rglob("*.jsonl")):
        sid = f.stem if f.parent.name != "subagents" else f.parent.parent.name
        for line in f.read_bytes().splitlines():
            try:
                o = json.loads(line)
            except ValueError:
                continue
            m = o.get("message") if isinstance(o, dict) else None
            if o.get("type") != "assistant" or not isinstance(m, dict) or not isinstance(m.get("usage"), dict):
                continue
            d = per.setdefault(m["id"], {})
            for k in FIELDS:
                v = m["usage"].get(k)
                if isinstance(v, int):
                    d[k] = max(d.get(k, 0), v)
            held.setdefault(sid, set()).add(m["id"])
    return {k: sum(d.get(k, 0) for d in per.values()) for k in FIELDS}, held


@pytest.mark.parametrize("name", NAMES)
def test_stats_and_usage_count_each_response_once(runs, name):
    gt = runs[name]
    cfg = Path(gt["config_dir"])
    want, held = _independent(cfg)
    assert len(held) == (3 if name == "usage_forks" else 2)
    shared = set.intersection(*held.values())
    assert shared  # the forks hold copies of the session's responses
    code, st = _cli("stats", "--claude-home", str(cfg), "--no-index")
    assert code == 0
    (model,) = st[-1]["tokens_by_model"]
    assert st[-1]["tokens_by_model"][model] == want
    code, us = _cli("usage", "session", "--claude-home", str(cfg))
    assert code == 0
    assert (us[-1]["input_tokens"], us[-1]["output_tokens"]) == (want["input_tokens"], want["output_tokens"])
    # per session: what stats counts in a session's lanes is what usage attributes to it
    rows = {r["session_id"]: r for r in us if r["kind"] == "session"}
    lanes = [r for r in st if r["kind"] == "lane"]
    for sid, row in rows.items():
        mine = [ln for ln in lanes if ln["session_id"] == sid]
        got = sum(ln["tokens_by_model"].get(model, {}).get("input_tokens", 0) for ln in mine)
        assert got == row["input_tokens"], sid
    # the copies are said: every response a session holds is counted in exactly one lane
    counted = sum(sum(ln["api_messages_by_model"].values()) for ln in lanes)
    assert counted == len(set.union(*held.values())) == us[-1]["messages"]
    for ln in lanes:
        assert sum(ln["copies_counted_in"].values()) == ln["messages_copied"]
        assert ln["session_id"] not in ln["copies_counted_in"]
    # the tool calls of the copied records are counted once too (the fork is recognised)
    code, st2 = _cli("stats", "--claude-home", str(cfg))
    assert code == 0 and st2[-1]["tokens_by_model"] == st[-1]["tokens_by_model"]
    calls: dict[str, int] = {}
    for t in gt["tool_uses"]:
        if t["served"]:
            calls[t["name"]] = calls.get(t["name"], 0) + 1
    assert st[-1]["tool_calls"] == calls


@pytest.mark.parametrize("name", NAMES)
def test_the_token_rule_alone_counts_each_response_once(runs, name, monkeypatch):
    """With no fork recognised (lineage made to find none: the copies a session holds without any
    record saying so), the token sums still count each response once, and each copy is said on
    its lane: `messages_copied`, `copies_counted_in` (the session that counts it)."""
    from sessionsift.providers.claude import stats as S
    from sessionsift.providers.claude.discover import resolve_targets
    from sessionsift.providers.claude.model import lineage

    monkeypatch.setattr(lineage, "find_forks", lambda sessions, *_a, **_k: {})
    cfg = Path(runs[name]["config_dir"])
    want, held = _independent(cfg)
    res = S.stats(resolve_targets([], cfg))
    got: dict[str, int] = {}
    for ls in res.lanes:
        for d in ls.tokens.values():
            for k, v in d.items():
                got[k] = got.get(k, 0) + v
    assert got == want
    shared = set.intersection(*held.values())
    first = next(ls for ls in res.lanes if not ls.lane.is_subagent)  # the scope's first session counts them
    for ls in res.lanes:
        if ls.lane.is_subagent or ls is first:
            assert ls.messages_copied == 0
            continue
        assert ls.messages_copied == len(shared & held[ls.lane.session_id]) > 0
        assert dict(ls.copies_counted_in) == {first.lane.session_id: ls.messages_copied}
