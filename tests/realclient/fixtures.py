"""pytest fixtures for tests that want transcripts written by the REAL Claude Code client.

``tests/conftest.py`` star-imports this module, so the fixtures are available to every test:

* ``realclient_corpus`` (session scope): runs the fast scenarios once per test session with the pinned
  client (offline, in a network namespace) into a temp root and returns a :class:`RealClientCorpus`.
  Skips with the exact missing prerequisite; under ``CI=true`` a missing prerequisite FAILS instead.
* ``realclient_examples`` (session scope): the committed corpus in ``examples/`` (no client needed),
  as the same :class:`RealClientCorpus` structure.

Usage::

    def test_something(realclient_corpus):
        run = realclient_corpus["files_basic"]
        run.config_dir        # Path: a CLAUDE_CONFIG_DIR (projects/, file-history/, ...)
        run.transcript        # Path: the main session's .jsonl
        run.session_id        # str
        run.cwd               # Path: the session's working dir (files the session wrote are here)
        run.ground_truth      # dict, see tests/realclient/README.md
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import client as clientmod
from .common import host

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
FAST_SCENARIOS = ("files_basic", "bash_background", "subagents", "interactive", "monitor", "tasks", "todos")


@dataclass
class ScenarioRun:
    name: str
    config_dir: Path
    cwd: Path
    session_id: str
    transcript: Path
    ground_truth: dict

    @property
    def subagent_transcripts(self) -> list[Path]:
        return sorted((self.transcript.parent / self.session_id / "subagents").glob("agent-*.jsonl"))


class RealClientCorpus(host.Corpus):
    """``corpus[name]`` -> :class:`ScenarioRun`; ``root``, ``client_version``, ``runs``."""


def _run_from_gt(gt: dict, config_dir: Path) -> ScenarioRun:
    return ScenarioRun(name=gt["scenario"], config_dir=config_dir, cwd=Path(gt["cwd"]),
                       session_id=gt["session_id"],
                       transcript=config_dir / gt["project_dir"] / f"{gt['session_id']}.jsonl",
                       ground_truth=gt)


def require_realclient(version: str = clientmod.PINNED_VERSION) -> Path:
    """Return the client executable, or skip (fail under CI=true) naming the missing prerequisite."""
    return host.require(clientmod, version)


def run_corpus(root: Path, names=FAST_SCENARIOS, version: str = clientmod.PINNED_VERSION,
               jobs: int = 4) -> RealClientCorpus:
    from .runner import run_scenario

    exe = require_realclient(version)
    gts = host.run_parallel(lambda n: run_scenario(n, root, version), names, jobs)
    corpus = RealClientCorpus(root=root, client_version=clientmod.client_version(exe))
    for gt in gts:
        corpus.runs[gt["scenario"]] = _run_from_gt(gt, Path(gt["config_dir"]))
    return corpus


@pytest.fixture(scope="session")
def realclient_corpus(tmp_path_factory) -> RealClientCorpus:
    """Fast scenarios run once per test session with the real client (see module docstring)."""
    return run_corpus(tmp_path_factory.mktemp("realclient"))


@pytest.fixture(scope="session")
def realclient_examples() -> RealClientCorpus:
    """The committed sample corpus (examples/claude-home + examples/ground-truth)."""
    home = EXAMPLES / "claude-home"
    if not (home / "projects").is_dir():
        pytest.fail("examples/claude-home is missing: run `.venv/bin/python -m tests.realclient.make_examples`")
    corpus = RealClientCorpus(root=EXAMPLES, client_version="")
    for f in sorted((EXAMPLES / "ground-truth").glob("*.json")):
        gt = json.loads(f.read_text())
        corpus.client_version = gt["client_version"]
        corpus.runs[gt["scenario"]] = _run_from_gt(gt, home)
    return corpus
