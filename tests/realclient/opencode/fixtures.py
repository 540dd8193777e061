"""pytest fixtures for tests on data written by the REAL opencode client (offline).

* ``opencode_corpus`` (session scope): runs the sample scenarios (scenarios.SAMPLE) once with the
  pinned client into a temp root, two at a time, and returns ``{scenario: OpencodeRun}``.
* ``opencode_legacy_corpus`` (session scope): two scenarios with the older 1.1.65, which writes the
  legacy JSON tree instead of opencode.db.
* ``opencode_examples``: the committed sample (examples/opencode-home + its ground truth).

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
LEGACY_SAMPLE = ("shell_write", "subagent")


@dataclass
class OpencodeRun:
    name: str
    data_dir: Path
    truth: dict

    @property
    def session_id(self) -> str:
        return self.truth["session_ids_from_client_events"][0]


def require_opencode(version: str = clientmod.PINNED_VERSION) -> Path:
    return host.require(clientmod, version, "opencode real-client")


def run_opencode_corpus(root: Path, names=SAMPLE, version: str = clientmod.PINNED_VERSION,
                        jobs: int = 2) -> dict[str, OpencodeRun]:
    from .runner import run_scenario

    require_opencode(version)
    truths = host.run_parallel(lambda n: run_scenario(n, root, version), names, jobs)
    return {t["scenario"]: OpencodeRun(t["scenario"], Path(t["data_dir"]), t) for t in truths}


@pytest.fixture(scope="session")
def opencode_corpus(tmp_path_factory) -> dict[str, OpencodeRun]:
    return run_opencode_corpus(tmp_path_factory.mktemp("opencode-rc"))


@pytest.fixture(scope="session")
def opencode_legacy_corpus(tmp_path_factory) -> dict[str, OpencodeRun]:
    return run_opencode_corpus(tmp_path_factory.mktemp("opencode-rc-legacy"), LEGACY_SAMPLE,
                               clientmod.OLDER_VERSION)


@pytest.fixture(scope="session")
def opencode_examples() -> dict[str, OpencodeRun]:
    home = EXAMPLES / "opencode-home"
    gt = EXAMPLES / "opencode-ground-truth"
    if not (home / "opencode.db").is_file():
        pytest.fail("examples/opencode-home is missing: run `.venv/bin/python -m tests.realclient.opencode.make_examples`")
    out = {}
    for f in sorted(gt.glob("*.json")):
        t = json.loads(f.read_text())
        out[t["scenario"]] = OpencodeRun(t["scenario"], home, t)
    return out
