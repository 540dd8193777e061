"""pytest fixtures for tests on data written by the REAL Qwen Code client (offline).

* ``qwen_corpus`` (session scope): runs the sample scenarios (scenarios.SAMPLE) once with the pinned
  client into a temp root, two at a time, and returns ``{scenario: QwenRun}``.
* ``qwen_examples``: the committed sample (examples/qwen-home + examples/qwen-ground-truth).

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
class QwenRun:
    name: str
    qwen_dir: Path
    truth: dict

    @property
    def session_ids(self) -> list[str]:
        return [s["id"] for s in self.truth["sessions"]]


def require_qwen(version: str = clientmod.PINNED_VERSION) -> Path:
    return host.require(clientmod, version, "Qwen Code real-client")


def run_qwen_corpus(root: Path, names=SAMPLE, version: str = clientmod.PINNED_VERSION, jobs: int = 2) -> dict[str, QwenRun]:
    from .runner import run_scenario

    require_qwen(version)
    truths = host.run_parallel(lambda n: run_scenario(n, root, version), names, jobs)
    return {t["scenario"]: QwenRun(t["scenario"], Path(t["qwen_dir"]), t) for t in truths}


@pytest.fixture(scope="session")
def qwen_corpus(tmp_path_factory) -> dict[str, QwenRun]:
    return run_qwen_corpus(tmp_path_factory.mktemp("qwen-rc"))


@pytest.fixture(scope="session")
def qwen_examples() -> dict[str, QwenRun]:
    home = EXAMPLES / "qwen-home"
    gt = EXAMPLES / "qwen-ground-truth"
    if not (home / "projects").is_dir():
        pytest.fail("examples/qwen-home is missing: run `.venv/bin/python -m tests.realclient.qwen.make_examples`")
    out = {}
    for f in sorted(gt.glob("*.json")):
        t = json.loads(f.read_text())
        out[t["scenario"]] = QwenRun(t["scenario"], home, t)
    return out
