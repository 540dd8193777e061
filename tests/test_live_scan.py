"""The fast background scan (providers/claude/live/prefilter.py, providers/claude/live/background.py) and the idle `wait` loop.

The speed work must not change a verdict: these tests pin the fast paths to the plain ones on
REAL client transcripts (the committed examples corpus): candidate lines vs. a line-by-line scan,
the forked two-half scan vs. the serial one, the str.find notification parser vs. the regex one.
Hand-made inputs are used only where said (parser edge cases no client writes)."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import threading
from pathlib import Path

import pytest

from sessionsift.providers.claude.discover import resolve_targets
from sessionsift.providers.claude.live import prefilter as PF
from sessionsift.providers.claude.live import verdict as V
from sessionsift.providers.claude.live.background import _PATS, NEEDLES, BackgroundScan, notification_fields
from sessionsift.providers.claude.live.wait import _relevant, parse_condition, wait_for
from sessionsift.providers.claude.model import record as R
from sessionsift.read.lines import iter_lines, open_map

# the scenarios whose transcripts hold background launches, monitors, async agents and carriers
BG_SCENARIOS = ("bash_background", "monitor", "subagents")


def _concatenated(corpus, tmp_path: Path, copies: int = 3) -> tuple[Path, Path]:
    """One claude home whose single session is the real transcripts of BG_SCENARIOS concatenated
    `copies` times (the way benchmarks/ builds its 500 MB file), plus their subagent lanes."""
    home = tmp_path / "cfg"
    proj = home / "projects" / "-cat"
    proj.mkdir(parents=True)
    sid = "cccccccc-0000-4000-8000-000000000000"
    data = b"".join(corpus[n].transcript.read_bytes() for n in BG_SCENARIOS)
    (proj / f"{sid}.jsonl").write_bytes(data * copies)
    lanes = proj / sid / "subagents"
    lanes.mkdir(parents=True)
    for n in BG_SCENARIOS:
        for p in corpus[n].subagent_transcripts:
            shutil.copy(p, lanes / p.name)
    return home, proj / f"{sid}.jsonl"


def _session(home: Path):
    return resolve_targets([], home).sessions[0]


def _state(bg: BackgroundScan) -> dict:
    return {"tasks": [dataclasses.asdict(t) for t in bg.tasks()],
            "carriers": [dataclasses.asdict(c) for c in bg.carriers],
            "stops": bg.stops, "results": {k: (v[2], v[3], v[4]) for k, v in bg.results.items()},
            "cursors": {k: (c.offset, c.line_no) for k, c in bg.cursors.items()}}


def test_candidate_lines_equal_a_line_by_line_scan(realclient_examples, tmp_path):
    _, path = _concatenated(realclient_examples, tmp_path)
    rx = [re.compile(n) for n in NEEDLES]
    want = [(ln.no, ln.offset, ln.offset + len(ln.raw)) for ln in iter_lines(path)
            if any(r.search(ln.raw) for r in rx)]
    with open_map(path) as m:
        ss, es, nos, newlines = PF.candidate_lines(m.buf, _PATS, 0, len(m.buf))
        assert newlines == m.buf[:].count(b"\n")
    got = list(zip(nos, ss, es))
    assert got == want
    # every kind of line the scan lives on is among them (real launches, acks, carriers)
    raw = path.read_bytes()
    assert raw.count(b'"run_in_background":true') and raw.count(b"<task-notification>")
    assert len(got) >= raw.count(b'"name":"Monitor"')


def test_forked_two_half_scan_equals_the_serial_scan(realclient_examples, tmp_path, monkeypatch):
    home, path = _concatenated(realclient_examples, tmp_path, copies=4)
    serial = BackgroundScan(_session(home), parallel=False).update()
    monkeypatch.setattr(PF, "PARALLEL_MIN", 1024)  # force the split on a small real file
    forks = []
    real_fork = os.fork

    def counting_fork():
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counting_fork)
    split = BackgroundScan(_session(home), parallel=True).update()
    assert forks, "the split scan did not fork (a thread running?)"
    assert _state(split) == _state(serial)
    # the copies repeat tool_use ids: the helper cannot know the first half already has their
    # results, so it may parse a few more lines (never fewer); with unique ids the counts agree
    assert split.lines_parsed >= serial.lines_parsed
    tasks = split.tasks()
    # the copies share tool_use ids: the launch kept is the LAST copy's, as a sequential scan keeps it
    lines = path.read_bytes().split(b"\n")
    for t in tasks:
        assert t.tool_use_id.encode() in lines[t.line - 1] if t.lane == "main" else True
        if t.closed_line is not None and t.closed_line > 0 and t.lane == "main":
            assert t.task_id is None or t.task_id.encode() in lines[t.closed_line - 1] or \
                t.tool_use_id.encode() in lines[t.closed_line - 1]
    assert {t.kind for t in tasks} >= {"shell", "monitor", "agent"}


def test_a_failing_helper_is_redone_in_the_parent(realclient_examples, tmp_path, monkeypatch):
    home, _ = _concatenated(realclient_examples, tmp_path, copies=2)
    serial = BackgroundScan(_session(home), parallel=False).update()
    monkeypatch.setattr(PF, "PARALLEL_MIN", 1024)
    monkeypatch.setattr(PF.pickle, "dumps", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("boom")))
    split = BackgroundScan(_session(home), parallel=True).update()
    assert _state(split) == _state(serial)


def test_incremental_updates_equal_one_whole_scan(realclient_examples, tmp_path):
    home, path = _concatenated(realclient_examples, tmp_path, copies=2)
    data = path.read_bytes()
    whole = BackgroundScan(_session(home), parallel=False).update()
    path.write_bytes(b"")
    inc = BackgroundScan(_session(home), parallel=False)
    step = len(data) // 7 + 13  # cuts fall mid-line: the torn part waits for its newline
    for i in range(0, len(data), step):
        with open(path, "ab") as fh:
            fh.write(data[i:i + step])
        inc.update()
    assert _state(inc) == _state(whole)


def test_a_result_beyond_the_find_window_is_found_with_its_line(realclient_examples, tmp_path, monkeypatch):
    run = realclient_examples["bash_background"]
    home = tmp_path / "cfg"
    proj = home / "projects" / "-w"
    proj.mkdir(parents=True)
    data = run.transcript.read_bytes()
    lines = data.split(b"\n")
    launch = next(i for i, l in enumerate(lines) if b'"run_in_background":true' in l)
    # hand-made padding: 300 filler records between a real launch and its real result, so the
    # result lies past a (shrunk) find window and is reached by the RE2 fallback
    pad = [json.dumps({"type": "system", "subtype": "informational", "content": "x" * 200,
                       "timestamp": "2026-01-01T00:00:00.000Z"}).encode()] * 300
    lines = lines[:launch + 1] + pad + lines[launch + 1:]
    p = proj / f"{run.session_id}.jsonl"
    p.write_bytes(b"\n".join(lines))
    monkeypatch.setattr(PF, "RESULT_WINDOW", 4096)
    bg = BackgroundScan(_session(home), parallel=False).update()
    tid = re.search(rb'"id":"([^"]+)","name":"Bash","input":\{[^}]*"run_in_background":true', lines[launch]).group(1)
    r = bg.results[tid.decode()]
    assert r[3] > launch + 1 + 300 and tid in lines[r[3] - 1] and b"tool_result" in lines[r[3] - 1]
    t = next(t for t in bg.tasks() if t.tool_use_id == tid.decode())
    assert t.task_id and t.output_file and t.launch_acknowledged


def test_find_id_agrees_with_mmap_find(realclient_examples, monkeypatch):
    monkeypatch.setattr(PF, "RESULT_WINDOW", 64)
    for run in realclient_examples:
        data = run.transcript.read_bytes()
        ids = set(re.findall(rb'"tool_use_id":"([^"]+)"', data))
        with open_map(run.transcript) as m:
            for i in ids:
                needle = b'"tool_use_id":"' + i + b'"'
                for after in (0, len(data) // 3):
                    assert PF.find_id(m.buf, needle, after, len(data)) == m.buf.find(needle, after, len(data))


NOTIFICATION_CASES = [
    # hand-made edge cases (nested / unclosed / repeated tags) that no client run produced
    "<task-notification><task-id>a</task-id><status>completed</status></task-notification>",
    "<task-notification>\n<task-id> b1 </task-id>\n<summary>x <status>fake</status> y</summary>\n"
    "<event>line</event>\n</task-notification>",
    "<task-notification><status>one</status><status>two</status></task-notification>"
    "<task-notification><task-id>second</task-id></task-notification>",
    "<task-notification><task-id>no close<status>completed</status></task-notification>",
    "<task-notification><<status>>x</status><result>r <task-id>in</task-id></result></task-notification>",
    "<task-notification><task-id>unterminated section",
    "text <task-notification></task-notification> <task-notification><event></event></task-notification>",
    "<task-notification><tool-use-id>t</tool-use-id><output-file>C:\\x\\y.out</output-file>",
]


def test_notification_parser_equals_the_record_model_one(realclient_examples):
    texts = list(NOTIFICATION_CASES)
    for run in realclient_examples:
        for ln in iter_lines(run.transcript):
            if b"<task-notification>" in ln.raw:
                o = json.loads(ln.raw)
                for v in (o.get("content"), (o.get("attachment") or {}).get("prompt"), R.string_text(o)):
                    if isinstance(v, str):
                        texts.append(v)
    assert len(texts) > len(NOTIFICATION_CASES) + 3
    for t in texts:
        assert notification_fields(t) == R.parse_task_notification(t), t


def test_tail_cache_follows_appends(realclient_examples, tmp_path):
    run = realclient_examples["bash_background"]
    p = tmp_path / "t.jsonl"
    data = run.transcript.read_bytes()
    cut = data.rfind(b"\n", 0, len(data) - 1) + 1
    p.write_bytes(data[:cut])
    a = V.read_tail(p)
    assert V.read_tail(p) == a  # unchanged file: the cached reading
    with open(p, "ab") as fh:
        fh.write(data[cut:])
    b = V.read_tail(p)
    assert a.size == cut and b.size == len(data)
    assert b == V._read_tail(p, os.stat(p), None) and b != a


def test_relevant_paths_are_this_sessions_only(tmp_path):
    home = tmp_path / "cfg"
    proj = home / "projects" / "-w"
    proj.mkdir(parents=True)
    sid, other = "11111111-2222-4333-8444-555555555555", "99999999-2222-4333-8444-555555555555"
    (proj / f"{sid}.jsonl").write_text("{}\n")
    (proj / f"{other}.jsonl").write_text("{}\n")
    rel = _relevant(resolve_targets([sid], home).sessions[0], home)
    real = os.path.realpath
    assert rel(real(proj / f"{sid}.jsonl"))
    assert rel(real(proj / sid / "subagents" / "agent-a.jsonl"))
    assert rel(real(proj / sid / "elicitations.jsonl"))
    assert rel(real(home / "sessions" / "123.json"))
    assert not rel(real(proj / f"{other}.jsonl"))
    assert not rel(real(proj / other / "subagents" / "agent-b.jsonl"))
    assert not rel(real(proj / f"{sid}.jsonl.bak"))


def test_idle_wait_sleeps_through_other_sessions_writes(realclient_examples, tmp_path, monkeypatch):
    """Another session of the same project writes while the wait is inside its change waiter:
    the waiter is never woken (the writes are made only once the wait sleeps, and the test checks
    they were all made before the waiter returned, so it cannot pass by the writer being late)."""
    run = realclient_examples["files_basic"]
    home = tmp_path / "cfg"
    proj = home / "projects" / "-w"
    proj.mkdir(parents=True)
    shutil.copy(run.transcript, proj / run.transcript.name)
    noisy = proj / "99999999-2222-4333-8444-555555555555.jsonl"
    noisy.write_bytes(run.transcript.read_bytes())
    sess = resolve_targets([run.session_id], home).sessions[0]
    import sessionsift.providers.claude.live.wait as LW

    real = LW._watcher
    waiting, burst_done = threading.Event(), threading.Event()
    returned: list[tuple[bool, bool]] = []

    def watcher(*a):
        fn, how = real(*a)

        def wrapped(timeout):
            waiting.set()
            seen = fn(timeout)
            returned.append((seen, burst_done.is_set()))
            return seen
        wrapped.stop = getattr(fn, "stop", None)
        return wrapped, how
    monkeypatch.setattr(LW, "_watcher", watcher)

    def writer():  # another session of the same project writes during the wait
        waiting.wait()
        for _ in range(20):
            with open(noisy, "ab") as fh:
                fh.write(b'{"type":"system","subtype":"informational","content":"tick"}\n')
        burst_done.set()

    th = threading.Thread(target=writer)
    th.start()
    try:
        res = wait_for(sess, home, parse_condition("human"), timeout=3.0, heartbeat=5.0)
    finally:
        waiting.set()
        th.join()
    assert not res.satisfied and res.watcher == "watchfiles"
    # one sleep in the waiter, to the timeout, with every write made meanwhile: never woken
    assert returned == [(False, True)], returned
    # one assessment at start, one when the timeout ends the wait: the other session never woke it
    assert res.polls == 2, res.polls


def test_wait_wakes_on_this_sessions_append(realclient_examples, tmp_path, monkeypatch):
    """The wait sleeps in its change waiter and is woken by this session's append, not by the
    heartbeat (30 s, beyond the 20 s timeout): the waiter is wrapped to record what woke it. The
    append is made only once the wait is inside the waiter, and repeated until the waiter
    reports a change (the watcher thread may not have armed yet on a loaded machine): no step
    rests on a duration, and a waiter that misses changes fails (it returns False at the timeout)."""
    run = realclient_examples["files_basic"]
    home = tmp_path / "cfg"
    proj = home / "projects" / "-w"
    proj.mkdir(parents=True)
    p = proj / run.transcript.name
    shutil.copy(run.transcript, p)
    sess = resolve_targets([run.session_id], home).sessions[0]
    # hand-made record: a Write after the baseline (the real one is already in the transcript)
    rec = json.dumps({"type": "assistant", "timestamp": "2026-01-01T00:00:00.000Z", "uuid": "w1", "message": {
        "role": "assistant", "stop_reason": "tool_use", "content": [{"type": "tool_use", "id": "tu_w", "name": "Write",
                                                                   "input": {"file_path": "/x/late.txt", "content": "ok"}}]}})
    tick = json.dumps({"type": "system", "subtype": "informational", "content": "tick"})
    import sessionsift.providers.claude.live.wait as LW

    real = LW._watcher
    waiting, woken = threading.Event(), threading.Event()
    returned: list[bool] = []

    def watcher(*a):
        fn, how = real(*a)

        def wrapped(timeout):
            waiting.set()
            seen = fn(timeout)
            returned.append(seen)
            if seen:
                woken.set()
            return seen
        wrapped.stop = getattr(fn, "stop", None)
        return wrapped, how
    monkeypatch.setattr(LW, "_watcher", watcher)

    def writer():
        waiting.wait()
        with open(p, "a") as fh:
            fh.write(rec + "\n")
        while not woken.wait(0.05) and not done.is_set():  # again until it is seen (never a pass by itself)
            with open(p, "a") as fh:
                fh.write(tick + "\n")

    done = threading.Event()
    th = threading.Thread(target=writer)
    th.start()
    try:
        res = wait_for(sess, home, parse_condition(r"write:late\.txt$"), timeout=20, heartbeat=30.0)
    finally:
        done.set()
        waiting.set()
        th.join()
    assert res.satisfied and res.hit.path == "/x/late.txt" and res.watcher == "watchfiles"
    assert returned == [True] and res.polls == 2  # one assessment at start, one on the change
