"""Checks shared by the opencode tests on real-client data and on the committed sample."""
from __future__ import annotations

import hashlib

from sessionsift.providers import ReadReport, get


def _read(data_dir, cwd=None, want_ok=True, provider: str = "opencode"):
    """Discover and read every session (of the scenario whose work dir is ``cwd``, when given) with the
    reader ``provider`` (opencode's, or a client built from its code: ``kilo-code``)."""
    p = get(provider)
    disc = p.discover(p.locate(explicit=str(data_dir)))
    if want_ok:
        assert disc.coverage.state == "ok", disc.coverage
        assert disc.coverage.sessions == len(disc.sessions)
    out = {}
    for ref in disc.sessions:
        if cwd is not None and ref.project != cwd:
            continue
        rep = ReadReport()
        out[ref.session_id] = (ref, list(p.read(ref, rep, raw=True)), rep)
    return disc, out


def _expected_tokens(usage: dict) -> tuple:
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    rea = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens", 0)
    return (usage["prompt_tokens"] - cached, usage["completion_tokens"], cached, 0, rea,
            usage["prompt_tokens"] + usage["completion_tokens"])


def _tok(t) -> tuple:
    return (t.input, t.output, t.cache_read, t.cache_write, t.reasoning, t.total)


def _sessions_by_conversation(truth, sessions):
    """main session -> P1.., each child session -> its SUBAGENT marker (from its first user text)."""
    main = truth["session_ids_from_client_events"][0]
    conv = {}
    for sid, (ref, recs, _) in sessions.items():
        if sid == main:
            conv[sid] = "main"
            continue
        first = next(r.text for r in recs if r.role == "user" and r.native == "part/text")
        conv[sid] = next(m for m in truth["subagent_markers"] if m in first)
    return main, conv


def check_scenario(run, sessions, legacy=False):
    truth = run.truth
    main, conv = _sessions_by_conversation(truth, sessions)
    assert set(conv.values()) == {"main", *truth["subagent_markers"]}
    ref, recs, rep = sessions[main]
    assert rep.problems == [] and rep.omissions()["malformed_lines"] == 0
    assert ref.project == truth["cwd"] and ref.version == truth["client_version"]
    # prompts: exactly what was typed, in order, as the client stored it (quoted; see quirks)
    prompts = [r.text for r in recs if r.kind == "prompt"]
    typed = [f'"{p["text"]}"' for p in truth["prompts"]]
    assert [t.rstrip("\n") for t in prompts] == typed, truth["quirks"]
    assert [r.turn for r in recs if r.kind == "prompt"] == list(range(1, len(typed) + 1))
    # tool calls: ids, names, inputs; results: exit codes
    calls = {}
    results = {}
    for sid, (_, rs, _) in sessions.items():
        for r in rs:
            if r.kind == "tool_call":
                calls[r.call_id] = (r.tool_name, r.tool_input, conv[sid])
            elif r.kind == "tool_result":
                results[r.call_id] = r
    want = {c["id"]: (c["name"], c["input"], "main" if c["conversation"].startswith("P") else c["conversation"])
            for c in truth["tool_calls"]}
    if truth["killed"]:  # the stalled step never got to its tool calls
        assert set(want) <= set(calls)
    assert {k: v for k, v in calls.items() if k in want} == want
    assert set(calls) == set(want)
    for c in truth["tool_calls"]:
        res = results[c["id"]]
        if c["name"] == "bash":
            assert res.exit_code == c["expect_exit"], (c, res.text)
        # a non-zero exit is the client's record of a failed command (docs/providers.md, "What is_error means")
        assert res.is_error is (c["name"] == "bash" and c["expect_exit"] != 0)
    # file changes: replaying every recorded change gives the files the script implies
    files: dict[str, str] = {}
    for sid in sorted(sessions, key=lambda s: s != main):
        for r in sessions[sid][1]:
            for fc in r.file_changes:
                rel = fc.path[len(truth["cwd"]) + 1:]
                if fc.new_content is not None:
                    files[rel] = fc.new_content
                else:  # an edit: the diff is all 1.18 records; apply the scripted edit to check it
                    assert fc.action == "update" and fc.diff and "+second line" in fc.diff
                    files[rel] = files[rel].replace("first line\n", "first line\nsecond line\n", 1)
    for rel, content in files.items():
        exp = truth["expected_files"][rel]
        assert content == exp["content"]
        assert hashlib.sha256(content.encode()).hexdigest() == truth["disk_files"][rel]["sha256"]
    changed = {c["input"]["filePath"][len(truth["cwd"]) + 1:] for c in truth["tool_calls"]
               if c["name"] in ("write", "edit")}
    assert set(files) == changed
    # tokens: one usage per served step, in order, per conversation, equal to what the mock sent
    for sid, (_, rs, _) in sessions.items():
        steps = [s for s in truth["served_steps"] if s["conversation"] != "title"
                 and ((s["conversation"][0] == "P" or s["conversation"] in ("summary", "unscripted"))
                      if conv[sid] == "main" else s["conversation"] == conv[sid])]
        toks = [r.tokens for r in rs if r.tokens is not None]
        assert len({t.dedup_key for t in toks}) == len(toks)
        if truth["killed"] and conv[sid] == "main":
            assert len(toks) == len(steps) - 1  # the step killed mid-stream recorded no usage
            last = [r for r in rs if r.native == "message/assistant"][-1]
            assert last.tokens is None and "finish" not in last.raw
            steps = steps[:-1]
        assert [_tok(t) for t in toks] == [_expected_tokens(s["usage"]) for s in steps]
    return main, conv
