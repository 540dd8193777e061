"""The fast paths of `search` give the same results as the slow ones, on transcripts written by the
real Claude Code client (examples/claude-home, 2.1.258; the newest-client corpus when present) and
on a reserialised copy of them.

Fast paths under test (search/needles.py, providers/claude/search/{shape,scan,lanes}.py, providers/claude/model/record.py):
- a record's top-level type / tool-result-carrier shape read from the line's first bytes, so lines
  outside the selection are not parsed (`HEAD_TYPE`, `CARRIER`, `Plan.type_gate/skip_carriers`);
- candidate lines found with `mmap.find` once they turn out dense (vs RE2 throughout);
- line numbers counted only for shown hits, lane index entries matched by offset;
- the narration signature decode gated behind the three base64 alignments (NAR-007).
The slow path is the same search with those gates off; LaneIndex agreement is in test_search.py.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import random
import shutil
from collections import Counter
from pathlib import Path

import orjson
import pytest

from sessionsift.providers.claude.discover import resolve_targets
from sessionsift.providers.claude.model import record as R
from sessionsift.read import lines as L
from sessionsift.read.lines import iter_lines, open_map
from sessionsift.search import Query
from sessionsift.providers.claude.search import lanes as A
from sessionsift.providers.claude.search import scan as S
from sessionsift.providers.claude.search import shape as SH
from sessionsift.read import needles as PF

ROOT = Path(__file__).resolve().parent.parent
CORPORA = [p for p in (ROOT / "examples" / "claude-home",
                       ROOT / "examples" / "newest-client" / "2.1.332" / "claude-home")
           if (p / "projects").is_dir()]


def _jsonl(home: Path) -> list[Path]:
    return sorted(home.rglob("*.jsonl"))


@pytest.fixture(scope="module")
def reserialised(tmp_path_factory) -> Path:
    """examples/claude-home with every line rewritten by `json.dumps` (`"key": value` with spaces,
    non-ASCII as \\uXXXX). Hand-made on purpose: the real client writes compact JSON only
    (MISC-014); a jq/editor round-trip writes this. None of the byte-shape patterns fit it."""
    src = CORPORA[0]
    dest = tmp_path_factory.mktemp("reser") / "claude-home"
    for f in _jsonl(src):
        out = dest / f.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(orjson.loads(l.raw), ensure_ascii=True) for l in iter_lines(f) if l.raw.strip()]
        out.write_text("\n".join(lines) + "\n")
    return dest


QUERIES = [
    Query(patterns=("",), include=("user.message",), count_by="total"),
    Query(patterns=("",), count_by="tool"),
    Query(patterns=("",), count_by="label"),
    Query(patterns=("",), count_by="pairing"),
    Query(patterns=("",), count_by="attachment"),
    Query(patterns=("",), count_by="model"),
    Query(patterns=("",)),
    Query(patterns=("",), include=("agent",)),
    Query(patterns=("",), include=("harness",)),
    Query(patterns=("",), include=("agent.tool.result",), count_by="tool"),
    Query(patterns=("",), include=("agent.tool.use",), count_by="tool"),
    Query(patterns=("",), include=("agent.tool", "agent.message"), count_by="session"),
    Query(patterns=("",), include=("user.answer", "user.rejection", "agent.tool.result", "harness.compaction"),
          count_by="project"),
    Query(patterns=("",), include=("user.message", "agent.message")),
    Query(patterns=("",), include=("harness.meta.snapshot", "user.queued", "harness.meta.system")),
    Query(patterns=("",), attachments=True, include=("harness.meta.attachment",)),
    Query(patterns=("",), additional_context=True),
    Query(patterns=("the",)),
    Query(patterns=("file",), ignore_case=True, count_by="label"),
    Query(patterns=(r"exit code [0-9]+|traceback|error",), ignore_case=True),
    Query(patterns=("P1",), include=("user",)),
    Query(patterns=("tool_use_id",)),
    # literals in gated lines only: the left-out census (summary.left_out) must agree too
    Query(patterns=("total_tokens",)),
    Query(patterns=("hasCompletedOnboarding|trackedFileBackups|queued_command",), include=("user.message",)),
    Query(patterns=("P1",), since=None, include=("agent.tool.result",)),
    Query(patterns=("",), max_count=2),
    Query(patterns=("",), sessions_only=True, include=("agent.tool.use",)),
]


def _run(p: A.Plan, home: Path) -> tuple[list, dict, dict]:
    scope = resolve_targets([], home)
    run = A.LaneRun(p, scope, A.lanes_of(scope, p.query.subagents))
    hits, counts = [], {}
    for lane, o in run.outcomes():
        rel = str(lane.path.relative_to(home))
        for h in o.hits:
            d = dataclasses.asdict(h)
            d.pop("offset"), d.pop("length"), d.pop("lane_pos")
            if not p.listing:
                d.pop("line")  # not computed when hits are only counted
            hits.append((rel, d))
        A.merge_counts(p.query.count_by or "total", counts, o.counts)
    sm = dataclasses.asdict(run.summary)
    for k in ("records_parsed", "shape_skipped", "shape_counted", "prefilter"):
        sm.pop(k)
    return hits, counts, sm


def _slow(p: A.Plan) -> A.Plan:
    return dataclasses.replace(p, type_gate=None, skip_carriers=False, fast_assistant=None, fast_carrier=False)


@pytest.mark.parametrize("home", CORPORA, ids=lambda p: p.parent.name if p.name == "claude-home" else p.name)
def test_fast_paths_equal_slow_paths(home, monkeypatch):
    exercised = Counter()
    for q in QUERIES:
        p = A.plan(q)
        monkeypatch.setattr(PF, "DENSE_GAP", 0)  # RE2 throughout
        monkeypatch.setattr(PF, "SZ", False)  # not stringzilla
        monkeypatch.setattr(L, "SCAN_WHOLE", -1)  # every file mapped, none read whole
        slow = _run(_slow(p), home)
        monkeypatch.setattr(PF, "DENSE_GAP", 1 << 40)  # find() after the 8th candidate of a file
        monkeypatch.setattr(PF, "SZ", True)
        monkeypatch.setattr(L, "SCAN_WHOLE", 16 << 20)
        fast = _run(p, home)
        assert fast == slow, q
        scope = resolve_targets([], home)
        run = A.LaneRun(p, scope, A.lanes_of(scope, True))
        list(run.outcomes())
        exercised["skipped"] += run.summary.shape_skipped
        exercised["hits"] += run.summary.hits
        exercised["counted"] += run.summary.shape_counted
    assert exercised["skipped"] > 100 and exercised["hits"] > 100 and exercised["counted"] > 100


def test_reserialised_copy_gives_the_same_results(reserialised):
    """The byte shapes never fit a reserialised line: it is parsed, and nothing changes."""
    home = CORPORA[0]
    for q in QUERIES:
        p = A.plan(q)
        a_hits, a_counts, a_sm = _run(p, home)
        b_hits, b_counts, b_sm = _run(p, reserialised)
        assert b_counts == a_counts, q
        assert [(r, d["labels"], d["tool_names"], d["uuid"], d.get("line"), d["turn"]) for r, d in b_hits] == \
               [(r, d["labels"], d["tool_names"], d["uuid"], d.get("line"), d["turn"]) for r, d in a_hits], q
        assert (b_sm["hits"], b_sm["files"], b_sm["unknown_type_lines"]) == (a_sm["hits"], a_sm["files"],
                                                                             a_sm["unknown_type_lines"])
    scope = resolve_targets([], reserialised)
    run = A.LaneRun(A.plan(QUERIES[0]), scope, A.lanes_of(scope, True))
    list(run.outcomes())
    assert run.summary.shape_skipped == 0


def test_byte_shapes_agree_with_the_parse():
    tl = SH.type_leaves()
    seen = Counter()
    for home in CORPORA:
        for f in _jsonl(home):
            data = f.read_bytes()
            for line in iter_lines(f):
                obj = orjson.loads(line.raw)
                t = obj.get("type")
                labels = R.classify(obj)
                # the type -> leaves table the type gate relies on
                assert set(labels) <= tl.get(t, frozenset()), (t, labels)
                s, e = line.offset, line.offset + len(line.raw)
                rt, is_carrier, carrier_tid = SH.line_shape(data, s, e)
                if rt is not None:
                    assert rt == t, line.raw[:200]
                    seen["head"] += 1
                elif isinstance(t, str):
                    seen["type-missed"] += 1
                if is_carrier:
                    assert t == "user" and R.tool_results(obj) and set(labels) <= SH.CARRIER_LEAVES
                    seen["carrier"] += 1
                elif t == "user" and R.tool_results(obj):
                    seen["carrier-missed"] += 1
                if carrier_tid is not None and line.raw.count(SH.TOOL_USE_ID) == 1:
                    assert [str(b.get("tool_use_id")) for b in R.tool_results(obj)] == [carrier_tid]
                    seen["carrier-id"] += 1
                am = SH.ASSISTANT_HEAD.match(data, s, e)
                if am is not None and rt == "assistant":
                    assert t == "assistant" and R.blocks_of(obj)[0]["type"] == am.group(1).decode()
                    n = line.raw.count(SH.TOOL_USE_BLOCK)
                    assert n == len(R.tool_uses(obj)) or n > 1
                    if am.group(1) == b"tool_use" and n == 1:
                        assert R.tool_names(obj) == [am.group(3).decode()]
                        assert [b["id"] for b in R.tool_uses(obj)] == [am.group(2).decode()]
                    seen["assistant"] += 1
                elif t == "assistant":
                    seen["assistant-missed"] += 1
                seen["lines"] += 1
    # the shapes fit most real lines (else the fast path would not be exercised)
    assert seen["head"] > 20 * seen["type-missed"] and seen["carrier"] > 5 * seen["carrier-missed"]
    assert seen["assistant"] > 5 * seen["assistant-missed"] and seen["carrier-id"] > seen["carrier"] // 2


def test_candidate_engines_agree(monkeypatch):
    for home in CORPORA:
        for f in _jsonl(home):
            data = f.read_bytes()
            for needles, ci in ((['"user"'], False), (['"assistant"', '"user"'], False), (["tool_use"], False),
                                (['"attachment"', "queue-operation", '"system"'], False), (["file"], True)):
                monkeypatch.setattr(PF, "SZ", False)
                monkeypatch.setattr(PF, "DENSE_GAP", 0)
                a = list(PF.candidate_spans(data, needles, ci))
                monkeypatch.setattr(PF, "DENSE_GAP", 1 << 40)
                b = list(PF.candidate_spans(data, needles, ci))
                assert a == b, (f, needles)
                monkeypatch.setattr(PF, "SZ", True)  # stringzilla for case-sensitive needles
                with open_map(f) as m:
                    c = list(PF.candidate_spans(m.buf, needles, ci))  # on a mapping, as files > SCAN_WHOLE
                assert c == list(PF.candidate_spans(data, needles, ci)) == a, (f, needles)
                want = [(l.offset, l.offset + len(l.raw)) for l in iter_lines(f)
                        if any((n.lower() if ci else n).encode() in (l.raw.lower() if ci else l.raw) for n in needles)]
                assert a == want, (f, needles)


# --- the narration gate (NAR-007) ------------------------------------------------------------


def _ld(field: int, payload: bytes) -> bytes:
    """One protobuf length-delimited field (lengths < 128 here)."""
    assert len(payload) < 128
    return bytes([(field << 3) | 2, len(payload)]) + payload


def _signature(tag: bytes, pad: int) -> str:
    """A signature whose 2 -> 1 -> 8 field holds `tag`, shifted by `pad` leading bytes so the tag
    lands at each base64 alignment. Hand-made: the harness's mock API signs thinking blocks with
    a plain `sig-...` token, and the real API's narration blocks cannot be produced offline."""
    inner = _ld(8, tag)
    lvl1 = _ld(3, b"x" * pad) + _ld(1, inner)
    return base64.b64encode(_ld(2, lvl1) + _ld(5, b"tail")).decode()


