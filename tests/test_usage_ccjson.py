"""`usage ... --json` in ccusage's shapes, `--order asc|desc` and `blocks --token-limit`, side by side
with ccusage itself (tests/realclient/ccusage.py: npm ccusage 20.0.24, run offline on a copy of the
corpus) on transcripts written by the real Claude Code 2.1.258 client (examples/claude-home).

One corpus is a mutated copy, said so where it is made: every other project's timestamps moved 12
hours later, so that two windows more than five hours apart (and ccusage's gap block between them)
exist; no client run gives a session half a day after another on this corpus."""

from __future__ import annotations

import datetime as dt
import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from sessionsift.cli import main
from tests.realclient import ccusage as CC
from tests.realclient.common.host import prereq

REPO = Path(__file__).resolve().parent.parent
EX = REPO / "examples"
REPORTS = ("daily", "weekly", "monthly", "session")


@pytest.fixture(scope="module")
def ccusage_ready():
    return prereq(CC.ensure, label="ccusage")


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(args)
        except SystemExit as exc:
            code = int(exc.code or 0)
        else:
            code = 0
    return code, out.getvalue(), err.getvalue()


def ours_doc(args: list[str]) -> dict:
    code, out, err = run(["usage", *args, "--json", "--timezone", "UTC"])
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def home258(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("cc258")
    shutil.copytree(EX / "claude-home" / "projects", home / ".claude" / "projects")
    return home


def _shift(v: str, hours: int) -> str:
    d = dt.datetime.fromisoformat(v.replace("Z", "+00:00")) + dt.timedelta(hours=hours)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


@pytest.fixture(scope="module")
def home_two_windows(tmp_path_factory) -> Path:
    """MUTATED copy of examples/claude-home: every other project directory's record timestamps 12 h
    later (re-serialised compactly, as the client writes): two windows and a gap."""
    home = tmp_path_factory.mktemp("cc2w")
    dst = home / ".claude" / "projects"
    for i, pd in enumerate(sorted((EX / "claude-home" / "projects").iterdir())):
        if i % 2 == 0:
            shutil.copytree(pd, dst / pd.name)
            continue
        for f in sorted(pd.rglob("*")):
            if f.is_dir():
                continue
            out = dst / pd.name / f.relative_to(pd)
            out.parent.mkdir(parents=True, exist_ok=True)
            if f.suffix != ".jsonl":
                shutil.copy2(f, out)
                continue
            lines = []
            for ln in f.read_bytes().splitlines():
                o = json.loads(ln)
                if isinstance(o.get("timestamp"), str):
                    o["timestamp"] = _shift(o["timestamp"], 12)
                lines.append(json.dumps(o, separators=(",", ":"), ensure_ascii=False))
            out.write_text("\n".join(lines) + "\n")
    return home


def _keys(d, path="") -> set[str]:
    out: set[str] = set()
    if isinstance(d, dict):
        for k, v in d.items():
            out.add(f"{path}/{k}")
            out |= _keys(v, f"{path}/{k}")
    elif isinstance(d, list):
        for v in d:
            out |= _keys(v, f"{path}[]")
    return out


def _same(theirs: dict, mine: dict, where: str) -> None:
    """Every field ccusage gives is there with ccusage's value (costs to the micro-dollar)."""
    for k, v in theirs.items():
        assert k in mine, (where, k)
        if isinstance(v, float) or k in ("cost", "totalCost", "costUSD"):
            assert mine[k] == pytest.approx(v, abs=1e-6), (where, k)
        elif k == "modelBreakdowns":
            assert len(mine[k]) == len(v), where
            for a, b in zip(v, mine[k]):
                _same(a, b, f"{where}/{a['modelName']}")
        elif isinstance(v, dict):
            _same(v, mine[k], f"{where}/{k}")
        else:
            assert mine[k] == v, (where, k, v, mine[k])


@pytest.mark.parametrize("report", REPORTS)
def test_json_is_ccusages_document_with_its_figures(ccusage_ready, home258, report):
    claude = str(home258 / ".claude")
    for cc_args, our_args in ((["claude", report], ["--provider", "claude-code"]), ([report], [])):
        theirs = CC.run(home258, cc_args)
        mine = ours_doc([report, "--claude-home", claude, *our_args])
        assert _keys(theirs) <= _keys(mine), sorted(_keys(theirs) - _keys(mine))
        key = next(k for k in theirs if k != "totals")
        assert list(mine) == [key, "totals"]
        assert len(mine[key]) == len(theirs[key]) >= 1
        for t, m in zip(theirs[key], mine[key]):
            if report == "weekly":  # ISO weeks here (Monday first); ccusage's start on Sunday
                wk = m.pop("week", None) or m.pop("period")
                t.pop("week", None) or t.pop("period")
                assert dt.date.fromisoformat(wk).isoweekday() == 1
            _same(t, m, f"{' '.join(cc_args)}")
        _same(theirs["totals"], mine["totals"], "totals")
        assert (mine["totals"]["costIsLowerBound"], mine["totals"]["messagesWithoutUsage"]) == (False, 0)


def test_blocks_json_is_ccusages_with_its_gap_block(ccusage_ready, home_two_windows):
    theirs = CC.run(home_two_windows, ["blocks"])
    mine = ours_doc(["blocks", "--claude-home", str(home_two_windows / ".claude"), "--align", "hour"])
    assert [b["isGap"] for b in theirs["blocks"]] == [False, True, False]
    assert len(mine["blocks"]) == 3
    for t, m in zip(theirs["blocks"], mine["blocks"]):
        _same(t, m, t["id"])
    # --order desc: ccusage's newest first, the same blocks
    theirs_desc = CC.run(home_two_windows, ["blocks", "--order", "desc"])
    mine_desc = ours_doc(["blocks", "--claude-home", str(home_two_windows / ".claude"), "--align", "hour",
                          "--order", "desc"])
    assert [b["id"] for b in mine_desc["blocks"]] == [b["id"] for b in theirs_desc["blocks"]] == \
        [b["id"] for b in theirs["blocks"]][::-1]


def test_order_desc_puts_the_newest_first_everywhere(ccusage_ready, home_two_windows):
    claude = str(home_two_windows / ".claude")
    theirs = CC.run(home_two_windows, ["claude", "daily", "--order", "desc"])
    mine = ours_doc(["daily", "--claude-home", claude, "--provider", "claude-code", "--order", "desc"])
    assert [r["date"] for r in mine["daily"]] == [r["date"] for r in theirs["daily"]]
    # the JSON Lines rows and the text table follow the same order
    code, out, _ = run(["usage", "blocks", "--claude-home", claude, "--format", "json", "--order", "desc"])
    starts = [json.loads(x)["start"]["utc"] for x in out.splitlines() if json.loads(x)["kind"] == "window"]
    assert code == 0 and len(starts) == 2 and starts == sorted(starts, reverse=True)
    code, asc, _ = run(["usage", "blocks", "--claude-home", claude])
    code2, desc, _ = run(["usage", "blocks", "--claude-home", claude, "--order", "desc"])
    rows = lambda s: [ln for ln in s.splitlines() if ln[:4].isdigit()]  # noqa: E731
    assert (code, code2) == (0, 0) and len(rows(asc)) == 2 and rows(desc) == rows(asc)[::-1]


def _now_inside_first_window(monkeypatch, home: Path, minutes: float) -> float:
    """Run as if `minutes` after the first response (the window is then the active one)."""
    from sessionsift.cli import usage_view

    code, out, _ = run(["usage", "blocks", "--claude-home", str(home / ".claude"), "--format", "json"])
    first = next(json.loads(x) for x in out.splitlines() if json.loads(x)["kind"] == "window")
    t0 = dt.datetime.fromisoformat(first["start"]["utc"].replace("Z", "+00:00")).timestamp()
    now = t0 + minutes * 60
    monkeypatch.setattr(usage_view, "now_utc", lambda: now)
    return now


def test_token_limit_on_the_active_window(monkeypatch, home258):
    _now_inside_first_window(monkeypatch, home258, 30)
    claude = str(home258 / ".claude")
    code, out, _ = run(["usage", "blocks", "--claude-home", claude, "--format", "json", "--token-limit", "200000"])
    w = next(json.loads(x) for x in out.splitlines() if json.loads(x)["kind"] == "window")
    assert code == 0 and w["active"] is True
    used, projected = w["total_tokens"], w["projection"]["total_tokens"]
    assert used == 121572  # the 2.1.258 corpus's total (tests/test_usage.py computes it independently)
    want = "exceeds" if projected > 200000 else "warning" if projected > 160000 else "ok"
    assert w["token_limit"] == {"limit": 200000, "used_tokens": used, "used_percent": round(used / 2000, 1),
                                "remaining_tokens": 200000 - used, "projected_tokens": projected,
                                "projected_percent": round(projected / 2000, 1), "status": want}
    # ccusage's shape: tokenLimitStatus on the active block
    code, doc, _ = run(["usage", "blocks", "--claude-home", claude, "--json", "--token-limit", "200000"])
    b = json.loads(doc)["blocks"][0]
    assert code == 0 and b["isActive"] is True
    assert b["tokenLimitStatus"] == {"limit": 200000, "projectedUsage": projected,
                                     "percentUsed": round(projected / 2000, 1), "status": want}
    # text: the share of the limit per window, and what is left of it
    code, text, _ = run(["usage", "blocks", "--claude-home", claude, "--token-limit", "200000"])
    assert code == 0 and f"{used / 2000:.1f}%" in text
    assert f"token limit 200,000: {used:,} used, {200000 - used:,} left; projected {projected:,}" in text


def test_token_limit_max_is_the_largest_closed_window(monkeypatch, home_two_windows, home258):
    claude = str(home_two_windows / ".claude")
    code, out, _ = run(["usage", "blocks", "--claude-home", claude, "--format", "json", "--token-limit", "max"])
    ws = [json.loads(x) for x in out.splitlines() if json.loads(x)["kind"] == "window"]
    assert code == 0 and len(ws) == 2
    biggest = max(w["total_tokens"] for w in ws)
    assert [w["token_limit"]["limit"] for w in ws] == [biggest, biggest]
    assert sorted(w["token_limit"]["used_percent"] for w in ws)[-1] == 100.0
    # one window, the active one: `max` has no closed window to take the largest of (not 0)
    _now_inside_first_window(monkeypatch, home258, 10)
    code, _, err = run(["usage", "blocks", "--claude-home", str(home258 / ".claude"), "--token-limit", "max"])
    assert code == 2 and "no closed window" in err
    code, _, err = run(["usage", "blocks", "--claude-home", claude, "--token-limit", "lots"])
    assert code == 2 and "a number of tokens" in err


def test_json_and_format_json_are_two_formats(home258):
    code, _, err = run(["usage", "daily", "--claude-home", str(home258 / ".claude"), "--json", "--format", "json"])
    assert code == 2 and "two formats" in err
    code, _, err = run(["usage", "daily", "--claude-home", str(home258 / ".claude"), "--json", "--by", "model"])
    assert code == 2 and "group by project only" in err
