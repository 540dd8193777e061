"""The Gemini CLI reader against data the REAL client wrote (tests/realclient/gemini): the committed corpus
``examples/gemini-home`` and, where the prerequisites exist, a fresh run of every scenario with the pinned
client. Every expectation comes from a scenario's ground truth (its script, what the mock served, what was
on disk), never from the reader."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.realclient.gemini import truth
from tests.realclient.gemini.scenarios import FAST

SCENARIOS = list(FAST)


@pytest.fixture(params=["examples", pytest.param("live", marks=pytest.mark.realclient)])
def corpus(request):
    return request.getfixturevalue("gemini_examples" if request.param == "examples" else "gemini_corpus")


@pytest.fixture
def disc(corpus):
    roots = {run.gemini_dir for run in corpus}
    return {d: truth.discover(d) for d in roots}


def _read(corpus, disc, name) -> tuple[dict, truth.ScenarioRead]:
    run = corpus[name]
    return run.ground_truth, truth.scenario_read(disc[run.gemini_dir], run.ground_truth)


# ------------------------------------------------------------------------------------------ where

def test_locate_follows_the_client(tmp_path):
    p = truth.provider()
    assert p.locate(explicit=str(tmp_path / "g")).path == tmp_path / "g"
    assert p.locate(explicit=str(tmp_path / "g")).source == "--gemini-home"
    assert p.locate(home=str(tmp_path)).path == tmp_path / ".gemini"
    # GEMINI_CLI_HOME replaces the home directory: the data is in $GEMINI_CLI_HOME/.gemini
    r = p.locate(env={"GEMINI_CLI_HOME": str(tmp_path / "h")})
    assert (r.path, r.source, r.explicit) == (tmp_path / "h" / ".gemini", "GEMINI_CLI_HOME", False)
    assert p.locate(env={"GEMINI_CLI_HOME": ""}).path == Path.home() / ".gemini"
    assert p.locate(explicit=str(tmp_path / "x"), env={"GEMINI_CLI_HOME": "/elsewhere"}).path == tmp_path / "x"


@pytest.mark.realclient
def test_gemini_cli_home_is_a_home_measured(gemini_corpus):
    """What the client did with GEMINI_CLI_HOME=D (and HOME elsewhere): it wrote D/.gemini, nothing in HOME."""
    p = truth.provider()
    for run in gemini_corpus:
        gt = run.ground_truth
        assert gt["home_dot_gemini_exists"] is False, gt["scenario"]
        root = p.locate(env={"GEMINI_CLI_HOME": gt["gemini_cli_home"]})
        assert root.path == Path(gt["gemini_dir"])
        found = {r.session_id for r in p.discover(root).sessions}
        assert set(gt["session_ids"]) <= found, gt["scenario"]


def test_process_recognition(corpus):
    seen = [pr["argv"] for run in corpus for pr in run.ground_truth["client_processes"]]
    assert seen, "the harness recorded no client process"
    assert any("--max-old-space-size" in " ".join(a) for a in seen), ("the relaunched child was not captured", seen)
    for argv in seen:
        assert truth.provider().is_client_argv(argv), argv
    for argv in (["node", "/usr/lib/node_modules/npm/bin/npm-cli.js"], ["python3", "gemini.py"], [],
                 ["node", "--inspect"], ["/usr/bin/bash", "-c", "gemini"]):
        assert not truth.provider().is_client_argv(argv), argv
    assert truth.provider().is_client_argv(["node", "/usr/local/bin/gemini", "-p", "x"])
    assert truth.provider().is_client_argv(["/usr/bin/node", "--max-old-space-size", "4096", "/opt/gemini.js"])
    # the default of every other provider: argv[0]'s basename
    from sessionsift.providers import get
    assert get("claude-code").is_client_argv(["/usr/local/bin/claude", "-p"]) and not get("claude-code").is_client_argv([])


# ------------------------------------------------------------------------------------------ which

def test_discovery_and_coverage(corpus, disc):
    for d in disc.values():
        assert d.coverage.state == "ok" and d.problems == []
    expected = set()
    for run in corpus:
        gt = run.ground_truth
        expected |= {s["session_id"] for s in gt["sessions_on_disk"]}
    found = [r for d in disc.values() for r in d.sessions]
    assert sorted(r.session_id for r in found) == sorted(expected), "one SessionRef per session id"
    assert sum(d.coverage.sessions for d in disc.values()) == len(expected)
    for run in corpus:
        gt = run.ground_truth
        refs = [r for r in disc[run.gemini_dir].sessions if r.session_id in gt["session_ids"]]
        assert len(refs) == 1
        ref = refs[0]
        assert ref.project == gt["cwd"] and ref.project_source == "projects.json"
        assert ref.extra["project_short_name"] == gt["project_short_name"]
        assert ref.first_at and ref.last_at and ref.first_at <= ref.last_at
        assert ref.size == Path(ref.paths[0]).stat().st_size


def test_other_files_of_a_session(corpus, disc):
    """A resume in a later minute leaves a startup file; a migrated legacy session has two .json copies."""
    def other(name):
        run = corpus[name]
        ref = next(r for r in disc[run.gemini_dir].sessions if r.session_id in run.ground_truth["session_ids"])
        return ref, sorted(o["role"].split(" ")[0] for o in ref.extra.get("other_files", []))

    ref, roles = other("resumed")
    assert roles == ["startup"]
    assert ref.paths[0].suffix == ".jsonl"
    ref, roles = other("legacy_migrated")
    assert roles == ["legacy", "legacy", "startup"]
    assert any(len(Path(o["path"]).parent.parent.name) == 64 for o in ref.extra["other_files"]), "hash dir copy"
    assert ref.paths[0].suffix == ".jsonl" and ref.paths[0].parent.parent.name == "gem-legacy-migrated"
    assert set(truth.provider().footprint(ref)) >= {ref.paths[0]} | {Path(o["path"]) for o in ref.extra["other_files"]}
    ref, roles = other("legacy_json")
    assert roles == [] and ref.paths[0].suffix == ".json"
    ref, roles = other("subagent")
    sub = [r for r in disc[corpus["subagent"].gemini_dir].sessions if r.parent_session_id == ref.session_id]
    assert len(sub) == 1 and sub[0].extra["kind"] == "subagent"
    assert sub[0].paths[0].parent in truth.provider().footprint(ref), "a main session's footprint holds its subagents"


# ------------------------------------------------------------------------------------------ how

@pytest.mark.parametrize("name", SCENARIOS)
def test_prompts_and_context(corpus, disc, name):
    gt, sr = _read(corpus, disc, name)
    prompts = [r.text for r in sr.main.of("prompt")]
    assert prompts == [p["text"] for p in gt["prompts"]]
    assert all(r.role == "user" for r in sr.main.of("prompt"))
    ctx = [r for r in sr.main.originals if r.native == "user:context"]
    if gt["client_version"] >= "0.39" or name != "legacy_json":
        assert all(r.kind == "meta" and r.role == "user" and r.text.startswith("<session_context>") for r in ctx)
    assert not any((r.text or "").startswith("<session_context>") for r in sr.main.of("prompt"))
    for sub in sr.subagents:
        assert sub.of("prompt") == [], "a subagent's user messages are not typed by a person"
        assert sub.of("message")[0].role == "user" and "SUBAGENT-A" in sub.of("message")[0].text


@pytest.mark.parametrize("name", SCENARIOS)
def test_tool_calls_exit_codes_tokens(corpus, disc, name):
    gt, sr = _read(corpus, disc, name)
    for read in [sr.main] + sr.subagents:
        convs = truth.conv_of(read, gt)
        exp = truth.expected_calls(gt, convs)
        got = read.of("tool_call")
        assert [(r.tool_name, r.tool_input) for r in got] == [(c["name"], c["args"]) for c in exp]
        results = {r.call_id: r for r in read.of("tool_result")}
        for r, c in zip(got, exp):
            if c["name"] == "run_shell_command":
                assert results[r.call_id].exit_code == c["exit_code"], c["args"]["command"]
                assert results[r.call_id].is_error is (c["exit_code"] != 0)
        assert truth.tokens_seen(read) == truth.expected_tokens(gt, convs)
        for r in read.originals:
            if r.tokens is not None:
                t = r.tokens
                assert t.input + t.cache_read + t.output == t.total
                assert t.dedup_key and r.kind in ("message", "reasoning", "tool_call")
        keys = [r.tokens.dedup_key for r in read.records if r.tokens is not None]
        assert len(keys) == len(set(keys)), "one usage per gemini message"


@pytest.mark.parametrize("name", SCENARIOS)
def test_each_tool_result_counted_once(corpus, disc, name):
    gt, sr = _read(corpus, disc, name)
    for read in [sr.main] + sr.subagents:
        calls = [r.call_id for r in read.of("tool_call")]
        results = Counter(r.call_id for r in read.of("tool_result"))
        assert all(n == 1 for n in results.values()), results
        assert set(results) == set(calls)
        locs = {r.locator for r in read.records}
        for r in read.records:
            if r.copy_of is not None:
                assert r.copy_of in locs and r.tokens is None and r.file_changes == ()
                orig = next(o for o in read.records if o.locator == r.copy_of)
                assert orig.copy_of is None and orig.kind == r.kind
                assert (orig.call_id, orig.tool_name) == (r.call_id, r.tool_name)
    if name in ("resumed", "resumed_same_minute", "legacy_migrated"):
        # every result from before the resume is on disk at least twice more (the resumed history replays
        # it): still one original each
        before = [r.call_id for r in sr.main.of("tool_call") if r.turn == 1]
        assert before
        for cid in before:
            recs = [r for r in sr.main.records if r.kind == "tool_result" and r.call_id == cid]
            assert len(recs) >= 3 and sum(r.copy_of is None for r in recs) == 1, cid


@pytest.mark.parametrize("name", SCENARIOS)
def test_locators_point_at_winning_lines(corpus, disc, name):
    gt, sr = _read(corpus, disc, name)
    for read in [sr.main] + sr.subagents:
        path = read.ref.paths[0]
        data = path.read_bytes()
        lines = data.split(b"\n")
        last_standalone = {}
        if path.suffix == ".jsonl":
            for no, raw in enumerate(lines, 1):
                if raw.strip():
                    obj = json.loads(raw)
                    if isinstance(obj.get("id"), str):
                        last_standalone[obj["id"]] = no
        raw = {r.locator: r.raw for r in truth.read_ref(read.ref, raw=True).records}
        for r in read.records:
            assert r.locator.split("#")[0] == f"L{r.line}" and r.path == str(path)
            if path.suffix == ".json":
                # a legacy message's records point at the first line of its pretty-printed object
                if r.native != "header":
                    assert lines[r.line - 1] == b"    {"
                    end = next(i for i in range(r.line, len(lines)) if lines[i] in (b"    }", b"    },"))
                    msg = json.loads(b"\n".join(lines[r.line - 1:end] + [b"    }"]))
                    if r.call_id:
                        assert r.call_id in [tc["id"] for tc in msg.get("toolCalls", [])], r.locator
                    elif r.kind in ("prompt", "message"):
                        assert raw[r.locator]["id"] == msg["id"], r.locator
                continue
            assert data[r.offset:r.offset + r.length] == lines[r.line - 1]
            obj = json.loads(lines[r.line - 1])
            if isinstance(obj.get("id"), str):
                assert last_standalone[obj["id"]] == r.line, "a record from a superseded write"


@pytest.mark.parametrize("name", SCENARIOS)
def test_file_changes_are_complete_views(corpus, disc, name):
    gt, sr = _read(corpus, disc, name)
    for read in [sr.main] + sr.subagents:
        exp = truth.expected_file_states(gt, truth.expected_calls(gt, truth.conv_of(read, gt)))
        got = [(fc.path, fc.new_content) for r in read.of("tool_result") for fc in r.file_changes]
        assert got == exp
        for r in read.of("tool_result"):
            for fc in r.file_changes:
                call = next(c for c in read.of("tool_call") if c.call_id == r.call_id)
                if call.tool_name == "write_file" and fc.path not in gt["setup_files"]:
                    assert fc.action == "create" and fc.old_content is None
                else:
                    assert fc.action == "update" and fc.old_content is not None
                assert fc.diff and fc.diff.startswith("Index: ")
    last = {}
    for read in [sr.main] + sr.subagents:
        for r in read.of("tool_result"):
            for fc in r.file_changes:
                last[fc.path] = fc.new_content
    for path, content in last.items():
        assert gt["disk_files"][path]["text"] == content, path


@pytest.mark.realclient
def test_new_content_equals_the_file_on_disk(gemini_corpus):
    n = 0
    for run in gemini_corpus:
        sr = truth.scenario_read(truth.discover(run.gemini_dir), run.ground_truth)
        last = {}
        for read in [sr.main] + sr.subagents:
            for r in read.of("tool_result"):
                for fc in r.file_changes:
                    last[fc.path] = fc.new_content
        for path, content in last.items():
            assert Path(path).read_text() == content, path
            n += 1
    assert n >= 10


def test_replace_old_content_and_failed_replace(corpus, disc):
    gt, sr = _read(corpus, disc, "replace_edit")
    results = sr.main.of("tool_result")
    assert [r.is_error for r in results] == [False, True]
    (fc,) = results[0].file_changes
    assert fc.old_content == "[core]\nname = demo\nmode = slow\nretries = 3\n"
    assert results[1].file_changes == () and "Could not find" in results[1].text


def test_rewind_keeps_what_happened_in_a_lane(corpus, disc):
    gt, sr = _read(corpus, disc, "rewind")
    lanes = [(r.text, r.lane, r.rewound) for r in sr.main.of("prompt")]
    assert lanes == [(gt["prompts"][0]["text"], "main", False), (gt["prompts"][1]["text"], "main", True),
                     (gt["prompts"][2]["text"], "main", False)]
    rewound = [r for r in sr.main.originals if r.rewound]
    assert {r.kind for r in rewound} >= {"prompt", "tool_call", "tool_result", "message"}
    assert [r.tool_input["file_path"].rsplit("/", 1)[1] for r in rewound if r.kind == "tool_call"] == ["drop.txt"]
    marker = [r for r in sr.main.records if r.native == "$rewindTo"]
    assert len(marker) == 1 and sr.main.of("prompt")[1].raw is None
    raw = truth.read_ref(sr.main.ref, raw=True)
    target = next(r for r in raw.records if r.native == "$rewindTo").raw["$rewindTo"]
    assert next(r for r in raw.of("prompt") if r.rewound).raw["id"] == target
    assert any("rewound" in n for n in sr.main.report.notes)


def test_killed_session(corpus, disc):
    gt, sr = _read(corpus, disc, "killed")
    assert gt["runs"][0]["killed"]["signal"] == "SIGKILL" and gt["runs"][0]["rc"] == -9
    assert [r.tool_name for r in sr.main.of("tool_call")] == ["write_file"]
    assert sr.main.of("message") == [], "the held answer never arrived"
    assert sr.main.report.omissions()["malformed_lines"] == 0


def test_read_reports(corpus, disc):
    for d in disc.values():
        for ref in d.sessions:
            read = truth.read_ref(ref)
            assert read.report.records == len(read.records)
            assert read.report.duplicates == sum(1 for r in read.records if r.copy_of)
            assert read.report.unknown_kinds == Counter() and read.report.problems == []
            assert read.report.files == 1 and read.report.bytes == Path(ref.paths[0]).stat().st_size


@pytest.mark.parametrize("name", SCENARIOS)
def test_each_thought_is_one_reasoning_record(corpus, disc, name):
    """A resumed history holds a message's thoughts twice (its `thoughts` and as thought parts): every
    scripted thought of a response the client received is one original reasoning record, in order."""
    import re

    def norm(t):
        return re.sub(r"[\s*]+", " ", t).strip()

    gt, sr = _read(corpus, disc, name)
    for read in [sr.main] + sr.subagents:
        order = {c: i for i, c in enumerate(truth.conv_of(read, gt))}
        exp = [norm(t) for r in sorted((r for r in gt["responses"] if r["conversation"] in order and r["completed"]),
                                       key=lambda r: (order[r["conversation"]], r["turn"])) for t in r["thoughts"]]
        assert [norm(r.text) for r in read.of("reasoning")] == exp
