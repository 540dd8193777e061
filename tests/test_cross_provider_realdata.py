"""list, show, search, stats, files and recover across providers on the committed sample corpora,
checked against the ground truth of the scripts that made them, through the CLI:

- examples/claude-home: the real Claude Code 2.1.258 client (examples/ground-truth);
- examples/opencode-home: the real opencode 1.18.33 client (examples/opencode-ground-truth);
- examples/crush-home: Crush's own migrations and part shapes (Crush cannot run here, see
  examples/crush-home/README.md; examples/crush-ground-truth.json);
- examples/codex-home: the real Codex CLI 0.171.0 client (examples/codex-ground-truth);
- examples/gemini-home: the real Gemini CLI client (examples/gemini-ground-truth; its own CLI tests
  are tests/test_gemini_cli_commands.py);
- examples/home: one home linking them all (`--home examples/home`, the README demo).

Providers whose sample corpus is not committed yet are checked only for an honest coverage entry.
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"
HOME = EX / "home"
OC_GT = {p.stem: json.loads(p.read_text()) for p in sorted((EX / "opencode-ground-truth").glob("*.json"))}
CR_GT = json.loads((EX / "crush-ground-truth.json").read_text())["sessions"]
GM_GT = {p.stem: json.loads(p.read_text()) for p in sorted((EX / "gemini-ground-truth").glob("*.json"))}
CX_GT = {p.stem: json.loads(p.read_text()) for p in sorted((EX / "codex-ground-truth").glob("*.json"))}
CLAUDE_GT = {p.stem: json.loads(p.read_text()) for p in sorted((EX / "ground-truth").glob("*.json"))}


def cli(*args: str):
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def jrows(p) -> list[dict]:
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows and rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary", p.stderr
    return rows


@pytest.fixture(scope="module")
def listed():
    p = cli("list", "--home", str(HOME), "--format", "json")
    assert p.returncode == 0, p.stderr
    return jrows(p)


def _oc_ids() -> set[str]:
    return {sid for gt in OC_GT.values() for sid in gt["session_ids_from_client_events"]}


def test_list_names_every_providers_sessions_and_computes_coverage(listed):
    sess = [r for r in listed if r["kind"] == "session"]
    by = Counter(r["provider"] for r in sess)
    assert by["claude-code"] == len({gt["session_id"] for gt in CLAUDE_GT.values()})
    assert _oc_ids() <= {r["session_id"] for r in sess if r["provider"] == "opencode"}
    assert set(CR_GT) <= {r["session_id"] for r in sess if r["provider"] == "crush"}
    assert {sid for gt in CX_GT.values() for sid in gt["thread_ids_reported"]} <= {
        r["session_id"] for r in sess if r["provider"] == "codex"}
    assert {sid for gt in GM_GT.values() for sid in gt["session_ids"]} <= {
        r["session_id"] for r in sess if r["provider"] == "gemini-cli"}
    cov = {c["provider"]: c for c in listed[-1]["coverage"]}
    top = Counter(r["provider"] for r in sess if r["parent_session_id"] is None)  # coverage: top-level sessions,
    kids = Counter(r["provider"] for r in sess if r["is_subagent"])    # subagents apart (docs/cli.md),
    helpers = Counter(r["provider"] for r in sess if r["helper"])     # helper sessions apart too
    for name, n in by.items():
        assert cov[name]["state"] == "ok" and cov[name]["sessions"] == top[name]
        if name != "claude-code":
            assert cov[name]["subagents"] == kids[name] and cov[name]["helper_sessions"] == helpers[name]
            assert top[name] + kids[name] + helpers[name] == n
    # every known client is named; one without data or a reader says so with a null count
    assert set(cov) >= {"claude-code", "codex", "gemini-cli", "opencode", "crush"}
    for c in cov.values():
        assert (c["sessions"] is None) == (c["state"] not in ("ok", "absent"))
    # a child session names its parent
    for sid, gt in CR_GT.items():
        row = next(r for r in sess if r["session_id"] == sid)
        assert row["parent_session_id"] == gt["parent"]
        # Crush's title-<parent> row (session.go CreateTitleSession) is a helper, not an agent
        assert row["is_subagent"] == (gt["parent"] is not None and gt["scenario"] != "title")
        assert row["helper"] == ("title generation" if gt["scenario"] == "title" else None)
    p = cli("list", "--home", str(HOME))
    last = p.stdout.strip().splitlines()[-1]
    assert last.startswith(f"coverage: Claude Code {by['claude-code']} sessions ") and f"Crush {top['crush']} (+" in last


def test_a_home_without_claude_data_works(tmp_path):
    home = tmp_path / "h"
    (home / ".local" / "share").mkdir(parents=True)
    (home / ".local" / "share" / "crush").symlink_to(EX / "crush-home")
    p = cli("list", "--home", str(home), "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = jrows(p)
    cov = {c["provider"]: c for c in rows[-1]["coverage"]}
    assert cov["claude-code"]["state"] == "absent" and cov["claude-code"]["sessions"] == 0
    assert {r["session_id"] for r in rows if r["kind"] == "session"} >= set(CR_GT)


def test_search_finds_each_prompt_in_its_session_with_its_turn(listed):
    for name, gt in OC_GT.items():
        sid = gt["session_ids_from_client_events"][0]
        marker = gt["prompts"][0]["marker"]
        p = cli("search", marker, "-F", "-t", "prompt", "--opencode-home", str(EX / "opencode-home"), "--format", "json")
        assert p.returncode == 0, (name, p.stderr)
        hits = [r for r in jrows(p) if r["kind"] == "hit"]
        assert {h["session_id"] for h in hits} == {sid}, name
        assert all(h["record_kind"] == "prompt" and h["turn"] is not None for h in hits)
        # the refetch of a hit shows that record again
        again = cli(*shlex.split(hits[0]["refetch"])[1:], "--format", "json")
        recs = [r for r in jrows(again) if r["kind"] == "record"]
        assert [r["locator"] for r in recs] == [hits[0]["locator"]], hits[0]["refetch"]
    # one query over every provider: the zero-hit report names what it searched and the coverage
    p = cli("search", "no-such-phrase-k8q2", "--home", str(HOME))
    assert p.returncode == 1
    lines = p.stdout.strip().splitlines()
    assert lines[-1].startswith("coverage: Claude Code 8 sessions (+2 subagents) · ")
    others = [r for r in listed if r["kind"] == "session" and r["provider"] != "claude-code"]
    names = ", ".join(sorted({c["display"] for c in listed[-1]["coverage"]
                              if c["provider"] in {r["provider"] for r in others}}))
    assert any(l.startswith(f"0 hits in 0 of {len(others)} sessions of {names} (") for l in lines[:-1]), lines


def test_a_tool_call_and_its_result_are_found_by_input_and_output():
    gt = OC_GT["failing"]
    call = gt["tool_calls"][0]
    p = cli("search", "nonexistent-ssift-dir", "-F", "-t", "tool_call", "--opencode-home", str(EX / "opencode-home"),
            "--format", "json")
    hits = [r for r in jrows(p) if r["kind"] == "hit"]
    assert [(h["tool_name"], h["call_id"]) for h in hits] == [(call["name"], call["id"])]
    assert hits[0]["turn_context"]["opener"]["text"].strip('"') == gt["prompts"][0]["text"]


def test_stats_tool_calls_and_failures_per_tool_match_the_script():
    p = cli("stats", "--crush-home", str(EX / "crush-home"), "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = {r["session_id"]: r for r in jrows(p) if r["kind"] == "session"}
    for sid, gt in CR_GT.items():
        s = rows[sid]
        # the user's bang-mode shell commands are calls too (the reader names them shell_command)
        calls = gt["tool_calls"] + [{"name": "shell_command", **c} for c in gt.get("shell_commands", [])]
        assert s["tool_calls"] == dict(Counter(c["name"] for c in calls)), sid
        want_err = Counter(c["name"] for c in calls if c.get("exit") not in (None, 0))
        assert s["tool_errors"] == dict(want_err), sid
        assert s["prompts"] == len(gt["prompts"]), sid
    p = cli("stats", "--opencode-home", str(EX / "opencode-home"), "--format", "json")
    rows = {r["session_id"]: r for r in jrows(p) if r["kind"] == "session"}
    fail = rows[OC_GT["failing"]["session_ids_from_client_events"][0]]
    assert fail["tool_errors"] == {"bash": 1} and fail["tool_calls"] == {"bash": 1}
    ok = rows[OC_GT["shell_write"]["session_ids_from_client_events"][0]]
    assert ok["tool_errors"] == {} and Counter(ok["tool_calls"]) == Counter(
        c["name"] for st in OC_GT["shell_write"]["served_steps"] for c in st["calls"])
    sm = jrows(p)[-1]
    assert sm["shared"]["providers"] == ["opencode"] and sm["shared"]["sessions"] == len(rows)


def test_files_and_recover_use_the_complete_views_the_clients_recorded(tmp_path):
    p = cli("files", "--by", "timeline", "--home", str(HOME), "--provider", "crush", "--format", "json")
    assert p.returncode == 0, p.stderr
    changes = [r for r in jrows(p) if r["kind"] == "change"]
    want = {path for gt in CR_GT.values() for path in gt["files"]}
    assert {c["file"] for c in changes} == want
    assert all(isinstance(c["refetch"], str) for c in changes)
    for sid, gt in CR_GT.items():
        for path, content in gt["files"].items():
            out = tmp_path / f"{abs(hash((sid, path)))}.out"
            r = cli("recover", "--home", str(HOME), "--file", path, "--out", str(out), "--format", "json")
            assert r.returncode == 0, (path, r.stderr)
            sm = jrows(r)[-1]
            assert sm["status"] == "complete_view" and sm["source"]["provider"] == "crush"
            assert out.read_text() == content
    # opencode records the whole content of a write too
    gt = OC_GT["shell_write"]
    path = f"{gt['cwd']}/hello.py"
    r = cli("recover", "--opencode-home", str(EX / "opencode-home"), "--file", path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == gt["expected_files"]["hello.py"]["content"]


def test_show_a_database_row_by_locator_and_claude_only_commands_refuse_it():
    sid = OC_GT["failing"]["session_ids_from_client_events"][0]
    p = cli("show", sid, "--turn", "1", "--opencode-home", str(EX / "opencode-home"), "--format", "json")
    assert p.returncode == 0, p.stderr
    recs = [r for r in jrows(p) if r["kind"] == "record"]
    call = next(r for r in recs if r["record_kind"] == "tool_call")
    assert call["line"] is None and "--locator" in call["refetch"]
    again = cli(*shlex.split(call["refetch"])[1:], "--format", "json")
    assert [r["locator"] for r in jrows(again) if r["kind"] == "record"] == [call["locator"]]
    # verbatim asks opencode's reader: this session never compacted (exit 1, said so)
    r = cli("verbatim", sid, "--opencode-home", str(EX / "opencode-home"), "--format", "json")
    assert r.returncode == 1, r.stderr
    s = jrows(r)[-1]
    assert s["stopped_by"] == "no_compaction" and s["lacks"] is None, s
    # opencode's reader reads todowrite plans and file-part images (b4ea8a4): this session holds
    # neither, having read the session, and lacks nothing: image finds none (exit 1); plan answers
    # the session's row, "no plan update recorded" (exit 0, bound 0)
    for cmd, field, rc in ((["image", sid], "images", 1), (["plan", sid], "bound", 0)):
        r = cli(*cmd, "--opencode-home", str(EX / "opencode-home"), "--format", "json")
        assert r.returncode == rc, (cmd, r.stderr)
        s = jrows(r)[-1]
        cov = {c["provider"]: c for c in s["coverage"]}
        assert (s[field], s["lacks"], cov["opencode"]["state"], cov["opencode"]["sessions"]) == (0, None, "ok", 1), r.stdout
    # status reads every agent: the session's own verdict (the failing scenario ended its turn)
    r = cli("status", sid, "--opencode-home", str(EX / "opencode-home"), "--format", "json")
    row = next(x for x in jrows(r) if x["kind"] == "session")
    assert r.returncode == 0 and (row["provider"], row["session_id"], row["verdict"]) == ("opencode", sid, "idle-eot")


@pytest.mark.skipif(not CX_GT, reason="no Codex CLI sample corpus committed")
def test_codex_sessions_calls_failures_and_changes_match_the_script(listed):
    listed_ids = {r["session_id"] for r in listed if r["kind"] == "session" and r["provider"] == "codex"}
    p = cli("stats", "--codex-home", str(EX / "codex-home"), "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = {r["session_id"]: r for r in jrows(p) if r["kind"] == "session"}
    for name, gt in CX_GT.items():
        (tid,) = gt["thread_ids_reported"]
        assert tid in listed_ids, name
        s = rows[tid]
        # the main thread's calls are the conversations P1, P2 ...; a subagent's run in its own thread
        mine = [c for c in gt["calls"] if c["conversation"].startswith("P")]
        assert s["tool_calls"] == dict(Counter(c["name"] for c in mine)), name
        failed = Counter(c["name"] for c in mine if c.get("expect_exit") not in (None, 0) or c.get("expect_rejected"))
        assert s["tool_errors"] == dict(failed), name
        assert s["prompts"] == len(gt["prompts"]), name
        for sub in gt.get("subagents") or []:
            kids = [r for r in rows.values() if r["parent_session_id"] == tid]
            assert len(kids) == 1, name
            theirs = [c for c in gt["calls"] if c["conversation"] == sub["conversation"]]
            assert kids[0]["tool_calls"] == dict(Counter(c["name"] for c in theirs)), name
    # recorded changes: every change the script expects, on the file it names
    p = cli("files", "--by", "timeline", "--codex-home", str(EX / "codex-home"), "--format", "json")
    rows = [r for r in jrows(p) if r["kind"] == "change"]
    got = Counter((r["file"], r["action"]) for r in rows if not r["action"].startswith("shell:") and not r["failed"])
    want = Counter((ch["path"], ch["action"]) for gt in CX_GT.values() for c in gt["calls"]
                   for ch in c.get("expect_changes") or [])
    assert got == want
    # the patch the client rejected: a failed row of the file its text names, on its call
    fails = Counter((r["file"], r["action"], r["call_id"]) for r in rows if r["failed"])
    rejected = Counter((m, "update", c["call_id"]) for gt in CX_GT.values() for c in gt["calls"] if c.get("expect_rejected")
                       for m in re.findall(r"^\*\*\* Update File: (.+)$", c["input"], re.M))
    assert fails == rejected and len(rejected) == 1
    # and the files the scripted commands write by redirect (`> data.txt`, `> job.log`), on their call
    shell = Counter((r["file"], r["action"], r["call_id"]) for r in rows if r["action"].startswith("shell:")
                    and r["action"] != "shell:read")
    redirects = Counter((f"{gt['cwd']}/{m}", "shell:write", c["call_id"]) for gt in CX_GT.values() for c in gt["calls"]
                        for m in re.findall(r"(?<![0-9&])> ?([\w.]+)", (c.get("arguments") or {}).get("cmd") or ""))
    assert shell == redirects and len(redirects) == 2
    # a prompt is found in its thread, with its turn
    gt = CX_GT["failing_command"]
    p = cli("search", gt["prompts"][0]["text"], "-F", "-t", "prompt", "--codex-home", str(EX / "codex-home"),
            "--format", "json")
    hits = [r for r in jrows(p) if r["kind"] == "hit"]
    assert [h["session_id"] for h in hits] == gt["thread_ids_reported"] and hits[0]["turn"] == 1
    again = cli(*shlex.split(hits[0]["refetch"])[1:], "--format", "json")
    assert [r["line"] for r in jrows(again) if r["kind"] == "record"] == [hits[0]["line"]]


@pytest.mark.skipif(not CX_GT, reason="no Codex CLI sample corpus committed")
def test_recover_rebuilds_a_codex_file_from_its_add_and_the_diffs_that_fit(tmp_path):
    want = {}  # path -> (the script's last content, whether a complete view starts the chain)
    cats = set()  # files the model printed whole with `cat F` before changing them (a complete view)
    changes: dict[str, int] = {}  # path -> changes the script made (one: its add is the complete view)
    for gt in CX_GT.values():
        for c in gt["calls"]:
            cmd = (c.get("arguments") or {}).get("cmd") or ""
            if cmd.startswith("cat ") and " " not in cmd[4:] and c.get("expect_exit") == 0:
                cats.add(f"{gt['cwd']}/{cmd[4:]}")
            for ch in c.get("expect_changes") or []:
                first = want.get(ch["path"], (None, ch["action"] == "create" or ch["path"] in cats))[1]
                want[ch["path"]] = (ch["content"], first)
                changes[ch["path"]] = changes.get(ch["path"], 0) + 1
    # every file of the committed runs has a complete view (an add, or a `cat` before the patch:
    # resumed's notes.md); tests/test_fresh_realclient.py holds a file only ever patched (exit 7)
    assert any(full for _c, full in want.values()) and cats & set(want)
    for path, (content, full) in want.items():
        p = cli("recover", "--codex-home", str(EX / "codex-home"), "--file", path, "--format", "json")
        sm = jrows(p)[-1]
        if full:  # an add, or the model's own `cat` of it, then the diffs (a later interpreter run: at risk)
            # no interpreter ran after any of these files' last change in the committed runs: 0, not at risk
            single = changes[path] == 1 and path not in cats
            assert (p.returncode, sm["status"], sm["at_risk"]) == (0, "complete_view" if single else "rebuilt", False), path
            assert sm["content"] == content, path
        else:  # an update of a file the session never saw whole: said so, not guessed
            assert p.returncode == 7 and sm["status"] == "no_complete_view" and sm["content"] is None, path


def test_a_recorded_diff_applies_only_where_its_context_fits():
    from sessionsift.providers.base import FileChange, Record, SessionRef
    from sessionsift.files.rebuild import apply_diff, rebuild
    from sessionsift.providers.fileevents import Change

    gt = CX_GT.get("shell_and_patch")
    if gt is None:
        pytest.skip("no Codex CLI sample corpus committed")
    p = cli("show", gt["thread_ids_reported"][0], "--codex-home", str(EX / "codex-home"), "--turn", "1",
            "--format", "json")
    diffs = [c["diff"] for r in jrows(p) if r["kind"] == "record" for c in r["file_changes"] if c["diff"]]
    upd = next(ch for c in gt["calls"] for ch in c.get("expect_changes") or [] if ch["action"] == "update")
    assert apply_diff(upd["before"], diffs[0]) == upd["content"]
    with pytest.raises(ValueError):
        apply_diff(upd["before"].replace("hello", "bye"), diffs[0])
    # the Change wrappers below are built here (no client writes a complete view that contradicts
    # its own later diff); the diff and the contents are the real client's
    ref = SessionRef("codex", "s", [])

    def ch(loc, **kw):
        return Change(ref, Record("codex", "s", loc, "assistant", "tool_call", "x"), FileChange(upd["path"], **kw))

    stale = rebuild([ch("L1", action="create", new_content="other\n"), ch("L2", action="update", diff=diffs[0])],
                    upd["path"])
    assert stale.status == "stale" and stale.content == "other\n" and stale.stopped_at.record.locator == "L2"
    ok = rebuild([ch("L1", action="create", new_content=upd["before"]), ch("L2", action="update", diff=diffs[0])],
                 upd["path"])
    assert ok.status == "rebuilt" and ok.content == upd["content"] and ok.complete


def test_a_project_directory_names_the_sessions_recorded_there_in_every_provider():
    for gt, provider, ids in [(CX_GT.get("failing_command"), "codex", "thread_ids_reported"),
                              (OC_GT.get("failing"), "opencode", "session_ids_from_client_events")]:
        if gt is None:
            continue
        # the directory is gone on this machine: its recorded name still selects
        p = cli("list", gt["cwd"], "--home", str(HOME), "--format", "json")
        assert p.returncode == 0, p.stderr
        rows = jrows(p)
        assert {(r["provider"], r["session_id"]) for r in rows if r["kind"] == "session"} == {
            (provider, sid) for sid in gt[ids]}
        cov = {c["provider"]: c["sessions"] for c in rows[-1]["coverage"]}
        assert cov[provider] == len(gt[ids]) and cov["claude-code"] == 0


@pytest.mark.parametrize("root", ["empty", "missing"])
def test_a_transcript_path_names_its_session_whatever_the_claude_root_holds(tmp_path, root):
    """A real Claude Code transcript copied out of its home, shown by path while --claude-home
    names a directory without projects/ (or none at all): the file is the session; the coverage
    line counts it (it used to be a target error, then 'absent' beside a shown session)."""
    gt = CLAUDE_GT["files_basic"]
    src = next((EX / "claude-home" / "projects").glob(f"*/{gt['session_id']}.jsonl"))
    loose = tmp_path / "loose" / src.name
    loose.parent.mkdir()
    loose.write_bytes(src.read_bytes())
    home = tmp_path / "claude"
    if root == "empty":
        home.mkdir()
    p = cli("show", str(loose), "--line", "1", "--claude-home", str(home), "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = jrows(p)
    assert [r["line"] for r in rows if r["kind"] == "record"] == [1]
    cov = {c["provider"]: c for c in rows[-1]["coverage"]}["claude-code"]
    assert (cov["state"], cov["sessions"]) == ("ok", 1)
    p = cli("stats", str(loose), "--claude-home", str(home))
    assert p.returncode == 0, p.stderr
    assert "coverage: Claude Code 1 session " in p.stdout


@pytest.mark.parametrize("flag,root", [("--gemini-home", "gemini-home"), ("--opencode-home", "opencode-home"),
                                       ("--codex-home", "codex-home"), ("--crush-home", "crush-home")])
def test_a_named_session_includes_its_subagents_as_claude_code_sessions_include_their_lanes(flag, root):
    """The real clients' subagent sessions (Gemini invoke_agent, opencode task, Codex spawn, Crush
    agent): `files PARENT` and `recover PARENT --file F` answer for the files the subagent wrote
    (they used to see the parent alone: 0 changes, exit 1); `show PARENT` still shows the parent
    alone and counts one session."""
    r = [EX / root]
    rows = jrows(cli("list", flag, *map(str, r), "--format", "json"))
    kids = [x for x in rows if x["kind"] == "session" and x["parent_session_id"]]
    assert kids
    kid = next(k for k in kids if jrows(cli("files", k["session_id"], flag, str(r[0]), "--by", "timeline", "--format", "json"))[1:-1])
    parent = kid["parent_session_id"]
    own = [x for x in jrows(cli("files", kid["session_id"], flag, str(r[0]), "--by", "timeline", "--format", "json")) if x["kind"] == "change"]
    got = jrows(cli("files", parent, flag, str(r[0]), "--by", "timeline", "--format", "json"))
    assert {(x["session_id"], x["file"]) for x in own} <= {(x["session_id"], x["file"]) for x in got if x["kind"] == "change"}
    cov = {c["provider"]: c for c in got[-1]["coverage"]}
    assert cov[kid["provider"]]["sessions"] == 1 and cov[kid["provider"]]["subagents"] >= 1  # the parent, its subagent apart
    p = cli("recover", parent, "--file", own[0]["file"], flag, str(r[0]))
    assert p.returncode == 0, p.stderr
    shown = jrows(cli("show", parent, "--turn", "1", flag, str(r[0]), "--format", "json"))
    assert {x["session_id"] for x in shown if x["kind"] == "record"} == {parent}
    assert sum(c["sessions"] or 0 for c in shown[-1]["coverage"]) == 1


def test_no_subagents_leaves_out_every_providers_child_sessions(listed):
    """`stats/files --no-subagents` ("main lanes only") left other providers' subagent sessions in
    (their records are their own session's main lane); `files --subagents-only` keeps exactly them."""
    kids = {r["session_id"] for r in listed if r["kind"] == "session" and r["parent_session_id"]}
    assert {r["provider"] for r in listed if r.get("session_id") in kids} >= {"codex", "gemini-cli", "opencode", "crush"}
    rows = jrows(cli("stats", "--home", str(HOME), "--no-subagents", "--format", "json"))
    assert not kids & {r["session_id"] for r in rows if r["kind"] == "session"}
    rows = jrows(cli("files", "--home", str(HOME), "--no-subagents", "--by", "timeline", "--format", "json"))
    changes = [r for r in rows if r["kind"] == "change"]
    assert changes and not kids & {r["session_id"] for r in changes}
    rows = jrows(cli("files", "--home", str(HOME), "--subagents-only", "--by", "timeline", "--format", "json"))
    assert {r["session_id"] for r in rows if r["kind"] == "change" and r.get("provider") != "claude-code"} <= kids


def test_gemini_rewound_records_are_the_sessions_own_not_a_subagents():
    """The real client's /rewind (examples: gemini rewind): the rewound prompt's records read as a
    subagent lane of the session itself (`is_subagent: true`, parent = its own id); they are its own
    conversation, marked `rewound`."""
    gt = GM_GT["rewind"]
    sid = gt["session_ids"][0]
    rows = jrows(cli("search", "-F", "drop.txt", "--gemini-home", str(EX / "gemini-home"), "--format", "json"))
    hits = [r for r in rows if r["kind"] == "hit" and r["session_id"] == sid]
    assert hits and all(r["is_subagent"] is False and r["parent_session_id"] is None and r["lane"] == "main"
                        for r in hits)
    assert any(r["rewound"] is True and r["record_kind"] == "tool_call" for r in hits)
    keep = [r for r in jrows(cli("search", "-F", "keep.txt", "--gemini-home", str(EX / "gemini-home"), "--format",
                                 "json")) if r["kind"] == "hit" and r["session_id"] == sid]
    assert keep and not any(r["rewound"] for r in keep)


def test_count_by_tool_counts_each_call_once_in_every_provider():
    """`search '' --count-by tool` ("calls") counted a Gemini/opencode/Crush call twice (its result
    carries the tool name too) and every other record as "(no tool)"; it must equal the census's
    calls per tool, and `-t tool_result` counts results."""
    h = ("--home", str(HOME), "--provider", "codex", "--provider", "gemini", "--provider", "opencode",
         "--provider", "crush")
    want = jrows(cli("stats", *h, "--format", "json"))[-1]["shared"]["tool_calls"]
    rows = jrows(cli("search", "", "--count-by", "tool", *h, "--format", "json"))
    got = {r["key"]: r["count"] for r in rows if r["kind"] == "count"}
    assert got == want and {r["of"] for r in rows if r["kind"] == "count"} == {"calls"}
    rows = jrows(cli("search", "", "--count-by", "tool", "-t", "tool_result", *h, "--format", "json"))
    res = {r["key"]: r["count"] for r in rows if r["kind"] == "count"}
    assert res and sum(res.values()) <= sum(want.values()) and "(no tool)" not in res


def test_every_hit_and_touch_row_names_its_provider():
    """A search or files answer over examples/home mixes five providers in one stream; Claude
    Code's rows (the lane shape) carried no `provider`, every other provider's did."""
    home = Path(__file__).resolve().parents[1] / "examples" / "home"
    for args, kinds in ((["search", "hello"], {"hit"}), (["files", "--by", "timeline"], {"touch", "change"})):
        p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--home", str(home), "--format", "json"],
                           capture_output=True, text=True)
        rows = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
        got = [r for r in rows if r["kind"] in kinds]
        assert got and all(r.get("provider") for r in got), [r for r in got if not r.get("provider")][:1]
        assert {r["provider"] for r in got} == {"claude-code", "codex", "gemini-cli", "opencode", "crush", "pi",
                                                  "qwen-code", "copilot-cli", "kilo-code"}


def test_show_refusals_name_the_provider_by_its_display_name():
    """`show <crush session> --line 3` said `crush session ... is not stored in lines`, a missing
    record `(codex)`: the internal names (review finding 13's class); `it has 1 turns`."""
    home = Path(__file__).resolve().parents[1] / "examples" / "home"

    def err(*a):
        p = subprocess.run([sys.executable, "-m", "sessionsift", "show", *a, "--home", str(home)],
                           capture_output=True, text=True)
        assert p.returncode == 2, p
        return p.stderr

    assert "usage error: Crush session 7449d26b-0aff-492a-91fc-684f5edb6126 is not stored in lines" in err("7449d26b", "--line", "3")
    assert "opencode session ses_dcf071d40ffeBPwlzPM2yWoLYO is not stored in lines" in err("ses_dcf071d40", "--line", "3")
    assert "L999 in session 01a230e8-df36-7813-95f9-60782839b250 (Codex CLI)" in err("01a230e8-df36", "--line", "999")
    assert "no such record: nope in session 7449d26b-0aff-492a-91fc-684f5edb6126 (Crush)" in err("7449d26b", "--locator", "nope")
    assert "(it has 1 turn)" in err("7449d26b", "--turn", "4")
