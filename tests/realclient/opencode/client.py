"""Locating / installing the pinned opencode client (``opencode-ai`` on npm), and host checks.

Installed with npm into a cache OUTSIDE the clone, under ``flock`` so parallel runs do not race:
``$SESSIONSIFT_CLIENT_CACHE/opencode/<version>`` if that variable is set, else
``${XDG_CACHE_HOME:-~/.cache}/sessionsift/opencode/<version>``, computed from the REAL environment
captured when this module is first imported (tests later point HOME/XDG at temp dirs). The executable
is the Bun-compiled binary ``node_modules/opencode-linux-x64/bin/opencode``; its postinstall is not
needed (npm runs none here).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from ..common import npm
from ..common.host import PrerequisiteMissing, host_problems  # one exception type for every real-client harness

PIN = "1.18.33"
"""The pinned release: what CI runs and the committed examples were written by."""
VERSION_VAR = "SSIFT_OPENCODE_VERSION"
PINNED_VERSION = npm.version(dict(os.environ), VERSION_VAR, PIN)
"""The release every test and runner of this harness runs: ``PIN``, unless ``$SSIFT_OPENCODE_VERSION`` names another
(e.g. the newest on npm, to run the same tests with it; the environment as it was at import)."""
NEWEST_KNOWN_VERSION = "1.18.33"
"""npm's ``latest`` when this harness was written (2026-09-28 release): the pinned one."""
OLDER_VERSION = "1.1.65"
"""An older release tried for comparison (see README: what moved): it writes the legacy JSON tree."""
MIGRATING_VERSION = "1.2.27"
"""A release that migrates the JSON tree into opencode.db on its first start (1.18.33 no longer does)."""
PACKAGE = "opencode-ai"
PLATFORM_PACKAGE = "opencode-linux-x64"

__all__ = ["PINNED_VERSION", "PrerequisiteMissing", "cache_dir", "executable", "check_host", "ensure_client",
           "client_version"]


CACHE_ROOT: Path = npm.cache_root(dict(os.environ), "opencode", "SESSIONSIFT_CLIENT_CACHE", "opencode")


def cache_dir(version: str = PINNED_VERSION) -> Path:
    return CACHE_ROOT / version


def executable(version: str = PINNED_VERSION) -> Path:
    return cache_dir(version) / "node_modules" / PLATFORM_PACKAGE / "bin" / "opencode"


def check_host() -> list[str]:
    """What the host lacks to run the client offline (root, unshare, ip, a working ``unshare -n``)."""
    return host_problems(("unshare", "ip", "env"))


def ensure_client(version: str = PINNED_VERSION, timeout: float = 600) -> Path:
    """Install ``opencode-ai@version`` into the cache (if absent; under flock) and return the binary."""
    return npm.install(f"{PACKAGE}@{version}", cache_dir(version), CACHE_ROOT / ".install.lock",
                       lambda: executable(version), timeout=timeout)


def client_version(exe: Path) -> str:
    return json.loads((exe.parent.parent / "package.json").read_text())["version"]
