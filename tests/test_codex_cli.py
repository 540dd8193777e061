"""The CLI over the Codex CLI reader, on the committed real-client corpus examples/codex-home.

Expected figures come from the ground truth the driving script wrote (examples/codex-ground-truth),
never from the reader. (show/search/stats/files join here once they read through the providers
layer.)
"""
from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path

from sessionsift.cli import main

REPO = Path(__file__).resolve().parent.parent
HOME = REPO / "examples" / "codex-home"
GT = {p.stem: json.loads(p.read_text()) for p in sorted((REPO / "examples" / "codex-ground-truth").glob("*.json"))}


def run(args: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        try:
            main(args)
        except SystemExit as exc:
            code = int(exc.code or 0)
        else:
            code = 0
    return code, buf.getvalue()


def jrows(out: str) -> list[dict]:
    return [json.loads(x) for x in out.splitlines() if x.strip()]


def codex_cov(rows: list[dict]) -> dict:
    return next(c for c in rows[-1]["coverage"] if c["provider"] == "codex")


def test_list_json_has_every_thread_with_its_project_prompts_and_parent():
    code, out = run(["list", "--codex-home", str(HOME), "--provider", "codex", "--format", "json"])
    rows = jrows(out)
    assert code == 0 and rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary"
    sessions = {r["session_id"]: r for r in rows if r["kind"] == "session"}
    want_ids = {t for g in GT.values() for t in g["thread_ids_reported"] + g["spawned_agent_ids"]}
    assert set(sessions) == want_ids
    kids = {t for g in GT.values() for t in g["spawned_agent_ids"]}
    assert codex_cov(rows) == {**codex_cov(rows), "state": "ok", "sessions": len(want_ids - kids), "subagents": len(kids)}
    for name, g in GT.items():
        root = sessions[g["thread_ids_reported"][0]]
        assert root["provider"] == "codex" and root["project"] == g["cwd"]
        assert root["prompts"] == len(g["prompts"]) and root["first_prompt"] == g["prompts"][0]["text"]
        assert root["last_prompt"] == g["prompts"][-1]["text"] and root["parent_session_id"] is None
        for child in g["spawned_agent_ids"]:
            assert sessions[child]["parent_session_id"] == root["session_id"]
            assert sessions[child]["prompts"] == 0  # the parent's task is not a person's prompt


def test_list_text_ends_with_the_computed_coverage_line():
    code, out = run(["list", "--home", str(REPO / "examples" / "home")])
    assert code == 0
    n = sum(len(g["thread_ids_reported"]) for g in GT.values())
    k = sum(len(g["spawned_agent_ids"]) for g in GT.values())
    assert out.rstrip().splitlines()[-1].startswith("coverage: ")
    assert f"Codex CLI {n} (+{k} subagent{'' if k == 1 else 's'})" in out.splitlines()[-1]


def test_missing_codex_home_is_absent_zero_not_an_error(tmp_path):
    code, out = run(["list", "--codex-home", str(tmp_path / "none"), "--provider", "codex", "--format", "json"])
    c = codex_cov(jrows(out))
    assert code == 0 and (c["state"], c["sessions"]) == ("absent", 0)


def test_usage_equals_the_usage_the_mock_reported_per_response():
    code, out = run(["usage", "session", "--codex-home", str(HOME), "--provider", "codex", "--format", "json"])
    rows = jrows(out)
    s = rows[-1]
    assert code == 0 and s["kind"] == "summary"
    us = [x["usage"] for g in GT.values() for x in g["responses"]]
    cached = sum(u["input_tokens_details"]["cached_tokens"] for u in us)
    assert s["messages"] == len(us) and s["messages_without_usage"] == 0
    assert s["input_tokens"] == sum(u["input_tokens"] for u in us) - cached
    assert s["cache_read_tokens"] == cached
    assert s["output_tokens"] == sum(u["output_tokens"] for u in us)
    assert s["reasoning_tokens"] == sum(u["output_tokens_details"]["reasoning_tokens"] for u in us)
    assert s["total_tokens"] == sum(u["total_tokens"] for u in us)
    assert s["notes"] == []  # the last running total of every session agrees with its per-response sum


def _root(name: str) -> str:
    return GT[name]["thread_ids_reported"][0]


def _delivered(name: str, conv_prefix: str = "P") -> list[dict]:
    return [c for c in GT[name]["calls"] if c["conversation"].startswith(conv_prefix) and c["delivered"]]


def test_show_a_turn_by_id_prefix_gives_the_scripted_calls_once():
    name = "resumed"
    code, out = run(["show", _root(name)[:13], "--turn", "2", "--codex-home", str(HOME), "--format", "json"])
    rows = [r for r in jrows(out) if r["kind"] == "record"]
    assert code == 0 and rows and all(r["turn"] == 2 and r["provider"] == "codex" for r in rows)
    calls = [r for r in rows if r["record_kind"] == "tool_call" and r["copy_of"] is None]
    want = [c for c in _delivered(name) if c["conversation"] == "P2"]
    assert [(r["call_id"], r["tool_name"]) for r in calls] == [(c["call_id"], c["name"]) for c in want]
    prompts = [r for r in rows if r["record_kind"] == "prompt" and r["copy_of"] is None]
    assert [r["text"] for r in prompts] == [GT[name]["prompts"][1]["text"]]


def test_search_hits_each_recorded_item_once_never_its_ui_echo():
    code, out = run(["search", "check failed: missing config", "--provider", "codex", "--codex-home", str(HOME),
                     "-t", "tool_call", "-t", "tool_result", "--format", "json"])
    hits = [r for r in jrows(out) if r["kind"] == "hit"]
    # the command's arguments (the call) and its output (the result): CommandExecution echoes not again
    assert code == 0 and [(h["record_kind"], h["native"]) for h in hits] == [
        ("tool_call", "response_item/function_call"), ("tool_result", "response_item/function_call_output")]
    assert {h["session_id"] for h in hits} == {_root("failing_command")}


def test_stats_prompts_tools_failures_and_tokens_equal_the_ground_truth():
    code, out = run(["stats", "--provider", "codex", "--codex-home", str(HOME), "--format", "json"])
    rows = {r["session_id"]: r for r in jrows(out) if r["kind"] == "session"}
    assert code == 0
    for name, g in GT.items():
        for tid in g["thread_ids_reported"] + g["spawned_agent_ids"]:
            r = rows[tid]
            conv = "P" if tid in g["thread_ids_reported"] else "agent-"
            calls = _delivered(name, conv)
            want_tools: dict[str, int] = {}
            for c in calls:
                want_tools[c["name"]] = want_tools.get(c["name"], 0) + 1
            assert r["tool_calls"] == want_tools
            failed: dict[str, int] = {}
            for c in calls:
                if (c.get("expect_exit") not in (None, 0)) or c.get("expect_rejected"):
                    failed[c["name"]] = failed.get(c["name"], 0) + 1
            assert r["tool_errors"] == failed
            assert r["prompts"] == (len(g["prompts"]) if conv == "P" else 0)
            assert r["file_changes"] == sum(len(c.get("expect_changes") or []) for c in calls)
        us = [x["usage"] for x in g["responses"]]
        got = [rows[t]["tokens_by_model"].get(g["model"], {}) for t in g["thread_ids_reported"] + g["spawned_agent_ids"]]
        assert sum(t.get("total", 0) for t in got) == sum(u["total_tokens"] for u in us)
        assert sum(t.get("input", 0) for t in got) == sum(
            u["input_tokens"] - u["input_tokens_details"]["cached_tokens"] for u in us)


def test_files_lists_the_recorded_changes_of_every_session():
    code, out = run(["files", "--provider", "codex", "--codex-home", str(HOME), "--format", "json"])
    files = {r["file"]: r for r in jrows(out) if r["kind"] == "file"}
    want: dict[str, dict[str, int]] = {}
    for g in GT.values():
        for c in g["calls"]:
            if c["delivered"]:
                for ch in c.get("expect_changes") or []:
                    want.setdefault(ch["path"], {}).setdefault(ch["action"], 0)
                    want[ch["path"]][ch["action"]] += 1
    # a scripted command writing by redirect (`> data.txt`, `> job.log`) is a shell:write on its file
    for g in GT.values():
        for c in g["calls"]:
            for m in re.findall(r"(?<![0-9&])> ?([\w.]+)", (c.get("arguments") or {}).get("cmd") or ""):
                want.setdefault(f"{g['cwd']}/{m}", {})["shell:write"] = 1
            cmd = (c.get("arguments") or {}).get("cmd") or ""
            if re.fullmatch(r"cat [\w.]+", cmd):  # a shell read, listed as Claude Code's Bash reads are
                ops = want.setdefault(f"{g['cwd']}/{cmd[4:]}", {})
                ops["shell:read"] = ops.get("shell:read", 0) + 1
    # a patch the client rejected changed nothing: counted in `failed`, not `ops`
    fails: dict[str, dict[str, int]] = {}
    for g in GT.values():
        for c in g["calls"]:
            if c.get("expect_rejected"):
                for m in re.findall(r"^\*\*\* Update File: (.+)$", c["input"], re.M):
                    want.setdefault(m, {})
                    fails.setdefault(m, {})["update"] = fails.get(m, {}).get("update", 0) + 1
    assert code == 0 and {f: r["ops"] for f, r in files.items()} == want
    assert {f: r["failed"] for f, r in files.items() if r["failed"]} == fails and fails
    created = [t for r in files.values() for t in r["touches"] if t["action"] == "create"]
    assert created and all(t["has_new_content"] and t["is_error"] is False for t in created)


def test_hostile_prompt_and_cwd_print_as_one_escaped_line(tmp_path):
    """A real rollout whose prompt and cwd were rewritten to carry ESC, BEL, CR, a newline and a bidi
    override (the client writes whatever the user typed and wherever it ran)."""
    import shutil

    src = REPO / "examples" / GT["shell_and_patch"]["example_rollouts"][0]
    hostile = "evil\x1b[31mRED\x07\rover\nnext\u202eeman"
    lines = []
    for ln in src.read_bytes().splitlines():
        o = json.loads(ln)
        p = o.get("payload", {})
        if o["type"] == "session_meta":
            p["cwd"] = "/tmp/" + hostile
        if p.get("type") == "message" and p.get("role") == "user" and "[shell_and_patch P1]" in json.dumps(p):
            p["content"] = [{"type": "input_text", "text": hostile}]
        lines.append(json.dumps(o).encode())
    dst = tmp_path / "h" / "sessions" / "2026" / "12" / "01" / src.name
    dst.parent.mkdir(parents=True)
    dst.write_bytes(b"\n".join(lines) + b"\n")
    shutil.copy2(HOME / "state_5.sqlite", tmp_path / "h" / "state_5.sqlite")  # its title is not hostile
    code, out = run(["list", "--codex-home", str(tmp_path / "h"), "--provider", "codex"])
    assert code == 0
    for bad in ("\x1b", "\x07", "\r", "\u202e"):
        assert bad not in out
    rows = [ln for ln in out.splitlines() if ln.lstrip().startswith("first:")]
    assert len(rows) == 1 and "next" in rows[0]  # the newline did not split the row
