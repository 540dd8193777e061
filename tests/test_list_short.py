"""`list` answers short (issue 27): on a real pseudo-terminal the 10 newest sessions, each its line
and first prompt, a child session folded into its parent's line, then how many more and how to see
them (-n N, --all), the sessions line and the per-agent coverage line; --verbose is the listing as it
was (last prompt, last reply, notes, child rows); a pipe gets every session; JSON is complete
wherever it goes. On the bundled samples the real clients wrote (examples/home)."""

from __future__ import annotations

import itertools
import json
import os
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
    assert lines[-4] == "50 more sessions (-n N or --all to list them; --verbose: each one's last prompt, last reply and notes)"
    assert lines[-3].startswith("60 sessions (+9 subagents, +1 helper session); Claude Code: 8 in 8 project dirs")
    # the coverage line (275 cells) broken after a ' · ' to fit the 250 columns
    assert lines[-2].startswith("coverage: Claude Code 8 sessions (+2 subagents) · Codex CLI 6 (+1 subagent) · ")
    assert lines[-2].endswith(" · GitHub Copilot CLI 4 (+1 subagent) ·") and lines[-1] == "  Kilo Code 7 (+1 subagent)"
    assert sum(ln.startswith("  first: ") for ln in lines) == 10
    assert not [ln for ln in lines if ln.startswith(("  last:", "  agent:", "  note:"))]
    assert len(lines) == 27  # was 398 on a 100-column terminal (330 on a pipe)


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


EVIL = "\x1b[31mX\x1b[0m\x07\rY\nZ\u202eW\u2028V"
WIDE_PROMPT = "日本語のプロンプトを書く " * 12 + EVIL
WIDE_CWD = "/tmp/プロジェクト/" + "深い階層/" * 12 + EVIL + "/work"
ESCAPE = re.compile(r"\\(?:u[0-9a-f]{4}|[entr])")
"""An escape `esc` writes; what is left of a line without them holds no backslash (none was cut)."""


def _cells(s: str) -> int:
    import unicodedata

    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in s)


@pytest.fixture(scope="module")
def wide_home(tmp_path_factory) -> Path:
    """examples/claude-home (the real client's transcripts) with one session's first prompt and
    cwd MUTATED to wide characters (two cells each) and control characters, one project dir
    renamed to hold them too: values no client wrote offline, a person's own repository can."""
    import shutil

    home = tmp_path_factory.mktemp("wide") / "claude-home"
    shutil.copytree(REPO / "examples" / "claude-home", home)
    t = home / "projects" / "-tmp-ssift-rc-files-basic-work" / "8414eb07-cca2-5cca-9059-e9baedac31e1.jsonl"
    prompt = "[files_basic P1] Create hello.py and notes.md, then look at seed.txt and pixel.png."

    def mutate(v):
        if isinstance(v, str):
            return WIDE_PROMPT if v == prompt else v.replace("/tmp/ssift-rc/files_basic/work", WIDE_CWD)
        if isinstance(v, dict):
            return {k: mutate(x) for k, x in v.items()}
        if isinstance(v, list):
            return [mutate(x) for x in v]
        return v
    lines = [json.dumps(mutate(json.loads(x)), ensure_ascii=False) for x in t.read_text().splitlines()]
    t.write_text("\n".join(lines) + "\n")
    os.rename(home / "projects" / "-tmp-ssift-rc-interactive-work", home / "projects" / ("-tmp-深い" + EVIL))
    return home


@pytest.mark.parametrize("cols", [80, 120])
def test_every_line_fits_the_terminal_and_escapes_are_never_cut(env, every, wide_home, cols):
    """On 80 and 120 columns no line of `list`, `list --all` or `list -v` is wider than the
    terminal (cells: a wide character takes two): a project is cut keeping its end, a first prompt
    keeping its start, both with an ellipsis and never inside an escape (`\\u202e` whole or
    gone); the agent, size and counts, lineage, totals and the coverage line are broken across
    lines, nothing cut. --verbose shows the project whole (broken across lines); JSON every value."""
    for args in (LIST, LIST + ["--all"], LIST + ["-v"], ["list", "--claude-home", str(wide_home)],
                 ["list", "--claude-home", str(wide_home), "-v"]):
        shown = run_on_terminal(CLI + args, cols=cols, env=env, cwd=REPO)
        assert shown.code == 0, (args, shown.text[-500:])
        lines = _seen(shown.text)
        assert [ln for ln in lines if _cells(ln) > cols] == [], (args, cols)
        assert [ln for ln in lines if "\\" in ESCAPE.sub("", ln)] == [], (args, cols)
        assert "\x1b" not in "".join(lines) and "\u202e" not in "".join(lines)
        cov = max(i for i, ln in enumerate(lines) if ln.startswith("coverage: "))
        assert cov < len(lines) - 1 and all(ln.startswith("  ") for ln in lines[cov + 1:])  # broken, not cut
        if "--claude-home" in args:
            first = next(ln for ln in lines if ln.startswith("  first: 日本語"))
            assert first.endswith("…") and _cells(first) > cols - 12, first  # cut near the edge, in cells
            if "-v" in args:  # the project whole, its lines joined again
                at = next(i for i, ln in enumerate(lines) if ln.startswith("  /tmp/プロジェクト/"))
                whole = lines[at][2:] + "".join(ln[4:] for ln in itertools.takewhile(
                    lambda ln: ln.startswith("    "), lines[at + 1:]))
                assert whole.startswith(_esc(WIDE_CWD)), whole
            else:
                assert any(ln.startswith("  …") and "\\u2028V/work  [Claude Code" in ln for ln in lines)  # its end kept
    j = subprocess.run(CLI + ["list", "--claude-home", str(wide_home), "--format", "json"], capture_output=True,
                       text=True, env=env, cwd=REPO)
    assert j.returncode == 0
    row = next(r for r in map(json.loads, j.stdout.rstrip("\n").split("\n")) if r.get("first_prompt") == WIDE_PROMPT)
    assert row["project"] == WIDE_CWD


def _esc(s: str) -> str:
    from sessionsift.render import esc

    return esc(s)