def test_narration_needles_cover_every_alignment():
    rnd = random.Random(7)
    for pre in range(0, 9):
        for _ in range(300):
            b = bytes(rnd.randrange(256) for _ in range(pre)) + b"narration" + \
                bytes(rnd.randrange(256) for _ in range(rnd.randrange(4)))
            enc = base64.b64encode(b).decode()
            assert any(n in enc for n in R.NARRATION_B64), (pre, enc)
            assert any(n in enc.rstrip("=") for n in R.NARRATION_B64)


def test_is_narration_equals_the_full_decode():
    cases = []
    for pad in range(6):
        for tag in (b"narration", b"thinking", b"summarized", b"narrationX"):
            sig = _signature(tag, pad)
            cases += [sig, sig.rstrip("="), sig[:-3]]
            # shapes only the lenient decoder reads: whitespace/URL-safe/inner padding
            cases += [sig[:7] + "\n" + sig[7:], sig[:12] + " " + sig[12:], sig.replace("+", "-").replace("/", "_"),
                      sig[:8] + "=" + sig[8:]]
    cases += ["", "sig-6bf8db67f94e8d43d84d4d24f59f9bd388e494b4a08f735a", "é" * 5, "bmFycmF0aW9u", "===="]
    narr = 0
    for sig in cases:
        want = R.signature_tag(sig) == "narration"
        assert R.is_narration(sig) == want, sig
        narr += want
    assert narr >= 6 * 3  # every alignment decodes to narration, before the lenient variants
    # a needle split by a newline is still read by the lenient decoder: the full decode runs
    s = _signature(b"narration", 0)
    i = next(s.find(n) for n in R.NARRATION_B64 if n in s)
    split = s[: i + 3] + "\n" + s[i + 3:]
    assert not any(n in split for n in R.NARRATION_B64) and R.is_narration(split)


