"""pytest fixtures for tests that want Codex CLI rollouts written by the REAL client.

``tests/conftest.py`` star-imports this module (beside ``tests.realclient.fixtures``):

* ``codex_corpus`` (session scope): runs every scenario of :mod:`.scenarios` once per test session
  with the pinned client (offline, each in its own network namespace, in parallel) into a temp
  root and returns a :class:`CodexCorpus`. Skips naming the missing prerequisite; under
  ``CI=true`` a missing prerequisite FAILS instead.
* ``codex_examples`` (session scope): the committed corpus ``examples/codex-home`` with its
  ground truth, as the same structure (no client needed).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import client as clientmod
from ..common import host

__all__ = ["CodexRun", "CodexCorpus", "require_codex", "codex_corpus", "codex_examples", "codex_legacy_corpus",
           "codex_legacy_examples"]
LEGACY_VERSION = "0.50.0"
"""An older release (no token_usage_record, no turn ids, legacy UI events): see README.md."""

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = Path(os.environ.get("SSIFT_CODEX_EXAMPLES") or REPO / "examples")
"""The committed corpus; ``SSIFT_CODEX_EXAMPLES=DIR`` points the ``codex_examples`` tests at another
``make_examples --out DIR`` (e.g. a run of a newer client)."""


@dataclass
class CodexRun:
    name: str
    codex_home: Path
    ground_truth: dict
    example: bool = False

    @property
    def rollouts(self) -> list[Path]:
        """This scenario's rollout files (in the committed corpus one is stored as .jsonl.zst)."""
        if self.example:
            return [EXAMPLES / r for r in self.ground_truth["example_rollouts"]]
        return [self.codex_home / r for r in self.ground_truth["rollouts"]]


class CodexCorpus(host.Corpus):
    """``corpus[name]`` -> :class:`CodexRun`; ``root``, ``client_version``, ``runs``."""


def require_codex(version: str = clientmod.PINNED_VERSION) -> Path:
    """The client executable, or skip (fail under CI=true) naming the missing prerequisite."""
    return host.require(clientmod, version, "Codex CLI real-client")


def run_corpus(root: Path, names=None, version: str = clientmod.PINNED_VERSION, jobs: int = 3) -> CodexCorpus:
    from .runner import run_scenario
    from .scenarios import ALL

    exe = require_codex(version)
    gts = host.run_parallel(lambda n: run_scenario(n, root, version), names or ALL, jobs)
    corpus = CodexCorpus(root=root, client_version=clientmod.client_version(exe))
    for gt in gts:
        corpus.runs[gt["scenario"]] = CodexRun(gt["scenario"], Path(gt["codex_home"]), gt)
    return corpus


@pytest.fixture(scope="session")
def codex_corpus(tmp_path_factory) -> CodexCorpus:
    """Every Codex scenario run once per test session with the real client (see module docstring)."""
    return run_corpus(tmp_path_factory.mktemp("codex-rc"))


@pytest.fixture(scope="session")
def codex_legacy_corpus(tmp_path_factory) -> CodexCorpus:
    """The legacy scenarios run once per test session with Codex CLI 0.50.0."""
    from .scenarios import LEGACY_ALL

    return run_corpus(tmp_path_factory.mktemp("codex-legacy-rc"), names=list(LEGACY_ALL), version=LEGACY_VERSION)


def _examples(prefix: str) -> CodexCorpus:
    home = EXAMPLES / f"{prefix}-home"
    if not (home / "sessions").is_dir():
        pytest.fail(f"examples/{prefix}-home is missing: run `.venv/bin/python -m tests.realclient.codex.make_examples"
                    + (" --legacy`" if "legacy" in prefix else "`"))
    corpus = CodexCorpus(root=EXAMPLES, client_version="")
    for f in sorted((EXAMPLES / f"{prefix}-ground-truth").glob("*.json")):
        gt = json.loads(f.read_text())
        corpus.client_version = gt["client_version"]
        corpus.runs[gt["scenario"]] = CodexRun(gt["scenario"], home, gt, example=True)
    return corpus


@pytest.fixture(scope="session")
def codex_legacy_examples() -> CodexCorpus:
    """The committed older-release corpus (examples/codex-legacy-home, Codex CLI 0.50.0)."""
    return _examples("codex-legacy")


@pytest.fixture(scope="session")
def codex_examples() -> CodexCorpus:
    """The committed sample corpus (examples/codex-home + examples/codex-ground-truth)."""
    return _examples("codex")
