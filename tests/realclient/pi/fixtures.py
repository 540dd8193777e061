"""pytest fixtures for tests on data written by the REAL pi client (offline).

* ``pi_corpus`` (session scope): runs the sample scenarios (scenarios.SAMPLE) once with the pinned
  client into a temp root, two at a time, and returns ``{scenario: PiRun}``.
* ``pi_examples``: the committed sample (examples/pi-home + examples/pi-ground-truth).

A missing prerequisite skips naming it; under ``CI=true`` it fails instead.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import client as clientmod
from ..common import host
from .scenarios import SAMPLE

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"


@dataclass
class PiRun:
    name: str
    agent_dir: Path
    truth: dict

    @property
    def session_ids(self) -> list[str]:
        return [s["id"] for s in self.truth["sessions"]]


def require_pi(version: str = clientmod.PINNED_VERSION) -> Path:
    return host.require(clientmod, version, "pi real-client")


def run_pi_corpus(root: Path, names=SAMPLE, version: str = clientmod.PINNED_VERSION, jobs: int = 2) -> dict[str, PiRun]:
    from .runner import run_scenario

    require_pi(version)
    truths = host.run_parallel(lambda n: run_scenario(n, root, version), names, jobs)
    return {t["scenario"]: PiRun(t["scenario"], Path(t["agent_dir"]), t) for t in truths}


@pytest.fixture(scope="session")
def pi_corpus(tmp_path_factory) -> dict[str, PiRun]:
    return run_pi_corpus(tmp_path_factory.mktemp("pi-rc"))


@pytest.fixture(scope="session")
def pi_examples() -> dict[str, PiRun]:
    home = EXAMPLES / "pi-home"
    gt = EXAMPLES / "pi-ground-truth"
    if not (home / "sessions").is_dir():
        pytest.fail("examples/pi-home is missing: run `.venv/bin/python -m tests.realclient.pi.make_examples`")
    out = {}
    for f in sorted(gt.glob("*.json")):
        t = json.loads(f.read_text())
        out[t["scenario"]] = PiRun(t["scenario"], home, t)
    return out
