"""`show SESSION` with no address: the whole session turn by turn, for every agent, on the sessions
the real clients wrote (examples/home): the prompts the scenarios typed, every tool call once with
its own result, subagents and child sessions after the main lane; paged only on a terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples"
HOME = str(EX / "home")


def run(*args, home: Path, env=None) -> subprocess.CompletedProcess:
    e = dict(os.environ, HOME=str(home), XDG_CACHE_HOME=str(home / "c"), XDG_DATA_HOME=str(home / "d"), **(env or {}))
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True, env=e,
                          cwd=ROOT, timeout=300)


def turns(sid: str, home: Path) -> tuple[list[dict], dict]:
    p = run("show", sid, "--home", HOME, "--format", "json", home=home)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows[0]["kind"] == "header" and rows[0]["view"] == "session"
    return [r for r in rows if r["kind"] == "turn"], rows[-1]


@pytest.mark.parametrize("gt,field", [(p, "session_id") for p in sorted((EX / "ground-truth").glob("*.json"))]
                         + [(p, "thread_ids_reported") for p in sorted((EX / "codex-ground-truth").glob("*.json"))])
def test_the_prompts_are_those_the_scenario_typed_in_order(tmp_path, gt, field):
    truth = json.loads(gt.read_text())
    sid = truth[field] if isinstance(truth[field], str) else truth[field][0]
    # a slash command (`/compact`) is the client's own command, recorded as harness bookkeeping
    want = [p["text"] for p in truth["prompts"] if not p.get("may_fail") and not p["text"].startswith("/")]
    ts, _sm = turns(sid, tmp_path)
    got = [i["text"] for t in ts if t["lane"] == "main" and t["session_id"] == sid
           for i in t["items"] if i["kind"] == "prompt"]
    # a prompt the client recalled or rewound is on disk too (the scenarios that do so say it)
    assert [g for g in got if g in want] == want, (gt.name, got)


def _all_sessions(home: Path) -> list[tuple[str, str]]:
    p = run("list", "--home", HOME, "--format", "json", home=home)
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    return [(r["provider"], r["session_id"]) for r in rows if r["kind"] == "session" and r["parent_session_id"] is None]


def test_every_tool_call_is_shown_once_with_its_own_result_on_every_agent(tmp_path):
    """Against the shared records themselves (`search '' -t tool_call/-t tool_result`): each call of
    each lane is one tool item, joined to the result of the same call id (its exit code)."""
    seen_providers = set()
    for prov, sid in _all_sessions(tmp_path):
        ts, sm = turns(sid, tmp_path)
        items = [i for t in ts if t["session_id"] == sid for i in t["items"] if i["kind"] == "tool"]
        q = run("search", "", sid, "--home", HOME, "-t", "tool_call", "-t", "tool_result", "--no-context",
                "--format", "json", home=tmp_path)
        hits = [json.loads(x) for x in q.stdout.splitlines()]
        hits = [h for h in hits if h.get("kind") == "hit" and h["session_id"] == sid and h.get("copy_of") is None]
        if prov == "claude-code":  # its search answers in labels: the tool calls are the ground truth's below
            continue
        calls = [h for h in hits if h["record_kind"] == "tool_call"]
        results = {}
        for h in hits:
            if h["record_kind"] == "tool_result" and h["call_id"]:
                results.setdefault(h["call_id"], h)
        shown_calls = [i for i in items if i["result"] is None or i["result"]["locator"] != i["locator"]]
        assert sorted(i["locator"] for i in shown_calls) == sorted(h["locator"] for h in calls), (prov, sid)
        for i in shown_calls:
            r = results.get(i["call_id"])
            if r is None:
                assert i["result"] is None, (prov, sid, i)
            else:
                assert (i["result"]["locator"], i["result"]["exit_code"]) == (r["locator"], r["exit_code"]), (prov, sid)
        seen_providers.add(prov)
    assert {"codex", "gemini-cli", "opencode", "crush"} <= seen_providers


@pytest.mark.parametrize("gt", sorted((EX / "ground-truth").glob("*.json")))
def test_claude_code_tool_calls_are_those_the_mock_served(tmp_path, gt):
    """Every tool_use the scripted mock served the real client (ground truth) is one tool item, in
    the session's lanes, each with a result where the client ran it."""
    truth = json.loads(gt.read_text())
    served = sorted(t["id"] for t in truth["tool_uses"] if t.get("served"))
    ts, _sm = turns(truth["session_id"], tmp_path)
    items = [i for t in ts for i in t["items"] if i["kind"] == "tool"]
    assert sorted(i["call_id"] for i in items if i["call_id"] in set(served)) == served, gt.name
    assert len({i["call_id"] for i in items}) == len(items), gt.name  # each call once


@pytest.mark.parametrize("sid,kids", [("23ad8bf1", 2), ("01a230e8-cf6", 1), ("ses_dcf075cd", 1), ("d5aeb447", 1)])
def test_subagents_follow_the_main_lane(tmp_path, sid, kids):
    ts, sm = turns(sid, tmp_path)
    subs = [ln for ln in sm["lanes"] if ln != "main"] + sm["child_sessions"]
    assert len(subs) == kids, sm
    assert ts[0]["lane"] == "main" and not ts[0]["is_subagent"]
    assert all(t["is_subagent"] for t in ts if t["lane"] != "main" or t["session_id"] in sm["child_sessions"])


