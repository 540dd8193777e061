"""`stats` takes each API response once across lanes (stats.dedupe_messages); where no response is
held by two lanes (a store without forks or resumed copies) it computes no merge at all: a warm
`stats` over 40 large sessions spent a third of its time there (benchmarks/large_sessions.py).
Data: examples/claude-home (the real client 2.1.258: no message id in two lanes)."""

from __future__ import annotations

from pathlib import Path

from sessionsift.providers.claude import stats as S
from sessionsift.providers.claude.discover import resolve_targets

REPO = Path(__file__).resolve().parents[1]


class _Untouchable(dict):
    def get(self, *a):  # noqa: D401 - the merge reads fields with .get
        raise AssertionError("a field of a response held once was read for the merge")

    def items(self):
        raise AssertionError("a field of a response held once was read for the merge")


def test_no_merge_is_computed_where_no_response_is_held_twice():
    res = S.stats(resolve_targets([], REPO / "examples" / "claude-home"))
    ids = [mid for ls in res.lanes for (_m, mid) in ls.per_msg if not mid.startswith("line:")]
    assert ids and len(ids) == len(set(ids))
    before = [dict(ls.per_msg) for ls in res.lanes]
    for ls in res.lanes:
        ls.per_msg = {k: _Untouchable(v) for k, v in ls.per_msg.items()}
    S.dedupe_messages(res.lanes)  # before: every field of every response read (AssertionError)
    assert [dict(ls.per_msg) for ls in res.lanes] == before
