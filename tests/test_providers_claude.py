"""Claude Code on the providers layer, on transcripts written by the REAL client (the committed
corpora examples/claude-home (2.1.258) and examples/newest-client/2.1.332, and the
`realclient_corpus` fixture run fresh): the shared records agree with the deep model.

- prompts (kind prompt, not a copy) = the deep model's genuine user.message records (+ drafts,
  which a person typed too), replays excluded;
- tool calls = tool_use blocks, tool results = tool_result blocks, messages = text blocks
  (counted from the raw lines here, independently of the reader);
- tokens per model, deduplicated per Tokens.dedup_key with the per-field maximum, = core/stats'
  tokens_by_model (deduplicated per message.id);
- every locator points back at the line (and block) it came from.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from sessionsift.providers.claude.stats import KNOWN_TYPES as DEEP_KNOWN_TYPES, stats
from sessionsift.providers.claude.discover import resolve_targets
from sessionsift.providers.claude.model.lane import LaneIndex
from sessionsift.providers.base import ReadReport, Root
from sessionsift.providers.claude import ClaudeCode
from sessionsift.providers.claude.records import KNOWN_TYPES

REPO = Path(__file__).resolve().parents[1]
CORPORA = [REPO / "examples" / "claude-home", REPO / "examples" / "newest-client" / "2.1.332" / "claude-home"]


def _raw_counts(path: Path) -> Counter:
    """Block counts from the raw lines, replays (a uuid seen earlier in the file) skipped."""
    c: Counter = Counter()
    seen: set[str] = set()
    for raw in path.read_bytes().split(b"\n"):
        try:
            o = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(o, dict):
            continue
        u = o.get("uuid")
        if isinstance(u, str):
            if u in seen:
                continue
            seen.add(u)
        m = o.get("message") if isinstance(o.get("message"), dict) else {}
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if isinstance(b, dict):
                c[(o.get("type"), b.get("type"))] += 1
    return c


def _check_home(home: Path) -> dict:
    prov = ClaudeCode()
    d = prov.discover(Root(home, "--claude-home", True))
    assert d.coverage.state == "ok" and d.coverage.sessions == len(d.sessions) > 0
    deep = resolve_targets([], home)
    assert sorted(r.session_id for r in d.sessions) == sorted(s.session_id for s in deep.sessions)
    by_lane_deep = {ls.lane.path: ls for ls in stats(deep).lanes}
    totals: Counter = Counter()
    for ref in d.sessions:
        sess = next(s for s in deep.sessions if s.session_id == ref.session_id)
        assert ref.paths == [ln.path for ln in sess.lanes()]  # subagent lanes are paths of their session
        assert ref.size == sum(p.stat().st_size for p in ref.paths)
        for lane in sess.lanes():
            rep = ReadReport()
            sub = replace(ref, paths=[lane.path])
            recs = list(prov.read(sub, rep, raw=True))
            orig = [r for r in recs if r.copy_of is None]
            assert {r.lane for r in recs} <= {lane.display}
            # prompts = genuine prose records of the deep model (drafts are prose a person typed)
            idx = LaneIndex.build(lane)
            genuine = [e for e in idx.entries if e.labels[:1] in (("user.message",), ("user.unsent",))
                       and e.replay_of is None]
            got = [r for r in orig if r.kind == "prompt"]
            assert [r.line for r in got] == [e.no for e in genuine], lane.path
            raw = _raw_counts(lane.path)
            kinds = Counter(r.kind for r in orig)
            assert kinds["tool_call"] == raw[("assistant", "tool_use")], lane.path
            assert kinds["tool_result"] == raw[("user", "tool_result")], lane.path
            assert kinds["message"] == raw[("assistant", "text")], lane.path
            assert kinds["reasoning"] == raw[("assistant", "thinking")] + raw[("assistant", "redacted_thinking")]
            # every record points back at its bytes
            lines = lane.path.read_bytes().split(b"\n")
            for r in recs:
                o = orjson.loads(lines[r.line - 1])
                assert o == r.raw and r.locator.split("#")[0] == f"L{r.line}"
                if "#" in r.locator:
                    blk = o["message"]["content"][int(r.locator.split("#")[1])]
                    want = {"text": "message", "thinking": "reasoning", "redacted_thinking": "reasoning",
                            "tool_use": "tool_call", "tool_result": "tool_result"}.get(blk["type"], "meta")
                    assert r.kind == want
                    if r.kind == "tool_call":
                        assert (r.call_id, r.tool_name, r.tool_input) == (blk["id"], blk["name"], blk["input"])
                    if r.kind == "tool_result":
                        assert r.call_id == blk["tool_use_id"] and r.is_error == blk.get("is_error")
            # tokens: per dedup key, per-field max; summed per model = core/stats (per message.id)
            per: dict = {}
            for r in recs:
                if r.tokens is not None:
                    assert r.tokens.dedup_key and not r.tokens.cumulative
                    d_ = per.setdefault((r.model or "(unknown model)", r.tokens.dedup_key), {})
                    for k, v in (("input_tokens", r.tokens.input), ("output_tokens", r.tokens.output),
                                 ("cache_read_input_tokens", r.tokens.cache_read),
                                 ("cache_creation_input_tokens", r.tokens.cache_write)):
                        if v is not None:
                            d_[k] = max(d_.get(k, v), v)
            agg: dict = {}
            for (model, _k), f in per.items():
                for k, v in f.items():
                    agg.setdefault(model, {})[k] = agg.get(model, {}).get(k, 0) + v
            assert agg == by_lane_deep[lane.path].tokens, lane.path
            # unknown line types are kept (kind unknown) and counted as the deep model counts them
            assert dict(rep.unknown_kinds) == dict(by_lane_deep[lane.path].unknown_line_types)
            assert kinds["unknown"] == sum(rep.unknown_kinds.values())
            om = rep.omissions()
            assert om["malformed_lines"] == len(by_lane_deep[lane.path].read.malformed_lines) and not rep.problems
            assert rep.records == len(recs) and rep.duplicates == len(recs) - len(orig)
            totals.update(kinds)
    return totals


@pytest.mark.parametrize("home", CORPORA, ids=lambda p: p.parent.name if p.name == "claude-home" else p.name)
def test_shared_records_agree_with_the_deep_model(home):
    totals = _check_home(home)
    # the corpora hold every kind the mapping produces, so the agreement above is not vacuous
    assert all(totals[k] > 0 for k in ("prompt", "message", "tool_call", "tool_result", "meta")), totals


def test_shared_records_agree_on_a_fresh_real_client_run(realclient_corpus):
    homes = sorted({run.config_dir for run in realclient_corpus})
    assert homes
    for home in homes:
        _check_home(home)


def test_known_types_are_the_deep_models():
    assert KNOWN_TYPES == DEEP_KNOWN_TYPES


def test_discovery_states(tmp_path):
    prov = ClaudeCode()
    cov = prov.discover(Root(tmp_path / "nope", "--claude-home", True)).coverage
    assert (cov.state, cov.sessions) == ("absent", 0) and str(tmp_path / "nope") in cov.reason
    (tmp_path / "home").mkdir()
    cov = prov.discover(Root(tmp_path / "home", "--home", True)).coverage
    assert (cov.state, cov.sessions) == ("absent", 0) and "projects" in cov.reason
    (tmp_path / "file").write_text("x")
    cov = prov.discover(Root(tmp_path / "file", "--claude-home", True)).coverage
    assert (cov.state, cov.sessions) == ("unreadable", None) and "not a directory" in cov.reason
    (tmp_path / "home" / "projects").mkdir()
    cov = prov.discover(Root(tmp_path / "home", "--home", True)).coverage
    assert (cov.state, cov.sessions) == ("ok", 0)


def test_locate_precedence(tmp_path, monkeypatch):
    prov = ClaudeCode()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "env"))
    assert prov.locate(explicit=str(tmp_path / "x"), home=str(tmp_path)).source == "--claude-home"
    assert prov.locate(home=str(tmp_path)).path == tmp_path / ".claude"
    assert prov.locate().path == tmp_path / "env"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "")  # empty counts as unset (PATH-011)
    r = prov.locate()
    assert r.source == "default" and r.path.name == ".claude"


def test_footprint_is_the_sessions_own_files():
    prov = ClaudeCode()
    home = CORPORA[0]
    d = prov.discover(Root(home, "--claude-home", True))
    sub = [r for r in d.sessions if len(r.paths) > 1]
    assert sub, "the corpus has a session with subagent lanes"
    fp = prov.footprint(sub[0])
    assert fp[0] == sub[0].paths[0] and fp[1] == sub[0].paths[0].parent / sub[0].session_id
    assert all(p.exists() for p in fp)
    assert all(any(str(lane).startswith(str(x)) for x in fp) for lane in sub[0].paths)


@pytest.mark.parametrize("home", CORPORA, ids=lambda p: p.parent.name if p.name == "claude-home" else p.name)
def test_stats_shared_census_agrees_with_the_deep_census(home):
    """`stats --shared` reads Claude Code through the shared records beside the deep census: the
    two independent paths agree on tool calls and failures per tool and tokens per model."""
    import json
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "sessionsift", "stats", "--claude-home", str(home), "--shared",
                        "--format", "json"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    sm = json.loads(p.stdout.splitlines()[-1])
    sh = sm["shared"]
    assert sh["providers"] == ["claude-code"] and sh["sessions"] == sm["coverage"][0]["sessions"]
    assert sh["tool_calls"] == sm["tool_calls"] and sh["tool_errors"] == sm["tool_errors"]
    names = {"input": "input_tokens", "output": "output_tokens", "cache_read": "cache_read_input_tokens",
             "cache_write": "cache_creation_input_tokens"}
    assert {m: {names[k]: v for k, v in f.items()} for m, f in sh["tokens_by_model"].items()} == sm["tokens_by_model"]
    # prompts: every user.message record (a person's prose, also a subagent's seed prompt) and draft
    assert sh["prompts"] == sm["labels"].get("user.message", 0) + sm["labels"].get("user.unsent", 0)
