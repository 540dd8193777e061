"""Scenarios for the live-state commands (status / wait / agents), run with the REAL client.

These need the client to be observed WHILE it runs, so besides registering scenarios this module
has its own launcher: `start(name, root)` starts the scenario in a new network namespace and
returns the running process without waiting (the pid namespace is shared, so the client's pid in
`<config>/sessions/<pid>.json` can be probed - and SIGKILLed - from outside).

The launch itself is the harness's (runner.start_scenario with module=MODULE).
"""
from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from . import client as clientmod
from .common import netns
from .runner import encode_project_dir, start_scenario
from .mock_api import Turn, text, tool
from .scenarios import Prompt, Scenario, register, session_uuid

MODULE = "tests.realclient.scenarios_live"

LIVE_HOLD = register(Scenario(
    name="live_hold",
    mode="interactive",
    notes="A foreground Bash `sleep 20` holds the turn busy (registry busy, unreturned tool_use at the tail); "
          "the live test SIGKILLs the client during it.",
    prompts=[Prompt("Run the slow command.", turns=[
        Turn([tool("Bash", command="sleep 20; echo held", description="Held busy")]),
        Turn([text("Done.")]),
    ])],
))

LIVE_WAIT = register(Scenario(
    name="live_wait",
    mode="print",
    notes="The final text turn is delayed 6 s by the mock, so `wait --until stop` must block until it lands.",
    prompts=[Prompt("Say something after a pause.", turns=[
        Turn([tool("Bash", command="echo tick", description="Tick")]),
        Turn([text("Finished after the pause.")], delay=6.0),
    ])],
))

LIVE_BG_DONE = register(Scenario(
    name="live_bg_done",
    mode="print",
    notes="One background Bash that completes inside the turn (its notification lands while the turn runs).",
    prompts=[Prompt("Start a quick background job and wait for it.", turns=[
        Turn([tool("Bash", command="sleep 0.3; echo bg-done", description="Quick background job",
                   run_in_background=True)]),
        Turn([tool("Bash", command="sleep 2; echo waited", description="Wait for it")]),
        Turn([text("The background job finished.")]),
    ])],
))

LIVE_PERMISSION = register(Scenario(
    name="live_permission",
    mode="interactive",
    bypass=False,
    notes="A Write without --dangerously-skip-permissions: the TUI asks 'Do you want to create approved.txt?' and "
          "the harness answers (Enter: yes) only once the test releases gate `approve` (the session waits on a "
          "human meanwhile).",
    answers=[("Do you want to create approved.txt?", ["Enter"], "approve")],
    prompts=[Prompt("Write the file once it is approved.", turns=[
        Turn([tool("Write", file_path="{W}/approved.txt", content="approved\n")]),
        Turn([text("Written after the approval.")]),
    ])],
))


PY = shlex.quote(sys.executable)  # the venv python that runs the tests (absolute: the client's env is env -i)

LIVE_WHOAMI = register(Scenario(
    name="live_whoami",
    mode="print",
    notes="The Bash tool runs `sessionsift whoami` inside the client (its real CLAUDE_CODE_SESSION_ID and "
          "CLAUDE_CONFIG_DIR), writing the JSON to whoami.json in the work dir.",
    prompts=[Prompt("Say who you are.", turns=[
        Turn([tool("Bash", command=f"{PY} -m sessionsift whoami --format json > whoami.json; echo recorded",
                   description="Who am I")]),
        Turn([text("Recorded.")]),
    ])],
))


def start(name: str, root: Path, version: str = clientmod.PINNED_VERSION) -> subprocess.Popen:
    """Start scenario `name` under `root` in `unshare -n`; return the running runner process."""
    return start_scenario(name, root, version, module=MODULE)


def stop(proc: subprocess.Popen) -> None:
    """End a runner started by `start` (its own process group, by id) and reap it."""
    netns.stop_group(proc)


def paths(name: str, root: Path) -> dict:
    s_dir = root / name
    work = s_dir / "work"
    cfg = s_dir / "config"
    sid = session_uuid(name)
    return {"config": cfg, "session_id": sid,
            "transcript": cfg / "projects" / encode_project_dir(str(work)) / f"{sid}.jsonl"}