def test_classify_unchanged_on_the_corpus(monkeypatch):
    objs = []
    sigs = 0
    for home in CORPORA:
        for f in _jsonl(home):
            for line in iter_lines(f):
                o = orjson.loads(line.raw)
                objs.append(o)
                sigs += sum(1 for b in R.blocks_of(o) if isinstance(b.get("signature"), str))
    fast = [R.classify(o) for o in objs]
    monkeypatch.setattr(R, "is_narration", lambda sig: R.signature_tag(sig) == "narration")
    slow = [R.classify(o) for o in objs]
    assert fast == slow and sigs > 0


def test_shapes_the_client_does_not_write_fall_back_to_the_parse(tmp_path):
    """Hand-made from REAL lines: the client writes one content block per assistant record and one
    result per carrier, so these variants (two tool_use blocks, a tool_use-shaped object inside a
    tool input, a second result, an assistant-shaped message under a top-level `type:"user"`) do
    not occur in its transcripts. The byte paths must not count them differently from the parse."""
    home = CORPORA[0]
    use_line = carrier_line = None
    for f in _jsonl(home):
        for line in iter_lines(f):
            o = orjson.loads(line.raw)
            if use_line is None and o.get("type") == "assistant" and R.tool_uses(o) and \
                    SH.ASSISTANT_HEAD.match(line.raw) and R.tool_names(o)[0] not in R.SPAWN_TOOLS:
                use_line = o
            if carrier_line is None and SH.line_shape(line.raw, 0, len(line.raw))[2] is not None:
                carrier_line = o
    assert use_line is not None and carrier_line is not None
    variants = []
    two = json.loads(json.dumps(use_line))
    blk = two["message"]["content"][0]
    two["message"]["content"].append({**blk, "id": blk["id"] + "b", "name": "SecondTool"})
    variants.append(two)
    nested = json.loads(json.dumps(use_line))
    nested["message"]["content"][0]["input"] = {"x": {"type": "tool_use", "id": "toolu_fake", "name": "Fake"}}
    variants.append(nested)
    relabelled = json.loads(json.dumps(use_line))
    relabelled["type"] = "user"
    variants.append(relabelled)
    hidden = json.loads(json.dumps(relabelled))  # `"type":"assistant"` only inside the tool input
    hidden["message"]["content"][0]["input"] = {"a": 1, "type": "assistant"}
    variants.append(hidden)
    dup = json.loads(json.dumps(use_line))
    dup["message"]["content"].insert(0, {"type": "text", "text": "before"})
    variants.append(dup)
    more = json.loads(json.dumps(carrier_line))
    more["message"]["content"].append({**more["message"]["content"][0], "tool_use_id": blk["id"] + "b"})
    variants.append(more)
    dest = tmp_path / "h" / "projects" / "-edge"
    dest.mkdir(parents=True)
    lines = [orjson.dumps(use_line)]
    for i, v in enumerate(variants):
        v["uuid"] = f"{v['uuid'][:-4]}{i:04d}"
        lines.append(orjson.dumps(v))  # compact, key order kept: the head patterns still fit
    (dest / "22222222-2222-4222-8222-222222222222.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    for q in (Query(patterns=("",), count_by="tool"), Query(patterns=("",), count_by="total"),
              Query(patterns=("",), include=("agent.tool.use",), count_by="tool"),
              Query(patterns=("",), include=("user.message",), count_by="total")):
        p = A.plan(q)
        fast, slow = _run(p, tmp_path / "h"), _run(_slow(p), tmp_path / "h")
        assert fast == slow, q
    assert _run(A.plan(QUERIES[1]), tmp_path / "h")[1].get("SecondTool") == 1  # the call, counted once
    results = A.plan(Query(patterns=("",), include=("agent.tool.result",), count_by="tool"))
    assert _run(results, tmp_path / "h")[1].get("SecondTool") == 1  # its result, when results are asked for


