"""What a newcomer sees, on a real pseudo-terminal (tests/terminal.py): a mistyped command gets a
suggestion; on a machine with no agent data, `search`, `usage daily` and `export` say that nothing was
found, what was looked for, and a command that works on the bundled samples -- which does work.
The HOME of these runs is an empty temp directory (the machine "with no agent data")."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from tests.terminal import CLI, run_on_terminal

REPO = Path(__file__).resolve().parent.parent


def empty_env(tmp_path: Path) -> dict:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_", "GEMINI_", "OPENCODE_",
                                                                    "CRUSH_", "QWEN_", "PI_"))}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_CACHE_HOME=str(home / ".cache"), SESSIONSIFT_INDEX_DIR=str(tmp_path / "index"))
    return env


def _suggested(text: str) -> list[str]:
    """The command the note suggests (`sessionsift ... --home examples/home`), as argv."""
    m = re.search(r"sessionsift (.+? --home examples/home)", text)
    assert m, text
    return shlex.split(m.group(1))


def test_a_mistyped_command_gets_a_suggestion(tmp_path):
    shown = run_on_terminal(CLI + ["lsit"], env=empty_env(tmp_path))
    assert shown.code == 2
    assert "Error: No such command 'lsit'. Did you mean 'list'?" in shown.text
    two = run_on_terminal(CLI + ["stast"], env=empty_env(tmp_path))
    assert two.code == 2 and "Did you mean 'stats' or 'status'?" in two.text
    none = run_on_terminal(CLI + ["zzzz"], env=empty_env(tmp_path))
    assert none.code == 2 and "Did you mean" not in none.text


def test_search_on_a_machine_without_agent_data_says_no_match_and_what_was_searched(tmp_path):
    env = empty_env(tmp_path)
    shown = run_on_terminal(CLI + ["search", "P1"], cols=200, env=env)
    assert shown.code == 1
    # the answer first, then the coverage line: each prose, broken across lines of the terminal's width
    first = " ".join(shown.text.split("\ncoverage: ", 1)[0].split())
    assert first.startswith("no match for 'P1': found no session of any agent (looked for Claude Code, Codex CLI")
    assert "\ncoverage: Claude Code absent" in shown.text
    # the suggestion works, from a clone of the repository
    again = run_on_terminal(CLI + _suggested(first), cols=200, env=env, cwd=REPO)
    assert again.code == 0 and "no match" not in again.text and "P1" in again.text
    # with data and no hit: how many sessions were searched
    miss = run_on_terminal(CLI + ["search", "zq-no-such-text-zq", "--home", "examples/home"], cols=200, env=env, cwd=REPO)
    assert miss.code == 1 and re.fullmatch(r"no match for 'zq-no-such-text-zq' in \d+ sessions", miss.lines[0])


def test_usage_on_a_machine_without_agent_data_shows_no_zero_cost(tmp_path):
    env = empty_env(tmp_path)
    shown = run_on_terminal(CLI + ["usage", "daily"], cols=200, env=env)
    assert shown.code == 0
    assert "$0.00" not in shown.text and "total" not in shown.text
    # the note is prose: broken across lines of the terminal's width (one line on a pipe)
    note = " ".join(shown.text.split()).split("no usage found: ", 1)[1]
    assert note.startswith("found no session of any agent")
    works = run_on_terminal(CLI + _suggested(note), cols=200, env=env, cwd=REPO)
    assert works.code == 0 and re.search(r"^total\s", works.text, re.M)


def test_export_on_a_machine_without_agent_data_records_nothing(tmp_path):
    env = empty_env(tmp_path)
    out = tmp_path / "out"
    shown = run_on_terminal(CLI + ["export", "html", "--out", str(out)], cols=200, env=env)
    assert shown.code == 1
    assert "recorded in" not in shown.text and "ledger" not in shown.text
    note = next(ln for ln in shown.lines if ln.startswith("nothing exported: "))
    assert "found no session of any agent" in note and not out.exists()
    argv = [str(out) if a == "DIR" else a for a in _suggested(note)]
    works = run_on_terminal(CLI + argv, cols=200, env=env, cwd=REPO)
    assert works.code == 0 and (out / "index.html").is_file()


@pytest.mark.parametrize("cmd,code", [("list", 0), ("stats", 0), ("status", 1)])
def test_list_stats_status_on_a_machine_without_agent_data_say_so_and_how_to_see_it_work(tmp_path, cmd, code):
    """The first commands a person types, on a machine where no agent left data: each says it found
    no session of any agent and suggests the bundled samples, and that suggestion answers from a
    clone. Before: `list` said only `0 sessions; read 0 of 0 bytes`, `stats` only the coverage line,
    `status` only `no sessions in scope` (exit statuses unchanged: list and stats 0, status 1)."""
    env = empty_env(tmp_path)
    shown = run_on_terminal(CLI + [cmd], cols=400, env=env)
    assert shown.code == code, shown.text[-300:]
    # the note is prose: broken across lines of the terminal's width
    flat = " ".join(shown.text.split())
    assert "no sessions: found no session of any agent (looked for Claude Code, Codex CLI" in flat, flat[:300]
    argv = _suggested(flat.split("no sessions: ", 1)[1])
    assert argv == [cmd, "--home", "examples/home"]
    works = run_on_terminal(CLI + argv, cols=400, env=env, cwd=REPO)
    assert works.code == 0 and "found no session" not in works.text
    assert "coverage: Claude Code 8 sessions (+2 subagents) · Codex CLI 6 (+1 subagent)" in works.text


def _readme_section(title: str) -> str:
    text = (REPO / "README.md").read_text()
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_readme_table_names_every_command():
    from sessionsift.cli import COMMANDS

    table = _readme_section("What it answers")
    named = set(re.findall(r"`([a-z]+)[ `\\]", table))
    assert set(COMMANDS) <= named, sorted(set(COMMANDS) - named)


def test_readme_own_machine_steps_run(tmp_path):
    """Each command of "On your own machine", run as written with HOME holding agent data (a copy of
    examples/home: the agents' default folders under it), on a terminal: each answers (exit 0)."""
    import shutil

    steps = re.findall(r"^(sessionsift [^#\n]+?)\s*(?:#.*)?$", _readme_section("On your own machine"), re.M)
    steps = [s for s in steps if "_COMPLETE" not in s]
    assert len(steps) >= 4, steps
    env = empty_env(tmp_path)
    shutil.copytree(REPO / "examples" / "home", env["HOME"], dirs_exist_ok=True, symlinks=False)
    for step in steps:
        argv = [os.path.expanduser(a).replace(os.path.expanduser("~"), env["HOME"]) for a in shlex.split(step)[1:]]
        shown = run_on_terminal(CLI + argv, cols=200, env=env)
        assert shown.code == 0, (step, shown.text[-600:])
        assert "found no session" not in shown.text, step


def test_shell_completion_is_documented_and_completes_session_ids(tmp_path):
    import subprocess

    section = _readme_section("On your own machine")
    for shell in ("bash", "zsh", "fish"):
        assert f"_SESSIONSIFT_COMPLETE={shell}_source sessionsift" in section
    env = empty_env(tmp_path)
    src = subprocess.run(CLI, env={**env, "_SESSIONSIFT_COMPLETE": "bash_source"}, capture_output=True, text=True)
    assert src.returncode == 0 and "complete -o nosort -F _sessionsift_completion sessionsift" in src.stdout
    words = "sessionsift show --home examples/home 8414"
    p = subprocess.run(CLI, env={**env, "_SESSIONSIFT_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": "4"},
                       capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 0 and p.stdout.split() == ["plain,8414eb07-cca2-5cca-9059-e9baedac31e1"]
    # every provider's ids, with --home: a Codex id (the sample rollouts' ids begin 01a2)
    p = subprocess.run(CLI, env={**env, "_SESSIONSIFT_COMPLETE": "zsh_complete",
                                 "COMP_WORDS": "sessionsift stats --home examples/home 01a230e8-d031", "COMP_CWORD": "4"},
                       capture_output=True, text=True, cwd=REPO)
    got = p.stdout.split("\n")
    assert p.returncode == 0 and got[:2] == ["plain", "01a230e8-d031-71b0-ae41-dcc5226ed314"] and got[2].startswith("codex ")
