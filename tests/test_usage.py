"""`usage` on transcripts written by the real Claude Code client (examples/claude-home = 2.1.258,
examples/newest-client = 2.1.332). The expected figures are computed here independently (a
whole-line json parse of every record, grouped by message.id), or taken from what the client
itself recorded (its `cost-state` totals). Mutated copies of real files stand in for cases the
mock-driven client cannot produce; each says what it imitates and why no client run gives it."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from sessionsift.cli import main
from sessionsift.usage import prices as P
from sessionsift.usage.blocks import windows
from sessionsift.usage.collect import collect
from sessionsift.usage.events import Event
from sessionsift.usage.report import Pricer, build, zone

REPO = Path(__file__).resolve().parent.parent
HOME_258 = REPO / "examples" / "claude-home"
HOME_332 = REPO / "examples" / "newest-client" / "2.1.332" / "claude-home"


def run(args: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        try:
            main(args)
        except SystemExit as exc:
            code = int(exc.code or 0)
        else:
            code = 0
    return code, buf.getvalue()


def jrows(out: str) -> list[dict]:
    return [json.loads(x) for x in out.splitlines() if x.strip()]


def independent(home: Path) -> dict[str, dict]:
    """session id -> per-field sums over distinct message ids (main + subagent lanes), computed
    with the stdlib json module over whole lines."""
    out: dict[str, dict] = {}
    for main_t in sorted((home / "projects").glob("*/*.jsonl")):
        sid = main_t.stem
        files = [main_t] + sorted((main_t.parent / sid / "subagents").rglob("*.jsonl"))
        per: dict[str, tuple] = {}
        for f in files:
            for line in f.read_bytes().splitlines():
                try:
                    o = json.loads(line)
                except ValueError:
                    continue
                m = o.get("message") if isinstance(o, dict) else None
                if o.get("type") == "assistant" and isinstance(m, dict) and isinstance(m.get("usage"), dict):
                    u = m["usage"]
                    vals = (u.get("input_tokens", 0), u.get("output_tokens", 0), u.get("cache_read_input_tokens", 0),
                            u.get("cache_creation_input_tokens", 0))
                    old = per.get(m["id"], (0, 0, 0, 0))
                    per[m["id"]] = tuple(max(a, b) for a, b in zip(old, vals))
        out[sid] = {"messages": len(per), "input": sum(v[0] for v in per.values()),
                    "output": sum(v[1] for v in per.values()), "cache_read": sum(v[2] for v in per.values()),
                    "cache_write": sum(v[3] for v in per.values())}
    return out


@pytest.mark.parametrize("home", [HOME_258, HOME_332], ids=["2.1.258", "2.1.332"])
def test_session_report_equals_an_independent_per_message_id_sum(home):
    code, out = run(["usage", "session", "--claude-home", str(home), "--format", "json", "--timezone", "UTC"])
    assert code == 0
    rows = {r["session_id"]: r for r in jrows(out) if r["kind"] == "session"}
    want = independent(home)
    want = {k: v for k, v in want.items() if v["messages"]}
    assert set(rows) == set(want)
    for sid, w in want.items():
        r = rows[sid]
        assert (r["messages"], r["input_tokens"], r["output_tokens"], r["cache_read_tokens"], r["cache_write_tokens"]) == \
            (w["messages"], w["input"], w["output"], w["cache_read"], w["cache_write"]), sid
    # the naive per-record sum is larger where the client wrote one record per content block
    naive = 0
    for f in (home / "projects").rglob("*.jsonl"):
        for line in f.read_bytes().splitlines():
            o = json.loads(line) if line.strip().startswith(b"{") else {}
            if o.get("type") == "assistant" and isinstance(o.get("message"), dict) and "usage" in o["message"]:
                naive += o["message"]["usage"]["input_tokens"]
    summary = jrows(out)[-1]
    assert summary["kind"] == "summary"
    assert naive > summary["input_tokens"] == sum(w["input"] for w in want.values())


def _cost_states(home: Path) -> dict[str, dict]:
    out = {}
    for f in (home / "projects").glob("*/*.jsonl"):
        last = None
        for line in f.read_bytes().splitlines():
            if b'"cost-state"' in line:
                o = json.loads(line)
                if o.get("type") == "cost-state":
                    last = o
        if last is not None:
            out[f.stem] = last
    return out


def test_print_mode_sessions_match_the_clients_own_meter():
    """2.1.332 writes `cost-state` with its own token totals and cost per model. In print mode
    (no compaction, no side questions) every API request it made wrote assistant records, so
    our deduplicated sum, subagent lanes included, must equal the client's meter to the token,
    and our price (the bundled table) its cost to the cent."""
    states = _cost_states(HOME_332)
    code, out = run(["usage", "session", "--claude-home", str(HOME_332), "--format", "json"])
    rows = {r["session_id"]: r for r in jrows(out) if r["kind"] == "session"}
    checked = 0
    for sid in ("a09a50a1-160e-5b09-b28f-64735d2c65a8", "8414eb07-cca2-5cca-9059-e9baedac31e1",
                "23ad8bf1-66ec-5135-af96-82f74ddb4db0"):  # bash_background, files_basic, subagents
        st = states[sid]
        (model, mu), = st["modelUsage"].items()
        r = rows[sid]
        assert (r["input_tokens"], r["output_tokens"]) == (mu["inputTokens"], mu["outputTokens"]), sid
        assert r["cost_usd"] == pytest.approx(st["totalCostUSD"], abs=1e-6), sid
        assert r["client_recorded"]["cost_usd"] == st["totalCostUSD"]
        assert r["client_cost_differs"] is False
        checked += 1
    assert checked == 3
    # the subagents session: the subagent lanes carry part of it, counted inside the parent
    sub = rows["23ad8bf1-66ec-5135-af96-82f74ddb4db0"]
    assert sub["subagent_lanes_with_usage"] == 2 and 0 < sub["subagents"]["total_tokens"] < sub["total_tokens"]


def test_interactive_session_client_meter_counts_requests_without_records():
    """The interactive scenario runs /compact: the summary request writes no assistant record,
    so the client's meter is higher than the transcript; the report shows both and says so."""
    code, out = run(["usage", "session", "--claude-home", str(HOME_258), "--timezone", "UTC"])
    assert code == 0
    line = [x for x in out.splitlines() if "dd7270d6" in x and "client recorded" in x]
    assert line and "$0.1122" in line[0] and "compaction" in line[0]
    code, out = run(["usage", "session", "--claude-home", str(HOME_258), "--format", "json"])
    r = [r for r in jrows(out) if r.get("session_id") == "dd7270d6-d04e-5744-ab2f-2e9ad4fab464"][0]
    assert r["client_cost_differs"] is True and r["client_recorded"]["by_model"]["claude-opus-5[1m]"]["input"] > r["input_tokens"]


