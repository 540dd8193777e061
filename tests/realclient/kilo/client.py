"""Locating / installing the pinned Kilo Code CLI (``@kilocode/cli`` on npm), and host checks.

``@kilocode/cli`` is a small wrapper whose ``bin/kilo`` runs the Bun-compiled binary of its platform
package (``@kilocode/cli-linux-x64``, an optional dependency of the same version). The harness installs
that platform package itself with npm into a cache OUTSIDE the clone, under ``flock``:
``$SESSIONSIFT_CLIENT_CACHE/kilo-code/<version>`` if that variable is set, else
``${XDG_CACHE_HOME:-~/.cache}/sessionsift/kilo-code/<version>`` (computed from the REAL environment when
this module is first imported). The executable is ``node_modules/@kilocode/cli-linux-x64/bin/kilo``; no
install script is needed.

Why the platform package: npm's ``latest`` of ``@kilocode/cli`` is 7.8.1 (2026-09-27), but no
``@kilocode/cli-linux-x64@7.8.1`` (nor any other 7.8.1 platform package) is on the registry, so
``npm install @kilocode/cli@7.8.1`` fails in its postinstall ("Failed to setup kilo binary"). The newest
binary on the registry is ``@kilocode/cli-linux-x64@7.7.9`` (its wrapper 7.7.9 was never published); the
newest release whose wrapper and binary are both there is 7.7.7, the pinned one.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from ..common import npm
from ..common.host import PrerequisiteMissing, host_problems  # one exception type for every real-client harness

PIN = "7.7.7"
"""The pinned release: what CI runs and the committed examples were written by."""
VERSION_VAR = "SSIFT_KILO_VERSION"
PINNED_VERSION = npm.version(dict(os.environ), VERSION_VAR, PIN)
"""The release every test and runner of this harness runs: ``PIN``, unless ``$SSIFT_KILO_VERSION`` names another
(e.g. the newest on npm, to run the same tests with it; the environment as it was at import)."""
NEWEST_KNOWN_VERSION = "7.7.9"
"""The newest ``@kilocode/cli-linux-x64`` on npm (checked 2026-12-01 and 2026-12-02; npm's
``latest`` wrapper 7.8.1 still has no platform package). Run with ``SSIFT_KILO_VERSION=7.7.9``."""
NEWEST_WRAPPER_VERSION = "7.8.1"
"""npm's ``latest`` of ``@kilocode/cli``: it cannot be installed here (its platform packages are absent)."""
PACKAGE = "@kilocode/cli"
PLATFORM_PACKAGE = "@kilocode/cli-linux-x64"

__all__ = ["PINNED_VERSION", "PrerequisiteMissing", "cache_dir", "executable", "check_host", "ensure_client",
           "client_version"]

CACHE_ROOT: Path = npm.cache_root(dict(os.environ), "kilo-code", "SESSIONSIFT_CLIENT_CACHE", "kilo-code")


def cache_dir(version: str = PINNED_VERSION) -> Path:
    return CACHE_ROOT / version


def executable(version: str = PINNED_VERSION) -> Path:
    return cache_dir(version) / "node_modules" / "@kilocode" / "cli-linux-x64" / "bin" / "kilo"


def _x86_64() -> str | None:
    if os.uname().machine not in ("x86_64", "amd64"):
        return f"not an x86_64 host ({os.uname().machine}): the harness runs the linux-x64 binary"
    return None


def check_host() -> list[str]:
    """What the host lacks to run the client offline (root, unshare, ip, a working ``unshare -n``)."""
    return host_problems(("unshare", "ip", "env"), first=(_x86_64,))


def ensure_client(version: str = PINNED_VERSION, timeout: float = 600) -> Path:
    """Install ``@kilocode/cli-linux-x64@version`` into the cache (if absent; under flock) and return the binary."""
    return npm.install(f"{PLATFORM_PACKAGE}@{version}", cache_dir(version), CACHE_ROOT / ".install.lock",
                       lambda: executable(version), timeout=timeout)


def client_version(exe: Path) -> str:
    return json.loads((Path(exe).parent.parent / "package.json").read_text())["version"]
