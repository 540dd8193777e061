"""pytest fixtures for tests on data written by the REAL Kilo Code CLI (offline).

* ``kilo_corpus`` (session scope): runs the fixture's scenarios (scenarios.FIXTURE) once with the pinned
  client into a temp root, three at a time (each its own data dir), and returns ``{scenario: KiloRun}``;
* ``kilo_examples``: the committed sample (examples/kilo-home + its ground truth).

A missing prerequisite skips naming it; under ``CI=true`` it fails instead.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import client as clientmod
from ..common import host
from .scenarios import FIXTURE

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"


@dataclass
class KiloRun:
    name: str
    data_dir: Path
    truth: dict

    @property
    def session_id(self) -> str:
        return self.truth["session_ids_from_client_events"][0]


def require_kilo(version: str = clientmod.PINNED_VERSION) -> Path:
    return host.require(clientmod, version, "Kilo Code real-client")


def run_kilo_corpus(root: Path, names=FIXTURE, version: str = clientmod.PINNED_VERSION,
                    jobs: int = 3) -> dict[str, KiloRun]:
    from .runner import run_scenario

    require_kilo(version)
    truths = host.run_parallel(lambda n: run_scenario(n, root, version), names, jobs)
    return {t["scenario"]: KiloRun(t["scenario"], Path(t["data_dir"]), t) for t in truths}


@pytest.fixture(scope="session")
def kilo_corpus(tmp_path_factory) -> dict[str, KiloRun]:
    return run_kilo_corpus(tmp_path_factory.mktemp("kilo-rc"))


@pytest.fixture(scope="session")
def kilo_examples() -> dict[str, KiloRun]:
    home = EXAMPLES / "kilo-home"
    gt = EXAMPLES / "kilo-ground-truth"
    if not (home / "kilo.db").is_file():
        pytest.fail("examples/kilo-home is missing: run `.venv/bin/python -m tests.realclient.kilo.make_examples`")
    out = {}
    for f in sorted(gt.glob("*.json")):
        t = json.loads(f.read_text())
        out[t["scenario"]] = KiloRun(t["scenario"], home, t)
    return out