def test_subagent_echo_is_not_counted_and_no_subagents_undercounts():
    c = collect(claude_home=str(HOME_258))
    assert c.tally["claude-code"].echoes == 1  # the Agent tool_result's toolUseResult.usage
    sid = "23ad8bf1-66ec-5135-af96-82f74ddb4db0"
    all_ = sum(e.total() for e in c.events if e.session_id == sid)
    lanes = {e.lane for e in c.events if e.session_id == sid}
    assert "main" in lanes and len(lanes) == 3
    c2 = collect(claude_home=str(HOME_258), subagents=False)
    main_only = sum(e.total() for e in c2.events if e.session_id == sid)
    assert 0 < main_only < all_


def _copy_home(tmp_path: Path, src: Path = HOME_258) -> Path:
    dst = tmp_path / "home"
    shutil.copytree(src / "projects", dst / "projects")
    return dst


def _rewrite(path: Path, fn) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(fn(lines)))


def test_partial_and_zeroed_copies_do_not_lower_a_message(tmp_path):
    """Imitates two copies no mock-driven run writes: a copy written while the response was still
    streaming (output_tokens 1, as message_start carries) placed FIRST, and a compaction replay
    with the four counts zeroed (QT-041) placed LAST. Per-field max keeps the real counts."""
    home = _copy_home(tmp_path)
    t = home / "projects" / "-tmp-ssift-rc-files-basic-work" / "8414eb07-cca2-5cca-9059-e9baedac31e1.jsonl"
    before = collect(claude_home=str(home))

    def mutate(lines):
        out = []
        done = False
        for ln in lines:
            o = json.loads(ln)
            if not done and o.get("type") == "assistant":
                partial = json.loads(ln)
                partial["message"]["usage"]["output_tokens"] = 1
                zeroed = json.loads(ln)
                for k in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
                    zeroed["message"]["usage"][k] = 0
                out += [json.dumps(partial).encode() + b"\n", ln, json.dumps(zeroed).encode() + b"\n"]
                done = True
            else:
                out.append(ln)
        return out

    _rewrite(t, mutate)
    after = collect(claude_home=str(home))
    tot = lambda c: sum(e.total() for e in c.events)  # noqa: E731
    assert tot(after) == tot(before) and len(after.events) == len(before.events)
    assert after.ledger.copies_merged == before.ledger.copies_merged + 2


def test_a_forked_copy_of_a_session_is_counted_once(tmp_path):
    """Imitates a fork (a second session file that repeats the first one's messages, ids kept):
    one API response is billed once, whichever file holds it."""
    home = _copy_home(tmp_path)
    d = home / "projects" / "-tmp-ssift-rc-files-basic-work"
    src = d / "8414eb07-cca2-5cca-9059-e9baedac31e1.jsonl"
    shutil.copy(src, d / "99999999-0000-4000-8000-000000000000.jsonl")
    code, out = run(["usage", "daily", "--claude-home", str(home), "--format", "json"])
    code0, out0 = run(["usage", "daily", "--claude-home", str(HOME_258), "--format", "json"])
    assert jrows(out)[-1]["total_tokens"] == jrows(out0)[-1]["total_tokens"]
    assert jrows(out)[-1]["copies_merged"] > jrows(out0)[-1]["copies_merged"]


