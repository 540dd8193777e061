"""Locating / installing the pinned Codex CLI, and checking prerequisites.

The client is installed with npm into a cache dir OUTSIDE the clone:
``$SESSIONSIFT_CODEX_CACHE/<version>`` if that variable is set, else
``${XDG_CACHE_HOME:-~/.cache}/sessionsift/codex/<version>``.  The cache root is computed from the
REAL environment captured when this module is first imported (tests later monkeypatch HOME/XDG
to temp dirs; see tests/conftest.py).  Installs run under ``flock`` on a lock file beside the
version dir, so parallel test runs (or engineers) never race on one install.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from ..common import npm
from ..common.host import PrerequisiteMissing, host_problems  # noqa: F401 - one exception for every harness

PIN = "0.171.0"
"""The pinned release: what CI runs and the committed examples were written by."""
VERSION_VAR = "SSIFT_CODEX_VERSION"
PINNED_VERSION = npm.version(dict(os.environ), VERSION_VAR, PIN)
"""The release every test and runner of this harness runs: ``PIN``, unless ``$SSIFT_CODEX_VERSION`` names another
(e.g. the newest on npm, to run the same tests with it; the environment as it was at import)."""
# The newest release on npm when the harness was written is the pinned one (dist-tag latest =
# 0.171.0, published 2026-11-20); the comparison run in README.md uses the release before it.
NEWEST_KNOWN_VERSION = "0.171.0"
PREVIOUS_VERSION = "0.169.0"
PACKAGE = "@openai/codex"
BINARY_REL = Path("node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
LEGACY_BINARY_REL = Path("node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/codex/codex")
"""Releases before the per-platform packages (e.g. 0.50.0) ship every binary in the main package."""


# Captured at import time, before any test fixture rewrites HOME / XDG_CACHE_HOME.
CACHE_ROOT: Path = npm.cache_root(dict(os.environ), "codex", "SESSIONSIFT_CODEX_CACHE")


def cache_dir(version: str = PINNED_VERSION) -> Path:
    return CACHE_ROOT / version


def executable(version: str = PINNED_VERSION) -> Path:
    """The static musl binary inside the platform package (called directly, no node)."""
    legacy = cache_dir(version) / LEGACY_BINARY_REL
    return legacy if legacy.is_file() else cache_dir(version) / BINARY_REL


def _x86_64() -> str | None:
    if os.uname().machine not in ("x86_64", "amd64"):
        return f"not an x86_64 host ({os.uname().machine}): the harness runs the linux-x64 binary"
    return None


def check_host() -> list[str]:
    """Prerequisites of the host (not the client install). Returns a list of problems."""
    return host_problems(("unshare", "ip"), first=(_x86_64,))


def ensure_client(version: str = PINNED_VERSION, timeout: float = 600) -> Path:
    """Install ``@openai/codex@version`` into the cache (if absent) and return the executable."""
    return npm.install(f"{PACKAGE}@{version}", cache_dir(version), CACHE_ROOT / f".install-{version}.lock",
                       lambda: executable(version), timeout=timeout)


def client_version(exe: Path) -> str:
    """The version from the platform package's package.json (``0.171.0-linux-x64`` -> ``0.171.0``)."""
    pj = Path(exe).parents[3] / "package.json"
    return json.loads(pj.read_text())["version"].split("-")[0]
