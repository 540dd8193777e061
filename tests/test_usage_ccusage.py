"""`usage` side by side with ccusage (the peer most people use) on the same real-client corpora:
the committed 2.1.258 and 2.1.332 Claude Code corpora, examples/home (Claude Code + opencode
written by the real opencode client), and a fresh run of the real Claude Code client.

Where both count the same thing the reports agree to the token and to the micro-dollar. The
differences asserted below are the documented ones (docs/usage.md "Agreement with ccusage"):
opencode child sessions attributed to their parent, reasoning counted inside output, no price =
null rather than 0."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from sessionsift.cli import main
from tests.realclient import ccusage as CC
from tests.realclient.common.host import prereq

REPO = Path(__file__).resolve().parent.parent
EX = REPO / "examples"


@pytest.fixture(scope="module")
def ccusage_ready():
    return prereq(CC.ensure, label="ccusage")


def ours(args: list[str]) -> list[dict]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        try:
            main(["usage", *args, "--format", "json", "--timezone", "UTC"])
        except SystemExit as exc:
            assert int(exc.code or 0) == 0, exc.code
    return [json.loads(x) for x in buf.getvalue().splitlines()]


def _home_with_claude(tmp_path: Path, *claude_homes: Path) -> Path:
    """A HOME for ccusage whose .claude/projects merges the given Claude Code homes' projects."""
    home = tmp_path / "cchome"
    proj = home / ".claude" / "projects"
    proj.mkdir(parents=True)
    for h in claude_homes:
        for d in (h / "projects").iterdir():
            shutil.copytree(d, proj / d.name, dirs_exist_ok=True)
    return home


def _cc_tokens(r: dict) -> tuple:
    return (r["inputTokens"], r["outputTokens"], r["cacheReadTokens"], r["cacheCreationTokens"])


def _our_tokens(r: dict) -> tuple:
    return tuple(v or 0 for v in (r["input_tokens"], r["output_tokens"], r["cache_read_tokens"], r["cache_write_tokens"]))


def _costs_agree(mine: dict, theirs: dict, where: str, unpriced: set) -> None:
    """Per model: equal cost where ccusage has a price; where it has none (its embedded table
    predates the model) it reports 0 with `missingPricing`, and we must have priced it."""
    cm = {m["modelName"]: m for m in theirs.get("modelBreakdowns", [])}
    for m in mine["models"]:
        c = cm[m["model"]]
        if c.get("missingPricing"):
            unpriced.add(m["model"])
            assert c["cost"] == 0 and m["cost_usd"] is not None and m["cost_usd"] > 0, (where, m["model"])
        else:
            assert m["cost_usd"] == pytest.approx(c["cost"], abs=1e-6), (where, m["model"])


def compare_claude(home: Path) -> dict:
    """Daily and per-session reports of both tools on one Claude Code home; returns the figures."""
    cc_daily = CC.run(home, ["claude", "daily"])
    cc_sess = CC.run(home, ["claude", "session"])
    od = [r for r in ours(["daily", "--claude-home", str(home / ".claude")]) if r["kind"] == "period"]
    osess = {r["session_id"]: r for r in ours(["session", "--claude-home", str(home / ".claude")])
             if r["kind"] == "session"}
    unpriced: set[str] = set()
    ccd = {r.get("date") or r.get("period"): r for r in cc_daily["daily"]}
    assert set(ccd) == {r["period"] for r in od}
    for r in od:
        c = ccd[r["period"]]
        assert _our_tokens(r) == _cc_tokens(c), r["period"]
        _costs_agree(r, c, r["period"], unpriced)
    ccs = {r["sessionId"]: r for r in cc_sess["sessions"]}
    assert set(ccs) == set(osess)
    for sid, r in osess.items():
        assert _our_tokens(r) == _cc_tokens(ccs[sid]), sid
        _costs_agree(r, ccs[sid], sid, unpriced)
    return {"days": len(od), "sessions": len(osess), "total_tokens": sum(r["total_tokens"] or 0 for r in od),
            "cost_usd": sum(r["cost_usd"] or 0 for r in od), "ccusage_cost_usd": cc_daily["totals"]["totalCost"],
            "ccusage_unpriced": unpriced}


def test_agrees_with_ccusage_on_the_committed_2_1_258_corpus(ccusage_ready, tmp_path):
    got = compare_claude(_home_with_claude(tmp_path, EX / "claude-home"))
    assert got["sessions"] == 8 and got["total_tokens"] == 121572 and not got["ccusage_unpriced"]
    assert got["cost_usd"] == pytest.approx(got["ccusage_cost_usd"], abs=1e-6)