def test_unknown_model_cost_is_null_and_totals_say_lower_bound(tmp_path):
    """Imitates a model the bundled table has never heard of (renamed in a real transcript)."""
    home = _copy_home(tmp_path)
    t = home / "projects" / "-tmp-ssift-rc-todos-work" / "934337bf-5048-5090-a52a-998dd6ed05bb.jsonl"
    _rewrite(t, lambda ls: [ln.replace(b'"model":"claude-opus-5"', b'"model":"claude-opus-9"') for ln in ls])
    code, out = run(["usage", "session", "--claude-home", str(home), "--format", "json"])
    rows = {r["session_id"]: r for r in jrows(out) if r["kind"] == "session"}
    r = rows["934337bf-5048-5090-a52a-998dd6ed05bb"]
    assert r["cost_usd"] is None and r["no_price"] == ["claude-opus-9"] and r["cost_is_lower_bound"] is True
    s = jrows(out)[-1]
    assert s["cost_complete"] is False and s["cost_usd"] > 0
    assert any("lower bound" in n and "claude-opus-9" in n for n in s["notes"])
    code, txt = run(["usage", "daily", "--claude-home", str(home)])
    assert "≥$" in txt and "no price for claude-opus-9" in txt


def test_hostile_model_name_prints_as_one_escaped_line(tmp_path):
    home = _copy_home(tmp_path)
    t = home / "projects" / "-tmp-ssift-rc-todos-work" / "934337bf-5048-5090-a52a-998dd6ed05bb.jsonl"
    evil = json.dumps("x\u001b[31mRED\nline2\u202e").encode()[1:-1]
    _rewrite(t, lambda ls: [ln.replace(b'"model":"claude-opus-5"', b'"model":"' + evil + b'"') for ln in ls])
    code, txt = run(["usage", "session", "--claude-home", str(home), "--breakdown"])
    assert "\x1b" not in txt and "\u202e" not in txt and "line2" in txt
    assert not any(x.startswith("line2") for x in txt.splitlines())


def test_crash_artefacts_are_read_without_losing_the_rest(tmp_path):
    crash = REPO / "examples" / "crash"
    home = tmp_path / "h"
    d = home / "projects" / "-crash"
    d.mkdir(parents=True)
    files = sorted(crash.glob("*.jsonl"))
    for i, f in enumerate(files):
        shutil.copy(f, d / f"{i:08d}-0000-4000-8000-000000000000.jsonl")
    c = collect(claude_home=str(home))
    assert len(files) >= 5 and c.coverage[0].sessions == len(files)
    t = c.tally["claude-code"]
    assert t.torn_tail_bytes > 0
    # every artefact is the files_basic transcript (10 API messages); damage loses at most one line
    # and the copies share message ids, so the files are ONE set of responses
    assert 9 <= len(c.events) <= 10


def test_no_claude_data_is_a_true_zero_and_other_providers_are_null(tmp_path):
    code, out = run(["usage", "daily", "--claude-home", str(tmp_path / "nothing"), "--format", "json"])
    s = jrows(out)[-1]
    assert code == 0 and s["messages"] == 0
    cov = {c["provider"]: c for c in s["coverage"]}
    assert cov["claude-code"]["state"] == "absent" and cov["claude-code"]["sessions"] == 0
    # naming a Claude root leaves the others not looked at: blank, never 0
    for p in ("codex", "gemini-cli", "opencode", "crush"):
        assert cov[p]["state"] in ("not_looked", "no_adapter") and cov[p]["sessions"] is None
    code, out = run(["usage", "daily", "--home", str(tmp_path / "nothing"), "--format", "json"])
    cov = {c["provider"]: c for c in jrows(out)[-1]["coverage"]}
    assert all(c["sessions"] == 0 for c in cov.values() if c["state"] == "absent")
    assert all(c["sessions"] is None for c in cov.values() if c["state"] != "absent")


def test_days_are_local_days_of_the_named_zone():
    c = collect(claude_home=str(HOME_258))
    # the corpus was written around 04:25 UTC: the previous evening in Los Angeles
    la = build(c, "daily", zone("America/Los_Angeles"))
    utc = build(c, "daily", zone("UTC"))
    assert [r.period for r in utc.rows] == ["2026-11-30"] and [r.period for r in la.rows] == ["2026-11-29"]
    code, out = run(["usage", "daily", "--claude-home", str(HOME_258), "--timezone", "Asia/Tokyo"])
    assert "Asia/Tokyo (UTC+09:00)" in out and "2026-11-30" in out
    code, out = run(["usage", "daily", "--claude-home", str(HOME_258), "--since", "2026-12-01", "--format", "json"])
    assert jrows(out)[-1]["messages"] == 0 and jrows(out)[-1]["excluded_by_dates"] == 47


