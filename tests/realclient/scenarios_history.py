"""Real-client scenario for usage whose history the client deleted: Claude Code sweeps transcripts
older than `cleanupPeriodDays` at startup while `history.jsonl` keeps the prompts typed
in the TUI. What it produces with the pinned client, offline:

- `history_cleanup`: an interactive session A (two prompts, each one response with usage), then
  its transcripts are made 10 days old (their mtime: what the client's sweep reads), and a second
  session B starts in print mode with `cleanupPeriodDays: 1` in the user settings: the client's own
  sweep removes A's transcript; `history.jsonl` still holds A's two prompts (print-mode prompts
  are not written to it). 2.1.258 runs the sweep from its background housekeeping 5 s after
  launch (once a day: `.last-cleanup`), so B runs a 7 s Bash call; a run that ends sooner
  deletes nothing.

The ageing is the only step not the client's (no offline run can wait ten days); the deletion is.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from . import runner
from .mock_api import Turn, text, tool
from .scenarios import Prompt, W, register
from .scenarios_census import CensusScenario, inside  # noqa: F401  (inside: run by the runner)

MODULE = "tests.realclient.scenarios_history"
AGE_DAYS = 10


class AgeTranscripts:
    """A `Prompt.before` action: every transcript under the scenario's config dir gets an mtime
    `days` days back (the client's sweep compares the mtime with now - cleanupPeriodDays)."""

    path = ""  # the ground truth reads .path of every `before` action (shell edits); none here

    def __init__(self, days: int):
        self.days = days

    def command(self, work) -> list[str]:
        cfg = Path(work).parent / "config" / "projects"
        return ["find", str(cfg), "-name", "*.jsonl", "-exec", "touch", "-d", f"@{int(time.time()) - self.days * 86400}",
                "{}", "+"]

    def apply(self, content: str) -> str:
        return content


HISTORY_CLEANUP = register(CensusScenario(
    name="history_cleanup",
    mode="interactive",
    notes="Session A typed in the TUI (2 prompts, history.jsonl), its transcripts aged 10 days, then session B "
          "(print mode) starts with cleanupPeriodDays 1: the client's startup sweep deletes A's transcript; "
          "history.jsonl keeps A's prompts.",
    settings={"cleanupPeriodDays": 1},
    prompts=[
        Prompt("Write the notes.", turns=[
            Turn([tool("Write", file_path=f"{W}/notes.txt", content="notes\n")]),
            Turn([text("Wrote notes.txt.")]),
        ]),
        Prompt("Say what you wrote.", turns=[Turn([text("notes.txt holds one line.")])]),
        Prompt("A later session, days after.", how="fresh", before=[AgeTranscripts(AGE_DAYS)], turns=[
            # the client's housekeeping (the sweep) starts 5 s after launch: a Bash call that
            # takes 7 s keeps this print-mode run alive past it, as a real session would be
            Turn([tool("Bash", command="sleep 7", description="Wait")]),
            Turn([text("Hello again.")]),
        ]),
    ],
    final_settle=0.5,
))

ALL = {HISTORY_CLEANUP.name: HISTORY_CLEANUP}


def run_history_scenario(root: Path | None = None, timeout: float = 300) -> dict:
    return runner.run_scenario(HISTORY_CLEANUP.name, root, timeout=timeout, module=MODULE)


if __name__ == "__main__":
    sys.exit(runner.main(module=MODULE))
