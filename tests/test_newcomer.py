"""What a newcomer sees, on a real pseudo-terminal (tests/terminal.py): a mistyped command gets a
suggestion; on a machine with no agent data, `search`, `usage daily` and `export` say that nothing was
found, what was looked for, and a command that works on the bundled samples -- which does work.
The HOME of these runs is an empty temp directory (the machine "with no agent data")."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

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
