"""Locating / installing the pinned pi client (``@mariozechner/pi-coding-agent`` on npm), and host checks.

Installed with npm into a cache OUTSIDE the clone, under ``flock`` so parallel runs do not race:
``$SESSIONSIFT_CLIENT_CACHE/pi/<version>`` if that variable is set, else
``${XDG_CACHE_HOME:-~/.cache}/sessionsift/pi/<version>``, computed from the REAL environment captured
when this module is first imported (tests later point HOME/XDG at temp dirs). The client is plain
JavaScript run by node (``dist/cli.js``, the package's ``bin.pi``); npm runs no install scripts here
and pi needs none (its optional clipboard module is not used in print mode).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from ..common import npm
from ..common.host import PrerequisiteMissing, host_problems  # noqa: F401 - one exception for every harness

PIN = "0.73.1"
"""The pinned release: what CI runs and the committed examples were written by."""
VERSION_VAR = "SSIFT_PI_VERSION"
PINNED_VERSION = npm.version(dict(os.environ), VERSION_VAR, PIN)
"""The release every test and runner of this harness runs: ``PIN``, unless ``$SSIFT_PI_VERSION`` names another
(e.g. the newest on npm, to run the same tests with it; the environment as it was at import)."""
NEWEST_KNOWN_VERSION = "0.73.1"
"""npm's ``latest`` when this harness was written (checked with ``npm view``): the pinned one."""
PACKAGE = "@mariozechner/pi-coding-agent"

CACHE_ROOT: Path = npm.cache_root(dict(os.environ), "pi", "SESSIONSIFT_CLIENT_CACHE", "pi")


def cache_dir(version: str = PINNED_VERSION) -> Path:
    return CACHE_ROOT / version


def package_dir(version: str = PINNED_VERSION) -> Path:
    return cache_dir(version) / "node_modules" / "@mariozechner" / "pi-coding-agent"


def entry_script(version: str = PINNED_VERSION) -> Path:
    """``node <this>`` runs the client (``bin.pi`` of the package: ``dist/cli.js``)."""
    try:
        rel = json.loads((package_dir(version) / "package.json").read_text())["bin"]["pi"]
    except (OSError, ValueError, KeyError, TypeError):
        rel = "dist/cli.js"
    return package_dir(version) / rel


def _node_20() -> str | None:
    r = subprocess.run(["node", "-e", "process.exit(+process.versions.node.split('.')[0] >= 20 ? 0 : 1)"])
    return None if r.returncode == 0 else "node >= 20 is needed by @mariozechner/pi-coding-agent"


def check_host() -> list[str]:
    """What the host lacks to run the client offline (root, unshare, ip, node >= 20, a working ``unshare -n``)."""
    return host_problems(("unshare", "ip", "env", "node"), checks=(_node_20,))


def ensure_client(version: str = PINNED_VERSION, timeout: float = 600) -> Path:
    """Install ``@mariozechner/pi-coding-agent@version`` into the cache (if absent; under flock) and return
    its entry script."""
    return npm.install(f"{PACKAGE}@{version}", cache_dir(version), CACHE_ROOT / ".install.lock",
                       lambda: entry_script(version), ready=Path.is_file, timeout=timeout)


def client_version(exe: Path) -> str:
    for d in Path(exe).parents:
        pj = d / "package.json"
        if pj.is_file():
            try:
                return json.loads(pj.read_text())["version"]
            except (OSError, ValueError, KeyError):
                break
    return "unknown"


def node() -> str:
    return shutil.which("node") or "node"
