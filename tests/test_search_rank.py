"""`search --rank` (issue 25 item 3): BM25 over whole turns, for every agent.

Data: examples/home -- sessions written by the real clients offline (Crush's database is built by
Crush's own migrations from a scripted run: tests/crush/, Crush cannot run here). The known turn
of each agent is a session's LAST prompt as `list` reports it (a turn after the first, so the
turn numbering is tested too); `show SID --turn N` of the hit must print that prompt.
The append/rewrite cases cut a real transcript where the client wrote its second prompt: the file
as it stood mid-session (nothing hand-made), then the rest of the client's bytes appended.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HOME = REPO / "examples" / "home"
AGENTS = ("claude-code", "codex", "gemini-cli", "opencode", "crush", "pi", "qwen-code", "copilot-cli", "kilo-code")


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO, env={**os.environ, **(env or {})})


def jrows(p) -> list[dict]:
    return [json.loads(x) for x in p.stdout.splitlines()]


def _known_turns() -> dict[str, tuple[str, str]]:
    """agent -> (session id, its last prompt) of one session with more than one prompt."""
    rows = jrows(cli("list", "--home", str(HOME), "--format", "json"))
    out: dict[str, tuple[str, str]] = {}
    for r in rows:
        if r["kind"] != "session" or r["is_subagent"] or not r.get("last_prompt"):
            continue
        if r["first_prompt"] != r["last_prompt"] and r["provider"] not in out:
            out[r["provider"]] = (r["session_id"], r["last_prompt"])
    return out


KNOWN = _known_turns()


def test_every_agent_has_a_known_turn_after_the_first():
    assert sorted(KNOWN) == sorted(AGENTS)


@pytest.mark.parametrize("agent", AGENTS)
def test_the_words_of_a_known_turn_rank_it_first(agent, tmp_path):
    sid, prompt = KNOWN[agent]
    env = {"SESSIONSIFT_INDEX_DIR": str(tmp_path / "idx")}
    p = cli("search", "--rank", prompt, "--home", str(HOME), "--provider", agent, "--format", "json", env=env)
    assert p.returncode == 0, p.stderr
    rows = jrows(p)
    turns = [r for r in rows if r["kind"] == "turn"]
    sm = rows[-1]
    assert sm["kind"] == "summary" and sm["ranked_by"] == "index" and sm["index_off"] is None
    assert turns[0]["session_id"] == sid and turns[0]["provider"] == agent and turns[0]["rank"] == 1
    assert turns[0]["turn"] > 1
    assert turns[0]["score"] > 0 and all(a["score"] >= b["score"] for a, b in zip(turns, turns[1:]))
    # the turn is show --turn's: its command prints the prompt the words came from
    cmd = turns[0]["show"].split()
    assert cmd[:2] == ["sessionsift", "show"]
    shown = cli(*cmd[1:])
    assert shown.returncode == 0, shown.stderr
    assert prompt.strip('"')[:40] in shown.stdout
    # the second run reads nothing: every session is fresh in the index
    again = jrows(cli("search", "--rank", prompt, "--home", str(HOME), "--provider", agent, "--format", "json",
                      env=env))
    assert again[-1]["sessions_read"] == 0 and sm["sessions_read"] == sm["sessions"] + sm["child_sessions"]
    assert [r["session_id"] for r in again if r["kind"] == "turn"] == [r["session_id"] for r in turns]


def test_over_every_agent_the_turn_with_a_rare_word_ranks_first_and_text_names_it(tmp_path):
    env = {"SESSIONSIFT_INDEX_DIR": str(tmp_path / "idx")}
    sid, prompt = KNOWN["gemini-cli"]  # '[rewind P3] Instead, write other.txt.' or the like
    p = cli("search", "--rank", prompt, "--home", str(HOME), "-n", "3", env=env)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith(f"1. score ") and sid in lines[0] and "[Gemini CLI]" in lines[0]
    assert sum(1 for x in lines if re.match(r"\d+\. score ", x)) == 3
    assert re.search(r"^3 of \d+ matching turns \(BM25 over \d+ turns of \d+ sessions", p.stdout, re.M)


def test_index_off_ranks_by_a_scan_and_says_why(tmp_path):
    sid, prompt = KNOWN["codex"]
    env = {"SESSIONSIFT_INDEX_DIR": str(tmp_path / "idx")}
    p = cli("search", "--rank", prompt, "--home", str(HOME), "--no-index", "--format", "json", env=env)
    assert p.returncode == 0, p.stderr
    rows = jrows(p)
    assert rows[-1]["ranked_by"] == "scan" and rows[-1]["index_off"] == "--no-index"
    assert rows[-1]["index"]["path"] is None
    assert [r for r in rows if r["kind"] == "turn"][0]["session_id"] == sid
    assert not (tmp_path / "idx").exists()  # --no-index writes no index


def test_an_index_inside_the_data_root_is_not_used_and_the_answer_says_so(tmp_path):
    home = tmp_path / "home"
    shutil.copytree(HOME / ".codex", home / ".codex")
    env = {"SESSIONSIFT_INDEX_DIR": str(home / ".codex" / "idx")}
    sid, prompt = KNOWN["codex"]
    p = cli("search", "--rank", prompt, "--codex-home", str(home / ".codex"), env=env)
    assert p.returncode == 0, p.stderr
    assert "ranked by a scan (index off: the index directory" in p.stdout
    assert not (home / ".codex" / "idx").exists()


def test_no_match_says_what_was_ranked_over(tmp_path):
    env = {"SESSIONSIFT_INDEX_DIR": str(tmp_path / "idx")}
    p = cli("search", "--rank", "zqxjv wvkpq", "--home", str(HOME), env=env)
    assert p.returncode == 1, p.stderr
    assert re.match(r"no turn holds any of the words zqxjv, wvkpq in \d+ sessions \(\d+ turns\); "
                    r"ranked by the index$", p.stdout.splitlines()[0])


@pytest.mark.parametrize("argv", [["--rank", "..."], ["--rank", "x", "-c"], ["--rank", "x", "-t", "user"],
                                  ["x", "-n", "3"], ["--rank", "x", "-n", "0"]])
def test_usage_errors(argv, tmp_path):
    p = cli("search", *argv, "--home", str(HOME), env={"SESSIONSIFT_INDEX_DIR": str(tmp_path / "idx")})
    assert p.returncode == 2, (p.stdout, p.stderr)


def _cut_at_second_prompt(src: Path) -> tuple[bytes, bytes]:
    """(the transcript up to the line of its second prompt, the rest), as the client wrote it."""
    data = src.read_bytes()
    lines = data.splitlines(keepends=True)
    seen = 0
    for i, ln in enumerate(lines):
        if b"[edit_continue P2]" in ln:
            seen += 1
            if seen == 1:
                return b"".join(lines[:i]), b"".join(lines[i:])
    raise AssertionError("no second prompt")


def test_an_append_adds_its_turns_and_a_rewrite_removes_them(tmp_path):
    home = tmp_path / "home"
    shutil.copytree(HOME / ".qwen", home / ".qwen")
    env = {"SESSIONSIFT_INDEX_DIR": str(tmp_path / "idx")}
    (sid, prompt), = [(r["session_id"], r["last_prompt"]) for r in jrows(cli("list", "--home", str(HOME), "--format",
                      "json")) if r["kind"] == "session" and r["provider"] == "qwen-code"
                      and "[edit_continue P2]" in (r["last_prompt"] or "")]
    (path,) = [p for p in (home / ".qwen").rglob(f"{sid}.jsonl")]
    head, tail = _cut_at_second_prompt(path)
    path.write_bytes(head)

    def ask() -> tuple[list[dict], dict]:
        p = cli("search", "--rank", prompt, "--qwen-home", str(home / ".qwen"), "--format", "json", env=env)
        assert p.returncode == 0, p.stderr  # every call ranks a turn of this session (asserted below)
        rows = jrows(p)
        return [r for r in rows if r["kind"] == "turn" and r["session_id"] == sid], rows[-1]

    mine, sm = ask()
    assert [r["turn"] for r in mine] == [1]  # the session holds one turn yet
    with open(path, "ab") as f:
        f.write(tail)
    mine, sm = ask()
    assert mine[0]["turn"] == 2 and sm["sessions_read"] == 1
    assert sm["turns_added"] >= 1 and sm["turns_removed"] == 0  # turn 1 unchanged: kept, not re-added
    path.write_bytes(head)  # rewritten: turn 2 is gone from the file, and from the index
    mine, sm = ask()
    assert [r["turn"] for r in mine] == [1] and sm["sessions_read"] == 1 and sm["turns_removed"] == 1


def test_index_clear_all_removes_the_ranked_database(tmp_path):
    env = {"SESSIONSIFT_INDEX_DIR": str(tmp_path / "idx")}
    assert cli("search", "--rank", "hello", "--home", str(HOME), "--provider", "codex", env=env).returncode == 0
    (db,) = list((tmp_path / "idx").rglob("ranked.sqlite"))
    p = cli("index", "clear", "--all", env=env)
    assert p.returncode == 0, p.stderr
    assert not db.exists() and not list((tmp_path / "idx").rglob("ranked.sqlite*"))