def test_parallel_workers_give_the_serial_results(monkeypatch):
    """Scopes over PARALLEL_MIN_BYTES fan out to forked workers: same rows, same order."""
    home = CORPORA[0]
    for q in (QUERIES[1], QUERIES[6], QUERIES[16], QUERIES[19]):
        p = A.plan(q)
        monkeypatch.setattr(A, "PARALLEL_MIN_BYTES", 1 << 62)
        serial = _run(p, home)
        monkeypatch.setattr(A, "PARALLEL_MIN_BYTES", 0)
        monkeypatch.setattr(A, "MIN_BATCH_BYTES", 1)
        monkeypatch.setattr(os, "cpu_count", lambda: 2)
        scope = resolve_targets([], home)
        run = A.LaneRun(p, scope, A.lanes_of(scope, True))
        list(run.outcomes())
        assert run.workers == 2
        assert _run(p, home) == serial, q


def _without_plain(p: A.Plan, home: Path) -> tuple[list, dict, int]:
    scope = resolve_targets([], home)
    run = A.LaneRun(p, scope, A.lanes_of(scope, p.query.subagents))
    rows = [(str(lane.path), dataclasses.asdict(o)) for lane, o in run.outcomes(plain=False)]
    return rows, dataclasses.asdict(run.summary), run.workers


