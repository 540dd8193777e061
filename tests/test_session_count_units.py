"""The session count of list, clean, audit size and audit secrets is in the coverage line's unit
(sessions = top-level, subagents apart; commit 1529f93): '41 sessions' next to
'coverage: ... 36 sessions (+7 subagents)' counted other providers' child sessions as sessions.
JSON `summary.sessions` is top-level sessions too, other providers' child sessions (subagents and
helper sessions, rows of their own) in `child_sessions` (docs/json.md). Data: examples/home,
written by the real clients (Crush's sample by its own migrations and queries)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HOME = REPO / "examples" / "home"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionsift", *args, "--home", str(HOME)],
                          capture_output=True, text=True, timeout=300, cwd=REPO)


@pytest.mark.parametrize("cmd,prefix", [(("list",), ""), (("clean",), "68 candidates ("), (("audit", "size"), ""),
                                        (("audit", "secrets"), "0 findings in 0 of ")],
                         ids=["list", "clean", "audit-size", "audit-secrets"])
def test_count_is_in_the_coverage_unit(cmd, prefix):
    rows = [json.loads(x) for x in cli(*cmd, "--format", "json").stdout.splitlines() if x.strip()]
    head, summ = rows[0], rows[-1]
    ok = [c for c in summ["coverage"] if c["state"] == "ok"]
    top, subs = sum(c["sessions"] for c in ok), sum(c["subagents"] or 0 for c in ok)
    helpers = sum(c["helper_sessions"] or 0 for c in ok)
    others = sum(c["subagents"] or 0 for c in ok if c["provider"] != "claude-code")
    assert subs > others > 0 and helpers == 1  # Crush's title-generation session
    assert summ["sessions"] == top and summ["child_sessions"] == others + helpers
    if "sessions" in head:  # every cross-provider header: the same unit
        assert (head["sessions"], head["subagents"], head["helper_sessions"]) == (top, subs, helpers)
    if cmd == ("clean",):
        want = f"{prefix}{top} sessions + {others + helpers} child sessions"
    else:
        want = f"{prefix}{top} sessions (+{subs} subagents, +1 helper session)"
    lines = cli(*cmd).stdout.splitlines()
    assert any(ln.startswith(want) for ln in lines if not ln.startswith("coverage:")), (want, lines[-3:])
    assert not any(ln.startswith(f"{prefix}{top + others + helpers} sessions") for ln in lines), lines[-3:]


def test_an_uncounted_subagent_dir_is_a_lower_bound_not_zero():
    """A provider whose subagents could not be counted (coverage `subagents: null`, e.g. an
    unlistable subagent dir) must not print as if it had none. Pure function on coverage values
    (hand-made: the unlistable dir itself is covered by the Gemini reader's own tests)."""
    from types import SimpleNamespace as C

    from sessionsift.cli.options import sessions_unit

    covs = [C(state="ok", provider="claude-code", sessions=3, subagents=2),
            C(state="ok", provider="gemini", sessions=2, subagents=None)]
    assert sessions_unit(5, covs) == "5 sessions (+2 subagents or more: some could not be counted)"
    covs[1].subagents = 1
    assert sessions_unit(6, covs) == "5 sessions (+3 subagents)"
    covs[0].sessions = None
    assert sessions_unit(6, covs) == "6 sessions"
