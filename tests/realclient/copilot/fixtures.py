"""pytest fixtures for tests on data written by the REAL GitHub Copilot CLI (offline).

* ``copilot_corpus`` (session scope): runs the sample scenarios (scenarios.SAMPLE) once with the pinned
  client into a temp root, two at a time, and returns ``{scenario: CopilotRun}``;
* ``copilot_examples``: the committed sample (examples/copilot-home + its ground truth).

A missing prerequisite skips naming it; under ``CI=true`` it fails instead. The client and its unpacked
bundle (~235 MB) are cached outside the clone (client.py) and reused by every run.
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
class CopilotRun:
    name: str
    home: Path
    """The COPILOT_HOME the run wrote (``<scenario>/home/.copilot``, or the sample's copilot-home)."""
    truth: dict

    @property
    def session_id(self) -> str:
        return self.truth["session_ids_on_disk"][0]


def require_copilot(version: str = clientmod.PINNED_VERSION) -> Path:
    return host.require(clientmod, version, "GitHub Copilot CLI real-client")


def run_copilot_corpus(root: Path, names=SAMPLE, version: str = clientmod.PINNED_VERSION,
                       jobs: int = 2) -> dict[str, CopilotRun]:
    from .runner import run_scenario

    require_copilot(version)
    truths = host.run_parallel(lambda n: run_scenario(n, root, version), names, jobs)
    return {t["scenario"]: CopilotRun(t["scenario"], Path(t["copilot_home"]), t) for t in truths}


@pytest.fixture(scope="session")
def copilot_corpus(tmp_path_factory) -> dict[str, CopilotRun]:
    return run_copilot_corpus(tmp_path_factory.mktemp("copilot-rc"))


@pytest.fixture(scope="session")
def copilot_examples() -> dict[str, CopilotRun]:
    home = EXAMPLES / "copilot-home"
    gt = EXAMPLES / "copilot-ground-truth"
    if not (home / "session-state").is_dir():
        pytest.fail("examples/copilot-home is missing: run `.venv/bin/python -m tests.realclient.copilot.make_examples`")
    out = {}
    for f in sorted(gt.glob("*.json")):
        t = json.loads(f.read_text())
        out[t["scenario"]] = CopilotRun(t["scenario"], home, t)
    return out
