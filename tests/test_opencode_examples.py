"""The committed opencode sample (examples/opencode-home: one opencode.db written by the real
opencode 1.18.33 for five scenarios; examples/opencode-legacy-home: the JSON tree 1.1.65 writes)
reads back as its ground truth. No client needed: this runs everywhere."""
from __future__ import annotations

import json

import pytest

from tests.conftest import EXAMPLES
from tests.realclient.opencode.checks import _read, check_scenario

GT = sorted((EXAMPLES / "opencode-ground-truth").glob("*.json"))
LEGACY_GT = sorted((EXAMPLES / "opencode-legacy-ground-truth").glob("*.json"))


class _Run:
    def __init__(self, truth):
        self.truth = truth


@pytest.mark.parametrize("gt", GT, ids=lambda p: p.stem)
def test_sample_scenario_matches_ground_truth(gt):
    truth = json.loads(gt.read_text())
    disc, sessions = _read(EXAMPLES / "opencode-home", truth["cwd"])
    check_scenario(_Run(truth), sessions)


@pytest.mark.parametrize("gt", LEGACY_GT, ids=lambda p: p.stem)
def test_legacy_sample_matches_ground_truth(gt):
    truth = json.loads(gt.read_text())
    disc, sessions = _read(EXAMPLES / "opencode-legacy-home", truth["cwd"])
    assert all(s[0].extra["store"] == "legacy-json" for s in sessions.values())
    check_scenario(_Run(truth), sessions, legacy=True)


def test_sample_holds_every_scenario_in_one_database():
    disc, sessions = _read(EXAMPLES / "opencode-home")
    from tests.realclient.opencode.scenarios import SAMPLE

    assert [g.stem for g in GT] == sorted(SAMPLE)
    mains = {json.loads(g.read_text())["session_ids_from_client_events"][0] for g in GT}
    assert mains <= set(sessions) and len(sessions) == len(GT) + 1  # + the subagent's child session


def test_step_tokens_add_up_to_the_session_sums_opencode_recorded():
    """opencode sums its steps into session.tokens_*: our per-step Tokens must add up to them
    (its tokens_output excludes reasoning in 1.18, ours includes it: output = output + reasoning)."""
    disc, sessions = _read(EXAMPLES / "opencode-home")
    checked = 0
    for sid, (ref, recs, _) in sessions.items():
        rt = ref.extra["recorded_tokens"]
        toks = [r.tokens for r in recs if r.tokens is not None]
        assert sum(t.input for t in toks) == rt["input"]
        assert sum(t.cache_read for t in toks) == rt["cache_read"]
        assert sum(t.reasoning for t in toks) == rt["reasoning"]
        assert sum(t.output for t in toks) == rt["output"] + rt["reasoning"]
        checked += bool(toks)
    assert checked == len(sessions) == len(GT) + 1
