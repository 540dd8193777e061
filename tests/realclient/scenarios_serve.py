"""A scenario for `serve`'s live page, run with the REAL client while the page is open.

`serve_live` (print mode): P1 is answered at once; before P2 the runner waits at a gate (a file the
test creates once the live page is open and connected), then P2 runs with `--resume` and the
client appends its prompt and reply to the same transcript. The test measures how long after the
P2 prompt line reached the disk the page showed it.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from . import client as clientmod
from .common import netns
from .mock_api import Turn, text
from .runner import encode_project_dir, start_scenario
from .scenarios import Prompt, Scenario, register, session_uuid

MODULE = "tests.realclient.scenarios_serve"
GATE = "serve-gate"
"""The file (in the scenario directory, beside work/) whose existence opens the gate."""


class Gate:
    """A `Prompt.before` action that waits (at most 300 s) for the gate file, then goes on."""

    path = ""  # the ground truth reads .path of every `before` action (shell edits); none here

    def command(self, work: Path) -> list[str]:
        gate = Path(work).parent / GATE
        return ["sh", "-c", f"i=0; while [ ! -e '{gate}' ] && [ $i -lt 6000 ]; do sleep 0.05; i=$((i+1)); done"]

    def apply(self, content: str) -> str:
        return content


SERVE_LIVE = register(Scenario(
    name="serve_live",
    mode="print",
    notes="P1 answered at once; a gate (the test opens it once the live page listens) before P2, run with "
          "--resume; P2's reply is delayed 2 s by the mock.",
    prompts=[Prompt("Say hello.", turns=[Turn([text("Hello.")])]),
             Prompt("Say it again.", how="resume", before=[Gate()], turns=[Turn([text("Again.")], delay=2.0)])],
))


def start(name: str, root: Path, version: str = clientmod.PINNED_VERSION) -> subprocess.Popen:
    return start_scenario(name, root, version, module=MODULE)


def stop(proc: subprocess.Popen) -> None:
    netns.stop_group(proc)


def paths(name: str, root: Path) -> dict:
    s_dir = root / name
    work = s_dir / "work"
    cfg = s_dir / "config"
    sid = session_uuid(name)
    return {"config": cfg, "session_id": sid, "gate": s_dir / GATE,
            "transcript": cfg / "projects" / encode_project_dir(str(work)) / f"{sid}.jsonl"}
