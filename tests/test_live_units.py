"""Edge cases of the live surfaces that the real client cannot be made to produce offline.

Every record here is HAND-MADE (said per test): monitor pulses, orphan summaries, a half-written
registry row, another pid namespace, a reused pid, the sidecar, a torn tail during `wait`. The
shapes follow the catalog claims named in each test."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from sessionsift.providers.claude.discover import resolve_targets
from sessionsift.providers.claude.live import registry as REG
from sessionsift.providers.claude.live.background import scan, task_list
from sessionsift.providers.claude.live.verdict import assess
from sessionsift.providers.claude.live.wait import Watch, match_write, parse_condition, wait_for
from sessionsift.providers.claude.live.whoami import whoami

SID = "11111111-2222-4333-8444-555555555555"


def _home(tmp_path: Path, records: list[dict], raw_tail: bytes = b"") -> tuple[Path, Path]:
    home = tmp_path / "cfg"
    proj = home / "projects" / "-w"
    proj.mkdir(parents=True)
    p = proj / f"{SID}.jsonl"
    p.write_bytes(b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records) + raw_tail)
    return home, p


def _asst(tid, name, inp, ts="2026-01-01T00:00:01.000Z", stop="tool_use"):
    return {"type": "assistant", "timestamp": ts, "uuid": tid + "-a",
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}],
                        "stop_reason": stop}}


def _result(tid, text, tur=None, ts="2026-01-01T00:00:02.000Z"):
    r = {"type": "user", "timestamp": ts, "uuid": tid + "-r",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": text}]}}
    if tur is not None:
        r["toolUseResult"] = tur
    return r


def _note(**f):
    body = "".join(f"<{k.replace('_', '-')}>{v}</{k.replace('_', '-')}>" for k, v in f.items())
    return f"<task-notification>{body}</task-notification>"


def _end(ts="2026-01-01T00:00:09.000Z"):
    return {"type": "assistant", "timestamp": ts, "uuid": "end",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn"}}


def _sess(home):
    return resolve_targets([SID], home).sessions[0]


def test_monitor_stays_open_through_event_pulses_and_closes_on_status(tmp_path):
    # hand-made: a Monitor arm (BG-006/007), event pulses without <status> (BG-016), then termination
    recs = [_asst("tu_m", "Monitor", {"description": "watch logs", "command": "tail -f x"}),
            _result("tu_m", "Monitor started (task bm0000001, persistent - runs until TaskStop or session end).",
                    {"taskId": "bm0000001", "timeoutMs": 0, "persistent": True}),
            {"type": "user", "timestamp": "2026-01-01T00:00:03.000Z",
             "message": {"role": "user", "content": _note(task_id="bm0000001", summary="Monitor event", event="line")}},
            {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-01-01T00:00:04.000Z",
             "content": _note(task_id="bm0000001", summary="Monitor event", event="line2")},
            _end()]
    home, p = _home(tmp_path, recs)
    t = scan(_sess(home)).tasks()
    assert len(t) == 1 and t[0].kind == "monitor" and t[0].state == "open" and t[0].events == 2
    assert t[0].task_id == "bm0000001" and t[0].persistent is True
    assert assess(_sess(home), home).verdict == "idle-background-open"
    # the termination notice arrives on the attachment carrier, joined by tool-use-id
    with open(p, "ab") as fh:
        fh.write(json.dumps({"type": "attachment", "timestamp": "2026-01-01T00:00:10.000Z", "attachment": {
            "type": "queued_command", "commandMode": "task-notification",
            "prompt": _note(task_id="bm0000001", tool_use_id="tu_m", status="completed", summary="Monitor done")}}).encode() + b"\n")
    t = scan(_sess(home)).tasks()
    assert t[0].state == "closed" and t[0].closed_by == "queued_command" and t[0].status == "completed"
    assert assess(_sess(home), home).verdict == "idle-eot"


def test_kind_comes_from_the_tool_name_and_orphan_summary_closes_shells(tmp_path):
    # hand-made: a Bash launch whose id looks like anything; closed by an orphan summary (BG-020)
    recs = [_asst("tu_b", "Bash", {"command": "sleep 99", "run_in_background": True}),
            _result("tu_b", "Command running in background with ID: a00000001. Output is being written to: /nonexistent/a.output.",
                    {"backgroundTaskId": "a00000001"}),
            _end("2026-01-01T00:00:03.000Z"),
            {"type": "user", "timestamp": "2026-01-01T00:05:00.000Z", "message": {"role": "user", "content":
             _note(task_id="__orphan_summary__:shell", status="stopped", summary="1 background shell task from the previous session have no completion record")}}]
    home, _ = _home(tmp_path, recs)
    t = scan(_sess(home)).tasks()
    assert t[0].kind == "shell" and t[0].state == "closed" and t[0].closed_by == "orphan-summary"
    assert t[0].output_stat()["output_state"] == "absent" and t[0].output_stat()["output_size"] is None


def test_registry_mid_write_row_is_reported_and_key_companion_ignored(tmp_path):
    # hand-made: a truncated row (REG-017) and a .key companion that parses as JSON (REG-016)
    home, _ = _home(tmp_path, [_end()])
    sd = home / "sessions"
    sd.mkdir()
    (sd / "123.json").write_text('{"pid":123,"sessionId":"' + SID[:10])
    (sd / ("123." + "a" * 64 + ".key")).write_text('{"peerToken":"x","procStart":"1"}')
    look = REG.find_rows(home, SID)
    assert look.scanned == 1 and look.rows == [] and look.unreadable and "mid-write" in look.unreadable[0][1]
    v = assess(_sess(home), home)
    assert any(e["surface"] == "registry" and "unreadable" in e["value"] for e in v.evidence)
    assert any("could not be read" in n for n in v.notes)


def test_pid_probe_forms(tmp_path):
    me = os.getpid()
    ticks = Path(f"/proc/{me}/stat").read_text().rsplit(")", 1)[1].split()[19]
    dom = REG.local_pid_domain()
    ok = REG.probe_pid(me, ticks, dom)
    assert ok.state == "alive" and ok.guard == "matched"
    reused = REG.probe_pid(me, str(int(ticks) + 100000), dom)
    assert reused.state == "reused" and reused.gone
    other = REG.probe_pid(me, ticks, "linux:ffff:pid:[1]")
    assert other.state == "unprobeable" and "another pid" in other.detail
    nostart = REG.probe_pid(me, None, None)
    assert nostart.state == "alive" and nostart.guard.startswith("skipped")
    # asctime (REG-010/012): both field orders parse to the same instant
    a = REG.parse_asctime("Sun Aug 16 09:04:23 2026", utc=True)
    b = REG.parse_asctime("Sun 16 Aug 09:04:23 2026", utc=True)
    assert a == b and a.hour == 9
    p = subprocess.Popen(["true"])
    p.wait()
    assert REG.probe_pid(p.pid, None, None).state == "dead"


def test_human_from_sidecar_and_multi_question_tail_and_ghost_guard(tmp_path):
    # hand-made sidecar (ELI-016/018): one pending key, one key that is native (a ghost)
    recs = [_asst("tu_q", "AskUserQuestion", {"questions": [{"question": "a"}, {"question": "b"}]})]
    home, p = _home(tmp_path, recs)
    v = assess(_sess(home), home)
    assert v.verdict == "waiting" and "AskUserQuestion" in v.reason
    # single question at the tail is NOT treated as human (ELI-009); it reads as running
    home2, _ = _home(tmp_path / "b", [_asst("tu_q", "AskUserQuestion", {"questions": [{"question": "a"}]})])
    assert assess(_sess(home2), home2).verdict == "running"
    side = _sess(home2).sidecar_dir
    side.mkdir()
    (side / "elicitations.jsonl").write_text(
        json.dumps({"csiftKey": "tu_q", "csiftPhase": "pending", "csiftKind": "AskUserQuestion"}) + "\n" +
        json.dumps({"csiftKey": "k2", "csiftPhase": "pending", "csiftKind": "ExitPlanMode"}) + "\n")
    v = assess(_sess(home2), home2)
    assert v.verdict == "waiting" and [x["key"] for x in v.sidecar.pending] == ["k2"] and v.sidecar.ghosts == 1


def test_task_list_both_directory_forms_and_absent(tmp_path):
    home = tmp_path
    assert task_list(home, SID).open is None and task_list(home, SID).completed is None
    (home / "tasks" / SID).mkdir(parents=True)
    (home / "tasks" / f"session-{SID[:8]}").mkdir()
    (home / "tasks" / SID / "1.json").write_text(json.dumps({"id": "1", "subject": "a", "status": "completed"}))
    (home / "tasks" / f"session-{SID[:8]}" / "1.json").write_text(json.dumps({"id": "1", "subject": "b", "status": "pending"}))
    tl = task_list(home, SID)
    assert tl.completed == 1 and [t["subject"] for t in tl.open] == ["b"] and len(tl.dirs) == 2


def test_wait_write_holds_a_torn_tail_and_sees_new_lanes(tmp_path):
    # hand-made: a record appended in two writes, cut INSIDE the record just after the content the
    # condition looks for (a reader that took a torn tail for a record would fire on it), then a
    # subagent lane born during the wait; driven step by step (no thread, no sleep)
    home, p = _home(tmp_path, [_end()])
    sess = _sess(home)
    cond = parse_condition(r"write:notes\.md$:^DONE")
    rec = json.dumps(_asst("tu_w", "Write", {"file_path": "/x/notes.md", "content": "a\nDONE here\n"},
                           ts="2026-01-01T00:01:00.000Z")).encode() + b"\n"
    cut = rec.index(b"DONE here") + len(b"DONE here")
    w = Watch(sess)
    w.baseline()
    with open(p, "ab") as fh:
        fh.write(rec[:cut])
    assert list(w.new_records()) == []  # torn: not a record yet, whatever it holds
    with open(p, "ab") as fh:
        fh.write(rec[cut:])
    got = list(w.new_records())
    assert [(disp, no) for _p, disp, no, _o in got] == [("main", 2)]
    assert match_write(cond, got[0][3])[1:] == ("/x/notes.md", "DONE here")
    lane_dir = sess.sidecar_dir / "subagents"
    lane_dir.mkdir(parents=True)
    (lane_dir / "agent-abc.jsonl").write_bytes(rec)
    got = list(w.new_records())
    assert [(disp, no) for _p, disp, no, _o in got] == [("agent-abc", 1)]
    assert any(d.endswith("agent-abc.jsonl") for d in w.discovered)

    # the same through wait_for: once it is ready, the main lane gets a torn copy holding the
    # match and the lane a whole one; the hit must be the lane's (the torn copy is no record)
    home2, p2 = _home(tmp_path / "two", [_end()])
    sess2 = _sess(home2)
    lane2 = sess2.sidecar_dir / "subagents"

    def on_ready(_base):
        with open(p2, "ab") as fh:
            fh.write(rec[:cut])
        lane2.mkdir(parents=True)
        (lane2 / "agent-abc.jsonl").write_bytes(rec)

    res = wait_for(sess2, home2, cond, timeout=10, ready=on_ready, heartbeat=0.2)
    assert res.satisfied and (res.hit.lane, res.hit.line) == ("agent-abc", 1)
    assert res.hit.matched_line == "DONE here" and res.polls == 1
    assert any(d.endswith("agent-abc.jsonl") for d in res.discovered)


def test_whoami_env_only(tmp_path):
    w = whoami(tmp_path, env={})
    assert w.session_id is None and "cannot tell" in w.note
    w = whoami(tmp_path, env={"CLAUDE_CODE_SESSION_ID": SID})
    assert w.session_id == SID and w.well_formed
    r = subprocess.run([sys.executable, "-m", "sessionsift", "whoami"], capture_output=True, text=True,
                       env={k: v for k, v in os.environ.items() if k != "CLAUDE_CODE_SESSION_ID"})
    assert r.returncode == 1 and "cannot tell" in r.stdout


def test_wait_requires_timeout_and_valid_condition(tmp_path):
    home, _ = _home(tmp_path, [_end()])
    r = subprocess.run([sys.executable, "-m", "sessionsift", "wait", SID, "--until", "stop", "--claude-home", str(home)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--timeout" in r.stderr
    r = subprocess.run([sys.executable, "-m", "sessionsift", "wait", SID, "--until", "bogus", "--timeout", "1",
                        "--claude-home", str(home)], capture_output=True, text=True)
    assert r.returncode == 2


def _live_row(home: Path, status: str, status_updated_ms: int) -> None:
    # hand-made row in the key set and value forms 2.1.258 writes (tests/worktree_util.py), for
    # this test process (alive, its start ticks the reuse guard): no offline run holds a client
    # at status `shell`, and the client writes statusUpdatedAt only on a transition
    me = os.getpid()
    ticks = Path(f"/proc/{me}/stat").read_text().rsplit(")", 1)[1].split()[19]
    d = home / "sessions"
    d.mkdir(exist_ok=True)
    (d / f"{me}.json").write_text(json.dumps({
        "pid": me, "sessionId": SID, "cwd": "/w", "startedAt": status_updated_ms, "procStart": ticks,
        "version": "2.1.258", "kind": "interactive", "entrypoint": "cli", "pidDomain": REG.local_pid_domain(),
        "status": status, "updatedAt": status_updated_ms, "statusUpdatedAt": status_updated_ms}))


def test_registry_status_shell_is_idle_with_a_background_shell_open(tmp_path):
    # REG-003: the transcript ends its turn and shows no launch; the row's `shell` alone says a
    # background shell is open
    home, _ = _home(tmp_path, [_end()])
    _live_row(home, "shell", int(time.time() * 1000))
    v = assess(_sess(home), home)
    assert v.verdict == "idle-background-open"
    assert v.reason == ("end of turn with background work open: registry status=shell (a background shell is "
                        "open)")
    assert ("registry says a background shell is open but the scan found none open: it was launched where the "
            "scan could not see or its carrier was not recognised") in v.notes
    _live_row(home, "idle", int(time.time() * 1000))
    assert assess(_sess(home), home).verdict == "idle-eot"


def test_registry_status_age_is_shown_and_never_decides_liveness(tmp_path):
    # REG-004: statusUpdatedAt is written on a transition, not as a heartbeat: a busy row last
    # changed 30 days ago by a live owner is as running as one changed now
    home, _ = _home(tmp_path, [_end()])
    got = {}
    for age in (0, 30 * 86400):
        _live_row(home, "busy", int((time.time() - age) * 1000))
        v = assess(_sess(home), home)
        reg = next(e for e in v.evidence if e["surface"] == "registry" and e["value"] == "status=busy")
        got[age] = (v.verdict, v.reason, reg["status_age_secs"])
    assert got[0][:2] == got[30 * 86400][:2] and got[0][0] == "running"
    assert got[0][1].startswith("registry status=busy")
    assert got[30 * 86400][2] >= 30 * 86400 and got[30 * 86400][2] - got[0][2] > 29 * 86400  # shown, with its age


def test_wait_write_reads_each_write_tools_own_target_and_payload_key():
    # REC-079 / REC-083: a file tool names its target in input.file_path, NotebookEdit in
    # input.notebook_path; the payload is Write `content`, Edit `new_string`, MultiEdit `edits`
    # (each one's new_string), NotebookEdit `new_source`. Hand-made calls in 2.1.258's input forms
    # (examples/claude-home holds Write and Edit; no offline scenario runs NotebookEdit or MultiEdit)
    cond = parse_condition(r"write:out\.(txt|ipynb)$:^DONE")
    calls = {
        "Write": {"file_path": "/x/out.txt", "content": "a\nDONE w"},
        "Edit": {"file_path": "/x/out.txt", "old_string": "DONE no", "new_string": "DONE e", "replace_all": False},
        "MultiEdit": {"file_path": "/x/out.txt", "edits": [{"old_string": "a", "new_string": "b"},
                                                           {"old_string": "DONE no", "new_string": "DONE m"}]},
        "NotebookEdit": {"notebook_path": "/x/out.ipynb", "cell_id": "c1", "new_source": "DONE n"},
    }
    got = {}
    for name, inp in calls.items():
        got[name] = match_write(cond, _asst("tu_" + name, name, inp))
    assert got == {"Write": ("Write", "/x/out.txt", "DONE w"), "Edit": ("Edit", "/x/out.txt", "DONE e"),
                   "MultiEdit": ("MultiEdit", "/x/out.txt", "DONE m"),
                   "NotebookEdit": ("NotebookEdit", "/x/out.ipynb", "DONE n")}
    # the old side of an edit is no payload
    assert match_write(cond, _asst("t1", "Edit", {"file_path": "/x/out.txt", "old_string": "DONE",
                                                  "new_string": "x"})) is None


def test_an_elicitation_sidecar_born_during_a_wait_is_read_from_its_start(tmp_path):
    # ELI-018: the sidecar (<session>/elicitations.jsonl) may be made after a wait starts; driven
    # step by step (no thread, no sleep). Hand-made sidecar rows as in the test above
    home, _p = _home(tmp_path, [_asst("tu_q", "AskUserQuestion", {"questions": [{"question": "a"}]})])
    sess = _sess(home)
    w = Watch(sess)
    w.baseline()
    assert list(w.new_records()) == []
    side = sess.sidecar_dir / "elicitations.jsonl"
    side.parent.mkdir(parents=True)
    rows = [{"csiftKey": "k1", "csiftPhase": "pending", "csiftKind": "AskUserQuestion"},
            {"csiftKey": "k2", "csiftPhase": "pending", "csiftKind": "ExitPlanMode"}]
    side.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = list(w.new_records())
    assert [(path, disp, no, obj) for path, disp, no, obj in got] == [
        (str(side), "sidecar", 1, rows[0]), (str(side), "sidecar", 2, rows[1])]
    assert w.discovered == [str(side)]
    with open(side, "a") as fh:
        fh.write(json.dumps({"csiftKey": "k1", "csiftPhase": "answered"}) + "\n")
    assert [(disp, no) for _p, disp, no, _o in w.new_records()] == [("sidecar", 3)]