def test_by_model_and_by_project_partition_the_total():
    for by in ("model", "project", "provider"):
        code, out = run(["usage", "daily", "--claude-home", str(HOME_258), "--by", by, "--format", "json"])
        rows = [r for r in jrows(out) if r["kind"] == "period"]
        assert sum(r["total_tokens"] for r in rows) == jrows(out)[-1]["total_tokens"]
        assert all(r["group"] for r in rows)
    code, out = run(["usage", "daily", "--claude-home", str(HOME_258), "--by", "model", "--format", "json"])
    assert {r["group"] for r in jrows(out) if r["kind"] == "period"} == {"claude-opus-5", "claude-sonnet-4-5-20250929"}


# -- prices ---------------------------------------------------------------------------------

def test_price_table_names_its_source_and_prices_cache_and_tiers():
    t = P.load()
    d = t.describe()
    assert "litellm" in d["source"].lower() and d["sha256"] and d["retrieved"] and "MIT" in d["licence"]
    p = t.lookup("claude-opus-5")
    assert p.base.input == 5e-06 and p.base.cache_read < p.base.input < p.base.cache_write < p.base.cache_write_1h
    assert t.lookup("claude-opus-5[1m]").key == "claude-opus-5"
    assert t.lookup("claude-opus-9") is None and t.lookup("<synthetic>") is None
    tiered = t.lookup("gpt-5.5")
    (threshold, r), = tiered.tiers
    # a request over the threshold is priced at the tier's rates for EVERY token type
    below = P.cost(tiered, input=threshold, output=1000)
    above = P.cost(tiered, input=threshold + 1, output=1000)
    assert above == pytest.approx((threshold + 1) * r.input + 1000 * r.output)
    assert below == pytest.approx(threshold * tiered.base.input + 1000 * tiered.base.output)


def test_refresh_from_a_downloaded_table(tmp_path):
    src = tmp_path / "model_prices_and_context_window.json"
    src.write_text(json.dumps({
        "sample_spec": {"input_cost_per_token": 0},
        "claude-x": {"litellm_provider": "anthropic", "mode": "chat", "input_cost_per_token": 1e-06,
                     "output_cost_per_token": 2e-06, "supports_vision": True},
        "some-image-model": {"litellm_provider": "openai", "mode": "image_generation", "input_cost_per_token": 1},
        "other/vendor": {"litellm_provider": "fireworks_ai", "mode": "chat", "input_cost_per_token": 1,
                         "output_cost_per_token": 1}}))
    out = tmp_path / "prices.json"
    assert P.main(["--refresh", str(src), "--source", "test", "--out", str(out)]) == 0
    t = P.load(str(out))
    assert set(t.models) == {"claude-x"} and "supports_vision" not in t.models["claude-x"]
    assert t.meta["version"] == "test" and len(t.meta["sha256"]) == 64
    assert t.lookup("claude-x-20260101").key == "claude-x"


# -- blocks ---------------------------------------------------------------------------------

def _ev(ts: float, tokens: int = 100, model: str = "claude-opus-5") -> Event:
    return Event("claude-code", "s", "main", None, model, ts, tokens, 0, 0, 0, key=None)


def test_windows_open_at_the_first_message_after_the_previous_closed():
    t0 = 1_800_000_000.0 + 1234  # not on the hour
    evs = [_ev(t0), _ev(t0 + 3600), _ev(t0 + 5 * 3600 - 1), _ev(t0 + 5 * 3600), _ev(t0 + 12 * 3600)]
    ws = windows(evs, now=t0 + 100 * 3600)
    assert [w.start for w in ws] == [t0, t0 + 5 * 3600, t0 + 12 * 3600]
    assert [w.totals.messages for w in ws] == [3, 1, 1]
    assert ws[2].gap_before == pytest.approx(2 * 3600)
    hour = windows(evs, align="hour", now=t0 + 100 * 3600)
    assert hour[0].start == t0 - (t0 % 3600)
    assert not any(w.active for w in ws)


def test_active_window_burn_rate_and_projection():
    t0 = 1_800_000_000.0
    ws = windows([_ev(t0, 6000), _ev(t0 + 600, 6000)], now=t0 + 1200)
    w = ws[-1]
    assert w.active and w.burn["tokens_per_minute"] == pytest.approx(600.0)
    assert w.projection["total_tokens"] == 12000 + 600 * (5 * 60 - 20)
    assert w.burn["cost_usd_per_hour"] == pytest.approx(w.totals.cost() * 3)


def test_blocks_command_on_the_real_corpus():
    code, out = run(["usage", "blocks", "--claude-home", str(HOME_258), "--format", "json"])
    rows = [r for r in jrows(out) if r["kind"] == "window"]
    assert len(rows) == 1 and rows[0]["total_tokens"] == jrows(out)[-1]["total_tokens"] == 121572
    assert rows[0]["active"] is False and rows[0]["burn_rate"] is None


# -- other providers, through the providers layer --------------------------------------------

