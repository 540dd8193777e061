"""Claude Code's usage through the shared reading path (issue 23 item 1): the sessions read
through ``Provider.read`` and the one usage collection every other agent goes through
(usage/collect.py ``collect_refs``) count the same responses with the same tokens as the light
scan usage reads them with today (providers/claude/usage.py, ``collect_selection``), on the real
client's transcripts and on a store of forks (benchmarks/shared_ids.py's shape: every record of
the original copied into each fork with its message id). A fork's copies are one response: the
provider declares its dedup key unique across sessions (``Provider.usage_dedup_scope``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sessionsift.providers import deep_name, load
from sessionsift.providers.scope import RootRequest, select, survey
from sessionsift.usage import collect as UC

REPO = Path(__file__).resolve().parent.parent
FIELDS = ("input", "output", "cache_read", "cache_write", "reasoning")


def _both(home: Path):
    name = deep_name()
    sv = survey(RootRequest(roots={name: str(home)}, only=(name,)))
    fast = UC.collect_selection(select(sv, [], None))
    e = sv.entry(name)
    shared = UC.Collected()
    UC.collect_refs(shared, name, e.provider, list(e.sessions))
    return fast, shared


def _by_key(c) -> dict:
    return {ev.key: tuple(getattr(ev, f, None) for f in FIELDS) + (ev.model,) for ev in c.ledger.events}


def _forks(tmp_path: Path) -> Path:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import shared_ids
    finally:
        sys.path.pop(0)
    return shared_ids.build(tmp_path / "forks", 3, 2)


@pytest.mark.parametrize("home", ["examples/claude-home", "examples/newest-client/2.1.332/claude-home",
                                  "examples/captured/reply-before-prompt", "forks"])
def test_usage_read_through_provider_read_counts_what_the_light_scan_counts(home, tmp_path):
    root = _forks(tmp_path) if home == "forks" else REPO / home
    fast, shared = _both(root)
    a, b = _by_key(fast), _by_key(shared)
    assert a, "no usage read at all"
    assert len(shared.ledger.events) == len(fast.ledger.events)
    assert b == a


def test_claude_codes_dedup_key_is_unique_across_sessions():
    assert load(deep_name()).usage_dedup_scope == "provider"
