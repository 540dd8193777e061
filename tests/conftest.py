"""Test isolation: every test runs with HOME, CLAUDE_CONFIG_DIR and XDG dirs in temp dirs, so
no test can read this machine's own ~/.claude. The real home is captured once, before any
patching, only to locate the npm cache of the pinned Claude Code client (tests/realclient)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REAL_HOME = os.environ.get("HOME", "")
os.environ.setdefault("SESSIONSIFT_REAL_HOME", REAL_HOME)

# Module- and session-scoped fixtures run before the per-test isolation below: what sessionsift
# WRITES (the ledger under XDG_DATA_HOME, the secrets allowlist under XDG_CONFIG_HOME) goes to a
# fresh temp dir for the whole run, never to this machine's own.
import tempfile as _tempfile  # noqa: E402

_RUN_DIR = _tempfile.mkdtemp(prefix="ssift-test-run-")


def _remove_run_dir(pid: int = os.getpid()) -> None:
    """At the end of the run, in the process that made it (a forked child's exit must not)."""
    if os.getpid() == pid:
        import shutil

        shutil.rmtree(_RUN_DIR, ignore_errors=True)


import atexit as _atexit  # noqa: E402

_atexit.register(_remove_run_dir)
for _var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
    os.environ[_var] = os.path.join(_RUN_DIR, _var.lower())
# the index cache (docs/index.md); not XDG_CACHE_HOME, which the real-client harness reads (at
# import) to find its npm installs
os.environ["SESSIONSIFT_INDEX_DIR"] = os.path.join(_RUN_DIR, "index")

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"

try:  # the real-client fixtures, when the harness is present
    from tests.realclient.fixtures import *  # noqa: F401,F403
except ImportError:  # pragma: no cover - harness not importable
    pass
try:  # the opencode real-client fixtures
    from tests.realclient.opencode.fixtures import (opencode_corpus, opencode_examples,  # noqa: F401
                                                    opencode_legacy_corpus)
except ImportError:  # pragma: no cover
    pass
try:  # the Codex CLI real-client fixtures (codex_corpus, codex_examples)
    from tests.realclient.codex.fixtures import (codex_corpus, codex_examples, codex_legacy_corpus,  # noqa: F401
                                                 codex_legacy_examples)
except ImportError:  # pragma: no cover
    pass
try:  # the export_secrets scenario (audit secrets, export markdown/html)
    from tests.realclient.export_fixtures import export_rc  # noqa: F401
except ImportError:  # pragma: no cover
    pass
try:  # the Gemini CLI real-client fixtures
    from tests.realclient.gemini.fixtures import gemini_corpus, gemini_examples  # noqa: F401
except ImportError:  # pragma: no cover - harness not importable
    pass
try:  # the GitHub Copilot CLI and Kilo Code real-client fixtures
    from tests.realclient.copilot.fixtures import copilot_corpus, copilot_examples  # noqa: F401
    from tests.realclient.kilo.fixtures import kilo_corpus, kilo_examples  # noqa: F401
except ImportError:  # pragma: no cover - harness not importable
    pass
try:  # the pi real-client fixtures
    from tests.realclient.pi.fixtures import pi_corpus, pi_examples  # noqa: F401
except ImportError:  # pragma: no cover - harness not importable
    pass
try:  # the Qwen Code real-client fixtures
    from tests.realclient.qwen.fixtures import qwen_corpus, qwen_examples  # noqa: F401
except ImportError:  # pragma: no cover - harness not importable
    pass


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude-isolated"))
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(var, str(home / var.lower()))
    monkeypatch.setenv("SESSIONSIFT_INDEX_DIR", str(home / "index"))
    # every client's own root variable points into the temp home too: no test can reach this
    # machine's ~/.codex, ~/.gemini, ~/.local/share/opencode or ~/.local/share/crush
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex-isolated"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home / ".gemini-isolated"))
    monkeypatch.delenv("OPENCODE_DATA_DIR", raising=False)
    monkeypatch.delenv("OPENCODE_DB", raising=False)  # opencode's own database-file variable
    monkeypatch.delenv("CRUSH_GLOBAL_DATA", raising=False)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home / ".pi-isolated"))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.setenv("QWEN_HOME", str(home / ".qwen-isolated"))
    monkeypatch.delenv("QWEN_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("COPILOT_HOME", str(home / ".copilot-isolated"))
    monkeypatch.delenv("KILO_DB", raising=False)  # Kilo Code's own database-file variable
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    # no progress line on a test's pseudo-terminal however loaded the machine (tests/test_colour.py sets 0 to see it)
    monkeypatch.setenv("SESSIONSIFT_PROGRESS_DELAY", "1e9")
    yield home
