"""list, show, search, stats, files, recover and usage over the committed Gemini CLI sample
(examples/gemini-home, written by the real Gemini CLI 0.61.0 / 0.38.2 / 0.28.2 offline), through the
CLI in --format json, checked against the ground truth of the scripts that made it
(examples/gemini-ground-truth)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.realclient.gemini import truth

REPO = Path(__file__).resolve().parents[1]
HOME = REPO / "examples" / "gemini-home"
GT = {p.stem: json.loads(p.read_text()) for p in sorted((REPO / "examples" / "gemini-ground-truth").glob("*.json"))}
G = ["--gemini-home", str(HOME)]


def cli(*args: str) -> tuple[int, list[dict]]:
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args, *G, "--format", "json"], capture_output=True,
                       text=True, timeout=300, cwd=REPO)
    rows = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    assert rows and rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary", p.stderr
    return p.returncode, rows


def gemini_coverage(rows) -> dict:
    return next(c for c in rows[-1]["coverage"] if c["provider"] == "gemini-cli")


def main_id(name: str) -> str:
    (sid,) = GT[name]["session_ids"]
    return sid


def all_ids() -> set[str]:
    return {s["session_id"] for gt in GT.values() for s in gt["sessions_on_disk"]}


def test_list_rows_equal_the_ground_truth():
    rc, rows = cli("list")
    assert rc == 0
    sess = {r["session_id"]: r for r in rows if r["kind"] == "session"}
    assert set(sess) == all_ids()
    for name, gt in GT.items():
        r = sess[main_id(name)]
        assert (r["provider"], r["project"], r["project_source"]) == ("gemini-cli", gt["cwd"], "projects.json")
        assert r["first_prompt"] == gt["prompts"][0]["text"] and r["last_prompt"] == gt["prompts"][-1]["text"]
        assert r["parent_session_id"] is None
    subs = [r for r in sess.values() if r["parent_session_id"]]
    assert [s["parent_session_id"] for s in subs] == [main_id("subagent")]
    cov = gemini_coverage(rows)  # top-level sessions; the subagent counted apart
    assert (cov["state"], cov["sessions"], cov["subagents"]) == ("ok", len(all_ids()) - len(subs), len(subs))


@pytest.mark.parametrize("name", sorted(GT))
def test_show_every_turn(name):
    gt = GT[name]
    calls = truth.expected_calls(gt, [f"P{i + 1}" for i in range(len(gt["prompts"]))])
    for n, p in enumerate(gt["prompts"], 1):
        rc, rows = cli("show", main_id(name)[:8], "--turn", str(n))
        assert rc == 0
        recs = [r for r in rows if r["kind"] == "record" and r["copy_of"] is None]
        assert [r["text"] for r in recs if r["record_kind"] == "prompt"] == [p["text"]]
        got = [(r["tool_name"], r["tool_input"]) for r in recs if r["record_kind"] == "tool_call"]
        assert got == [(c["name"], c["args"]) for c in calls if c["conversation"] == f"P{n}"]
        assert all(r["turn"] == n for r in rows if r["kind"] == "record")


def test_search_finds_originals_and_says_zero():
    rc, rows = cli("search", "-F", "[resumed P1]")
    hits = [r for r in rows if r["kind"] == "hit"]
    # the prompt is on disk three times (the live line and two resume replays): one hit
    assert rc == 0 and [(h["record_kind"], h["session_id"]) for h in hits] == [("prompt", main_id("resumed"))]
    rc, rows = cli("search", "-t", "tool_result", "Exit Code: (3|127)")
    hits = [r for r in rows if r["kind"] == "hit"]
    assert sorted(h["exit_code"] for h in hits) == [3, 127] and {h["session_id"] for h in hits} == {main_id("failing")}
    rc, rows = cli("search", "no such text anywhere zq")
    cov = gemini_coverage(rows)
    assert rc == 1 and rows[-1]["hits"] == 0 and cov["sessions"] + cov["subagents"] == len(all_ids())


def test_stats_tool_calls_errors_and_tokens():
    rc, rows = cli("stats")
    assert rc == 0
    by_id = {r["session_id"]: r for r in rows if r["kind"] == "session"}
    tot = Counter()
    for name, gt in GT.items():
        for sid, convs in [(main_id(name), [f"P{i + 1}" for i in range(len(gt["prompts"]))])] + (
                [(next(s for s in by_id if by_id[s]["parent_session_id"] == main_id(name)), ["SUBAGENT-A"])]
                if name == "subagent" else []):
            r = by_id[sid]
            calls = truth.expected_calls(gt, convs)
            assert r["tool_calls"] == dict(Counter(c["name"] for c in calls)), (name, sid)
            errs = Counter(c["name"] for c in calls if c["exit_code"] not in (0, None))
            if name == "replace_edit":
                errs["replace"] += 1  # the replace whose old_string is absent
            assert r["tool_errors"] == dict(errs), name
            exp = truth.expected_tokens(gt, convs)
            if exp:
                got = r["tokens_by_model"][gt["model"]]
                for k in ("input", "output", "cache_read", "total"):
                    assert got[k] == sum(t[k] for t in exp), (name, k)
                    tot[k] += got[k]
    shared = rows[-1]["shared"]["tokens_by_model"][next(iter(GT.values()))["model"]]
    assert {k: shared[k] for k in tot} == dict(tot)


def test_files_and_recover_from_new_content():
    rc, rows = cli("files")
    assert rc == 0
    files = {r["file"]: r for r in rows if r["kind"] == "file"}
    expected: dict[str, list[str]] = {}
    last: dict[str, str] = {}
    for name, gt in GT.items():
        for convs in ([f"P{i + 1}" for i in range(len(gt["prompts"]))], ["SUBAGENT-A"]):
            for path, content in truth.expected_file_states(gt, truth.expected_calls(gt, convs)):
                before = path in gt["setup_files"] or path in last
                expected.setdefault(path, []).append("update" if before else "create")
                last[path] = content
    # the scripted `cat F` commands: shell reads, listed as Claude Code's Bash reads are
    for name, gt in GT.items():
        for c in gt.get("tool_calls") or []:
            cmd = (c.get("args") or {}).get("command") or ""
            if c.get("name") == "run_shell_command" and re.fullmatch(r"cat \S+", cmd):
                f = cmd[4:] if cmd[4:].startswith("/") else f"{gt['cwd']}/{cmd[4:]}"
                expected.setdefault(f, []).append("shell:read")
    assert {f: dict(r["ops"]) for f, r in files.items()} == {f: dict(Counter(a)) for f, a in expected.items()}
    s = rows[-1]["shared"]
    assert s["changes"] == s["complete_views"] == sum(len([a for a in v if not a.startswith("shell:")])
                                                      for v in expected.values())
    for path, content in last.items():
        owner = next(n for n, gt in GT.items() if path in gt["disk_files"])
        assert GT[owner]["disk_files"][path]["text"] == content
        rc, rows = cli("recover", "--file", path)
        summary = rows[-1]
        assert summary["status"] == "complete_view" and summary["content"] == content, path
        # a scripted command that runs an interpreter after the last write (`python3 app.py`) may have
        # written the file: at risk (exit 5), each such command named in a shell_risk row
        risks = [r for r in rows if r["kind"] == "shell_risk"]
        scripted = {c["args"]["command"] for c in GT[owner]["tool_calls"] if c["name"] == "run_shell_command"}
        assert all(r["effect"] == "possible" and r["command"] in scripted for r in risks), risks
        assert rc == (5 if risks else 0) and summary["at_risk"] == bool(risks), path


def test_usage_totals_equal_what_the_api_sent():
    p = subprocess.run([sys.executable, "-m", "sessionsift", "usage", "daily", *G, "--format", "json"],
                       capture_output=True, text=True, timeout=300, cwd=REPO)
    assert p.returncode == 0, p.stderr
    summ = json.loads(p.stdout.splitlines()[-1])
    exp, n = Counter(), 0
    for gt in GT.values():
        for t in truth.expected_tokens(gt, sorted({r["conversation"] for r in gt["responses"]})):
            exp.update({k: t[k] for k in ("input", "output", "cache_read", "reasoning", "total")})
            n += 1
    got = {k: summ[f"{k}_tokens"] for k in exp}
    assert got == dict(exp)
    assert (summ["messages"], summ["messages_without_usage"], summ["cache_write_tokens"]) == (n, 0, None)


def test_hostile_text_prints_escaped(tmp_path):
    """A real chat file whose prompt, session id and file name carry ESC, BEL, CR, a newline and a bidi
    override (edited into a copy of shell_write's file): list and show print each as one escaped line."""
    import shutil

    home = tmp_path / ".gemini"
    shutil.copytree(HOME, home)
    src = next((home / "tmp" / "gem-shell-write" / "chats").glob("*.jsonl"))
    evil = "evil \x1b[31mRED\x07\r\nsecond line \u202eesrever"
    out = []
    for line in src.read_text().splitlines():
        obj = json.loads(line)
        if obj.get("type") == "user" and "[shell_write P1]" in json.dumps(obj):
            obj["content"] = [{"text": evil}]
        if isinstance(obj.get("sessionId"), str):
            obj["sessionId"] = "\x1b]0;title\x07" + obj["sessionId"]
        out.append(json.dumps(obj))
    src.write_text("\n".join(out) + "\n")
    src.rename(src.with_name("session-\x1b[2J\n.jsonl"))
    for args in (["list"], ["show", "\x1b]0;title\x07" + main_id("shell_write"), "--turn", "1"]):
        p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--gemini-home", str(home)],
                           capture_output=True, text=True, timeout=300, cwd=REPO)
        assert p.returncode == 0, p.stderr
        for ch in ("\x1b", "\x07", "\r", "\u202e"):
            assert ch not in p.stdout, (args[0], repr(ch))
        line = next(ln for ln in p.stdout.splitlines() if "evil" in ln)
        assert "second line" in line, "the prompt's newline split the line"