def test_opencode_sessions_equal_the_clients_own_sums_and_children_join_their_parent():
    """examples/home holds an opencode.db written by the real opencode client: each session row
    carries opencode's own token sums over its steps; ours (per step, deduplicated) must match,
    a task child session counted inside its parent."""
    from sessionsift.providers.scope import RootRequest, survey

    sv = survey(RootRequest(home=str(REPO / "examples" / "home"), only=("opencode",)))
    refs = sv.entry("opencode").sessions
    fam: dict[str, dict] = {}
    for r in refs:
        t = r.extra["recorded_tokens"]
        agg = fam.setdefault(r.parent_session_id or r.session_id, {"input": 0, "output": 0, "cache_read": 0, "n": 0})
        agg["input"] += t["input"]
        agg["output"] += t["output"] + t["reasoning"]
        agg["cache_read"] += t["cache_read"]
        agg["n"] += 1
    assert any(a["n"] > 1 for a in fam.values())  # a parent with a child session
    code, out = run(["usage", "session", "--home", str(REPO / "examples" / "home"), "--provider", "opencode",
                     "--format", "json"])
    rows = {r["session_id"]: r for r in jrows(out) if r["kind"] == "session"}
    assert set(rows) == set(fam)
    for sid, a in fam.items():
        r = rows[sid]
        assert (r["input_tokens"], r["output_tokens"], r["cache_read_tokens"]) == (a["input"], a["output"], a["cache_read"])
        assert r["cost_usd"] is None and r["no_price"] == ["mock-model"]
        assert r["client_recorded"]["source"] == "opencode session.cost" and r["client_recorded"]["cost_usd"] == 0.0
    cov = {c["provider"]: c for c in jrows(out)[-1]["coverage"]}
    kids = sum(1 for r in refs if r.parent_session_id is not None)  # counted apart (docs/cli.md "Coverage")
    assert (cov["opencode"]["sessions"], cov["opencode"]["subagents"]) == (len(refs) - kids, kids) and kids
    assert cov["claude-code"]["state"] == "not_looked"


def test_crush_keeps_no_per_message_usage_so_its_tokens_are_unknown():
    code, out = run(["usage", "session", "--home", str(REPO / "examples" / "home"), "--provider", "crush",
                     "--format", "json"])
    rows = [r for r in jrows(out) if r["kind"] == "session"]
    assert rows and all(r["messages"] == 0 and r["messages_without_usage"] > 0 for r in rows)
    assert all(r["input_tokens"] is None and r["cost_usd"] is None and r["cost_is_lower_bound"] for r in rows)
    assert all(r["client_recorded"]["source"] == "Crush sessions.cost" for r in rows)
    s = jrows(out)[-1]
    assert s["total_tokens"] is None and any("recorded no usage" in n for n in s["notes"])


def test_the_split_reading_equals_the_plain_one(tmp_path, monkeypatch):
    """A large store is read by two processes (a file bigger than half the store is cut at a line
    boundary): the same events, the same figures. Here the threshold is lowered so the real
    corpora (and one long transcript of three concatenated real sessions) take that path."""
    import sessionsift.providers.claude.usage_scan as UC

    home = _copy_home(tmp_path)
    d = home / "projects" / "-long"
    d.mkdir()
    src = sorted((HOME_332 / "projects").glob("*/*.jsonl"))[:3]
    (d / "77777777-0000-4000-8000-000000000000.jsonl").write_bytes(b"".join(p.read_bytes() for p in src))
    plain = collect(claude_home=str(home))
    monkeypatch.setattr(UC, "PARALLEL_MIN_BYTES", 1)
    split = collect(claude_home=str(home))

    def key(c):
        return sorted((e.key, e.session_id, e.lane, e.total(), e.copies) for e in c.events)

    assert key(split) == key(plain) and len(plain.events) > 40
    assert split.tally["claude-code"].__dict__ == plain.tally["claude-code"].__dict__


def test_plot_writes_html_png_and_svg(tmp_path):
    for ext in ("html", "png", "svg"):
        f = tmp_path / f"u.{ext}"
        code, out = run(["usage", "daily", "--claude-home", str(HOME_258), "--plot", str(f), "--format", "json"])
        assert code == 0 and jrows(out)[-1]["plot"] == str(f)
        data = f.read_bytes()
        if ext == "png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
        else:
            assert b"<svg" in data
        if ext == "html":
            assert b"2026-11-30" in data and b"claude-opus-5" in data and b"<script" not in data
    code, out = run(["usage", "daily", "--claude-home", str(HOME_258), "--plot", str(tmp_path / "u.txt")])
    assert code == 2


