"""pi on data the REAL client wrote offline (tests/realclient/pi/README.md): the reader against the
ground truth of the scripts (a session-scoped corpus, run once per test run), and every command on the
committed sample (examples/pi-home, made the same way by tests/realclient/pi/make_examples.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from sessionsift.providers import ReadReport
from sessionsift.providers.base import Root
from sessionsift.providers.pi import Pi

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"
PI_HOME = EX / "pi-home"
GT = {p.stem: json.loads(p.read_text()) for p in sorted((EX / "pi-ground-truth").glob("*.json"))}
P = ["--pi-home", str(PI_HOME)]


def _sessions(agent_dir: Path):
    prov = Pi()
    d = prov.discover(Root(Path(agent_dir), "--pi-home", True))
    return prov, d


def _records(prov, ref):
    rep = ReadReport()
    return list(prov.read(ref, rep, raw=True)), rep


def _by_id(prov, d) -> dict:
    return {r.session_id: _records(prov, r) + (r,) for r in d.sessions}


# -- the reader, on a fresh corpus ----------------------------------------------------------------

def test_every_scenario_reads_as_the_script_implies(pi_corpus):
    for name, run in pi_corpus.items():
        prov, d = _sessions(run.agent_dir)
        assert d.coverage.state == "ok" and d.coverage.sessions == len(run.truth["sessions"]), name
        assert sorted(r.session_id for r in d.sessions) == sorted(run.session_ids), name
        recs = [x for sid in run.session_ids for x in _records(prov, next(r for r in d.sessions if r.session_id == sid))[0]]
        originals = [r for r in recs if r.copy_of is None]
        prompts = [r.text for r in originals if r.kind == "prompt"]
        assert prompts == [p["text"] for p in run.truth["prompts"]], name
        calls = {r.call_id: r for r in originals if r.kind == "tool_call"}
        results = {r.call_id: r for r in originals if r.kind == "tool_result"}
        for c in run.truth["tool_calls"]:
            assert calls[c["id"]].tool_name == c["name"] and calls[c["id"]].tool_input == c["input"], (name, c)
            if run.truth["killed"] and c["step"] == 0:
                assert c["id"] not in results, (name, "a call killed mid-tool has no result")
                continue
            res = results[c["id"]]
            if c["expect_exit"]:
                assert (res.exit_code, res.is_error) == (c["expect_exit"], True), (name, c)
            else:  # pi writes no code for a success (nor for a shell killed by a signal): unknown, not 0
                assert (res.exit_code, res.is_error) == (None, False), (name, c)
        for rec in recs:
            assert rec.kind != "unknown", (name, rec.native)


def test_tokens_equal_what_the_mock_sent_and_the_summary_call_is_not_on_disk(pi_corpus):
    for name, run in pi_corpus.items():
        prov, d = _sessions(run.agent_dir)
        got = Counter()
        keys = set()
        for ref in d.sessions:
            for r in _records(prov, ref)[0]:
                if r.tokens is not None and r.copy_of is None:
                    t = r.tokens
                    assert t.dedup_key not in keys
                    keys.add(t.dedup_key)
                    got.update(prompt=t.input + t.cache_read + t.cache_write, cached=t.cache_read, output=t.output,
                               total=t.total, n=1)
        exp = Counter()
        for s in run.truth["served_steps"]:
            if s["conversation"] == "summary":  # pi's compaction call: its usage is written nowhere
                continue
            u = s["usage"]
            exp.update(prompt=u["prompt_tokens"], cached=(u.get("prompt_tokens_details") or {}).get("cached_tokens", 0),
                       output=u["completion_tokens"], total=u["total_tokens"], n=1)
        assert got == exp, name


def test_writes_carry_the_whole_content_and_edits_are_updates(pi_corpus):
    for name, run in pi_corpus.items():
        prov, d = _sessions(run.agent_dir)
        changes = [fc for ref in d.sessions for r in _records(prov, ref)[0] if r.copy_of is None
                   for fc in r.file_changes]
        cwd = run.truth["cwd"]
        writes = {c["input"]["path"] for c in run.truth["tool_calls"] if c["name"] == "write"}
        edits = {c["input"]["path"] for c in run.truth["tool_calls"] if c["name"] == "edit"}
        for fc in changes:
            rel = fc.path[len(cwd) + 1:]
            if fc.action == "unknown":  # pi's write records no create/update
                assert fc.new_content is not None and rel in {w.replace(cwd + "/", "") for w in writes}, name
                if rel not in {e.replace(cwd + "/", "") for e in edits}:
                    assert fc.new_content == run.truth["expected_files"][rel]["content"], (name, rel)
            else:
                assert fc.action == "update" and fc.new_content is None, (name, fc)
        assert len(changes) == len(writes) + len(edits), name


def test_a_fork_copies_the_parent_entries_which_count_once(pi_corpus):
    run = pi_corpus["fork"]
    prov, d = _sessions(run.agent_dir)
    parent = next(s for s in run.truth["sessions"] if not s["parentSession"])
    fork = next(s for s in run.truth["sessions"] if s["parentSession"])
    ref = next(r for r in d.sessions if r.session_id == fork["id"])
    recs, rep = _records(prov, ref)
    copies = [r for r in recs if r.copy_of is not None]
    assert copies and all(r.copy_of.startswith(parent["id"] + ":L") and r.tokens is None for r in copies)
    assert rep.duplicates == len(copies)
    f = prov.forked_from(ref)
    # every entry of the parent file (all lines but its header) was copied, ids unchanged
    assert (f["session_id"], f["copied_records"], f["line"]) == (parent["id"], parent["lines"] - 1, parent["lines"])
    assert prov.forked_from(next(r for r in d.sessions if r.session_id == parent["id"])) is None
    assert [r.text for r in recs if r.kind == "prompt" and r.copy_of is None] == [run.truth["prompts"][1]["text"]]


def test_compaction_entry_and_the_turn_after_it(pi_corpus):
    run = pi_corpus["compaction"]
    prov, d = _sessions(run.agent_dir)
    recs = _records(prov, d.sessions[0])[0]
    comp = [r for r in recs if r.native == "compaction"]
    assert len(comp) == 1 and run.truth["summary_text"] in comp[0].text and comp[0].kind == "meta"
    assert comp[0].raw["details"]["modifiedFiles"] == ["big.txt"] and comp[0].raw["tokensBefore"] == 3620
    p2 = [r for r in recs if r.kind == "prompt"][1]
    assert p2.turn == 2 and p2.line > comp[0].line


def test_a_cut_bash_output_is_flagged_and_its_saved_whole_output_read(pi_corpus):
    run = pi_corpus["shell_write"]
    prov, d = _sessions(run.agent_dir)
    recs = _records(prov, d.sessions[0])[0]
    cut = [r for r in recs if r.kind == "tool_result" and r.truncated]
    # the last 2000 of the output's 3001 lines ("3000\n" ends with an empty one) are kept
    assert len(cut) == 1 and cut[0].text.splitlines()[0] == "1002" and "Full output: " in cut[0].text
    saved = next(r for r in recs if r.native == "message/toolResult#fullOutputPath")
    assert saved.text == "".join(f"{i}\n" for i in range(1, 3001)) and saved.call_id == cut[0].call_id
    foot = prov.footprint(d.sessions[0])
    assert len(foot) == 2 and foot[1].name.startswith("pi-bash-")


def test_the_shell_tool_runs_with_pi_s_marker_in_its_environment(pi_corpus):
    """Evidence for `whoami`: pi sets PI_CODING_AGENT=true in its own process (cli.js), so every command
    its bash tool runs inherits it; no session id is exported."""
    run = pi_corpus["shell_write"]
    prov, d = _sessions(run.agent_dir)
    recs = _records(prov, d.sessions[0])[0]
    cid = next(c["id"] for c in run.truth["tool_calls"] if c["input"].get("command") == "printenv PI_CODING_AGENT")
    assert next(r for r in recs if r.kind == "tool_result" and r.call_id == cid).text == "true\n"


def test_a_killed_client_left_its_call_and_the_running_command(pi_corpus):
    run = pi_corpus["kill_tool"]
    assert run.truth["killed"] and any("time.sleep(300)" in c for c in run.truth["leftover_processes_killed"])
    prov, d = _sessions(run.agent_dir)
    recs = _records(prov, d.sessions[0])[0]
    assert [r.kind for r in recs if r.kind in ("tool_call", "tool_result")] == ["tool_call"]


# -- every command, on the committed sample ------------------------------------------------------

def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def rows(p) -> list[dict]:
    out = [json.loads(x) for x in p.stdout.splitlines()]
    assert out and out[0]["kind"] == "header" and out[-1]["kind"] == "summary", p.stderr
    return out


def _ids() -> list[str]:
    return [s["id"] for gt in GT.values() for s in gt["sessions"]]


def test_list_names_every_sample_session_and_the_fork():
    p = cli("list", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    sess = [r for r in rows(p) if r["kind"] == "session"]
    assert sorted(r["session_id"] for r in sess) == sorted(_ids())
    cov = {c["provider"]: c for c in rows(p)[-1]["coverage"]}
    assert cov["pi"]["state"] == "ok" and cov["pi"]["sessions"] == len(_ids())
    fork = next(s for s in GT["fork"]["sessions"] if s["parentSession"])
    row = next(r for r in sess if r["session_id"] == fork["id"])
    assert row["forked_from"]["session_id"] == GT["fork"]["sessions"][0]["id"] != fork["id"]
    assert f"pi {len(_ids())} sessions" in cli("list", *P).stdout.strip().splitlines()[-1].split(" · ")


def test_show_search_and_censuses():
    sid = GT["shell_write"]["sessions"][0]["id"]
    p = cli("show", sid, "--turn", "1", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    recs = [r for r in rows(p) if r["kind"] == "record"]
    gt = GT["shell_write"]
    assert [r["call_id"] for r in recs if r["record_kind"] == "tool_call"] == [c["id"] for c in gt["tool_calls"]]
    p = cli("search", "hello from pi", "-t", "tool_result", *P, "--format", "json")
    hits = [r for r in rows(p) if r["kind"] == "hit"]
    assert p.returncode == 0 and len(hits) == 1 and hits[0]["session_id"] == sid, p.stdout[-2000:]
    p = cli("search", "", "-t", "tool_call", "-c", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    n_calls = sum(1 for gt in GT.values() for c in gt["tool_calls"])
    assert rows(p)[-1]["hits"] == n_calls


def test_stats_counts_calls_and_failures_per_tool():
    p = cli("stats", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    summ = rows(p)[-1]
    calls = Counter(c["name"] for gt in GT.values() for c in gt["tool_calls"])
    failed = sum(1 for gt in GT.values() for c in gt["tool_calls"] if c["expect_exit"])
    shared = summ["shared"]
    assert shared["tool_calls"] == dict(calls) and sum(shared["tool_errors"].values()) == failed
    assert shared["prompts"] == sum(len(gt["prompts"]) for gt in GT.values())


def test_files_and_recover_use_the_whole_content_a_write_recorded():
    p = cli("files", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    touched = {r["file"] for r in rows(p) if r["kind"] == "file"}
    gt = GT["shell_write"]
    path = gt["cwd"] + "/hello.py"
    assert path in touched
    p = cli("recover", "--file", path, *P, "--format", "json")
    summ = rows(p)[-1]
    assert summ["status"] == "complete_view" and summ["content"] == gt["expected_files"]["hello.py"]["content"]
    # `python3 hello.py` ran after the write: it may have written the file (exit 5, at risk)
    assert p.returncode == 5 and summ["at_risk"] is True


def test_usage_equals_what_the_mock_sent_on_disk():
    p = cli("usage", "session", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    summ = rows(p)[-1]
    exp = Counter()
    for gt in GT.values():
        for s in gt["served_steps"]:
            if s["conversation"] == "summary":
                continue
            u = s["usage"]
            c = (u.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
            exp.update(input=u["prompt_tokens"] - c, cache_read=c, output=u["completion_tokens"],
                       total=u["total_tokens"], n=1)
    assert (summ["input_tokens"], summ["cache_read_tokens"], summ["output_tokens"], summ["total_tokens"]) == \
        (exp["input"], exp["cache_read"], exp["output"], exp["total"])
    assert summ["messages"] == exp["n"] and summ["messages_without_usage"] == 0
    # pi prices every response itself (usage.cost, from models.json's per-million prices): summed as the
    # client's recorded cost
    want = sum(s["cost"]["total"] for gt in GT.values() for s in gt["served_steps"] if s["conversation"] != "summary")
    assert summ["client_cost_messages"] == exp["n"] and round(want, 6) == summ["client_cost_usd"]
    d = cli("usage", "daily", *P, "--format", "json")
    assert d.returncode == 0 and rows(d)[-1]["total_tokens"] == exp["total"]


def test_clean_scan_export_and_audit_run_on_every_session(tmp_path):
    p = cli("clean", "scan", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    cands = [r for r in rows(p) if r["kind"] == "session"]
    assert sorted(c["session_id"] for c in cands) == sorted(_ids())
    for fmt in ("markdown", "chunks", "parquet"):
        out = tmp_path / fmt
        e = cli("export", fmt, *P, "--out", str(out), "--format", "json")
        assert e.returncode == 0, (fmt, e.stderr)
        assert any(out.rglob("*")), fmt
    a = cli("audit", "secrets", *P, "--format", "json")
    assert a.returncode == 0, a.stderr
    assert rows(a)[-1]["sessions"] == len(_ids())
