"""A counted needle search takes its user.message hits' final labels without a lane view where the
bytes rule a draft out (issue 25 item 5: the selective literal cold answer reads the bytes of the
file with a hit, not a parse of all of it): a draft (user.unsent) has a same-parent user sibling,
whose line holds the parent's uuid; where no other line holds it as a user record's parent, no
hit is a draft (providers/claude/search/scan.py `_no_sibling_in_bytes`).

Data: examples/claude-home and examples/newest-client (the real client, 2.1.258 and 2.1.332; no
draft in them), and the real client's census_recall scenario (a prompt recalled with Escape and
re-sent edited: one draft), tests/realclient/scenarios_census.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sessionsift.providers.claude.discover import resolve_targets
from sessionsift.providers.claude.model import lane as LM
from sessionsift.providers.claude.search import lanes as A
from sessionsift.providers.claude.search import scan
from sessionsift.search import Query

ROOT = Path(__file__).resolve().parent.parent
HOMES = [ROOT / "examples" / "claude-home", ROOT / "examples" / "newest-client" / "2.1.332" / "claude-home"]
QUERIES = [
    Query(patterns=("the",), include=("user",), count_by="label"),
    Query(patterns=("file",), ignore_case=True, count_by="tool"),
    Query(patterns=("P1",), count_by="total"),
    Query(patterns=("P1",), include=("user",), count_by="label"),
    Query(patterns=("P[0-9]",), include=("user.unsent", "user.message"), count_by="label"),
    Query(patterns=("question",), count_by="session"),
    Query(patterns=("P2",), sessions_only=True),
]


def _run(q: Query, home: Path, monkeypatch, from_bytes: bool, home_is_root: bool = True):
    monkeypatch.setattr(scan, "DRAFTS_FROM_BYTES", from_bytes)
    run = A.lane_search(q, resolve_targets([], home), use_index=False)
    counts: dict = {}
    per_lane = []
    for lane, o in run.outcomes():
        A.merge_counts(q.count_by or "total", counts, o.counts)
        per_lane.append((str(lane.path), o.hit_count))
    sm = dataclasses.asdict(run.summary)
    for k in ("records_parsed", "shape_skipped", "shape_counted", "index_counts", "index_why"):
        sm.pop(k)
    return counts, sm, per_lane


def _builds(monkeypatch) -> list:
    """The lanes whose lane view is built (in this process: no forked reader)."""
    monkeypatch.setenv("SESSIONSIFT_NO_FORK", "1")
    made: list = []
    real = LM.LaneIndex.build.__func__

    def counted(cls, lane, *a, **k):
        made.append(lane.path)
        return real(cls, lane, *a, **k)

    monkeypatch.setattr(LM.LaneIndex, "build", classmethod(counted))
    return made


@pytest.mark.parametrize("home", HOMES, ids=["2.1.258", "2.1.332"])
def test_a_counted_prompt_literal_builds_no_lane_view(home, monkeypatch):
    made = _builds(monkeypatch)
    q = Query(patterns=("the",), include=("user",), count_by="label")  # a needle (>= 3 bytes): lines picked
    counts, sm, per_lane = _run(q, home, monkeypatch, True)
    assert counts["user.message"] == 3
    assert made == []  # before: one lane view per transcript with a hit (2 on each corpus)
    _run(q, home, monkeypatch, False)
    assert len(made) == 2


@pytest.mark.parametrize("home", HOMES, ids=["2.1.258", "2.1.332"])
def test_the_bytes_answer_what_the_lane_view_answers(home, monkeypatch):
    for q in QUERIES:
        assert _run(q, home, monkeypatch, True) == _run(q, home, monkeypatch, False), q


@pytest.fixture(scope="module")
def recall(tmp_path_factory) -> dict:
    from tests.realclient import scenarios_census as SC
    from tests.realclient.common.host import prereq

    return prereq(SC.run_all, tmp_path_factory.mktemp("drafts-rc"), ("census_recall",))["census_recall"]


def test_a_real_draft_is_still_a_draft(recall, monkeypatch):
    home = Path(recall["config_dir"])
    made = _builds(monkeypatch)
    q = Query(patterns=("question",), include=("user.unsent",), count_by="total")
    on = _run(q, home, monkeypatch, True)
    assert on == _run(q, home, monkeypatch, False)
    assert on[1]["hits"] == 1  # the recalled prompt: its re-sent sibling made the lane view decide
    assert made  # the sibling was seen in the bytes
    q = Query(patterns=("question",), include=("user.message",), count_by="label")
    assert _run(q, home, monkeypatch, True) == _run(q, home, monkeypatch, False)
