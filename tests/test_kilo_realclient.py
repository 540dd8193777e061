"""Kilo Code on data the REAL client wrote offline (tests/realclient/kilo/README.md): the reader (opencode's
code under Kilo Code's names) against the ground truth of the scripts on a session-scoped corpus, run once per
test run, and every command on the committed sample (examples/kilo-home, made by
tests/realclient/kilo/make_examples.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.realclient.kilo import client as kilo_client
from tests.realclient.opencode.checks import _expected_tokens, _read, check_scenario

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"
HOME = EX / "kilo-home"
GT = {p.stem: json.loads(p.read_text()) for p in sorted((EX / "kilo-ground-truth").glob("*.json"))}
P = ["--kilo-home", str(HOME)]
PLAIN = ("shell_write", "continued", "failing", "subagent", "compacted")
"""The scenarios opencode's ground-truth check applies to as it is (the killed ones are checked below)."""
FRESH = ("shell_write", "continued", "subagent", "compacted")
"""PLAIN's scenarios in the session fixture (tests/realclient/kilo/scenarios.FIXTURE)."""


def _run(corpus, name):
    run = corpus[name]
    disc, sessions = _read(run.data_dir, provider="kilo-code")
    return run, disc, sessions


@pytest.mark.parametrize("name", FRESH)
def test_scenario_matches_ground_truth(kilo_corpus, name):
    run, disc, sessions = _run(kilo_corpus, name)
    assert run.truth["client"] == "kilo" and run.truth["client_version"] == kilo_client.PINNED_VERSION
    assert {r.provider for _, rs, _ in sessions.values() for r in rs} == {"kilo-code"}
    assert all(not rep.unknown_kinds for _, _, rep in sessions.values())
    main, conv = check_scenario(run, sessions)
    assert disc.sessions[0].extra["db_path"].endswith("/kilo/kilo.db")


def test_subagent_is_a_child_session(kilo_corpus):
    run, disc, sessions = _run(kilo_corpus, "subagent")
    main = run.truth["session_ids_from_client_events"][0]
    kids = [ref for ref, _, _ in sessions.values() if ref.parent_session_id == main]
    assert len(kids) == 1 and kids[0].extra["agent"] == "general"
    task = next(r for r in sessions[main][1] if r.kind == "tool_result" and r.tool_name == "task")
    assert kids[0].session_id in task.text


def test_killed_mid_stream_and_mid_tool(kilo_corpus, kilo_examples):
    run = kilo_examples["killed"]  # the sample's: this scenario is not in the fixture
    _, sessions = _read(run.data_dir, cwd=run.truth["cwd"], provider="kilo-code")
    recs = sessions[run.truth["session_ids_from_client_events"][0]][1]
    last = [r for r in recs if r.native == "message/assistant"][-1]
    assert run.truth["killed"] and last.tokens is None and "completed" not in last.raw["time"]
    run, _, sessions = _run(kilo_corpus, "killed_tool")
    recs = sessions[run.truth["session_ids_from_client_events"][0]][1]
    sleep = next(c for c in run.truth["tool_calls"] if c["name"] == "bash")
    call = next(r for r in recs if r.kind == "tool_call" and r.call_id == sleep["id"])
    assert call.raw["state"]["status"] == "running" and call.tool_input == sleep["input"]
    assert not [r for r in recs if r.kind == "tool_result" and r.call_id == sleep["id"]]
    assert run.truth["runs"][0]["killed"] and run.truth["runs"][0]["rc"] == -9  # the shell died with its group
    write = next(c for c in run.truth["tool_calls"] if c["name"] == "write")
    res = next(r for r in recs if r.kind == "tool_result" and r.call_id == write["id"])
    assert res.file_changes[0].new_content == write["input"]["content"]


def test_compaction_summary_comes_from_kilos_own_compaction_prompt(kilo_corpus):
    run, _, sessions = _run(kilo_corpus, "compacted")
    recs = sessions[run.truth["session_ids_from_client_events"][0]][1]
    summ = [r for r in recs if r.native == "part/text/summary"]
    assert [r.text for r in summ] == [run.truth["summary_text"]]
    assert "summary" in [s["conversation"] for s in run.truth["served_steps"]]


# -- every command, on the committed sample ------------------------------------------------------

def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO, env=os.environ | {"COLUMNS": "200"})


def rows(p) -> list[dict]:
    out = [json.loads(x) for x in p.stdout.splitlines()]
    assert out and out[0]["kind"] == "header" and out[-1]["kind"] == "summary", p.stderr
    return out


def _main_ids() -> list[str]:
    return [gt["session_ids_from_client_events"][0] for gt in GT.values()]