def test_zeroed_top_level_counts_are_read_from_iterations(tmp_path):
    """Imitates QT-041's second form (measured on real 2.1.258 transcripts, which no mock-driven
    run produces): the only copies of one message have the four top-level counts zeroed while
    `usage.iterations[]` keeps the real values. The message counts with its real tokens."""
    home = _copy_home(tmp_path)
    t = home / "projects" / "-tmp-ssift-rc-todos-work" / "934337bf-5048-5090-a52a-998dd6ed05bb.jsonl"
    before = {e.key: e.total() for e in collect(claude_home=str(home)).events}
    target = None

    def mutate(lines):
        nonlocal target
        out = []
        for ln in lines:
            o = json.loads(ln)
            if o.get("type") == "assistant" and (target is None or o["message"]["id"] == target):
                target = o["message"]["id"]
                u = o["message"]["usage"]
                u["iterations"] = [{k: u[k] for k in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                                      "cache_creation_input_tokens")}]
                for k in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
                    u[k] = 0
                ln = json.dumps(o).encode() + b"\n"
            out.append(ln)
        return out

    _rewrite(t, mutate)
    c = collect(claude_home=str(home))
    after = {e.key: e.total() for e in c.events}
    assert after == before and f"claude-code:{target}" in after and after[f"claude-code:{target}"] > 0
    assert c.tally["claude-code"].from_iterations >= 1
    code, out = run(["usage", "daily", "--claude-home", str(home), "--format", "json"])
    assert any("iterations" in n for n in jrows(out)[-1]["notes"])


def test_day_arguments():
    from datetime import date, datetime, timezone

    from sessionsift.errors import UsageError
    from sessionsift.usage.report import parse_day

    z = zone("UTC")
    now = datetime(2026, 12, 1, 8, 0, tzinfo=timezone.utc)
    assert parse_day("7d", z, now) == date(2026, 11, 25)  # seven days, today included
    assert parse_day("1w", z, now) == date(2026, 11, 25)
    assert parse_day("20261130", z) == parse_day("2026-11-30", z) == date(2026, 11, 30)
    for bad in ("yesterday", "0d", "2026-13-01"):
        with pytest.raises(UsageError):
            parse_day(bad, z)
    with pytest.raises(UsageError):
        zone("Mars/Olympus")


def test_a_cost_the_client_wrote_on_its_records_is_shown_beside_ours(tmp_path):
    """Imitates older Claude Code clients, which wrote `costUSD` on every assistant record (no
    client version the harness runs does): here twice our price, so the two must be shown apart
    and said to differ; the cost column stays ours."""
    home = _copy_home(tmp_path)
    t = home / "projects" / "-tmp-ssift-rc-todos-work" / "934337bf-5048-5090-a52a-998dd6ed05bb.jsonl"
    table = P.load()

    def mutate(lines):
        out = []
        for ln in lines:
            o = json.loads(ln)
            if o.get("type") == "assistant":
                u = o["message"]["usage"]
                o["costUSD"] = 2 * P.cost(table.lookup("claude-opus-5"), u["input_tokens"], u["output_tokens"])
                ln = json.dumps(o).encode() + b"\n"
            out.append(ln)
        return out

    _rewrite(t, mutate)
    code, out = run(["usage", "session", "--claude-home", str(home), "--format", "json"])
    r = [x for x in jrows(out) if x.get("session_id") == "934337bf-5048-5090-a52a-998dd6ed05bb"][0]
    assert r["client_cost_messages"] == r["messages"] == 4
    assert r["client_cost_usd"] == pytest.approx(2 * r["cost_usd"], rel=1e-6)
    assert any("cost their client recorded" in n and "differ" in n for n in jrows(out)[-1]["notes"])


def test_codex_running_totals_restart_per_process_and_the_check_sums_each_run():
    """examples/codex-legacy-home: Codex 0.50.0 run for real, resumed in a second process, which
    starts its running total again. Our per-response figures must equal the sum of each run's last
    running total (computed here from the rollout itself), and the cross-check must stay quiet."""
    home = REPO / "examples" / "codex-legacy-home"
    code, out = run(["usage", "session", "--codex-home", str(home), "--format", "json"])
    rows = {r["session_id"]: r for r in jrows(out) if r["kind"] == "session"}
    assert rows and jrows(out)[-1]["notes"] == []
    restarted = 0
    for f in sorted(home.rglob("rollout-*.jsonl")):
        runs, prev = [], None
        for line in f.read_bytes().splitlines():
            o = json.loads(line)
            p = o.get("payload") or {}
            if o.get("type") == "event_msg" and p.get("type") == "token_count" and p.get("info"):
                t = p["info"]["total_token_usage"]
                v = t["input_tokens"] - t.get("cached_input_tokens", 0)
                if prev is None or t["total_tokens"] < prev:
                    runs.append(v)
                else:
                    runs[-1] = v
                prev = t["total_tokens"]
        sid = f.stem[-36:]
        if runs and sid in rows:
            assert rows[sid]["input_tokens"] == sum(runs), sid
            restarted += len(runs) > 1
    assert restarted >= 1


