"""Qwen Code on data the REAL client wrote offline (tests/realclient/qwen/README.md): the reader against
the ground truth of the scripts (a session-scoped corpus, run once per test run), and every command on
the committed sample (examples/qwen-home, made the same way by tests/realclient/qwen/make_examples.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from sessionsift.providers import ReadReport
from sessionsift.providers.base import Root
from sessionsift.providers.qwen import QwenCode

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"
QW_HOME = EX / "qwen-home"
GT = {p.stem: json.loads(p.read_text()) for p in sorted((EX / "qwen-ground-truth").glob("*.json"))}
Q = ["--qwen-home", str(QW_HOME)]
SIDE = ("summary", "memory", "side")
"""The mock's names for Qwen's side calls (the compression summary, the memory-extraction agent)."""


def _discover(qdir: Path):
    prov = QwenCode()
    return prov, prov.discover(Root(Path(qdir), "--qwen-home", True))


def _records(prov, ref):
    rep = ReadReport()
    return list(prov.read(ref, rep, raw=True)), rep


def _all(prov, d):
    return [(ref, r) for ref in d.sessions for r in _records(prov, ref)[0]]


# -- the reader, on a fresh corpus ----------------------------------------------------------------

def test_every_scenario_reads_as_the_script_implies(qwen_corpus):
    for name, run in qwen_corpus.items():
        prov, d = _discover(run.qwen_dir)
        mains = [r for r in d.sessions if r.parent_session_id is None]
        kids = [r for r in d.sessions if r.parent_session_id is not None]
        assert sorted(r.session_id for r in mains) == sorted(run.session_ids), name
        assert sorted(r.session_id for r in kids) == sorted(s["agent_id"] for s in run.truth["subagents"]), name
        recs = [r for _ref, r in _all(prov, d) if r.copy_of is None]
        # sessions of one scenario in any order (a fork's first records keep the source's timestamps)
        prompts = sorted(r.text for r in recs if r.kind == "prompt")
        assert prompts == sorted(p["text"] for p in run.truth["prompts"] if p["text"] != "/compress"), name
        calls = {r.call_id: r for r in recs if r.kind == "tool_call"}
        results = {r.call_id: r for r in recs if r.kind == "tool_result"}
        for c in run.truth["tool_calls"]:
            assert calls[c["id"]].tool_name == c["name"] and calls[c["id"]].tool_input == c["input"], (name, c)
            if run.truth["killed"]:
                assert c["id"] not in results, (name, "a call killed mid-tool has no result")
                continue
            res = results[c["id"]]
            if c["name"] == "run_shell_command":
                assert res.exit_code == c["expect_exit"] and res.is_error == (c["expect_exit"] != 0), (name, c)
            else:
                assert (res.exit_code, res.is_error) == (None, False), (name, c)
        for _ref, rec in _all(prov, d):
            assert rec.kind != "unknown", (name, rec.native)


def test_usage_equals_every_call_the_mock_served(qwen_corpus):
    """One response is counted once: its api_response event and its assistant record share a key, a
    subagent round is counted in the subagent's transcript, a side call (compression summary, memory
    agent) by its event alone."""
    for name, run in qwen_corpus.items():
        prov, d = _discover(run.qwen_dir)
        by_key: dict = {}
        for ref, r in _all(prov, d):
            if r.tokens is not None and r.copy_of is None:
                owner = ref.parent_session_id or ref.session_id
                by_key[(owner, r.tokens.dedup_key)] = r.tokens
        got = Counter()
        for t in by_key.values():
            got.update(prompt=t.input + t.cache_read, cached=t.cache_read, output=t.output, total=t.total, n=1)
        exp = Counter()
        for s in run.truth["served_steps"]:
            u = s["usage"]
            exp.update(prompt=u["prompt_tokens"], cached=(u.get("prompt_tokens_details") or {}).get("cached_tokens", 0),
                       output=u["completion_tokens"], total=u["total_tokens"], n=1)
        assert got == exp, name


def test_writes_and_edits_carry_the_whole_file_before_and_after(qwen_corpus):
    for name, run in qwen_corpus.items():
        prov, d = _discover(run.qwen_dir)
        cwd = run.truth["cwd"]
        changes = [fc for _ref, r in _all(prov, d) if r.copy_of is None for fc in r.file_changes]
        writes = [c for c in run.truth["tool_calls"] if c["name"] in ("write_file", "edit")]
        assert len(changes) == len(writes), name
        last: dict = {}
        for fc in changes:
            assert fc.new_content is not None and fc.action in ("create", "update"), (name, fc)
            last[fc.path[len(cwd) + 1:]] = fc.new_content
        for rel, content in last.items():
            assert content == run.truth["expected_files"][rel]["content"], (name, rel)


def test_subagent_is_a_child_session_with_its_own_turn(qwen_corpus):
    run = qwen_corpus["subagent"]
    prov, d = _discover(run.qwen_dir)
    kid = next(r for r in d.sessions if r.parent_session_id)
    assert kid.parent_session_id == run.session_ids[0] and kid.extra["agent_type"] == "general-purpose"
    recs = _records(prov, kid)[0]
    first = recs[0]
    assert (first.kind, first.role, first.turn) == ("message", "user", 1) and "SUBAGENT-A" in first.text
    assert not any(r.kind == "prompt" for r in recs)
    assert [fc.path.rsplit("/", 1)[1] for r in recs for fc in r.file_changes] == ["sub.txt"]


def test_a_fork_marks_every_copied_record_and_names_its_source(qwen_corpus):
    run = qwen_corpus["fork"]
    prov, d = _discover(run.qwen_dir)
    firsts = {s["id"]: json.loads(Path(s["path"]).read_text().split("\n", 1)[0]) for s in run.truth["sessions"]}
    src_id = next(sid for sid, first in firsts.items() if "forkedFrom" not in first)
    fork = next(r for r in d.sessions if r.session_id != src_id)
    recs, rep = _records(prov, fork)
    copies = [r for r in recs if r.copy_of is not None]
    assert copies and rep.duplicates == len(copies) and all(r.copy_of.startswith(src_id + ":L") for r in copies)
    assert all(r.tokens is None for r in copies)
    f = prov.forked_from(fork)
    src_lines = next(s["lines"] for s in run.truth["sessions"] if s["id"] == src_id)
    assert (f["session_id"], f["copied_records"]) == (src_id, src_lines)
    assert [r.text for r in recs if r.kind == "prompt" and r.copy_of is None] == [run.truth["prompts"][1]["text"]]


def test_the_shell_tool_names_the_session_in_its_environment(qwen_corpus):
    """Evidence for `whoami`: Qwen's shell tool exports QWEN_CODE=1 and QWEN_CODE_SESSION_ID (and
    QWEN_CODE_PROJECT_DIR) to every command it runs."""
    run = qwen_corpus["shell_write"]
    prov, d = _discover(run.qwen_dir)
    recs = _records(prov, d.sessions[0])[0]
    cid = next(c["id"] for c in run.truth["tool_calls"] if c["input"].get("command", "").startswith("printenv"))
    res = next(r for r in recs if r.kind == "tool_result" and r.call_id == cid)
    assert res.raw["toolCallResult"]["resultDisplay"]["output"] == f"1\n{d.sessions[0].session_id}"


def test_compression_record_and_the_cut_output(qwen_corpus):
    prov, d = _discover(qwen_corpus["compaction"].qwen_dir)
    recs = _records(prov, d.sessions[0])[0]
    comp = [r for r in recs if r.native == "system/chat_compression"]
    assert len(comp) == 1 and "Summary: the user asked for files" in comp[0].text
    assert comp[0].raw["systemPayload"]["info"]["compressionStatus"] == 1
    prov, d = _discover(qwen_corpus["shell_write"].qwen_dir)
    recs = _records(prov, d.sessions[0])[0]
    cut = [r for r in recs if r.kind == "tool_result" and r.truncated]
    assert len(cut) == 1 and cut[0].exit_code == 0
    # the saved file is the whole result as the model would have had it (the Command/Output/... trailer form)
    saved = next(r for r in recs if r.native == "tool_result#outputFiles")
    assert saved.text.startswith("Command: seq 1 30000\nDirectory: (root)\nOutput: 1\n2\n") and saved.call_id == cut[0].call_id
    assert "\n".join(str(i) for i in range(1, 30001)) in saved.text and "15000\n" not in cut[0].text
    assert any(p.name.endswith(".output") for p in prov.footprint(d.sessions[0]))


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


def _kids() -> list[str]:
    return [s["agent_id"] for gt in GT.values() for s in gt["subagents"]]


def test_list_names_every_session_subagent_and_fork():
    p = cli("list", *Q, "--format", "json")
    assert p.returncode == 0, p.stderr
    sess = [r for r in rows(p) if r["kind"] == "session"]
    assert sorted(r["session_id"] for r in sess) == sorted(_ids() + _kids())
    cov = {c["provider"]: c for c in rows(p)[-1]["coverage"]}
    assert (cov["qwen-code"]["state"], cov["qwen-code"]["sessions"], cov["qwen-code"]["subagents"]) == \
        ("ok", len(_ids()), len(_kids()))
    forks = [r for r in sess if r["forked_from"]]
    # the source: the fork scenario's session whose first record carries no forkedFrom mark
    source = [s["id"] for s in GT["fork"]["sessions"]
              if b'"forkedFrom"' not in next(QW_HOME.rglob(s["id"] + ".jsonl")).read_bytes().split(b"\n", 1)[0]]
    assert len(source) == 1 and len(forks) == 1 and [forks[0]["forked_from"]["session_id"]] == source
    assert forks[0]["session_id"] in {s["id"] for s in GT["fork"]["sessions"]} - set(source)


def test_show_search_and_censuses():
    gt = GT["shell_write"]
    sid = gt["sessions"][0]["id"]
    p = cli("show", sid, "--turn", "1", *Q, "--format", "json")
    assert p.returncode == 0, p.stderr
    recs = [r for r in rows(p) if r["kind"] == "record"]
    assert [r["call_id"] for r in recs if r["record_kind"] == "tool_call"] == [c["id"] for c in gt["tool_calls"]]
    p = cli("search", "hello from qwen", "-t", "tool_result", *Q, "--format", "json")
    hits = [r for r in rows(p) if r["kind"] == "hit"]
    assert p.returncode == 0 and len(hits) == 1 and hits[0]["session_id"] == sid, p.stdout[-2000:]
    p = cli("search", "", "-t", "tool_call", "-c", *Q, "--format", "json")
    assert p.returncode == 0, p.stderr
    n_calls = sum(1 for g in GT.values() for c in g["tool_calls"])
    assert rows(p)[-1]["hits"] == n_calls


def test_stats_counts_calls_and_failures_per_tool():
    p = cli("stats", *Q, "--format", "json")
    assert p.returncode == 0, p.stderr
    shared = rows(p)[-1]["shared"]
    calls = Counter(c["name"] for g in GT.values() for c in g["tool_calls"])
    failed = sum(1 for g in GT.values() for c in g["tool_calls"] if c["expect_exit"])
    assert shared["tool_calls"] == dict(calls) and sum(shared["tool_errors"].values()) == failed


def test_files_and_recover_use_the_edit_s_whole_new_content():
    p = cli("files", *Q, "--format", "json")
    assert p.returncode == 0, p.stderr
    gt = GT["edit_continue"]
    path = gt["cwd"] + "/notes.md"
    assert path in {r["file"] for r in rows(p) if r["kind"] == "file"}
    p = cli("recover", "--file", path, *Q, "--format", "json")
    summ = rows(p)[-1]
    assert summ["status"] == "complete_view" and summ["content"] == gt["expected_files"]["notes.md"]["content"]
    # `cat notes.md` after the edit reads it: no risk, exit 0
    assert p.returncode == 0 and summ["at_risk"] is False


def test_usage_equals_what_the_mock_sent():
    p = cli("usage", "session", *Q, "--format", "json")
    assert p.returncode == 0, p.stderr
    summ = rows(p)[-1]
    exp = Counter()
    for g in GT.values():
        for s in g["served_steps"]:
            u = s["usage"]
            c = (u.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
            exp.update(input=u["prompt_tokens"] - c, cache_read=c, output=u["completion_tokens"],
                       total=u["total_tokens"], n=1)
    assert (summ["input_tokens"], summ["cache_read_tokens"], summ["output_tokens"], summ["total_tokens"]) == \
        (exp["input"], exp["cache_read"], exp["output"], exp["total"])
    assert summ["messages"] == exp["n"]
    d = cli("usage", "daily", *Q, "--format", "json")
    assert d.returncode == 0 and rows(d)[-1]["total_tokens"] == exp["total"]


def test_clean_scan_export_and_audit_run_on_every_session(tmp_path):
    p = cli("clean", "scan", *Q, "--format", "json")
    assert p.returncode == 0, p.stderr
    cands = [r for r in rows(p) if r["kind"] == "session"]
    assert sorted(c["session_id"] for c in cands) == sorted(_ids() + _kids())
    for fmt in ("markdown", "chunks", "parquet"):
        out = tmp_path / fmt
        e = cli("export", fmt, *Q, "--out", str(out), "--format", "json")
        assert e.returncode == 0, (fmt, e.stderr)
        assert any(out.rglob("*")), fmt
    a = cli("audit", "secrets", *Q, "--format", "json")
    assert a.returncode == 0, a.stderr
    assert (rows(a)[-1]["sessions"], rows(a)[-1]["child_sessions"]) == (len(_ids()), len(_kids()))