def test_a_target_naming_several_sessions_is_refused(tmp_path):
    # the directory Crush's sample sessions recorded as their project: five sessions
    proj = json.loads((EX / "crush-ground-truth.json").read_text())
    app = next(r["project"] for r in (json.loads(x) for x in run("list", "--home", HOME, "--provider", "crush",
                                                                  "--format", "json", home=tmp_path).stdout.splitlines())
               if r["kind"] == "session" and r["project"].endswith("/projects/app"))
    assert proj["sessions"]
    p = run("show", app, "--home", HOME, home=tmp_path)
    assert p.returncode == 2
    assert "this command needs exactly one session" in p.stderr


def _in_pty(argv, env) -> str:
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command with a terminal as stdout
        os.chdir(ROOT)
        os.execvpe(argv[0], argv, env)
    out = b""
    while True:
        r, _w, _x = select.select([fd], [], [], 60)
        if not r:
            break
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out.decode("utf-8", "replace")


def test_the_whole_view_is_paged_on_a_terminal_only(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "c"),
               SESSIONSIFT_PAGER="sed -u s/^/PAGED:/", TERM="dumb")
    argv = [sys.executable, "-m", "sessionsift", "show", "01a230e8-cf6", "--home", HOME]
    paged = _in_pty(argv, env)
    assert "PAGED:session 01a230e8-cf64" in paged
    plain = _in_pty(argv + ["--no-pager"], env)
    assert "session 01a230e8-cf64" in plain and "PAGED:" not in plain
    piped = run("show", "01a230e8-cf6", "--home", HOME, home=tmp_path, env={"SESSIONSIFT_PAGER": "sed s/^/PAGED:/"})
    assert piped.returncode == 0 and piped.stdout.startswith("session 01a230e8-cf64")


def test_a_metadata_line_without_a_timestamp_shows_null_never_a_guessed_instant(tmp_path):
    # REC-005, on a real 2.1.258 transcript (examples/captured/reply-before-prompt): its mode,
    # permission-mode, atis-latch, cost-state and last-prompt lines carry no timestamp
    cap = EX / "captured" / "reply-before-prompt"
    path = next(cap.glob("projects/*/43d862be-*.jsonl"))
    raw = [json.loads(x) for x in path.read_text().splitlines()]
    p = run("show", "43d862be", "--line", f"1..{len(raw)}", "--claude-home", str(cap), "--format", "json",
            home=tmp_path)
    assert p.returncode == 0, p.stderr
    got = {r["line"]: r["timestamp"] for r in map(json.loads, p.stdout.splitlines()) if r["kind"] == "record"}
    assert sorted(got) == list(range(1, len(raw) + 1))
    bare = [i for i, r in enumerate(raw, 1) if "timestamp" not in r and "timestamp" not in (r.get("snapshot") or {})]
    assert len(bare) >= 5 and {raw[i - 1]["type"] for i in bare} >= {"mode", "last-prompt", "cost-state"}
    assert [got[i] for i in bare] == [None] * len(bare)
    for i, r in enumerate(raw, 1):
        if "timestamp" in r:
            assert got[i]["utc"] == r["timestamp"], i


@pytest.mark.parametrize("sid", ["8414eb07", "23ad8bf1", "01a230e8-d031", "ses_dcf0737f4ffef7hw6yOiajUVM7"])
def test_the_whole_view_fits_an_80_column_terminal_and_keeps_every_word(tmp_path, sid):
    """On 80 columns (through the pager as without it) no line of the whole-session view is wider
    than the terminal: the header's project and instants, prompts and replies are broken across
    lines (every word of them still there, in order), a tool call's input is cut with an ellipsis
    and its result's size kept; a pipe gets the lines whole, as before. Before: the files_basic
    session's header was 150 cells, its Write calls 102, its first prompt 85."""
    import re

    from tests.terminal import CLI, run_on_terminal

    env = dict(os.environ, HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "c"), XDG_DATA_HOME=str(tmp_path / "d"))
    shown = run_on_terminal(CLI + ["show", sid, "--home", HOME, "--no-pager"], cols=80, env=env, cwd=ROOT)
    assert shown.code == 0, shown.text[-300:]
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln) for ln in shown.lines]
    assert [ln for ln in lines if len(ln) > 80] == []
    piped = run("show", sid, "--home", HOME, home=tmp_path).stdout.splitlines()
    assert len(piped) < len(lines)
    # the words of every prompt and reply line, and each tool call's result, are all on the terminal
    flat = " ".join(" ".join(lines).split())
    for ln in piped:
        s = ln.strip()
        if s.startswith("⏺"):
            assert s.rsplit(" → ", 1)[1] in flat, s
        elif not s.startswith(("coverage:", "session ")):
            assert " ".join(s.split()) in flat, s