def test_agrees_with_ccusage_on_the_committed_2_1_332_corpus(ccusage_ready, tmp_path):
    """ccusage 20.0.24's embedded table has no price for claude-opus-5-5 (2.1.332's default model):
    it reports $0.00; we price it, and test_usage.py holds our price equal to the client's own
    meter (cost-state) on this corpus."""
    got = compare_claude(_home_with_claude(tmp_path, EX / "newest-client" / "2.1.332" / "claude-home"))
    assert got["sessions"] == 5 and got["total_tokens"] == 115657
    assert got["ccusage_unpriced"] == {"claude-opus-5-5"} and got["ccusage_cost_usd"] == 0 < got["cost_usd"]


def test_agrees_with_ccusage_on_a_fresh_real_client_run(ccusage_ready, realclient_corpus, tmp_path):
    homes = sorted({run.config_dir for run in realclient_corpus})
    got = compare_claude(_home_with_claude(tmp_path, *homes))
    assert got["sessions"] == len(list(realclient_corpus)) and got["total_tokens"] > 0


def test_opencode_differences_are_the_documented_ones(ccusage_ready, tmp_path):
    """examples/home: Claude Code + opencode (real opencode 1.18 client). ccusage lists an opencode
    child (task) session on its own row and reports output without reasoning; we attribute the
    child to its parent and count reasoning inside output (the shared Tokens contract). Totals
    agree; ccusage prices the unpriced mock model at 0, we say null."""
    home = tmp_path / "home"
    shutil.copytree(EX / "home", home, symlinks=False)
    cc = CC.run(home, ["opencode", "session"])
    mine = [r for r in ours(["session", "--home", str(home), "--provider", "opencode"]) if r["kind"] == "session"]
    assert mine and cc["sessions"]
    assert sum(r["total_tokens"] for r in mine) == sum(r["totalTokens"] for r in cc["sessions"])
    assert sum(r["input_tokens"] for r in mine) == sum(r["inputTokens"] for r in cc["sessions"])
    assert sum(r["cache_read_tokens"] for r in mine) == sum(r["cacheReadTokens"] for r in cc["sessions"])
    assert sum(r["output_tokens"] for r in mine) == sum(r["outputTokens"] for r in cc["sessions"]) + \
        sum(r["reasoning_tokens"] or 0 for r in mine)
    assert len(cc["sessions"]) > len(mine)  # the child session is its own row there
    assert all(r["cost_usd"] is None and r["no_price"] == ["mock-model"] for r in mine)
    assert all(r["totalCost"] == 0 for r in cc["sessions"])


def _last_total(rollout_bytes: bytes) -> dict:
    last = None
    for line in rollout_bytes.splitlines():
        o = json.loads(line)
        p = o.get("payload") or {}
        if o.get("type") == "event_msg" and p.get("type") == "token_count" and p.get("info"):
            last = p["info"]["total_token_usage"]
    return last


def _meta(rollout: bytes) -> dict:
    for line in rollout.splitlines():
        o = json.loads(line)
        if o.get("type") == "session_meta":
            return o.get("payload") or {}
    return {}


def test_codex_agrees_where_both_read_and_we_read_what_ccusage_misses(ccusage_ready, tmp_path):
    """examples/codex-home (the real Codex CLI, offline). Sessions both tools read agree to the
    token and the micro-dollar. ccusage 20.0.24 reads neither a subagent's own rollout (the mock
    log shows the subagent's requests: it is real usage) nor a compressed `.jsonl.zst` rollout; we
    count both, the subagent inside its parent (Codex's `source.subagent.thread_spawn
    .parent_thread_id`)."""
    import zstandard

    home = tmp_path / "home"
    shutil.copytree(EX / "codex-home", home / ".codex", symlinks=False)
    cc = {r["sessionId"][-36:]: r for r in CC.run(home, ["codex", "session"])["sessions"]}
    mine = {r["session_id"]: r for r in ours(["session", "--codex-home", str(home / ".codex")]) if r["kind"] == "session"}
    rollouts = {}
    for f in sorted((home / ".codex").rglob("rollout-*.jsonl*")):
        raw = f.read_bytes() if f.suffix == ".jsonl" else zstandard.ZstdDecompressor().stream_reader(open(f, "rb")).read()
        rollouts.setdefault(_meta(raw).get("id"), (f, raw))  # the plain file sorts first and wins
    parents: dict[str, list[bytes]] = {}
    zst_only = []
    for sid, (f, raw) in rollouts.items():
        src = _meta(raw).get("source")
        spawn = src.get("subagent", {}).get("thread_spawn") if isinstance(src, dict) and isinstance(src.get("subagent"), dict) else None
        if spawn:
            parents.setdefault(spawn["parent_thread_id"], []).append(raw)
        elif f.suffix == ".zst":
            zst_only.append(sid)
    assert parents and zst_only
    both = (set(cc) & set(mine)) - set(parents)
    assert len(both) >= 3
    for sid in both:
        m, c = mine[sid], cc[sid]
        assert (m["input_tokens"], m["output_tokens"], m["cache_read_tokens"]) == \
            (c["inputTokens"], c["outputTokens"], c["cacheReadTokens"]), sid
        assert m["cost_usd"] == pytest.approx(c["costUSD"], abs=1e-6), sid
    for parent, kids in parents.items():
        m, c = mine[parent], cc[parent]
        tot = [_last_total(k) for k in kids]
        assert m["input_tokens"] - c["inputTokens"] == sum(t["input_tokens"] - t["cached_input_tokens"] for t in tot)
        assert m["output_tokens"] - c["outputTokens"] == sum(t["output_tokens"] for t in tot)
    log = [json.loads(x) for x in (EX / "codex-mock-logs" / "subagent.jsonl").read_text().splitlines()]
    assert sum(1 for r in log if str(r.get("route", "")).startswith("script:agent-")) >= 1
    for sid in zst_only:
        assert sid in mine and sid not in cc
        t = _last_total(rollouts[sid][1])
        assert (mine[sid]["input_tokens"], mine[sid]["output_tokens"]) == (t["input_tokens"] - t["cached_input_tokens"],
                                                                           t["output_tokens"])


