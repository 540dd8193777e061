"""`search` on transcripts written by the real Claude Code client (examples/claude-home, made by the
harness in tests/realclient). Expectations are derived from the data through LaneIndex (the same
model `show` uses), never hard-coded. The few hand-made records below say what they imitate and
why the real client cannot produce them offline."""

from __future__ import annotations

import io
import json
import os
import shutil
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import orjson
import pytest

from sessionsift.cli import main
from sessionsift.providers.claude.discover import Scope, Session, claude_home, resolve_targets
from sessionsift.providers.claude.model.lane import LaneIndex
from sessionsift.read.lines import iter_lines
from sessionsift.providers.claude.search.lanes import lane_search
from sessionsift.search import Query
from sessionsift.read.needles import needles_for

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "claude-home"


@pytest.fixture(scope="module")
def home() -> Path:
    # SSIFT_TEST_HOME: a developer's locally generated real-client corpus while examples/ is absent
    alt = os.environ.get("SSIFT_TEST_HOME")
    if alt and not os.environ.get("CI") and not (EXAMPLES / "projects").is_dir():
        return Path(alt)
    assert (EXAMPLES / "projects").is_dir(), "the committed sample corpus examples/claude-home is missing"
    return EXAMPLES


def run(args: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the real CLI entry point, in process."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err), pytest.raises(SystemExit) as ex:
        main(args)
    return int(ex.value.code or 0), out.getvalue(), err.getvalue()


def jrows(out: str) -> list[dict]:
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def all_lanes(home: Path):
    scope = resolve_targets([], home)
    for s in scope.sessions:
        for ln in s.lanes():
            yield ln, LaneIndex.build(ln)


def test_every_genuine_prompt_is_found_with_its_turn(home):
    checked = 0
    for lane, idx in all_lanes(home):
        for e in idx.entries:
            if e.labels[:1] != ("user.message",) or e.replay_of is not None:
                continue
            obj = idx.load(e)
            text = obj["message"]["content"]
            text = text if isinstance(text, str) else "\n".join(b.get("text", "") for b in text if isinstance(b, dict))
            lit = text.strip().split("\n")[0][:40]
            if len(lit) < 5:
                continue
            code, out, _ = run(["search", "-F", lit, "-t", "user.message", "--format", "json",
                                "--claude-home", str(home)])
            assert code == 0
            hits = [r for r in jrows(out) if r["kind"] == "hit"]
            mine = [h for h in hits if h["path"] == str(lane.path) and h["line"] == e.no]
            assert len(mine) == 1, (lit, lane.path, e.no)
            h = mine[0]
            assert h["labels"] == list(e.labels) and h["uuid"] == e.uuid and h["turn"] == e.turn
            assert h["session_id"] == lane.session_id and h["is_subagent"] == lane.is_subagent
            assert h["parent_session_id"] == lane.parent_session_id
            assert e.timestamp is not None and h["timestamp"]["utc"] == e.timestamp  # the client's own instant
            assert lit in h["text"]
            assert h["refetch"].startswith("sessionsift show ") and f"--line {e.no}" in h["refetch"]
            if e.turn is not None and e.opener:
                assert h["turn_context"]["opener"]["line"] == e.no
            checked += 1
    assert checked >= 3


def test_tool_call_hit_carries_its_turn_opener_like_show(home):
    checked = 0
    for lane, idx in all_lanes(home):
        uses = [e for e in idx.entries if "agent.tool.use" in e.labels and e.turn is not None]
        if not uses:
            continue
        e = uses[0]
        name = e.tool_names[0]
        code, out, _ = run(["search", name, str(lane.path), "-t", "agent.tool.use", "--format", "json",
                            "--claude-home", str(home)])
        assert code == 0
        hits = {h["line"]: h for h in jrows(out) if h["kind"] == "hit"}
        h = hits[e.no]
        assert name in h["tool_names"]
        opener = next(x for x in idx.turn_entries(e.turn) if x.opener)
        assert h["turn_context"]["turn"] == e.turn
        assert h["turn_context"]["opener"]["line"] == opener.no
        # the text form prints the opener line and the hit line with L<n>
        code, txt, _ = run(["search", name, str(lane.path), "-t", "agent.tool.use", "--claude-home", str(home)])
        assert f"L{opener.no} [" in txt and f"> L{e.no} [" in txt and f"turn {e.turn}" in txt
        code, txt, _ = run(["search", name, str(lane.path), "-t", "agent.tool.use", "--no-context",
                            "--claude-home", str(home)])
        if opener.no != e.no:
            assert f"{lane.display} L{opener.no} [" not in txt
        assert f"{lane.display} L{e.no} [" in txt
        checked += 1
    assert checked >= 2


def test_label_census_agrees_with_lane_index(home):
    expect: Counter = Counter()
    attach: Counter = Counter()
    tools: Counter = Counter()
    for lane, idx in all_lanes(home):
        names = {i: n for e in idx.entries for i, n in zip(e.tool_use_ids, e.tool_names)}
        for e in idx.entries:
            if e.type == "attachment":
                attach[e.labels[0]] += 1
                continue
            for l in e.labels:
                if l in ("harness.meta.attachment", "harness.meta.snapshot", "user.queued", "harness.meta.system",
                         "harness.meta.turn-duration", "harness.meta.away-summary", "harness.meta.stop-hooks"):
                    continue
                expect[l] += 1
            for n in e.tool_names:  # --count-by tool counts calls, once each (issue 11)
                tools[n] += 1
    code, out, _ = run(["search", "", "--count-by", "label", "--format", "json", "--claude-home", str(home)])
    got = {r["key"]: r["count"] for r in jrows(out) if r["kind"] == "count"}
    assert got == dict(expect)
    # -t user.message --count equals the leaf count
    code, out, _ = run(["search", "", "-t", "user.message", "--count", "--format", "json", "--claude-home", str(home)])
    assert [r["count"] for r in jrows(out) if r["kind"] == "count"] == [expect["user.message"]]
    # gated attachment lines appear only when asked for
    assert "harness.meta.attachment" not in got
    code, out, _ = run(["search", "", "--attachments", "-t", "harness.meta.attachment", "--count-by", "label",
                        "--format", "json", "--claude-home", str(home)])
    got_a = {r["key"]: r["count"] for r in jrows(out) if r["kind"] == "count"}
    assert got_a.get("harness.meta.attachment", 0) == attach["harness.meta.attachment"] > 0
    code, out, _ = run(["search", "", "--count-by", "tool", "--format", "json", "--claude-home", str(home)])
    assert {r["key"]: r["count"] for r in jrows(out) if r["kind"] == "count"} == dict(tools)
    # a text table, no markup
    code, out, _ = run(["search", "", "--count-by", "tool", "--claude-home", str(home)])
    first_tool = tools.most_common(1)[0]
    assert any(l.split() == [first_tool[0], str(first_tool[1])] for l in out.splitlines())


def test_pairing_counts_every_use_and_its_return(home):
    uses = ret = 0
    for lane, idx in all_lanes(home):
        rids = {i for e in idx.entries for i in e.tool_result_ids}
        for e in idx.entries:
            for i in e.tool_use_ids:
                uses += 1
                ret += i in rids
    code, out, _ = run(["search", "", "--count-by", "pairing", "--format", "json", "--claude-home", str(home)])
    rows = [r for r in jrows(out) if r["kind"] == "count"]
    assert sum(r["count"] for r in rows) == uses > 0
    assert sum(r["returned"] for r in rows) == ret
    assert sum(r["unreturned"] for r in rows) == uses - ret


def test_role_selector_and_exclusion(home):
    code, out, _ = run(["search", "", "-t", "agent", "--format", "json", "--claude-home", str(home)])
    hits = [r for r in jrows(out) if r["kind"] == "hit"]
    assert hits and all(any(l.startswith("agent.") for l in h["labels"]) for h in hits)
    code, out, _ = run(["search", "", "-t", "agent", "-T", "agent.tool", "--format", "json", "--claude-home", str(home)])
    hits2 = [r for r in jrows(out) if r["kind"] == "hit"]
    # a hit stays only through a label the selection keeps (agent.*, not agent.tool.*)
    assert hits2 and all(any(l.startswith("agent.") and not l.startswith("agent.tool.") for l in h["labels"])
                         for h in hits2)
    assert len(hits2) < len(hits)


def test_zero_hits_says_what_was_searched(home):
    files = lines = size = 0
    scope = resolve_targets([], home)
    for s in scope.sessions:
        for ln in s.lanes():
            files += 1
            lines += sum(1 for _ in iter_lines(ln.path))
            size += ln.path.stat().st_size
    code, out, _ = run(["search", "no-such-phrase-q7x9", "--count-lines", "--claude-home", str(home)])
    assert code == 1
    assert out.strip().splitlines()[-1].startswith("coverage: Claude Code ")  # the coverage line ends every answer
    assert out.strip().splitlines()[-2] == (
        f"0 hits in {files} transcripts ({lines} lines, {len(scope.sessions)} sessions; 0 unreadable); no match "
        "in the kinds not searched (user.queued, attachments, snapshots, turn-duration, away-summary, stop-hooks, "
        "system records, hook context, persisted outputs)")
    code, out, _ = run(["search", "no-such-phrase-q7x9", "--format", "json", "--count-lines", "--claude-home", str(home)])
    rows = jrows(out)
    assert rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary"
    assert rows[-1]["hits"] == 0 and rows[-1]["files"] == files and rows[-1]["lines"] == lines
    # without --count-lines the lines are not counted (null, never 0); the size is exact in JSON
    code, out, _ = run(["search", "no-such-phrase-q7x9", "--format", "json", "--claude-home", str(home)])
    sm = jrows(out)[-1]
    assert sm["lines"] is None and sm["bytes"] == size and sm["files"] == files
    code, out, _ = run(["search", "no-such-phrase-q7x9", "--claude-home", str(home)])
    last = out.strip().splitlines()[-2]  # [-1] is the coverage line
    assert last.startswith(f"0 hits in {files} transcripts (") and "lines" not in last
    # (with the index on, the full-text index ruled every transcript out: the literal is in no record)
    off = os.environ.get("SESSIONSIFT_NO_INDEX", "") not in ("", "0")
    assert (f"B, {len(scope.sessions)} sessions; 0 unreadable)" if off else
            f"B, {len(scope.sessions)} sessions; 0 unreadable; {files} transcripts ruled out by the full-text index") in last


def test_unreadable_transcript_is_reported(home, tmp_path):
    scope = resolve_targets([], home)
    ghost = Session("00000000-dead-4000-8000-000000000000", tmp_path, tmp_path / "gone.jsonl")
    scope2 = Scope(scope.home, sessions=[*scope.sessions, ghost])
    run_ = lane_search(Query(patterns=("no-such-phrase-q7x9",)), scope2)
    list(run_.outcomes())
    assert run_.summary.hits == 0
    assert [u["path"] for u in run_.summary.unreadable] == [str(tmp_path / "gone.jsonl")]


def test_sessions_with_matches_feed_sessions_from(home, tmp_path):
    code, out, _ = run(["search", "", "-t", "agent.tool.use", "-l", "--claude-home", str(home)])
    ids = out.split()
    assert code == 0 and ids and len(set(ids)) == len(ids)
    f = tmp_path / "ids"
    f.write_text(ids[0] + "\n")
    code, out, _ = run(["search", "", "--count-by", "session", "--sessions-from", str(f), "--format", "json",
                        "--claude-home", str(home)])
    assert {r["key"] for r in jrows(out) if r["kind"] == "count"} == {ids[0]}
    f.write_text("")
    code, out, _ = run(["search", "", "--sessions-from", str(f), "--claude-home", str(home)])
    assert code == 1 and out.strip().splitlines()[-2].endswith("0 hits in 0 transcripts (0 bytes, 0 sessions; 0 unreadable); not "
                                              "searched (further hits not counted: the pattern has no literal "
                                              "needle): user.queued, attachments, snapshots, turn-duration, "
                                              "away-summary, stop-hooks, system records, hook context, persisted outputs")


def test_max_count_no_subagents_and_multiple_patterns(home):
    code, out, _ = run(["search", "", "-m", "1", "--format", "json", "--claude-home", str(home)])
    hits = [r for r in jrows(out) if r["kind"] == "hit"]
    c = Counter(h["session_id"] for h in hits)
    assert c and set(c.values()) == {1}
    code, out, _ = run(["search", "", "--no-subagents", "--format", "json", "--claude-home", str(home)])
    assert all(not h["is_subagent"] for h in jrows(out) if h["kind"] == "hit")
    names = set()
    for lane, idx in all_lanes(home):
        for e in idx.entries:
            names.update(e.tool_names)
    a, b = sorted(names)[:2]
    counts = {}
    for args in (["-e", a], ["-e", b], ["-e", a, "-e", b], ["-i", "-e", a.upper()]):
        code, out, _ = run(["search", *args, "-t", "agent.tool.use", "-c", "--format", "json", "--claude-home", str(home)])
        counts[tuple(args)] = [r for r in jrows(out) if r["kind"] == "count"][0]["count"]
    assert counts[("-e", a, "-e", b)] >= max(counts[("-e", a)], counts[("-e", b)]) > 0
    assert counts[("-i", "-e", a.upper())] >= counts[("-e", a)]
    code, out, _ = run(["search", "-e", a.upper(), "-t", "agent.tool.use", "-c", "--format", "json",
                        "--claude-home", str(home)])
    # case-sensitive: the calls whose name or input holds the upper-cased name as written (for
    # "Agent": the two Agent calls whose prompts carry SUBAGENT-A/-B), counted here from the records
    want = 0
    for lane, idx in all_lanes(home):
        for e in idx.entries:
            if "agent.tool.use" in e.labels and e.replay_of is None:
                blocks = [b for b in idx.load(e)["message"]["content"] if b.get("type") == "tool_use"]
                want += any(a.upper() in b["name"] + json.dumps(b["input"], ensure_ascii=False) for b in blocks)
    got = [r for r in jrows(out) if r["kind"] == "count"][0]["count"]
    assert (code, got) == ((0 if want else 1), want)
    assert got < counts[("-i", "-e", a.upper())]


def test_bad_patterns_and_labels_are_usage_errors(home):
    code, _, err = run(["search", r"(a)\1", "--claude-home", str(home)])
    assert code == 2 and "linear time" in err and "backreference" in err
    code, _, err = run(["search", "foo(?=bar)", "--claude-home", str(home)])
    assert code == 2 and "linear time" in err and "lookaround" in err
    code, _, err = run(["search", "a[b", "--claude-home", str(home)])
    assert code == 2 and "invalid regular expression" in err and "missing ]" in err
    code, _, err = run(["search", "x", "-t", "user.nope", "--claude-home", str(home)])
    assert code == 2 and "user.message" in err


def test_match_spans_escaped_newline_of_real_record(home):
    """MISC-015 / REC-036: text that holds a newline (raw `\\n`) still matches across it."""
    for lane, idx in all_lanes(home):
        for e in idx.entries:
            if not {"agent.tool.result", "user.message", "agent.message"} & set(e.labels):
                continue
            from sessionsift.providers.claude.model.record import record_text

            text = record_text(idx.load(e))
            parts = [p for p in text.split("\n")]
            for i in range(len(parts) - 1):
                a, b = parts[i].strip().split(" ")[-1], parts[i + 1].strip().split(" ")[0]
                if a.isalnum() and b.isalnum():
                    pat = f"{a}\\s+{b}"
                    code, out, _ = run(["search", pat, str(lane.path), "--format", "json", "--claude-home", str(home)])
                    assert e.no in [h["line"] for h in jrows(out) if h["kind"] == "hit"], pat
                    return
    pytest.skip("no tool result in the corpus holds a newline between two words")


def test_reserialized_line_is_still_found(home, tmp_path):
    # Hand-made: the real client writes compact JSON only (MISC-014); a jq/editor round-trip writes
    # `"role": "user"` with spaces. We reserialise a REAL line to imitate that.
    src = next(ln.path for ln, idx in all_lanes(home) if any(e.labels[:1] == ("user.message",) for e in idx.entries))
    dest = tmp_path / "h" / "projects" / "-x"
    dest.mkdir(parents=True)
    out_lines = []
    for line in iter_lines(src):
        obj = orjson.loads(line.raw)
        out_lines.append(json.dumps(obj, ensure_ascii=True))  # spaces, and non-ASCII as \uXXXX
    (dest / src.name).write_text("\n".join(out_lines) + "\n")
    h = str(tmp_path / "h")
    code, a, _ = run(["search", "", "-t", "user.message", "-c", "--format", "json", "--claude-home", h])
    code, b, _ = run(["search", "", "-t", "user.message", "-c", "--format", "json", "--claude-home", str(home),
                      str(src)])
    ca = [r["count"] for r in jrows(a) if r["kind"] == "count"]
    cb = [r["count"] for r in jrows(b) if r["kind"] == "count"]
    assert ca == cb and ca[0] > 0


def test_resolve_persisted(home, tmp_path):
    # Hand-made: a <persisted-output> pointer is written only for outputs above ~30k characters,
    # which the harness's scripted tools do not produce; we rewrite a REAL tool-result carrier into
    # that shape (MISC-002: pointer text + toolUseResult.persistedOutputPath).
    lane, e, obj = None, None, None
    for ln, idx in all_lanes(home):
        for x in idx.entries:
            if x.labels[:1] == ("agent.tool.result",):
                lane, e, obj = ln, x, idx.load(x)
                break
        if e:
            break
    assert e is not None
    dest = tmp_path / "h" / "projects" / "-p"
    dest.mkdir(parents=True)
    saved = tmp_path / "saved.txt"
    saved.write_text("the external payload says platypus-7731\n")
    missing = tmp_path / "nowhere.txt"
    lines = []
    for i, (path) in enumerate((saved, missing)):
        o = json.loads(json.dumps(obj))
        o["uuid"] = f"{o['uuid'][:-4]}{i:04d}"
        blk = next(b for b in o["message"]["content"] if b.get("type") == "tool_result")
        blk["content"] = (f"<persisted-output>\nOutput too large (40KB). Full output saved to: {path}\n\n"
                          f"Preview (first 2KB):\nhead\n</persisted-output>")
        o["toolUseResult"] = {"stdout": "", "stderr": "", "persistedOutputPath": str(path)}
        lines.append(json.dumps(o, separators=(",", ":")))
    (dest / "11111111-1111-4111-8111-111111111111.jsonl").write_text("\n".join(lines) + "\n")
    h = str(tmp_path / "h")
    code, out, _ = run(["search", "platypus-7731", "--claude-home", h])
    assert code == 1
    code, out, _ = run(["search", "platypus-7731", "--resolve-persisted", "--format", "json", "--claude-home", h])
    rows = jrows(out)
    hits = [r for r in rows if r["kind"] == "hit"]
    assert [x["line"] for x in hits] == [1] and hits[0]["persisted_resolved"] == [str(saved)]
    assert code == 3
    unres = rows[-1]["persisted_unresolved"]
    assert [u["persisted_path"] for u in unres] == [str(missing)] and unres[0]["line"] == 2


def test_saved_outputs_are_counted_in_a_sidecar_and_skipped_without_one(home, tmp_path):
    """The left-out count of persisted outputs (a saved output under `<project>/<session>/tool-results/`
    matching where the transcript's preview does not) looks only where a session has a sidecar
    directory: sessions whose project listing shows none are skipped (Plan.no_sidecar), with the
    same count as looking everywhere. Hand-made pointer as in test_resolve_persisted."""
    from sessionsift.providers.claude.search import plan as A

    lane, e, obj = None, None, None
    for ln, idx in all_lanes(home):
        for x in idx.entries:
            if x.labels[:1] == ("agent.tool.result",):
                lane, e, obj = ln, x, idx.load(x)
                break
        if e:
            break
    assert e is not None
    dest = tmp_path / "h" / "projects" / "-p"
    sid = "22222222-2222-4222-8222-222222222222"
    saved = dest / sid / "tool-results" / "toolu_saved.txt"
    saved.parent.mkdir(parents=True)
    saved.write_text("the external payload says wombat-5521\n")
    o = json.loads(json.dumps(obj))
    blk = next(b for b in o["message"]["content"] if b.get("type") == "tool_result")
    blk["content"] = (f"<persisted-output>\nOutput too large (40KB). Full output saved to: {saved}\n\n"
                      f"Preview (first 2KB):\nhead\n</persisted-output>")
    o["toolUseResult"] = {"stdout": "", "stderr": "", "persistedOutputPath": str(saved)}
    (dest / f"{sid}.jsonl").write_text(json.dumps(o, separators=(",", ":")) + "\n")
    for src in sorted((home / "projects").rglob("*.jsonl"))[:5]:  # real sessions without a sidecar
        if "subagents" not in src.parts:
            shutil.copy(src, dest / src.name)
    scope = resolve_targets([], tmp_path / "h")
    assert sum(s.sidecar is False for s in scope.sessions) >= 3
    q = Query(patterns=("wombat-5521",), count_by="total")
    counts = []
    for skip in (True, False):
        r = lane_search(q, scope)
        assert len(r.plan.no_sidecar) == sum(s.sidecar is False for s in scope.sessions)
        if not skip:
            r.plan.no_sidecar = frozenset()
        list(r.outcomes())
        counts.append({x["kind"]: x["further_hits"] for x in r.summary.left_out}[A.PERSISTED])
    assert counts == [1, 1]


def test_needles_are_necessary_and_json_safe():
    assert needles_for(["hello world"], False) == (["hello"], False)
    assert needles_for(['say "hi" there'], False) == (["there"], False)  # quotes never in a needle
    # a backslash is written escaped in JSON: the needle is the fragment after it, never one holding it
    assert needles_for([r"a\\bcd"], False) == (["bcd"], False)
    assert needles_for(["(?i)Foo.*barbaz"], False) == (["barbaz"], True)
    assert needles_for(["abc|defg"], False) == (["abc", "defg"], False)
    assert needles_for(["(abc)?xyz"], False) == (["xyz"], False)
    assert needles_for(["ab|x"], False)[0] is None  # one alternative has no 3-byte literal
    assert needles_for([""], False)[0] is None
    assert needles_for(["wörter123"], False) == (["rter123"], False)  # non-ASCII never in a needle
    # case-insensitive: k/s fold to non-ASCII letters (KELVIN SIGN, LONG S)
    assert needles_for(["tasks"], True)[0] is None
    assert needles_for(["a b c", "x"], False)[0] is None


@pytest.mark.parametrize("index", [["--no-index"], []])
def test_a_newline_inside_a_bash_command_is_searched_as_backslash_n(tmp_path, monkeypatch, index):
    # REC-037: a tool call is matched as `<name> <input as compact JSON>`, so a newline inside a
    # Bash command is the two characters `\n`. files_basic's real transcript with its one Bash
    # command made two lines (no offline scenario runs a multi-line command)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SESSIONSIFT_INDEX_DIR", str(tmp_path / "idx"))
    src = EXAMPLES / "projects" / "-tmp-ssift-rc-files-basic-work" / "8414eb07-cca2-5cca-9059-e9baedac31e1.jsonl"
    dst = tmp_path / ".claude" / "projects" / src.parent.name / src.name
    dst.parent.mkdir(parents=True)
    recs = [json.loads(x) for x in src.read_text().splitlines()]
    n = 0
    for r in recs:
        for b in (r.get("message") or {}).get("content") or []:
            if isinstance(b, dict) and b.get("name") == "Bash":
                b["input"]["command"] = "echo one\necho two"
                n += 1
    assert n == 1
    dst.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs))
    hits = {}
    for pat in ("one\\necho two", "one\necho two"):
        code, out, err = run(["search", "-F", pat, "--claude-home", str(tmp_path / ".claude"), *index,
                              "--format", "json"])
        hits[pat] = (code, jrows(out)[-1]["hits"])
    assert hits == {"one\\necho two": (0, 1), "one\necho two": (1, 0)}
