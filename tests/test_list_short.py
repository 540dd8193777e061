"""`list` answers short (issue 27): on a real pseudo-terminal the 10 newest sessions, each its line
and first prompt, a child session folded into its parent's line, then how many more and how to see
them (-n N, --all), the sessions line and the per-agent coverage line; --verbose is the listing as it
was (last prompt, last reply, notes, child rows); a pipe gets every session; JSON is complete
wherever it goes. On the bundled samples the real clients wrote (examples/home)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.terminal import CLI, run_on_terminal
from tests.test_newcomer import empty_env

REPO = Path(__file__).resolve().parent.parent
LIST = ["list", "--home", "examples/home"]
SGR = re.compile(r"\x1b\[[0-9;]*m")


def _seen(text: str) -> list[str]:
    """The lines a person is left with: colour stripped, the progress line (stderr, cleared with
    a carriage return and erase-line before the answer) gone."""
    return [ln.rsplit("\r\x1b[K", 1)[-1] for ln in SGR.sub("", text).rstrip("\n").split("\n")]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return empty_env(tmp_path_factory.mktemp("short"))


@pytest.fixture(scope="module")
def every(env):
    p = subprocess.run(CLI + LIST + ["--format", "json"], capture_output=True, text=True, env=env, cwd=REPO)
    assert p.returncode == 0, p.stderr
    return [json.loads(x) for x in p.stdout.splitlines()]


def _sessions(doc):
    return [r for r in doc if r["kind"] == "session"]


def _row_ids(lines, doc) -> list[str]:
    ids = {r["session_id"] for r in _sessions(doc)}
    return [ln.split("  ", 1)[0] for ln in lines if ln.split("  ", 1)[0] in ids]


def test_a_terminal_gets_the_ten_newest_and_how_to_see_the_rest(env, every):
    shown = run_on_terminal(CLI + LIST, cols=250, env=env, cwd=REPO)
    assert shown.code == 0
    lines = _seen(shown.text)
    top = [r for r in _sessions(every) if r["parent_session_id"] is None]
    assert len(top) == 60
    assert _row_ids(lines, every) == [r["session_id"] for r in top[:10]]  # the 10 newest, in order
    assert lines[-3] == "50 more sessions (-n N or --all to list them; --verbose: each one's last prompt, last reply and notes)"
    assert lines[-2].startswith("60 sessions (+9 subagents, +1 helper session); Claude Code: 8 in 8 project dirs")
    assert lines[-1].startswith("coverage: Claude Code 8 sessions (+2 subagents) · Codex CLI 6 (+1 subagent) · ")
    assert sum(ln.startswith("  first: ") for ln in lines) == 10
    assert not [ln for ln in lines if ln.startswith(("  last:", "  agent:", "  note:"))]
    assert len(lines) == 26  # was 398 on a 100-column terminal (330 on a pipe)


def test_all_and_n_show_more_on_a_terminal_with_child_sessions_folded(env, every):
    shown = run_on_terminal(CLI + LIST + ["--all"], cols=250, env=env, cwd=REPO)
    assert shown.code == 0
    lines = _seen(shown.text)
    top = [r for r in _sessions(every) if r["parent_session_id"] is None]
    assert _row_ids(lines, every) == [r["session_id"] for r in top]  # child sessions have no row
    assert not any("more session" in ln for ln in lines)
    crush = next(r for r in top if r["provider"] == "crush" and r["subagents"] == 1)
    line = next(ln for ln in lines if ln.startswith(crush["session_id"]))
    assert line.endswith(", 1 subagent, 1 helper session"), line  # its subagent and its title helper
    n3 = run_on_terminal(CLI + LIST + ["-n", "3"], cols=250, env=env, cwd=REPO)
    assert n3.code == 0 and _row_ids(_seen(n3.text), every) == [r["session_id"] for r in top[:3]]
    both = subprocess.run(CLI + LIST + ["--all", "-n", "3"], capture_output=True, text=True, env=env, cwd=REPO)
    assert both.returncode == 2 and "give one of them" in both.stderr


def test_a_pipe_gets_every_session_short_and_verbose_is_every_detail(env, every):
    p = subprocess.run(CLI + LIST, capture_output=True, text=True, env=env, cwd=REPO)
    assert p.returncode == 0
    lines = p.stdout.rstrip("\n").split("\n")
    top = [r for r in _sessions(every) if r["parent_session_id"] is None]
    assert _row_ids(lines, every) == [r["session_id"] for r in top]
    assert lines[-3] == "--verbose: each session's last prompt, last reply, notes and child sessions"
    assert len(lines) == 146  # was 330
    v = subprocess.run(CLI + LIST + ["--verbose"], capture_output=True, text=True, env=env, cwd=REPO)
    assert v.returncode == 0
    vl = v.stdout.rstrip("\n").split("\n")
    assert _row_ids(vl, every) == [r["session_id"] for r in _sessions(every)]  # child sessions' rows too
    assert sum(ln.startswith("  agent: ") for ln in vl) == len(_sessions(every)) == 68  # Claude Code's subagents are lanes of their session
    assert "  note: no prompt in the session's records" in vl and len(vl) == 330


def test_json_is_complete_on_a_terminal(env, every):
    shown = run_on_terminal(CLI + LIST + ["--format", "json"], cols=100, env=env, cwd=REPO)
    assert shown.code == 0
    doc = [json.loads(x) for x in _seen(shown.text) if x.strip()]
    assert len(_sessions(doc)) == 68
    assert [r["session_id"] for r in _sessions(doc)] == [r["session_id"] for r in _sessions(every)]
