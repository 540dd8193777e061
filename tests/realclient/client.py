"""Locating / installing the pinned Claude Code client, and checking prerequisites.

The client is installed with npm into a cache dir OUTSIDE the clone:
``$SESSIONSIFT_CLIENT_CACHE/<version>`` if that variable is set, else
``${XDG_CACHE_HOME:-~/.cache}/sessionsift/claude-code/<version>``, under ``flock`` (common/npm.py).
The cache root is computed from the REAL environment captured when this module is first imported
(tests later monkeypatch HOME/XDG to temp dirs; see tests/conftest.py).
"""
from __future__ import annotations

import json
import os
import shutil  # noqa: F401 - tests patch clientmod.shutil.which
from pathlib import Path

from .common import npm
from .common.host import PrerequisiteMissing, host_problems

PIN = "2.1.258"
"""The pinned release: what CI runs and the committed examples were written by."""
VERSION_VAR = "SSIFT_CLAUDE_CODE_VERSION"
PINNED_VERSION = npm.version(dict(os.environ), VERSION_VAR, PIN)
"""The release every test and runner of this harness runs: ``PIN``, unless ``$SSIFT_CLAUDE_CODE_VERSION`` names another
(e.g. the newest on npm, to run the same tests with it; the environment as it was at import)."""
NEWEST_KNOWN_VERSION = "2.1.332"
PACKAGE = "@anthropic-ai/claude-code"
PLATFORM_PACKAGE = "@anthropic-ai/claude-code-linux-x64"


# Captured at import time, before any test fixture rewrites HOME / XDG_CACHE_HOME.
CACHE_ROOT: Path = npm.cache_root(dict(os.environ), "claude-code", "SESSIONSIFT_CLIENT_CACHE")


def cache_dir(version: str = PINNED_VERSION) -> Path:
    return CACHE_ROOT / version


def executable(version: str = PINNED_VERSION) -> Path:
    """The real native executable inside the platform package."""
    return cache_dir(version) / "node_modules" / PLATFORM_PACKAGE / "claude"


def check_host() -> list[str]:
    """Prerequisites of the host (not the client install). Returns a list of problems."""
    return host_problems(("unshare", "ip", "tmux"))


def ensure_client(version: str = PINNED_VERSION, timeout: float = 600) -> Path:
    """Install ``@anthropic-ai/claude-code@version`` into the cache (if absent) and return the executable."""
    return npm.install(f"{PACKAGE}@{version}", cache_dir(version), CACHE_ROOT / f".install-{version}.lock",
                       lambda: executable(version), timeout=timeout)


def client_version(exe: Path) -> str:
    # the version is in the platform package's package.json
    pj = exe.parent / "package.json"
    return json.loads(pj.read_text())["version"]
