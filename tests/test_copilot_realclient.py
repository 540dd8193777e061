"""GitHub Copilot CLI on data the REAL client wrote offline (tests/realclient/copilot/README.md): the reader
against the ground truth of the scripts (a session-scoped corpus, run once per test run), and every command
on the committed sample (examples/copilot-home, made the same way by tests/realclient/copilot/make_examples.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from sessionsift.providers import ReadReport
from sessionsift.providers.base import Root
from sessionsift.providers.copilot import CopilotCli

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"
HOME = EX / "copilot-home"
GT = {p.stem: json.loads(p.read_text()) for p in sorted((EX / "copilot-ground-truth").glob("*.json"))}
P = ["--copilot-home", str(HOME)]


def _discover(home: Path):
    prov = CopilotCli()
    return prov, prov.discover(Root(Path(home), "--copilot-home", True))


def _records(prov, ref, raw=False):
    rep = ReadReport()
    return list(prov.read(ref, rep, raw=raw)), rep


def _conv(c: dict) -> str:
    return "main" if c["conversation"].startswith("P") else c["conversation"]


def _by_conversation(prov, d, truth) -> dict[str, tuple]:
    """main -> (ref, records, report) of the session; SUBAGENT-X -> the child whose task names the marker."""
    out = {}
    sid = truth["session_ids_on_disk"][0]
    for ref in d.sessions:
        if ref.session_id == sid:
            out["main"] = (ref, *_records(prov, ref))
        elif ref.parent_session_id == sid:
            recs, rep = _records(prov, ref)
            task = next(r.text for r in recs if r.native == "user.message")
            out[next(m for m in truth["subagent_markers"] if m in task)] = (ref, recs, rep)
    return out


def _expected(u: dict) -> tuple:
    c = (u.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    return (u["prompt_tokens"] - c, u["completion_tokens"], c)


# -- the reader, on a fresh corpus ----------------------------------------------------------------

def test_every_scenario_reads_as_the_script_implies(copilot_corpus):
    for name, run in copilot_corpus.items():
        t = run.truth
        prov, d = _discover(run.home)
        assert (d.coverage.state, d.coverage.sessions) == ("ok", 1), name
        convs = _by_conversation(prov, d, t)
        assert set(convs) == {"main", *t["subagent_markers"]}, name
        ref, recs, rep = convs["main"]
        assert (ref.project, ref.version, ref.project_source) == (t["cwd"], t["client_version"],
                                                                 "session.start.context.cwd"), name
        assert rep.problems == [] and rep.omissions()["malformed_lines"] == 0, name
        prompts = [r for r in recs if r.kind == "prompt"]
        assert [r.text for r in prompts] == [p["text"] for p in t["prompts"]], name
        assert [r.turn for r in prompts] == list(range(1, len(t["prompts"]) + 1)), name
        calls, results = {}, {}
        for conv, (_, rs, rp) in convs.items():
            assert not rp.unknown_kinds and all(r.kind != "unknown" for r in rs), (name, rp.unknown_kinds)
            for r in rs:
                if r.kind == "tool_call" and r.copy_of is None:
                    calls[r.call_id] = (r.tool_name, r.tool_input, conv)
                elif r.kind == "tool_result":
                    results[r.call_id] = r
        want = {c["id"]: (c["name"], c["input"], _conv(c)) for c in t["tool_calls"]}
        assert calls == want, name
        for c in t["tool_calls"]:
            if t["killed"] and c["name"] == "bash":
                assert c["id"] not in results, (name, "the call killed mid-tool has no result")
                continue
            res = results[c["id"]]
            if c["name"] == "bash":
                # Copilot records a command that exits 3 as success: true with shellExecution.exitCode 3
                assert (res.exit_code, res.is_error) == (c["expect_exit"], c["expect_exit"] != 0), (name, c, res.text)
            else:
                assert (res.exit_code, res.is_error) == (None, False), (name, c)


def test_every_call_the_client_ran_is_also_a_copy_of_its_request(copilot_corpus):
    run = copilot_corpus["files_shell"]
    prov, d = _discover(run.home)
    recs, rep = _records(prov, d.sessions[0])
    starts = [r for r in recs if r.native == "tool.execution_start"]
    by_loc = {r.locator: r for r in recs}
    assert len(starts) == len(run.truth["tool_calls"]) == rep.duplicates
    for s in starts:
        orig = by_loc[s.copy_of]
        assert (orig.native, orig.call_id, orig.tool_input) == ("assistant.message#toolRequest", s.call_id, s.tool_input)


def test_tokens_equal_what_the_mock_sent(copilot_corpus):
    for name, run in copilot_corpus.items():
        prov, d = _discover(run.home)
        got, keys = [], set()
        for ref in d.sessions:
            for r in _records(prov, ref)[0]:
                if r.tokens is not None:
                    assert r.copy_of is None and r.tokens.dedup_key not in keys, name
                    keys.add(r.tokens.dedup_key)
                    tk = r.tokens
                    assert tk.total == tk.input + tk.cache_read + tk.output, name
                    got.append((tk.input, tk.output, tk.cache_read))
        # every call the mock served (the compaction call too) recorded its usage, once
        assert Counter(got) == Counter(_expected(s["usage"]) for s in run.truth["served_steps"]), name


def test_every_assistant_message_is_paid_by_the_usage_record_before_it(copilot_corpus):
    for name, run in copilot_corpus.items():
        prov, d = _discover(run.home)
        for ref in d.sessions:
            recs = _records(prov, ref)[0]
            paid = {r.message_id for r in recs if r.tokens is not None and r.native == "session.usage_record"}
            said = [r for r in recs if r.native.startswith("assistant.message")]
            assert said and all(r.message_id in paid for r in said), name


def test_create_holds_the_whole_content_edit_its_diff_and_the_view_is_whole(copilot_corpus):
    run = copilot_corpus["files_shell"]
    t = run.truth
    prov, d = _discover(run.home)
    recs = _records(prov, d.sessions[0])[0]
    changes = [(fc.path, fc.action, fc.new_content, fc.diff) for r in recs for fc in r.file_changes]
    cwd = t["cwd"]
    assert [(p, a) for p, a, _, _ in changes] == [(f"{cwd}/hello.py", "create"), (f"{cwd}/notes.md", "update"),
                                                  (f"{cwd}/hello.py", "update")]
    assert changes[0][2] == "print('hello from copilot')\n" and "+second line" in changes[1][3]
    assert changes[1][2] is None and "-print('hello from copilot')" in changes[2][3]
    assert t["expected_files"]["hello.py"]["content"] == "print('hi')\n"
    assert t["disk_files"]["hello.py"]["sha256"] == t["expected_files"]["hello.py"]["sha256"]
    call = next(r for r in recs if r.tool_name == "view" and r.copy_of is None and r.kind == "tool_call")
    res = next(r for r in recs if r.kind == "tool_result" and r.call_id == call.call_id)
    view = prov.read_view(call, res)
    assert view is not None and view[0] == "# Notes\n\nfirst line\nsecond line\n" and view[2] is True
    assert prov.file_calls(d.sessions[0], call) == [(f"{cwd}/notes.md", "read")]


def test_a_resumed_and_a_continued_run_append_to_the_same_log(copilot_corpus):
    run = copilot_corpus["files_shell"]
    prov, d = _discover(run.home)
    recs = _records(prov, d.sessions[0])[0]
    natives = [r.native for r in recs]
    assert natives.count("session.start") == 1 and natives.count("session.resume") == 2
    assert natives.count("session.shutdown") == 3  # one per client run, each holding the session's running totals
    assert [r["argv"][-2:] for r in run.truth["runs"]][1:] == [["--allow-all-tools", "--continue"],
                                                              ["--resume", run.session_id]]


def test_the_subagent_is_a_child_session_inside_its_parents_log(copilot_corpus):
    run = copilot_corpus["subagent"]
    prov, d = _discover(run.home)
    main = next(r for r in d.sessions if r.parent_session_id is None)
    kid = next(r for r in d.sessions if r.parent_session_id == main.session_id)
    assert kid.paths == main.paths and kid.size is None and kid.extra["agent_type"] == "general-purpose"
    assert kid.extra["outcome"] == "completed" and kid.title == "writer"
    task = next(r for r in _records(prov, main)[0] if r.tool_name == "task" and r.kind == "tool_call")
    assert kid.extra["tool_call_id"] == task.call_id
    recs = _records(prov, kid)[0]
    first = next(r for r in recs if r.native == "user.message")
    assert (first.kind, first.role, first.turn) == ("message", "user", 1) and "SUBAGENT-A" in first.text
    assert prov.footprint(kid) == [Path(main.paths[0])]
    assert Path(main.paths[0]).parent in prov.footprint(main)


def test_a_killed_client_leaves_its_call_open_and_its_inuse_lock(copilot_corpus):
    run = copilot_corpus["killed"]
    t = run.truth
    assert t["killed"] and any("sleep 60" in c for c in t["leftover_processes_killed"])
    prov, d = _discover(run.home)
    ref = d.sessions[0]
    recs = _records(prov, ref)[0]
    assert "session.shutdown" not in [r.native for r in recs]
    assert [r.native for r in recs if r.kind in ("tool_call", "tool_result")][-2:] == \
        ["assistant.message#toolRequest", "tool.execution_start"]
    pid = t["runs"][0]["pid"]
    assert [(lk["pid"], lk["pid_in_file"], lk["hold"]) for lk in ref.extra["live_locks"]] == [(pid, pid, True)]
    snap = t["live_snapshot"]
    assert f"session-state/{run.session_id}/inuse.{pid}.lock" in snap["files"]


def test_compaction_summary_and_its_usage(copilot_corpus):
    run = copilot_corpus["compacted"]
    prov, d = _discover(run.home)
    ref = d.sessions[0]
    recs = _records(prov, ref)[0]
    comp = [r for r in recs if r.native == "session.compaction_complete"]
    assert len(comp) == 1 and comp[0].text == run.truth["summary_text"] and comp[0].kind == "meta"
    assert (comp[0].tokens.input, comp[0].tokens.output) == (50, 5)
    assert ref.extra["checkpoints"] == [f"001-session-{run.session_id[:8]}.md"]
    start = next(r for r in recs if r.native == "session.compaction_start")
    assert start.line < comp[0].line and comp[0].turn == 1


# -- every command, on the committed sample ------------------------------------------------------

def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO, env=os.environ | {"COLUMNS": "200"})


def rows(p) -> list[dict]:
    out = [json.loads(x) for x in p.stdout.splitlines()]
    assert out and out[0]["kind"] == "header" and out[-1]["kind"] == "summary", p.stderr
    return out


def _ids() -> list[str]:
    return [gt["session_ids_on_disk"][0] for gt in GT.values()]


def test_the_sample_is_what_the_ground_truth_says():
    prov, d = _discover(HOME)
    assert (d.coverage.state, d.coverage.sessions) == ("ok", len(GT))
    assert sorted(r.session_id for r in d.sessions if r.parent_session_id is None) == sorted(_ids())
    for name, gt in GT.items():
        got = Counter()
        for ref in d.sessions:
            if ref.project == gt["cwd"]:
                got.update(_expected((lambda t: {"prompt_tokens": t.input + t.cache_read, "completion_tokens": t.output,
                                                 "prompt_tokens_details": {"cached_tokens": t.cache_read}})(r.tokens))
                           for r in _records(prov, ref)[0] if r.tokens is not None)
        assert got == Counter(_expected(s["usage"]) for s in gt["served_steps"]), name


def test_list_names_every_session_and_the_subagent():
    p = cli("list", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    sess = [r for r in rows(p) if r["kind"] == "session"]
    assert sorted(r["session_id"] for r in sess if not r.get("parent_session_id")) == sorted(_ids())
    kids = [r for r in sess if r.get("parent_session_id")]
    assert [k["parent_session_id"] for k in kids] == GT["subagent"]["session_ids_on_disk"]
    cov = {c["provider"]: c for c in rows(p)[-1]["coverage"]}
    assert (cov["copilot-cli"]["state"], cov["copilot-cli"]["sessions"], cov["copilot-cli"]["subagents"]) == ("ok", 4, 1)
    text = cli("list", *P).stdout.strip().splitlines()[-1]
    assert "GitHub Copilot CLI 4 sessions (+1 subagent)" in text, text


def test_show_search_and_censuses():
    gt = GT["files_shell"]
    sid = gt["session_ids_on_disk"][0]
    p = cli("show", sid, "--turn", "1", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    recs = [r for r in rows(p) if r["kind"] == "record"]
    p1 = [c["id"] for c in gt["tool_calls"] if c["conversation"] == "P1"]
    assert [r["call_id"] for r in recs if r["record_kind"] == "tool_call" and not r.get("copy_of")] == p1
    p = cli("search", "hello from copilot", "-t", "tool_result", *P, "--format", "json")
    hits = [r for r in rows(p) if r["kind"] == "hit"]
    assert p.returncode == 0 and {h["session_id"] for h in hits} == {sid}, p.stdout[-2000:]
    p = cli("search", "", "-t", "tool_call", "-c", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    assert rows(p)[-1]["hits"] == sum(len(g["tool_calls"]) for g in GT.values())


def test_stats_counts_calls_failures_and_prompts():
    p = cli("stats", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    shared = rows(p)[-1]["shared"]
    calls = Counter(c["name"] for g in GT.values() for c in g["tool_calls"])
    assert shared["tool_calls"] == dict(calls)
    assert sum(shared["tool_errors"].values()) == sum(1 for g in GT.values() for c in g["tool_calls"]
                                                      if c["expect_exit"])
    assert shared["prompts"] == sum(len(g["prompts"]) for g in GT.values())


def test_files_and_recover():
    gt = GT["files_shell"]
    p = cli("files", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    touched = {r["file"] for r in rows(p) if r["kind"] == "file"}
    for rel in ("hello.py", "notes.md", "sub.txt", "before-kill.txt"):
        cwd = next(g["cwd"] for g in GT.values() if rel in g["expected_files"] and rel in g["disk_files"])
        assert f"{cwd}/{rel}" in touched, rel
    # sub.txt: the subagent's create is a complete view, and only `cat` ran after it
    sub = GT["subagent"]
    p = cli("recover", "--file", sub["cwd"] + "/sub.txt", *P, "--format", "json")
    summ = rows(p)[-1]
    assert summ["status"] == "complete_view" and summ["content"] == sub["expected_files"]["sub.txt"]["content"]
    # notes.md: edited after its first complete view (the view of P1), then nothing: rebuilt from the view
    p = cli("recover", "--file", gt["cwd"] + "/notes.md", *P, "--format", "json")
    summ = rows(p)[-1]
    assert summ["content"] == gt["expected_files"]["notes.md"]["content"], summ


def test_usage_equals_what_the_mock_sent():
    p = cli("usage", "session", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    summ = rows(p)[-1]
    exp = Counter()
    for g in GT.values():
        for s in g["served_steps"]:
            u = s["usage"]
            c = (u.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
            exp.update(input=u["prompt_tokens"] - c, cache_read=c, output=u["completion_tokens"],
                       total=u["prompt_tokens"] + u["completion_tokens"], n=1)
    assert (summ["input_tokens"], summ["cache_read_tokens"], summ["output_tokens"], summ["total_tokens"]) == \
        (exp["input"], exp["cache_read"], exp["output"], exp["total"])
    assert summ["messages_without_usage"] == 0
    d = cli("usage", "daily", *P, "--format", "json")
    assert d.returncode == 0 and rows(d)[-1]["total_tokens"] == exp["total"]


def test_clean_scan_export_and_audit_run_on_every_session(tmp_path):
    p = cli("clean", "scan", *P, "--format", "json")
    assert p.returncode == 0, p.stderr
    cands = [r for r in rows(p) if r["kind"] == "session"]
    assert sorted(c["session_id"] for c in cands if not c["parent_session_id"]) == sorted(_ids())
    kid = next(c for c in cands if c["parent_session_id"])
    assert kid["contained_in"] == GT["subagent"]["session_ids_on_disk"][0]
    main = next(c for c in cands if c["session_id"] == kid["contained_in"])
    assert main["footprint"][0].endswith("/session-state/" + kid["contained_in"])
    for fmt in ("markdown", "chunks", "parquet"):
        out = tmp_path / fmt
        e = cli("export", fmt, *P, "--out", str(out), "--format", "json")
        assert e.returncode == 0, (fmt, e.stderr)
        assert any(out.rglob("*")), fmt
    a = cli("audit", "secrets", *P, "--format", "json")
    assert a.returncode == 0, a.stderr
    assert rows(a)[-1]["sessions"] == len(_ids())


# -- the release before the pinned one (examples/copilot-1.0.92-home, written by 1.0.92 itself) ------

OLD_HOME = EX / "copilot-1.0.92-home"
OLD_GT = {p.stem: json.loads(p.read_text()) for p in sorted((EX / "copilot-1.0.92-ground-truth").glob("*.json"))}


def test_the_older_release_records_usage_only_as_running_totals_per_run():
    prov, d = _discover(OLD_HOME)
    assert (d.coverage.state, d.coverage.sessions) == ("ok", len(OLD_GT))
    for name, gt in OLD_GT.items():
        assert gt["client_version"] == "1.0.92"
        refs = [r for r in d.sessions if r.project == gt["cwd"]]
        recs = [x for ref in refs for x in _records(prov, ref)[0]]
        assert "session.usage_record" not in {r.native for r in recs} and all(r.kind != "unknown" for r in recs), name
        assert [r.text for r in recs if r.kind == "prompt"] == [p["text"] for p in gt["prompts"]], name
        runs = [r for r in recs if r.native == "session.shutdown#run_usage"]
        assert len(runs) == (0 if gt["killed"] else len(gt["prompts"])), name
        got = Counter()
        for r in recs:
            if r.tokens is not None:
                got.update(input=r.tokens.input, output=r.tokens.output, cache_read=r.tokens.cache_read)
        exp = Counter()
        for s in ([] if gt["killed"] else gt["served_steps"]):  # a run killed before its shutdown: nowhere
            i, o, c = _expected(s["usage"])
            exp.update(input=i, output=o, cache_read=c)
        assert got == exp, name


def test_usage_on_the_older_release_sums_the_runs_and_says_what_it_cannot_attribute():
    p = cli("usage", "session", "--copilot-home", str(OLD_HOME), "--format", "json")
    assert p.returncode == 0, p.stderr
    out = rows(p)
    exp = sum(s["usage"]["prompt_tokens"] + s["usage"]["completion_tokens"] for g in OLD_GT.values() if not g["killed"]
              for s in g["served_steps"])
    assert out[-1]["total_tokens"] == exp
    # the subagent's own answer is paid inside its parent's run totals: one message without usage of its own;
    # the killed run's responses (tool calls only, no text) are in no total and no message count
    unpaid = {r["session_id"]: r["messages_without_usage"] for r in out if r["kind"] == "session"}
    assert unpaid == {OLD_GT["subagent"]["session_ids_on_disk"][0]: 1, OLD_GT["files_shell"]["session_ids_on_disk"][0]: 0,
                      OLD_GT["compacted"]["session_ids_on_disk"][0]: 0}
    assert out[-1]["messages_without_usage"] == 1
