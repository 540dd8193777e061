"""Locating / installing the pinned Gemini CLI, and checking prerequisites.

The client is installed with npm into a cache dir OUTSIDE the clone, under ``flock`` so parallel runs
do not race: ``$SESSIONSIFT_GEMINI_CACHE/<version>`` if that variable is set, else
``${XDG_CACHE_HOME:-~/.cache}/sessionsift/gemini-cli/<version>``.  The cache root is computed from the
REAL environment captured when this module is first imported (tests later monkeypatch HOME/XDG to temp
dirs; see tests/conftest.py).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from ..common import npm
from ..common.host import PrerequisiteMissing, host_problems  # noqa: F401 - one exception for every harness

PIN = "0.61.0"
"""The pinned release: what CI runs and the committed examples were written by."""
VERSION_VAR = "SSIFT_GEMINI_VERSION"
PINNED_VERSION = npm.version(dict(os.environ), VERSION_VAR, PIN)
"""The release every test and runner of this harness runs: ``PIN``, unless ``$SSIFT_GEMINI_VERSION`` names another
(e.g. the newest on npm, to run the same tests with it; the environment as it was at import)."""
NEWEST_KNOWN_VERSION = "0.61.0"
"""The newest release on npm when this harness was written (2026-09-25; see README.md)."""
OLDER_VERSIONS = ("0.60.0",)
"""Older releases the README compares against (what moved)."""
PACKAGE = "@google/gemini-cli"


# Captured at import time, before any test fixture rewrites HOME / XDG_CACHE_HOME.
CACHE_ROOT: Path = npm.cache_root(dict(os.environ), "gemini-cli", "SESSIONSIFT_GEMINI_CACHE")


def cache_dir(version: str = PINNED_VERSION) -> Path:
    return CACHE_ROOT / version


def package_dir(version: str = PINNED_VERSION) -> Path:
    return cache_dir(version) / "node_modules" / "@google" / "gemini-cli"


def entry_script(version: str = PINNED_VERSION) -> Path:
    """The client's entry point: ``node <this>`` runs it (``bin.gemini`` of the package:
    ``bundle/gemini.js`` in current releases, ``dist/index.js`` in old ones such as 0.28)."""
    pj = package_dir(version) / "package.json"
    try:
        rel = json.loads(pj.read_text())["bin"]["gemini"]
    except (OSError, ValueError, KeyError, TypeError):
        rel = "bundle/gemini.js"
    return package_dir(version) / rel


def version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("-")[0].split(".") if x.isdigit())


def node() -> str | None:
    return shutil.which("node")


def _node_20() -> str | None:
    r = subprocess.run(["node", "-e", "process.exit(+process.versions.node.split('.')[0] >= 20 ? 0 : 1)"])
    return None if r.returncode == 0 else "node >= 20 is needed by @google/gemini-cli"


def check_host() -> list[str]:
    """Prerequisites of the host (not the client install). Returns a list of problems."""
    # tmux drives the interactive (rewind) scenario
    return host_problems(("unshare", "ip", "node", "tmux"), checks=(_node_20,))


def ensure_client(version: str = PINNED_VERSION, timeout: float = 900) -> Path:
    """Install ``@google/gemini-cli@version`` into the cache (if absent) and return its entry script."""
    return npm.install(f"{PACKAGE}@{version}", cache_dir(version), CACHE_ROOT / ".install.lock",
                       lambda: entry_script(version), ready=Path.is_file, timeout=timeout)


def client_version(exe: Path) -> str:
    """The version of the package whose entry script is ``exe``."""
    for d in exe.parents:
        pj = d / "package.json"
        if pj.is_file():
            return json.loads(pj.read_text())["version"]
    raise FileNotFoundError(f"no package.json above {exe}")
