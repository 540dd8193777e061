"""A subagent lane counts as still writing when its last record is at most 300 s old and its last
stop_reason is not end_turn (docs/claims.md TAIL-004). Hand-made lanes: the boundary needs the
lane's age held exactly at 300 s, which `now` (an argument) gives and a client run cannot."""
from __future__ import annotations

import json
from datetime import datetime, timezone

from sessionsift.providers.claude.live.verdict import CHILD_FRESH_SECS, child_states
from tests.test_live_units import SID, _asst, _end, _home, _sess

T0 = datetime(2026, 1, 1, 0, 0, 9, tzinfo=timezone.utc).timestamp()


def _with_lane(tmp_path, records):
    home, p = _home(tmp_path, [_end()])
    lane = p.parent / SID / "subagents" / "agent-a1.jsonl"
    lane.parent.mkdir(parents=True)
    lane.write_text("".join(json.dumps(r) + "\n" for r in records))
    return _sess(home)


def test_a_lane_is_fresh_up_to_300_seconds_and_not_after(tmp_path):
    assert CHILD_FRESH_SECS == 300.0
    s = _with_lane(tmp_path, [_asst("tu_1", "Bash", {"command": "ls"}, ts="2026-01-01T00:00:09.000Z")])
    (at,) = child_states(s, T0 + 300)
    assert (at.live, at.age_secs, at.last_stop_reason, at.why) == (
        True, 300.0, "tool_use", "last record 300s old, last stop_reason=tool_use")
    (past,) = child_states(s, T0 + 300.5)
    assert (past.live, past.age_secs, past.why) == (False, 300.5, "last record 300s old (> 300s)")


def test_a_lane_that_ended_its_turn_is_not_writing_however_fresh(tmp_path):
    s = _with_lane(tmp_path, [_end()])
    (c,) = child_states(s, T0 + 1)
    assert (c.live, c.last_stop_reason, c.why) == (False, "end_turn", "ended with end_turn")


def test_a_lane_with_no_timestamp_is_not_taken_for_writing(tmp_path):
    rec = _asst("tu_1", "Bash", {"command": "ls"})
    del rec["timestamp"]
    (c,) = child_states(_with_lane(tmp_path, [rec]), T0)
    assert (c.live, c.age_secs, c.why) == (False, None, "no timestamped record")
