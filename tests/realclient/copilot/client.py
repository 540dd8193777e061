"""Locating / installing the pinned GitHub Copilot CLI (``@github/copilot`` on npm), and host checks.

Installed with npm into a cache OUTSIDE the clone, under ``flock`` so parallel runs do not race:
``$SESSIONSIFT_CLIENT_CACHE/copilot-cli/<version>`` if that variable is set, else
``${XDG_CACHE_HOME:-~/.cache}/sessionsift/copilot-cli/<version>``, computed from the REAL environment
captured when this module is first imported (tests later point HOME/XDG at temp dirs). The executable is
the native single-executable ``node_modules/@github/copilot-linux-x64/copilot``; no install script is
needed.

On its first start the binary unpacks its JavaScript bundle (~235 MB: ``cli-main.js``, the native
``runtime.node``, ripgrep, tree-sitter grammars, the session-event JSON schema) into
``$COPILOT_PKG_CACHE_HOME/pkg/linux-x64/<version>/`` and marks it ``.extraction-complete``. The harness
points ``COPILOT_PKG_CACHE_HOME`` at ONE shared dir beside the installs (:data:`PKG_CACHE`), unpacks
it once under the same lock (:func:`ensure_client`), and every run reuses it: nothing of it lands in a
test HOME or in the clone.
"""
from __future__ import annotations

import fcntl
import json
import os
import subprocess
import tempfile
from pathlib import Path

from ..common import npm
from ..common.host import PrerequisiteMissing, host_problems  # one exception type for every real-client harness

PIN = "1.0.102"
"""The pinned release: what CI runs and the committed examples were written by."""
VERSION_VAR = "SSIFT_COPILOT_VERSION"
PINNED_VERSION = npm.version(dict(os.environ), VERSION_VAR, PIN)
"""The release every test and runner of this harness runs: ``PIN``, unless ``$SSIFT_COPILOT_VERSION`` names another
(e.g. the newest on npm, to run the same tests with it; the environment as it was at import)."""
NEWEST_KNOWN_VERSION = "1.0.102"
"""npm's ``latest`` when this harness was written (checked 2026-12-01; published 2026-10-21): the pinned one."""
OLDER_VERSION = "1.0.92"
"""The release before it on npm (2026-10-05), run on the same scripts for comparison (README)."""
PACKAGE = "@github/copilot"
PLATFORM_PACKAGE = "@github/copilot-linux-x64"

__all__ = ["PINNED_VERSION", "PrerequisiteMissing", "cache_dir", "executable", "check_host", "ensure_client",
           "client_version", "PKG_CACHE"]

CACHE_ROOT: Path = npm.cache_root(dict(os.environ), "copilot-cli", "SESSIONSIFT_CLIENT_CACHE", "copilot-cli")
PKG_CACHE: Path = CACHE_ROOT / "pkg-cache"
"""``COPILOT_PKG_CACHE_HOME`` of every run: the unpacked bundles (``pkg/linux-x64/<version>``), shared."""


def cache_dir(version: str = PINNED_VERSION) -> Path:
    return CACHE_ROOT / version


def executable(version: str = PINNED_VERSION) -> Path:
    return cache_dir(version) / "node_modules" / "@github" / "copilot-linux-x64" / "copilot"


def bundle_dir(version: str = PINNED_VERSION) -> Path:
    """Where the binary unpacks its JavaScript bundle (the client's own code, read for docs/providers.md)."""
    return PKG_CACHE / "pkg" / "linux-x64" / version


def _x86_64() -> str | None:
    if os.uname().machine not in ("x86_64", "amd64"):
        return f"not an x86_64 host ({os.uname().machine}): the harness runs the linux-x64 binary"
    return None


def check_host() -> list[str]:
    """What the host lacks to run the client offline (root, unshare, ip, a working ``unshare -n``)."""
    return host_problems(("unshare", "ip", "env"), first=(_x86_64,))


def _unpacked(version: str) -> bool:
    return (bundle_dir(version) / ".extraction-complete").is_file()


def ensure_client(version: str = PINNED_VERSION, timeout: float = 600) -> Path:
    """Install ``@github/copilot@version`` into the cache (if absent; under flock), unpack its bundle into
    :data:`PKG_CACHE` once (offline: ``copilot --version`` under ``unshare -n`` with a throw-away HOME),
    and return the binary."""
    exe = npm.install(f"{PACKAGE}@{version}", cache_dir(version), CACHE_ROOT / ".install.lock",
                      lambda: executable(version), timeout=timeout)
    if _unpacked(version):
        return exe
    with open(CACHE_ROOT / ".install.lock", "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if not _unpacked(version):
            PKG_CACHE.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix="copilot-unpack-") as home:
                env = {"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": home, "COPILOT_PKG_CACHE_HOME": str(PKG_CACHE),
                       "COPILOT_AUTO_UPDATE": "false", "COPILOT_OFFLINE": "true", "TERM": "dumb", "LANG": "C.UTF-8"}
                r = subprocess.run(["unshare", "-n", "env", "-i", *[f"{k}={v}" for k, v in env.items()], str(exe),
                                    "--version"], capture_output=True, text=True, timeout=timeout)
            if r.returncode != 0 or not _unpacked(version):
                raise PrerequisiteMissing(f"{PACKAGE}@{version} did not unpack its bundle into {PKG_CACHE} "
                                          f"(rc={r.returncode}): {r.stderr.strip()[-300:]}")
    return exe


def client_version(exe: Path) -> str:
    return json.loads((Path(exe).parent / "package.json").read_text())["version"]