def test_gemini_agrees_and_the_differences_are_subagents_thoughts_and_copied_files(ccusage_ready, tmp_path):
    """examples/gemini-home (the real Gemini CLI, offline). Input, cache-read tokens and cost agree
    per session; ccusage reports output without thoughts (we count them inside output, given apart
    as reasoning), lists a subagent's session on its own row (we count it in its parent), and in
    the legacy_migrated scenario (the pinned client copied 0.28.2's hash dir to the short-name dir
    and continued there) counts the copied history again: the mock served 4 scripted requests for
    that session, which is what we count."""
    home = tmp_path / "home"
    shutil.copytree(EX / "gemini-home", home / ".gemini", symlinks=False)
    cc = {r["sessionId"]: r for r in CC.run(home, ["gemini", "session"])["sessions"]}
    mine = {r["session_id"]: r for r in ours(["session", "--gemini-home", str(home / ".gemini")]) if r["kind"] == "session"}
    gt = json.loads((EX / "gemini-ground-truth" / "legacy_migrated.json").read_text())
    migrated = gt["session_ids"][0]
    children = set(cc) - set(mine)
    assert children, "the subagent's own session row"
    agree = 0
    for sid, m in mine.items():
        c = cc[sid]
        if sid == migrated:
            continue
        if m["input_tokens"] == c["inputTokens"]:
            assert m["output_tokens"] == c["outputTokens"] + (m["reasoning_tokens"] or 0), sid
            assert m["cost_usd"] == pytest.approx(c["totalCost"], abs=1e-6), sid
            agree += 1
        else:  # a parent: its children's rows there add up to our difference
            extra = [cc[x] for x in children]
            assert any(m["input_tokens"] == c["inputTokens"] + e["inputTokens"] for e in extra), sid
    assert agree >= len(mine) // 2
    m, c = mine[migrated], cc[migrated]
    assert m["messages"] == gt["mock_routes"]["script"] == 4
    assert c["inputTokens"] > m["input_tokens"] and c["outputTokens"] > m["output_tokens"]


def test_blocks_with_the_hour_rule_are_ccusages_blocks(ccusage_ready, tmp_path):
    """`--align hour` opens windows as ccusage does (floored to the hour): the same windows with the
    same figures; without it ours open at the first response (docs/usage.md says why)."""
    home = _home_with_claude(tmp_path, EX / "claude-home", EX / "newest-client" / "2.1.332" / "claude-home")
    cc = [b for b in CC.run(home, ["blocks"])["blocks"] if not b.get("isGap")]
    mine = [r for r in ours(["blocks", "--claude-home", str(home / ".claude"), "--align", "hour"]) if r["kind"] == "window"]
    assert len(mine) == len(cc) >= 1
    for m, c in zip(mine, cc):
        assert m["start"]["utc"] == c["startTime"] and m["end"]["utc"] == c["endTime"]
        t = c["tokenCounts"]
        assert _our_tokens(m) == (t["inputTokens"], t["outputTokens"], t["cacheReadInputTokens"],
                                  t["cacheCreationInputTokens"])
    plain = [r for r in ours(["blocks", "--claude-home", str(home / ".claude")]) if r["kind"] == "window"]
    assert plain[0]["start"]["utc"] > mine[0]["start"]["utc"]  # the first response, not the hour before it
