"""Reading opencode.db while the REAL client holds it open and writes to it.

The ``live`` scenario's mock holds every step 1.5 s before answering, so the client stays mid-turn
for several seconds with its database open. The test polls the database with sessionsift the whole
time (discover + read every session, about 10 times a second), checks it saw the client mid-step
(an assistant message without ``time.completed``), that the client finished its turn normally, and
that the final read equals the ground truth. It then runs the same scenario without polling and
prints both turn times (the figures; no timed assertion: speed is not judged by tests).
Run with ``-s`` to see the figures.
"""
from __future__ import annotations

import json

import pytest

from sessionsift.providers import ReadReport, get
from tests.realclient.opencode.checks import _read, check_scenario
from tests.realclient.opencode.fixtures import OpencodeRun, require_opencode

pytestmark = pytest.mark.realclient


def _poll_once(p, data_dir) -> dict:
    disc = p.discover(p.locate(explicit=str(data_dir)))
    out = {"state": disc.coverage.state, "sessions": disc.coverage.sessions, "in_flight": False, "results": 0,
           "problems": list(disc.problems)}
    for ref in disc.sessions:
        rep = ReadReport()
        recs = list(p.read(ref, rep, raw=True))
        out["problems"] += rep.problems
        out["results"] += sum(1 for r in recs if r.kind == "tool_result")
        for r in recs:
            if r.native == "message/assistant" and "completed" not in (r.raw.get("time") or {}):
                out["in_flight"] = True
    return out


def _run(root, poll: bool):
    from tests.realclient.opencode.runner import start_scenario

    proc = start_scenario("live", root)
    data_dir = root / "live" / "xdg" / "data" / "opencode"
    p = get("opencode")
    polls = []
    from tests.realclient.common.wait import while_running

    def look() -> None:
        if poll and (data_dir / "opencode.db").exists():
            polls.append(_poll_once(p, data_dir))

    while_running(lambda: proc.poll() is None, look, 180, every=0.1)
    if proc.poll() is None:
        proc.kill()
        pytest.fail("the live scenario did not finish")
    assert proc.returncode == 0, (root / "live.runner.log").read_text()[-2000:]
    truth = json.loads((root / "live" / "ground-truth.json").read_text())
    return truth, polls


def test_reader_polling_a_live_client(tmp_path_factory):
    require_opencode()
    truth, polls = _run(tmp_path_factory.mktemp("oc-live-polled"), poll=True)
    run = truth["runs"][0]
    assert run["rc"] == 0 and not run["killed"]
    # every scripted step was served, in order (a step the client re-requested, as it may when a
    # loaded machine stretches the mock's 1.5 s hold, is served again: count each step once)
    steps = [s["step"] for s in truth["served_steps"] if s["conversation"] == "P1"]
    assert [x for i, x in enumerate(steps) if i == 0 or steps[i - 1] != x] == [0, 1, 2, 3], steps
    first = next(i for i, x in enumerate(polls) if x["state"] == "ok" and x["sessions"])
    seen = polls[first:]
    assert len(seen) >= 5, polls[:3]
    # while the client starts, its migrations may be caught half-way (schema not known yet: null,
    # never 0 sessions); once it has a session every read is clean
    assert all(x["sessions"] is None or x["state"] == "ok" for x in polls[:first])
    assert all(x["problems"] == [] and x["state"] == "ok" for x in seen), [x["problems"] for x in seen][:3]
    assert any(x["in_flight"] for x in seen)  # read while the client was mid-step
    counts = [x["results"] for x in seen]
    assert counts == sorted(counts) and counts[0] < counts[-1]  # and watched its writes land
    disc, sessions = _read(truth["data_dir"], truth["cwd"])
    check_scenario(OpencodeRun("live", truth["data_dir"], truth), sessions)
    quiet, _ = _run(tmp_path_factory.mktemp("oc-live-quiet"), poll=False)
    steps_polled = _step_seconds(sessions)
    disc, qs = _read(quiet["data_dir"], quiet["cwd"])
    steps_quiet = _step_seconds(qs)
    print(f"\nopencode `run` wall time with sessionsift polling: {run['seconds']:.2f} s ({len(polls)} polls); "
          f"without: {quiet['runs'][0]['seconds']:.2f} s. Steps as the client recorded them (created -> completed, "
          f"each held 1.5 s by the mock): polled {steps_polled}, quiet {steps_quiet}")


def _step_seconds(sessions) -> list[float]:
    out = []
    for ref, recs, _ in sessions.values():
        for r in recs:
            t = (r.raw or {}).get("time") or {}
            if r.native == "message/assistant" and t.get("completed"):
                out.append(round((t["completed"] - t["created"]) / 1000, 2))
    return out