def test_opencode_messages_without_usage_are_counted_per_message():
    """opencode records usage once per assistant message, on its step-finish part; the message's
    text parts carry none. `usage` counted each assistant text part as a message "without usage"
    (examples/opencode-home: "18 +10?"), though only the killed session's last message, cut off
    mid-step by SIGKILL (ground truth `killed`), recorded none. The oracle: the real client's
    database, assistant messages with no step-finish part and no non-zero tokens of their own."""
    import sqlite3

    home = REPO / "examples" / "opencode-home"
    db = sqlite3.connect(f"file:{home / 'opencode.db'}?mode=ro&immutable=1", uri=True)
    finished = {m for (m,) in db.execute("select message_id from part where json_extract(data, '$.type') = 'step-finish'")}
    unpaid: dict[str, int] = {}
    for mid, sid, data in db.execute("select id, session_id, data from message"):
        d = json.loads(data)
        toks = d.get("tokens") or {}
        spent = any(v for k, v in toks.items() if k != "cache") or any((toks.get("cache") or {}).values())
        if d.get("role") == "assistant" and mid not in finished and not spent:
            unpaid[sid] = unpaid.get(sid, 0) + 1
    killed = json.loads((REPO / "examples" / "opencode-ground-truth" / "killed.json").read_text())
    assert unpaid == {killed["session_ids_from_client_events"][0]: 1}  # the premise, from the client's own rows
    code, out = run(["usage", "session", "--opencode-home", str(home), "--format", "json"])
    rows = jrows(out)
    got = {r["session_id"]: r["messages_without_usage"] for r in rows if r["kind"] == "session"}
    assert {s: n for s, n in got.items() if n} == unpaid and len(got) >= 6
    assert rows[-1]["messages_without_usage"] == 1 and rows[-1]["messages"] == 18
    code, out = run(["usage", "session", "--opencode-home", str(home)])
    assert "18 +1?" in out and "1 assistant message without usage" in out


def test_blocks_say_why_other_providers_are_left_out_when_no_provider_was_named():
    """`usage blocks --home examples/home` (no --provider typed) named the four other providers
    `not looked (not in --provider)`; it is blocks' own default (a Claude subscription's windows)."""
    code, out = run(["usage", "blocks", "--home", str(REPO / "examples" / "home"), "--format", "json"])
    cov = {c["provider"]: c for c in jrows(out)[-1]["coverage"]}
    assert cov["claude-code"]["state"] == "ok"
    for p in ("codex", "gemini-cli", "opencode", "crush"):
        assert cov[p]["state"] == "not_looked"
        assert cov[p]["reason"] == "blocks cover Claude Code unless --provider names others", cov[p]
    code, out = run(["usage", "blocks", "--home", str(REPO / "examples" / "home"), "--provider", "claude",
                     "--provider", "codex", "--format", "json"])
    cov = {c["provider"]: c for c in jrows(out)[-1]["coverage"]}
    assert cov["codex"]["state"] == "ok" and cov["crush"]["reason"] == "not in --provider"


def test_blocks_count_the_messages_that_recorded_no_usage_as_daily_does():
    """`usage blocks` left out the assistant messages that recorded no usage: on examples/home Crush's
    9 (its sample, written by Crush's own code, has no usage on any message) gave `messages_without_usage`
    0 and `cost_usd` 0.0 with `cost_complete` true -- an unknown cost said as a measured zero -- and Kilo
    Code's 1 (the real client's turn killed mid-stream) was 0 too, while daily said 9 and 1. Each such
    message now counts in its window (else in the summary), as daily and session count it."""
    home = str(REPO / "examples" / "home")
    seen = {}
    for p in ("claude-code", "codex", "gemini-cli", "opencode", "crush", "pi", "qwen-code", "copilot-cli",
              "kilo-code"):
        code, out = run(["usage", "daily", "--home", home, "--provider", p, "--format", "json"])
        assert code == 0, out
        daily = jrows(out)[-1]
        code, out = run(["usage", "blocks", "--home", home, "--provider", p, "--format", "json"])
        assert code == 0, out
        rows = jrows(out)
        blocks = rows[-1]
        assert blocks["messages_without_usage"] == daily["messages_without_usage"], p
        assert blocks["cost_complete"] == daily["cost_complete"] and blocks["cost_usd"] == daily["cost_usd"], p
        seen[p] = (blocks["messages_without_usage"],
                   sum(r["messages_without_usage"] for r in rows if r["kind"] == "window"))
    assert seen["crush"] == (9, 0)  # no response with usage: no window opens, the summary holds them
    assert seen["kilo-code"] == (1, 1)  # inside the window its paid responses opened


def test_live_blocks_say_what_they_read():
    """`usage blocks --live` kept the old reason `not in --provider` when no --provider was
    typed (f32bfa4 fixed the non-live view only), and with `--provider codex` it counted Codex's
    sessions in its coverage although the live view reads Claude Code only. Data: examples/home
    (real clients); --live-for stops the view after its first refresh."""
    home = str(REPO / "examples" / "home")
    code, out = run(["usage", "blocks", "--live", "--live-for", "0.1", "--home", home, "--format", "json"])
    rows = jrows(out)
    assert [r["kind"] for r in rows][:2] == ["header", "refresh"] and rows[-1]["kind"] == "summary"
    cov = {c["provider"]: c for c in rows[-1]["coverage"]}
    assert cov["claude-code"]["state"] == "ok" and cov["claude-code"]["sessions"] > 0
    for p in ("codex", "gemini-cli", "opencode", "crush"):
        assert cov[p]["reason"] == "blocks cover Claude Code unless --provider names others", cov[p]
    code, out = run(["usage", "blocks", "--live", "--live-for", "0.1", "--home", home, "--provider", "claude",
                     "--provider", "codex", "--format", "json"])
    summ = jrows(out)[-1]
    cov = {c["provider"]: c for c in summ["coverage"]}
    assert cov["codex"]["state"] == "not_looked" and cov["codex"]["sessions"] is None
    assert "--live follows Claude Code transcripts only" in cov["codex"]["reason"], cov["codex"]
    assert cov["crush"]["reason"] == "not in --provider"
    assert "Codex CLI not looked (--live follows Claude Code" in summ["coverage_line"]