@pytest.mark.parametrize("forked", [False, True])
def test_outcomes_without_the_plain_lanes_keep_the_summary(monkeypatch, forked):
    """`outcomes(plain=False)` (what `search` prints from): the lanes that are not plain, each the
    same outcome, and the same summary as yielding every lane -- in-process and forked, where a
    worker sends its plain lanes as sums."""
    monkeypatch.setattr(A, "PARALLEL_MIN_BYTES", 0 if forked else 1 << 62)
    monkeypatch.setattr(A, "MIN_BATCH_BYTES", 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    # can_fork() refuses while another thread lives (one an earlier test left running, e.g. a
    # server's): the run went in-process and `workers == 2` failed once in a full run; the forked
    # case forks whatever the suite left behind (the workers only read files)
    from sessionsift.read import fanout

    monkeypatch.setattr(fanout, "can_fork", lambda: True)
    folded_some = False
    for home in CORPORA:
        for q in (QUERIES[1], QUERIES[6], QUERIES[16], QUERIES[19], Query(patterns=("zqx-nowhere",), count_by="total"),
                  Query(patterns=("ENOENT|Bash",), count_by="total", count_lines=True)):
            p = A.plan(q)
            scope = resolve_targets([], home)
            run = A.LaneRun(p, scope, A.lanes_of(scope, p.query.subagents))
            every = [(str(lane.path), dataclasses.asdict(o)) for lane, o in run.outcomes()]
            rows, sm, workers = _without_plain(A.plan(q), home)
            assert workers == (2 if forked else 1)
            assert sm == dataclasses.asdict(run.summary), q
            assert rows == [(path, o) for path, o in every if not A.LaneOutcome(**o).plain()], q
            folded_some |= len(rows) < len(every)
            assert sm["files"] == len(every) and sm["files"] > 0
    assert folded_some


def test_lanes_of_lists_every_lane_like_the_sessions():
    """lanes_of lists each project directory once instead of probing every session's sidecar."""
    subs = 0
    for home in CORPORA:
        scope = resolve_targets([], home)
        for sub in (True, False):
            want = [ln for s in scope.sessions for ln in s.lanes(sub)]
            assert A.lanes_of(scope, sub) == want
            subs += sum(1 for ln in want if ln.is_subagent)
    assert subs > 0


def _crash_home(tmp_path: Path, extra: list[bytes] = ()) -> Path:
    """examples/crash (real transcripts damaged the ways a crash damages them: NUL runs, a torn
    final line, invalid UTF-8; see its manifest) laid out as a claude home."""
    dest = tmp_path / "crash" / "projects" / "-crash"
    dest.mkdir(parents=True)
    for i, f in enumerate(sorted((ROOT / "examples" / "crash").glob("*.jsonl"))):
        (dest / f"{i:08d}-1111-4111-8111-111111111111.jsonl").write_bytes(f.read_bytes())
    for i, data in enumerate(extra):
        (dest / f"{i:08d}-2222-4222-8222-222222222222.jsonl").write_bytes(data)
    return tmp_path / "crash"


def test_damaged_lines_count_as_the_parse_counts_them(tmp_path):
    """A damaged line is never a hit to the parse; the byte paths must not count it either.
    Lines left out from their bytes are not judged, so `malformed_lines` and `unknown_type_lines`
    (diagnostics about parsed lines) may be lower on the fast path; hits and counts may not differ.
    The torn-then-appended line is hand-made: REC-040/TAIL-012 never witnessed a torn line in a
    real transcript, but a crash mid-append followed by a new append would write one."""
    src = next(f for f in _jsonl(CORPORA[0]) if b'"type":"tool_use"' in f.read_bytes())
    lines = src.read_bytes().splitlines(keepends=True)
    i = next(k for k, l in enumerate(lines) if b'"type":"tool_use"' in l and l.startswith(SH.RECORD_START))
    j = next(k for k, l in enumerate(lines) if SH.line_shape(l.rstrip(b"\n"), 0, len(l) - 1)[2] is not None)
    k = next(k for k, l in enumerate(lines) if (m := SH.ASSISTANT_HEAD.match(l)) and m.group(1) == b"text"
             and SH.record_type(l.rstrip(b"\n"), 0, len(l) - 1) == "assistant")
    cut = lines[i].index(b'"input":') + 12  # the torn call keeps its id and name
    torn = [lines[i][: len(lines[i]) // 2] + lines[i + 1], lines[j][: len(lines[j]) // 2] + lines[j],
            lines[i][:cut] + lines[k]]  # head of a tool call, tail of a text record: no hit to the parse
    home = _crash_home(tmp_path, [b"".join(lines[:i] + torn + lines[i + 1:])])
    for q in QUERIES:
        p = A.plan(q)
        fast = _run(p, home)
        with pytest.MonkeyPatch.context() as mp:  # the slow path on mappings, without stringzilla
            mp.setattr(PF, "SZ", False)
            mp.setattr(L, "SCAN_WHOLE", -1)
            slow = _run(_slow(p), home)
        for sm in (fast[2], slow[2]):
            sm.pop("malformed_lines"), sm.pop("unknown_type_lines")
        assert fast == slow, q
    assert _run(_slow(A.plan(QUERIES[1])), home)[2]["hits"] > 0


def _session_dir_by_parts(lane) -> str:
    """The pathlib reading `_session_dir` replaced (string operations run per lane)."""
    if not lane.is_subagent:
        return str(lane.path.parent / lane.session_id)
    parts = lane.path.parts
    if "subagents" in parts:
        return str(Path(*parts[: len(parts) - 1 - parts[::-1].index("subagents")]))
    return str(lane.path.parent / lane.session_id)


def test_session_dir_by_strings_equals_the_pathlib_reading():
    from sessionsift.providers.claude.discover import Lane

    lanes = [ln for home in CORPORA for ln in A.lanes_of(resolve_targets([], home), True)]
    assert any(ln.is_subagent for ln in lanes)
    lanes += [Lane(Path("/p/subagents/s/subagents/agent-a.jsonl"), "s", "agent-a", "subagent"),
              Lane(Path("/p/s/subagents/workflows/wf_1/agent-b.jsonl"), "s", "agent-b", "workflow", "wf_1"),
              Lane(Path("/subagents/agent-a.jsonl"), "s", "agent-a", "subagent"),
              Lane(Path("/p/s/agent-a.jsonl"), "s", "agent-a", "subagent"),
              Lane(Path("/s.jsonl"), "s", "main", "main"), Lane(Path("s.jsonl"), "s", "main", "main")]
    for ln in lanes:
        assert S._session_dir(ln) == _session_dir_by_parts(ln), ln.path
        assert S._tool_results_dir(ln) == os.path.join(_session_dir_by_parts(ln), "tool-results")


def test_outcomes_cross_the_process_boundary_unchanged():
    """Forked workers send outcomes back pickled; a plain one (size, lines, index note only) as
    four values. Every outcome of every query on the real corpora must come back equal."""
    import pickle

    from sessionsift.providers.claude.search.types import LaneOutcome

    plain = rich = 0
    for home in CORPORA:
        scope = resolve_targets([], home)
        for q in QUERIES[:8] + [Query(patterns=("zzqqnotthere",)), Query(patterns=("the",), count_lines=True)]:
            p = A.plan(q)
            for u in A._units(A.lanes_of(scope, True), [1] * 10_000, 1 << 62):
                for o in A._run_unit((p, u)):
                    back = pickle.loads(pickle.dumps(o))
                    assert type(back) is LaneOutcome and back == o
                    plain += o.plain()
                    rich += not o.plain()
    assert plain > 10 and rich > 10
    o = LaneOutcome(pos=3, bytes=10, lines=2, index_why="no index yet")
    assert o.plain() and pickle.loads(pickle.dumps(o)) == o
    for f in dataclasses.fields(LaneOutcome):  # a field plain() forgot would be lost on the way back
        if f.name in ("pos", "bytes", "lines", "index_why"):
            continue
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        value = {int: 1, bool: True, list: ["x"], dict: {"k": 1}}.get(type(default), "set")
        o2 = LaneOutcome(pos=1, **{f.name: value})
        assert not o2.plain(), f.name
        assert pickle.loads(pickle.dumps(o2)) == o2, f.name


def test_open_scan_gives_the_mappings_bytes(tmp_path):
    files = _jsonl(CORPORA[0])[:5] + sorted((ROOT / "examples" / "crash").glob("*.jsonl"))[:3]
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for f in files + [empty]:
        with open_map(f) as m:
            want = bytes(m.buf)
        for whole in (None, 0, -1, 1 << 30):
            with L.open_scan(f, whole) as s:
                assert bytes(s.buf) == want, (f, whole)
                if want:  # (an empty file is b"" either way)
                    assert isinstance(s.buf, bytes) == (len(want) <= (L.SCAN_WHOLE if whole is None else whole))
