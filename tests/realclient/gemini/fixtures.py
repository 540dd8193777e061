"""pytest fixtures for tests that want chat files written by the REAL Gemini CLI.

``tests/conftest.py`` star-imports this module, so the fixtures are available to every test:

* ``gemini_corpus`` (session scope): runs the scenarios in :data:`scenarios.FAST` once per test session
  with the pinned client (offline, in a network namespace, 4 at a time) into a temp root and returns a
  :class:`GeminiCorpus`. Skips naming the missing prerequisite; under ``CI=true`` it FAILS instead.
* ``gemini_examples`` (session scope): the committed corpus ``examples/gemini-home`` (no client needed).

Usage::

    def test_something(gemini_corpus):
        run = gemini_corpus["shell_write"]
        run.gemini_dir        # Path: the .gemini directory (what --gemini-home names)
        run.cwd               # Path: the session's working dir (the files it wrote are there)
        run.ground_truth      # dict, see tests/realclient/gemini/README.md
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import client as clientmod
from ..common import host
from .scenarios import FAST

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples" / "gemini-home"
EXAMPLES_TRUTH = REPO / "examples" / "gemini-ground-truth"


@dataclass
class GeminiRun:
    name: str
    gemini_dir: Path
    cwd: Path
    ground_truth: dict


class GeminiCorpus(host.Corpus):
    """``corpus[name]`` -> :class:`GeminiRun`; ``root``, ``client_version``, ``runs``."""


def require_gemini(version: str = clientmod.PINNED_VERSION) -> Path:
    """The client's entry script, or skip (fail under CI=true) naming the missing prerequisite."""
    return host.require(clientmod, version, "Gemini CLI real-client")


def run_corpus(root: Path, names=FAST, version: str = clientmod.PINNED_VERSION, jobs: int = 4) -> GeminiCorpus:
    from .runner import run_scenario

    exe = require_gemini(version)
    gts = host.run_parallel(lambda n: run_scenario(n, root, version), names, jobs)
    corpus = GeminiCorpus(root=root, client_version=clientmod.client_version(exe))
    for gt in gts:
        corpus.runs[gt["scenario"]] = GeminiRun(gt["scenario"], Path(gt["gemini_dir"]), Path(gt["cwd"]), gt)
    return corpus


@pytest.fixture(scope="session")
def gemini_corpus(tmp_path_factory) -> GeminiCorpus:
    """The FAST scenarios run once per test session with the real client (see the module docstring)."""
    return run_corpus(tmp_path_factory.mktemp("gemini-rc"))


@pytest.fixture(scope="session")
def gemini_examples() -> GeminiCorpus:
    """The committed sample corpus: one .gemini dir holding every scenario, and their ground truths."""
    if not (EXAMPLES / "tmp").is_dir():
        pytest.fail("examples/gemini-home is missing: run `.venv/bin/python -m tests.realclient.gemini.make_examples`")
    corpus = GeminiCorpus(root=EXAMPLES, client_version="")
    for f in sorted(EXAMPLES_TRUTH.glob("*.json")):
        gt = json.loads(f.read_text())
        corpus.client_version = corpus.client_version or gt["client_version"]
        corpus.runs[gt["scenario"]] = GeminiRun(gt["scenario"], EXAMPLES, Path(gt["cwd"]), gt)
    return corpus