def test_a_response_whose_token_counts_are_all_unknown_is_not_priced_at_zero(tmp_path):
    """Hand-made (no client writes it: every real usage object holds integers): the usage objects
    of one real session keep their keys but every count becomes a string, so each response is
    known to exist and its tokens are unknown. Its cost is unknown, never $0, and the totals say
    they are a lower bound with the count of such responses."""
    home = _copy_home(tmp_path)
    t = home / "projects" / "-tmp-ssift-rc-todos-work" / "934337bf-5048-5090-a52a-998dd6ed05bb.jsonl"

    def unknown_counts(lines):
        out = []
        for ln in lines:
            o = json.loads(ln)
            u = (o.get("message") or {}).get("usage") if o.get("type") == "assistant" else None
            if isinstance(u, dict):
                for k in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
                    u[k] = "unknown"
                u.pop("output_tokens_details", None)
                u.pop("cache_creation", None)
                ln = json.dumps(o).encode() + b"\n"
            out.append(ln)
        return out

    _rewrite(t, unknown_counts)
    code, out = run(["usage", "session", "--claude-home", str(home), "--format", "json"])
    assert code == 0
    rows = {r["session_id"]: r for r in jrows(out) if r["kind"] == "session"}
    r = rows["934337bf-5048-5090-a52a-998dd6ed05bb"]
    assert r["messages"] == 4 and r["total_tokens"] is None
    assert r["cost_usd"] is None
    assert r["cost_complete"] is False and r["cost_is_lower_bound"] is True
    assert r["messages_without_token_counts"] == 4
    s = jrows(out)[-1]
    assert s["cost_complete"] is False and s["messages_without_token_counts"] == 4
    assert any("4 response(s) recorded no token count" in n for n in s["notes"])
    # one known-zero response still costs 0 and is priced
    pr = Pricer()
    zero = Event("claude-code", "s", "main", None, "claude-opus-5", 0.0, 0, 0, 0, 0)
    assert pr.price(zero) == (0.0, None)
    none = Event("claude-code", "s", "main", None, "claude-opus-5", 0.0)
    assert pr.price(none) == (None, None)


def test_blocks_on_a_command_line_naming_only_another_agents_root_answer_for_it():
    """`usage blocks --kilo-home DIR` (no --provider): the root rule looks at Kilo Code only, and
    blocks, which cover the agents with subscription windows (Claude Code) when nobody names one,
    answered 'no usage in scope' with every agent not looked at. A command line naming only other
    agents' roots is answered for them, as with --provider (Kilo Code's real-client sample: one
    window, its message without usage in it); Claude Code is named as not looked at with the flag
    that would add it."""
    kilo = str(REPO / "examples" / "kilo-home")
    code, out = run(["usage", "blocks", "--kilo-home", kilo, "--format", "json"])
    assert code == 0, out
    rows = jrows(out)
    code, out2 = run(["usage", "blocks", "--kilo-home", kilo, "--provider", "kilo-code", "--format", "json"])
    assert code == 0, out2
    asked = jrows(out2)
    got = [r for r in rows if r["kind"] == "window"]
    assert len(got) == 1 and got == [r for r in asked if r["kind"] == "window"]
    assert got[0]["messages_without_usage"] == 1
    cov = {c["provider"]: c for c in rows[-1]["coverage"]}
    assert cov["claude-code"]["state"] == "not_looked" and "--claude-home" in cov["claude-code"]["reason"]


def test_the_pricer_looks_each_model_up_once_and_prices_as_the_table_does(monkeypatch):
    """Pricer.price looks a model's quote up once (it looked it up again for every event: 28,827
    lookups in a warm `usage daily` over 4,766 transcripts) and still prices every event of the
    real client's transcripts exactly as prices.cost_of does."""
    c = collect(claude_home=str(HOME_258))
    events = list(c.events)
    assert len(events) > 10
    table = P.load()
    want = [P.cost_of(table, e.model, e.input, e.output, e.cache_read, e.cache_write, e.cache_write_1h, e.speed, e.geo)
            for e in events]
    calls: list = []
    real = type(table).lookup
    monkeypatch.setattr(type(table), "lookup", lambda self, m: calls.append(m) or real(self, m))
    pr = Pricer(table)
    assert [pr.price(e) for e in events] == want
    from collections import Counter

    per_model = Counter(calls)  # once for the models used, once for its quote
    assert len(events) > 2 * len(per_model) and max(per_model.values()) == 2
