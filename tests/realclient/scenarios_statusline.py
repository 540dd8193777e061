"""A real-client scenario for `sessionsift statusline`: the interactive client with a `statusLine`
command in its settings that saves each JSON object Claude Code hands it on stdin (and prints a
marker line the pane shows). Two prompts are answered, so the status line is run after real turns
with the client's own cost meter and a transcript on disk; `tests/test_statusline.py` then runs
`sessionsift statusline` on the saved objects against the scenario's own transcripts.

Registered into the harness's registry like scenarios_census (same Inner: settings merged into the
scenario's `settings.json`)."""
from __future__ import annotations

import sys
from pathlib import Path

from . import runner
from .mock_api import Turn, text, tool
from .scenarios import Prompt, register
from .scenarios_census import CensusInner, CensusScenario

MODULE = "tests.realclient.scenarios_statusline"
SAVED = "statusline-input"
"""Directory (in the scenario's $CLAUDE_CONFIG_DIR) the hook command saves each input to."""
MARK = "SL-CAPTURED"

# the command runs through the client's shell with its environment ($CLAUDE_CONFIG_DIR set)
COMMAND = (f'mkdir -p "$CLAUDE_CONFIG_DIR/{SAVED}" && '
           f'cat > "$CLAUDE_CONFIG_DIR/{SAVED}/$(date +%s%N).json" && echo {MARK}')

STATUSLINE = register(CensusScenario(
    name="statusline",
    mode="interactive",
    notes="statusLine set to a command that saves its stdin: the client runs it after the turns of two "
          "answered prompts (one with a Bash call).",
    settings={"statusLine": {"type": "command", "command": COMMAND}},
    prompts=[
        Prompt("Say hello.", turns=[Turn([text("Hello.")])]),
        Prompt("List the files.", turns=[Turn([tool("Bash", command="ls", description="List files")]),
                                          Turn([text("Listed.")])]),
    ],
    final_settle=3.0,
))

ALL = {"statusline": STATUSLINE}


def inside(name: str, root: Path, exe: str) -> None:
    runner.inside(name, root, exe, inner_cls=CensusInner)


def run(root: Path, timeout: float = 300) -> dict:
    """Run the scenario inside `unshare -n`; return its ground truth."""
    return runner.run_scenario("statusline", root, timeout=timeout, module=MODULE)


if __name__ == "__main__":
    sys.exit(runner.main(module=MODULE))
