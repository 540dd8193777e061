"""The usage merge rule itself (sessionsift.usage.events: one response id is one response), each
branch stated once. HAND-MADE Events, not records: the rule is a pure function of two copies and
no client writes every ordering of them on demand (the real-client cases are
tests/test_usage_copies_realclient.py). Written because mutation testing
(benchmarks/mutation.py dedup) showed every mutant of `_prefer` and `_max` surviving
test_usage and test_usage_groups."""

from __future__ import annotations

from sessionsift.usage.events import Event, Ledger, merge


def ev(lane="main", ts=100.0, sid="s1", **tok) -> Event:
    return Event("claude-code", sid, lane, f"/p/{sid}", tok.pop("model", "m"), ts, key="msg_1", **tok)


def test_token_fields_take_the_per_field_maximum_and_an_unknown_field_stays_known_from_the_other():
    a = ev(input=10, output=None, cache_read=5)
    merge(a, ev(input=3, output=7, cache_read=None))
    assert (a.input, a.output, a.cache_read, a.cache_write) == (10, 7, 5, None)
    b = ev(input=None)
    merge(b, ev(input=None))
    assert b.input is None


def test_the_copy_with_the_larger_total_gives_the_attribution():
    old = ev(lane="agent-a", ts=50.0, sid="fork", input=1, output=1)
    merge(old, ev(lane="main", ts=200.0, sid="orig", input=10, output=10))
    assert (old.session_id, old.lane, old.ts) == ("orig", "main", 200.0)
    kept = ev(lane="main", ts=200.0, sid="orig", input=10, output=10)
    merge(kept, ev(lane="main", ts=50.0, sid="fork", input=1, output=1))
    assert (kept.session_id, kept.ts, kept.input, kept.output) == ("orig", 200.0, 10, 10)


def test_equal_totals_prefer_a_main_lane_copy_then_the_earliest_instant():
    sub_first = ev(lane="agent-a", ts=50.0, sid="s1", input=4)
    merge(sub_first, ev(lane="main", ts=90.0, sid="s2", input=4))
    assert (sub_first.lane, sub_first.session_id, sub_first.ts) == ("main", "s2", 90.0)
    main_first = ev(lane="main", ts=90.0, sid="s2", input=4)
    merge(main_first, ev(lane="agent-a", ts=10.0, sid="s1", input=4))
    assert (main_first.lane, main_first.session_id) == ("main", "s2")
    later = ev(ts=90.0, sid="s2", input=4)
    merge(later, ev(ts=80.0, sid="s3", input=4))
    assert (later.session_id, later.ts) == ("s3", 80.0)
    earlier = ev(ts=80.0, sid="s3", input=4)
    merge(earlier, ev(ts=90.0, sid="s2", input=4))
    assert (earlier.session_id, earlier.ts) == ("s3", 80.0)
    same = ev(ts=80.0, sid="s3", input=4)
    merge(same, ev(ts=80.0, sid="s4", input=4))
    assert same.session_id == "s3"  # a tie stays with the first copy read
    undated = ev(ts=None, sid="s5", input=4)
    merge(undated, ev(ts=70.0, sid="s6", input=4))
    assert (undated.session_id, undated.ts) == ("s6", 70.0)
    dated = ev(ts=70.0, sid="s6", input=4)
    merge(dated, ev(ts=None, sid="s5", input=4))
    assert (dated.session_id, dated.ts) == ("s6", 70.0)


def test_the_preferred_copy_brings_its_model_only_when_it_names_one_and_client_costs_take_the_maximum():
    a = ev(model="m-old", input=1, client_cost=0.5)
    merge(a, ev(model=None, input=9, client_cost=None))
    assert (a.model, a.client_cost) == ("m-old", 0.5)
    b = ev(model="m-old", input=1, client_cost=None)
    merge(b, ev(model="m-new", input=9, client_cost=0.25))
    assert (b.model, b.client_cost) == ("m-new", 0.25)
    c = ev(input=1, client_cost=0.5)
    merge(c, ev(input=1, client_cost=0.75))
    assert c.client_cost == 0.75
    d = ev(input=1, client_cost=0.75)  # the larger cost read first stays (mutation: the later copy's won)
    merge(d, ev(input=1, client_cost=0.5))
    assert d.client_cost == 0.75


def test_the_preferred_copy_brings_its_project_only_when_it_names_one():
    """mutation testing: `e.project and old.project` (the old project kept, or lost when the
    preferred copy names none) survived every test."""
    a = ev(sid="s1", input=1)
    merge(a, ev(sid="s2", input=9))
    assert (a.session_id, a.project) == ("s2", "/p/s2")
    b = ev(sid="s1", input=1)
    c = ev(sid="s2", input=9)
    c.project = None
    merge(b, c)
    assert (b.session_id, b.project) == ("s2", "/p/s1")


def test_the_ledger_counts_a_key_once_and_counts_the_copies_it_merged():
    led = Ledger()
    led.add(ev(input=5))
    led.add(ev(input=7, lane="agent-a"))
    led.add(Event("claude-code", "s1", "main", None, None, 1.0, input=1))  # no key: kept as it is
    led.add(Event("claude-code", "s1", "main", None, None, 1.0, input=1))
    assert [e.input for e in led.events] == [7, 1, 1]
    assert led.copies_merged == 1 and led.events[0].copies == 2 and led.events[0].lane == "agent-a"


def test_a_response_total_is_input_output_and_both_cache_counts():
    """The 1-hour share is inside cache_write and reasoning inside output: never added again."""
    assert ev(input=1, output=2, cache_read=4, cache_write=8, cache_write_1h=16, reasoning=32).total() == 15
    assert ev(input=None, output=2, cache_read=None, cache_write=8).total() == 10
