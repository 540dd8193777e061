"""`cleanupPeriodDays` is merged the way Claude Code 2.1.258 merges its settings (read in the
client's code; docs/claims.md PLAN-019): `<data root>/settings.json` < `<cwd>/.claude/settings.json`
< `<git root or cwd>/.claude/settings.local.json` < policy. The settings files are written here by
hand: they are the person's, not the client's, so no client run is needed to make them."""
from __future__ import annotations

import json

from sessionsift.providers.claude.retention import period


def _set(p, days):
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"cleanupPeriodDays": days}))


def test_the_higher_layer_sets_the_period_and_local_settings_live_at_the_git_root(tmp_path):
    home, repo = tmp_path / "claude-home", tmp_path / "repo"
    cwd = repo / "sub"
    (repo / ".git").mkdir(parents=True)
    cwd.mkdir()
    _set(home / "settings.json", 10)
    _set(cwd / ".claude" / "settings.json", 5)
    _set(repo / ".claude" / "settings.local.json", 3)
    _set(cwd / ".claude" / "settings.local.json", 99)  # not the git root's: the client does not read it
    p = period(home, str(cwd), policy_dir=None)
    assert (p.days, p.source) == (3, f"localSettings ({repo / '.claude' / 'settings.local.json'})")
    assert [(l.name, l.value) for l in p.layers] == [("userSettings", 10), ("projectSettings", 5), ("localSettings", 3)]
    (repo / ".claude" / "settings.local.json").unlink()
    p = period(home, str(cwd), policy_dir=None)
    assert (p.days, p.source) == (5, f"projectSettings ({cwd / '.claude' / 'settings.json'})")
    (cwd / ".claude" / "settings.json").unlink()
    assert (period(home, str(cwd), policy_dir=None).days, period(home, None, policy_dir=None).days) == (10, 10)
    (home / "settings.json").unlink()
    p = period(home, str(cwd), policy_dir=None)
    assert (p.days, p.source, p.skipped) == (30, "default", None)


def test_policy_outranks_every_layer_and_an_unparseable_layer_stops_the_sweep(tmp_path):
    home, pol = tmp_path / "claude-home", tmp_path / "etc-claude-code"
    _set(home / "settings.json", 10)
    _set(pol / "managed-settings.json", 60)
    _set(pol / "managed-settings.d" / "20-later.json", 90)
    p = period(home, None, policy_dir=pol)
    assert (p.days, p.source) == (90, f"policySettings ({pol / 'managed-settings.d' / '20-later.json'})")
    (home / "settings.json").write_text("{not json")
    p = period(home, None, policy_dir=pol)
    assert p.days is None and p.source == "unknown" and p.skipped.startswith("settings_unknowable: ")
