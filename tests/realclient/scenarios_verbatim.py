"""Real-client scenarios for `verbatim` and its SessionStart(compact) hook recipe.

One interactive session (tmux), compacted TWICE with a manual `/compact`, with the shipped hook
(hooks/settings.snippet.json via hooks/install_verbatim_hook.py) installed in the scenario's own
CLAUDE_CONFIG_DIR/settings.json. Both compactions fire SessionStart(compact), so the transcript
ends up carrying our reconstruction as `hook_additional_context` attachments twice: once for a
session compacted once, once for a session compacted twice.

The harness's runner launches it (`runner.run_scenario(..., module=MODULE)`) and, inside `unshare -n`,
calls this module's own `inside()`, which reuses the harness's Inner/MockAnthropic and adds the hook
install step between `prepare()` and the run: the client reaches loopback only.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from . import client as clientmod
from . import runner
from .common import netns
from .common.truth import routes as mock_routes
from .mock_api import MockAnthropic, Turn, text, tool
from .scenarios import Prompt, Scenario, W

REPO = Path(__file__).resolve().parents[2]
MODULE = "tests.realclient.scenarios_verbatim"
TRUTH_FILE = "verbatim-truth.json"  # what runner.run_scenario returns for this module
PYTHON = str(REPO / ".venv" / "bin" / "python")

P1_TEXT = ("Read notes.txt and write a plan in plan.md. Keep the headings short; the audience is the "
           "on-call engineer, so say what to check first.")
LONG_AGENT = ("Here is what I found in notes.txt. " + " ".join(
    f"Point {i}: the service restarts when the queue depth passes {i * 100} items and the retry budget is spent."
    for i in range(1, 9)))
SUMMARY = ("Summary:\n1. Primary Request and Intent: plan and edit notes.\n"
           "6. All user messages:\n"
           f"   - \"[verbatim_twice P1] {P1_TEXT}\"\n"
           "   - \"[verbatim_twice P2] Shorten plan.md ...\"\n"
           "9. Optional Next Step: continue where the conversation left off.")

VERBATIM_TWICE = Scenario(
    name="verbatim_twice",
    mode="interactive",
    notes="Interactive session compacted twice with /compact, with the verbatim SessionStart(compact) hook "
          "(6 slots) installed; prompt 1 gets a long agent message followed by a short closing one; the "
          "scripted summary quotes prompt 1 verbatim.",
    setup_files={"notes.txt": b"queue depth alarms\nretry budget\n"},
    summary=SUMMARY,
    prompts=[
        Prompt(P1_TEXT, turns=[
            Turn([tool("Read", file_path=f"{W}/notes.txt")]),
            Turn([text(LONG_AGENT),
                  tool("Write", file_path=f"{W}/plan.md", content="# Plan\n\n1. Check queue depth.\n")]),
            Turn([text("Wrote plan.md.")]),
        ]),
        Prompt("Shorten plan.md to one line, and tell me what you changed in two sentences.", turns=[
            Turn([tool("Edit", file_path=f"{W}/plan.md", old_string="# Plan\n\n", new_string="")]),
            Turn([text("Removed the heading. plan.md is now a single checklist line.")]),
        ]),
        Prompt("/compact", slash=True, wait_route="compact", settle=4.0),
        Prompt("Add a second line about the retry budget. Emoji check: 🚀 and CJK 東京 stay intact.", turns=[
            Turn([tool("Edit", file_path=f"{W}/plan.md", old_string="1. Check queue depth.\n",
                       new_string="1. Check queue depth.\n2. Check the retry budget.\n")]),
            Turn([text("Added line 2 about the retry budget (🚀 東京 noted).")]),
        ]),
        Prompt("/compact", slash=True, wait_route="compact", settle=4.0),
        Prompt("What does plan.md say now?", turns=[
            Turn([text("plan.md has two lines: check queue depth, then check the retry budget.")]),
        ]),
    ],
)

ALL = {s.name: s for s in [VERBATIM_TWICE]}


# ============================================================================ outer


def run_verbatim_scenario(name: str, root: Path | None = None, timeout: float = 400) -> dict:
    """Run scenario `name` inside `unshare -n`; return a small ground truth (TRUTH_FILE)."""
    if not Path(PYTHON).exists():
        raise clientmod.PrerequisiteMissing(f"no project venv python at {PYTHON}")
    return runner.run_scenario(name, root, timeout=timeout, module=MODULE)


# ============================================================================ inner


# A small slice window, so that even this short session is injected as several slices (the order
# and the seams between slices are what the test checks); the shipped default is 9,000.
HOOK_WINDOW = 700


def install_hook(config_dir: Path) -> str:
    """Install the shipped hook into this scenario's settings.json with the shipped installer."""
    r = subprocess.run([PYTHON, str(REPO / "hooks" / "install_verbatim_hook.py"), "--settings",
                        str(config_dir / "settings.json"), "--python", PYTHON, "--window", str(HOOK_WINDOW)],
                       capture_output=True, text=True, check=True)
    return r.stdout.strip()


def inside(name: str, root: Path, exe: str) -> None:
    netns.loopback_up()
    sc = ALL[name]
    inner = runner.Inner(sc, root, exe)
    inner.prepare()
    installed = install_hook(inner.s_dir / "config")
    t0 = time.time()
    with MockAnthropic(inner.script, str(inner.s_dir / "mock-requests.jsonl")) as mock:
        inner.run_interactive(mock)
        time.sleep(0.3)
        routes = mock_routes(mock.requests)
    netns.kill_leftovers(inner.s_dir)
    proj = inner.s_dir / "config" / "projects" / runner.encode_project_dir(str(inner.work))
    truth = {
        "scenario": name,
        "session_id": inner.sid,
        "config_dir": str(inner.s_dir / "config"),
        "transcript": str(proj / f"{inner.sid}.jsonl"),
        "hook_install": installed,
        "hook_window": HOOK_WINDOW,
        "prompts": [sc.prompt_text(i) for i in range(len(sc.prompts))],
        "mock_routes": routes,
        "seconds": round(time.time() - t0, 1),
        "client_version": clientmod.client_version(Path(exe)),
    }
    (inner.s_dir / TRUTH_FILE).write_text(json.dumps(truth, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(runner.main(module=MODULE, scenario=VERBATIM_TWICE.name))