def test_the_sample_holds_every_scenario_in_one_database():
    # one database; a reader opening it (WAL mode) lets SQLite make its -shm index and an empty -wal beside it
    side = {p.name: p.stat().st_size for p in HOME.iterdir() if p.name in ("kilo.db-shm", "kilo.db-wal")}
    assert sorted(p.name for p in HOME.iterdir() if p.name not in side) == ["kilo.db"]
    assert side.get("kilo.db-wal", 0) == 0, "the sample's -wal holds pages: checkpoint it into kilo.db"
    disc, sessions = _read(HOME, provider="kilo-code")
    assert sorted(r.session_id for r in disc.sessions if r.parent_session_id is None) == sorted(_main_ids())
    for name in PLAIN:
        run = type("Run", (), {"truth": GT[name]})
        check_scenario(run, {sid: v for sid, v in sessions.items() if v[0].project == GT[name]["cwd"]})


def test_list_and_coverage_name_kilo_code():
    p = cli("list", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    sess = [r for r in rows(p) if r["kind"] == "session"]
    assert sorted(r["session_id"] for r in sess if not r.get("parent_session_id")) == sorted(_main_ids())
    cov = {c["provider"]: c for c in rows(p)[-1]["coverage"]}
    assert (cov["kilo-code"]["state"], cov["kilo-code"]["sessions"], cov["kilo-code"]["subagents"]) == ("ok", len(GT), 1)
    assert f"Kilo Code {len(GT)} sessions (+1 subagent)" in cli("list", *P).stdout.strip().splitlines()[-1]


def test_show_search_and_censuses():
    gt = GT["continued"]
    sid = gt["session_ids_from_client_events"][0]
    p = cli("show", sid, "--turn", "2", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    recs = [r for r in rows(p) if r["kind"] == "record"]
    assert [r["call_id"] for r in recs if r["record_kind"] == "tool_call"] == \
        [c["id"] for c in gt["tool_calls"] if c["conversation"] == "P2"]
    p = cli("search", "second line", "-t", "tool_call", *P, "--format", "json")
    hits = [r for r in rows(p) if r["kind"] == "hit"]
    assert p.returncode == 0 and {h["session_id"] for h in hits} == {sid}, p.stdout[-1500:]
    p = cli("search", "", "-t", "tool_call", "-c", *P, "--format", "json")
    assert p.returncode == 0 and rows(p)[-1]["hits"] == sum(len(g["tool_calls"]) for g in GT.values())


def test_stats_counts_calls_failures_and_prompts():
    p = cli("stats", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    shared = rows(p)[-1]["shared"]
    assert shared["tool_calls"] == dict(Counter(c["name"] for g in GT.values() for c in g["tool_calls"]))
    assert sum(shared["tool_errors"].values()) == 1  # `failing`'s exit 3; the killed sleep has no result
    assert shared["prompts"] == sum(len(g["prompts"]) for g in GT.values())


def test_files_and_recover():
    gt = GT["shell_write"]
    p = cli("files", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    assert gt["cwd"] + "/hello.py" in {r["file"] for r in rows(p) if r["kind"] == "file"}
    p = cli("recover", "--file", gt["cwd"] + "/hello.py", *P, "--format", "json")
    summ = rows(p)[-1]
    assert summ["status"] == "complete_view" and summ["content"] == gt["expected_files"]["hello.py"]["content"]


def test_usage_equals_what_the_mock_sent():
    p = cli("usage", "session", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    summ = rows(p)[-1]
    exp = Counter()
    for g in GT.values():
        steps = [s for s in g["served_steps"] if s["conversation"] != "title"]
        if g["killed"]:  # the step the kill interrupted wrote no usage (its message has no step-finish)
            steps = steps[:-1]
        for s in steps:
            i, o, c, _cw, _r, tot = _expected_tokens(s["usage"])
            exp.update(input=i, output=o, cache_read=c, total=tot)
    assert (summ["input_tokens"], summ["output_tokens"], summ["cache_read_tokens"], summ["total_tokens"]) == \
        (exp["input"], exp["output"], exp["cache_read"], exp["total"])
    d = cli("usage", "daily", *P, "--format", "json")
    assert d.returncode == 0 and rows(d)[-1]["total_tokens"] == exp["total"]


def test_clean_scan_export_and_audit_run_on_every_session(tmp_path):
    p = cli("clean", "scan", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    cands = [r for r in rows(p) if r["kind"] == "session"]
    assert sorted(c["session_id"] for c in cands if not c["parent_session_id"]) == sorted(_main_ids())
    assert all(c["footprint"] == [] for c in cands)  # rows of the client's database: never deleted by us
    for fmt in ("markdown", "chunks", "parquet"):
        out = tmp_path / fmt
        e = cli("export", fmt, *P, "--out", str(out), "--format", "json")
        assert e.returncode == 0, (fmt, e.stderr)
        assert any(out.rglob("*")), fmt
    a = cli("audit", "secrets", *P, "--format", "json")
    assert a.returncode == 0 and rows(a)[-1]["sessions"] == len(_main_ids()), a.stderr
