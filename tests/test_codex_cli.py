"""The CLI over the Codex CLI reader, on the committed real-client corpus examples/codex-home.

Expected figures come from the ground truth the driving script wrote (examples/codex-ground-truth),
never from the reader. (show/search/stats/files join here once they read through the providers
layer.)
"""
from __future__ import annotations

import io
import json
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
    assert codex_cov(rows) == {**codex_cov(rows), "state": "ok", "sessions": len(want_ids)}
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
    assert code in (0, 3)
    n = sum(len(g["thread_ids_reported"] + g["spawned_agent_ids"]) for g in GT.values())
    assert out.rstrip().splitlines()[-1].startswith("coverage: ") and f"Codex CLI {n}" in out.splitlines()[-1]


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
