"""The generic commands over the providers layer (show, search, stats, files), end to end through
the CLI, with an outside reader registered by entry point.

HAND-MADE PLUMBING: the records below are typed here for tests/plumbing_provider.py, a made-up
format, because the layer's rules (copy_of counted once, dedup keys, running totals, exit codes
joined to calls by call id, refetch commands that work, whole-turn context) need cases no single
real client writes all of; they test sessionsift's plumbing, never any client's format. Real
clients' sessions are tested on their real-client corpora (test_cross_provider_realdata.py and
each reader's own tests).
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plumbing_provider import register, write_session

REPO = Path(__file__).resolve().parents[1]
CLAUDE = REPO / "examples" / "claude-home"

RECS = [
    {"kind": "prompt", "role": "user", "text": "fix the bug in a.py", "ts": "2026-01-02T03:04:05Z", "cwd": "/w"},
    {"kind": "tool_call", "role": "assistant", "tool": "shell", "input": {"cmd": "make test"}, "call": "c1",
     "ts": "2026-01-02T03:04:06Z", "model": "m1", "tokens": {"in": 10, "out": 3, "key": "resp-1"}},
    {"kind": "tool_result", "role": "tool", "text": "FAILED: 2 tests", "call": "c1", "exit": 1, "ts": "2026-01-02T03:04:07Z"},
    {"kind": "tool_call", "role": "assistant", "tool": "write", "input": {"path": "/w/a.py"}, "call": "c2",
     "change": {"path": "/w/a.py", "action": "update", "new": "print('fixed')\n"}, "ts": "2026-01-02T03:04:08Z",
     "model": "m1", "tokens": {"in": 12, "out": 5, "key": "resp-2"}},
    # the same usage object written again on a second record of the same response: counted once (max)
    {"kind": "message", "role": "assistant", "text": "fixed the bug", "ts": "2026-01-02T03:04:09Z", "model": "m1",
     "tokens": {"in": 12, "out": 7, "key": "resp-2"}},
    # a UI echo of the message: kept, shown, counted once
    {"kind": "message", "role": "assistant", "text": "fixed the bug", "ts": "2026-01-02T03:04:09Z",
     "copy_of": "L5"},
    # running totals: never summed with the per-response usage, nor with each other
    {"kind": "meta", "role": "harness", "native": "token_count", "model": "m1", "ts": "2026-01-02T03:04:10Z",
     "tokens": {"in": 22, "out": 10, "cum": True}},
    {"kind": "meta", "role": "harness", "native": "token_count", "model": "m1", "ts": "2026-01-02T03:04:11Z",
     "tokens": {"in": 34, "out": 15, "cum": True}},
    {"kind": "prompt", "role": "user", "text": "now delete b.py", "ts": "2026-01-02T03:05:00Z"},
    {"kind": "tool_call", "role": "assistant", "tool": "rm", "input": {"path": "/w/b.py"}, "call": "c3",
     "change": {"path": "/w/b.py", "action": "delete"}, "ts": "2026-01-02T03:05:01Z", "is_error": None},
    {"kind": "tool_result", "role": "tool", "text": "ok", "call": "c3", "exit": 0, "ts": "2026-01-02T03:05:02Z"},
    {"kind": "unknown", "native": "brand_new_event", "ts": "2026-01-02T03:05:03Z"},
]


@pytest.fixture
def env(tmp_path):
    e = register(tmp_path / "site")
    root = tmp_path / "plumb"
    write_session(root, "pl-one", RECS)
    return e, root


def cli(env, *args):
    e, root = env
    full = dict(os.environ, **e)
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                       timeout=120, env=full, cwd=REPO)
    return p


def roots(env):
    return ["--claude-home", str(CLAUDE), "--root", f"plumb={env[1]}"]


def jrows(p):
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows and rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary", p.stderr
    return rows


def test_show_by_line_locator_turn_and_the_refetch_works(env):
    p = cli(env, "show", "pl-one", "--line", "3", *roots(env), "--format", "json")
    assert p.returncode == 0, p.stderr
    recs = [r for r in jrows(p) if r["kind"] == "record"]
    assert len(recs) == 1
    r = recs[0]
    assert (r["record_kind"], r["line"], r["locator"], r["exit_code"], r["call_id"]) == ("tool_result", 3, "L3", 1, "c1")
    assert r["record"] == RECS[2] and r["provider"] == "plumb" and r["is_subagent"] is False
    argv = shlex.split(r["refetch"])
    assert argv[:2] == ["sessionsift", "show"]
    again = cli(env, *argv[1:], "--format", "json")
    assert [x["locator"] for x in jrows(again) if x["kind"] == "record"] == ["L3"]
    p = cli(env, "show", "pl-o", "--locator", "L9", *roots(env), "--format", "json")
    assert [x["record"]["text"] for x in jrows(p) if x["kind"] == "record"] == ["now delete b.py"]
    p = cli(env, "show", "pl-one", "--turn", "-1", *roots(env), "--format", "json")
    got = [x for x in jrows(p) if x["kind"] == "record"]
    assert [x["line"] for x in got] == [9, 10, 11, 12] and {x["turn"] for x in got} == {2}
    assert cli(env, "show", "pl-one", "--line", "99", *roots(env)).returncode == 2
    p = cli(env, "show", "pl-one", "--uuid", "x", *roots(env))
    assert p.returncode == 2 and "Claude Code's record graph" in p.stderr


def test_search_whole_turn_context_kinds_counts_and_zero_hits(env):
    p = cli(env, "search", "FAILED|deleted?", *roots(env), "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = jrows(p)
    hits = [r for r in rows if r["kind"] == "hit" and r["provider"] == "plumb"]
    assert [(h["locator"], h["turn"]) for h in hits] == [("L3", 1), ("L9", 2)]
    # the hit's turn opens at its prompt; a prompt that matches is its own opener
    assert hits[0]["turn_context"]["opener"]["text"] == "fix the bug in a.py" and hits[1]["turn_context"] is None
    assert hits[0]["match"] == {"start": 0, "end": 6}
    sm = rows[-1]
    assert sm["shared"]["hits"] == 2 and sm["shared"]["not_searched_kinds"] == {"meta": 2, "unknown": 1}
    assert sm["shared"]["copies_skipped"] == 1
    cov = {c["provider"]: c for c in sm["coverage"]}
    assert cov["plumb"]["sessions"] == 1 and cov["claude-code"]["sessions"] == 8
    # tool input is matched as `<tool> <input JSON>`; -t takes shared kinds and Claude labels alike
    p = cli(env, "search", "make test", "-t", "agent.tool.use", *roots(env), "--provider", "plumb", "--format", "json")
    assert [h["locator"] for h in jrows(p) if h["kind"] == "hit"] == ["L2"]
    p = cli(env, "search", "", "-t", "tool_call", *roots(env), "--count-by", "pairing", "--format", "json")
    counts = {r["key"]: (r["count"], r["returned"], r["unreturned"]) for r in jrows(p) if r["kind"] == "count"}
    assert counts["shell"] == (1, 1, 0) and counts["write"] == (1, 0, 1) and counts["rm"] == (1, 1, 0)
    assert counts["Bash"][0] > 0  # Claude Code's tool_use blocks, selected by the same shared kind
    p = cli(env, "search", "", "-t", "unknown", *roots(env), "--count-by", "session", "--format", "json")
    assert {r["key"]: r["count"] for r in jrows(p) if r["kind"] == "count"} == {"pl-one": 1}
    # scanned (the full-text index off): what was read and what was not searched, by kind
    p = cli(env, "search", "no-such-phrase-zq", *roots(env), "--no-index")
    assert p.returncode == 1
    lines = p.stdout.strip().splitlines()
    assert lines[-1].startswith("coverage: Claude Code 8 sessions") and "Plumbing (test) 1" in lines[-1]
    assert lines[-2].startswith("0 hits in 0 of 1 session of Plumbing (test) (11 records read in 1 session, 8 of them searched; not searched: "
                                "meta 2 (0 would match, -t meta), unknown 1 (0 would match, -t unknown))")
    # with the index: the session no record of which holds the literal is ruled out, unread, and said so
    p = cli(env, "search", "no-such-phrase-zq", *roots(env))
    assert p.returncode == 1
    lines = p.stdout.strip().splitlines()
    assert lines[-2] == ("0 hits in 0 of 1 session of Plumbing (test) (0 records read in 0 sessions, 0 of them searched; "
                         "1 session ruled out by the full-text index (no record holds the pattern's literal), not parsed)")


def test_stats_counts_once_dedups_tokens_and_never_sums_running_totals(env):
    p = cli(env, "stats", "--provider", "plumb", *roots(env), "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = jrows(p)
    s = [r for r in rows if r["kind"] == "session"][0]
    assert s["records"] == 11 and s["copies"] == 1 and s["prompts"] == 2
    assert s["tool_calls"] == {"shell": 1, "write": 1, "rm": 1} and s["tool_errors"] == {"shell": 1}
    assert s["tokens_by_model"] == {"m1": {"input": 22, "output": 10}} and s["usage_units_by_model"] == {"m1": 2}
    assert s["tokens_cumulative_by_model"] == {"m1": {"input": 34, "output": 15}}
    assert s["unknown_kinds"] == {"brand_new_event": 1}
    sh = rows[-1]["shared"]
    assert sh["tool_errors"] == {"shell": 1} and sh["prompts"] == 2 and sh["providers"] == ["plumb"]
    cov = {c["provider"]: c for c in rows[-1]["coverage"]}
    assert cov["claude-code"]["state"] == "not_looked" and cov["claude-code"]["sessions"] is None


def test_files_lists_recorded_changes_with_working_refetch(env):
    p = cli(env, "files", "--by", "timeline", "--provider", "plumb", *roots(env), "--format", "json")
    assert p.returncode == 0, p.stderr
    ch = [r for r in jrows(p) if r["kind"] == "change"]
    assert [(c["file"], c["action"], c["has_new_content"], c["line"]) for c in ch] == [
        ("/w/a.py", "update", True, 4), ("/w/b.py", "delete", False, 10)]
    again = cli(env, *shlex.split(ch[1]["refetch"])[1:], "--format", "json")
    assert [x["line"] for x in jrows(again) if x["kind"] == "record"] == [10]
    p = cli(env, "files", *roots(env), "--format", "json")
    files = {r["file"]: r for r in jrows(p) if r["kind"] == "file"}
    assert files["/w/a.py"]["ops"] == {"update": 1} and files["/w/a.py"]["lanes"] == ["plumb:pl-one"]
    assert "/w/b.py" in files and any(k.endswith("hello.py") for k in files)  # Claude Code's rows beside them
    sm = jrows(p)[-1]
    assert sm["shared"]["changes"] == 2 and sm["shared"]["complete_views"] == 1


HOSTILE = "\x1b[31mRED\x1b[0m\rOVER\nFORGED-LINE \u202eevil\x07"


def test_hostile_text_from_another_provider_prints_as_one_escaped_line(tmp_path):
    import re

    e = register(tmp_path / "site")
    root = tmp_path / "plumb"
    sid = "pl-\x1b]0;pwn\x07-id"
    write_session(root, sid, [
        {"kind": "prompt", "role": "user", "text": "hi " + HOSTILE, "cwd": "/w/" + HOSTILE, "ts": "2026-01-02T03:04:05Z"},
        {"kind": "tool_call", "role": "assistant", "tool": "sh" + HOSTILE, "input": {"cmd": HOSTILE}, "call": "c1",
         "change": {"path": "/w/" + HOSTILE, "action": "update", "new": HOSTILE}},
        {"kind": "message", "role": "assistant", "text": "RED " + HOSTILE, "model": "m" + HOSTILE,
         "tokens": {"in": 1, "out": 1, "key": "k"}}])
    raw = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
    env = (e, root)
    args = ["--root", f"plumb={root}", "--provider", "plumb"]
    runs = [["list"], ["show", "pl-\x1b", "--turn", "1"], ["search", "RED"], ["search", "RED", "--no-context"],
            ["stats"], ["files"], ["files", "--by", "timeline"], ["recover", "--file", "/w/" + HOSTILE, "--coverage"]]
    for r in runs:
        p = cli(env, *r, *args)
        assert p.returncode == 0, (r, p.returncode, p.stderr)  # each finds the session's record or file
        for stream in (p.stdout, p.stderr):
            assert not raw.findall(stream), (r, raw.findall(stream)[:5])
            assert "\nFORGED-LINE" not in stream, r
        assert "\\e[31mRED" in p.stdout + p.stderr, r
    # the content view of recover is the file itself: piped, its bytes are written as they are
    p = subprocess.run([sys.executable, "-m", "sessionsift", "recover", "--file", "/w/" + HOSTILE, *args],
                       capture_output=True, timeout=120, env=dict(os.environ, **e), cwd=REPO)
    assert p.returncode == 0 and p.stdout == HOSTILE.encode() and not raw.findall(p.stderr.decode())
