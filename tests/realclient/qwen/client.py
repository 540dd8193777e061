"""Locating / installing the pinned Qwen Code client (``@qwen-code/qwen-code`` on npm), and host checks.

Installed with npm into a cache OUTSIDE the clone, under ``flock`` so parallel runs do not race:
``$SESSIONSIFT_CLIENT_CACHE/qwen-code/<version>`` if that variable is set, else
``${XDG_CACHE_HOME:-~/.cache}/sessionsift/qwen-code/<version>``, computed from the REAL environment captured
when this module is first imported (tests later point HOME/XDG at temp dirs). The client is plain
JavaScript run by node (``cli-entry.js``, the package's ``bin.qwen``, which relaunches itself as a child
``node ... cli.js`` unless ``QWEN_CODE_NO_RELAUNCH`` is set; the child writes the session). The package
declares node >= 22; 0.24.4 runs on node 20 for everything the scenarios do (measured). npm runs no
install scripts here and none is needed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from ..common import npm
from ..common.host import PrerequisiteMissing, host_problems  # noqa: F401 - one exception for every harness

PIN = "0.24.4"
"""The pinned release: what CI runs and the committed examples were written by."""
VERSION_VAR = "SSIFT_QWEN_VERSION"
PINNED_VERSION = npm.version(dict(os.environ), VERSION_VAR, PIN)
"""The release every test and runner of this harness runs: ``PIN``, unless ``$SSIFT_QWEN_VERSION`` names another
(e.g. the newest on npm, to run the same tests with it; the environment as it was at import)."""
NEWEST_KNOWN_VERSION = "0.24.4"
"""npm's ``latest`` when this harness was written (checked with ``npm view``): the pinned one."""
PACKAGE = "@qwen-code/qwen-code"

CACHE_ROOT: Path = npm.cache_root(dict(os.environ), "qwen-code", "SESSIONSIFT_CLIENT_CACHE", "qwen-code")


def cache_dir(version: str = PINNED_VERSION) -> Path:
    return CACHE_ROOT / version


def package_dir(version: str = PINNED_VERSION) -> Path:
    return cache_dir(version) / "node_modules" / "@qwen-code" / "qwen-code"


def entry_script(version: str = PINNED_VERSION) -> Path:
    """``node <this>`` runs the client (``bin.qwen`` of the package: ``cli-entry.js``)."""
    try:
        rel = json.loads((package_dir(version) / "package.json").read_text())["bin"]["qwen"]
    except (OSError, ValueError, KeyError, TypeError):
        rel = "cli-entry.js"
    return package_dir(version) / rel


def _node_20() -> str | None:
    r = subprocess.run(["node", "-e", "process.exit(+process.versions.node.split('.')[0] >= 20 ? 0 : 1)"])
    return None if r.returncode == 0 else "node >= 20 is needed by @qwen-code/qwen-code (it declares 22; 0.24.4 runs on 20)"


def check_host() -> list[str]:
    """What the host lacks to run the client offline (root, unshare, ip, node >= 20, a working ``unshare -n``)."""
    return host_problems(("unshare", "ip", "env", "node"), checks=(_node_20,))


def ensure_client(version: str = PINNED_VERSION, timeout: float = 600) -> Path:
    """Install ``@qwen-code/qwen-code@version`` into the cache (if absent; under flock) and return
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
