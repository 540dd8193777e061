"""Locating / installing the pinned opencode client (``opencode-ai`` on npm), and host checks.

Installed with npm into a cache OUTSIDE the clone, under ``flock`` so parallel runs do not race:
``$SESSIONSIFT_CLIENT_CACHE/opencode/<version>`` if that variable is set, else
``${XDG_CACHE_HOME:-~/.cache}/sessionsift/opencode/<version>``, computed from the REAL environment
captured when this module is first imported (tests later point HOME/XDG at temp dirs). The executable
is the Bun-compiled binary ``node_modules/opencode-linux-x64/bin/opencode``; its postinstall is not
needed (npm runs none here).
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

from ..client import PrerequisiteMissing  # one exception type for every real-client harness

PINNED_VERSION = "1.18.33"
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


def _cache_root_from_env(env: dict) -> Path:
    if env.get("SESSIONSIFT_CLIENT_CACHE"):
        return Path(env["SESSIONSIFT_CLIENT_CACHE"]) / "opencode"
    xdg = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(xdg) / "sessionsift" / "opencode"


CACHE_ROOT: Path = _cache_root_from_env(dict(os.environ))


def cache_dir(version: str = PINNED_VERSION) -> Path:
    return CACHE_ROOT / version


def executable(version: str = PINNED_VERSION) -> Path:
    return cache_dir(version) / "node_modules" / PLATFORM_PACKAGE / "bin" / "opencode"


def check_host() -> list[str]:
    """What the host lacks to run the client offline (root, unshare, ip, a working ``unshare -n``)."""
    problems = []
    if os.geteuid() != 0:
        problems.append("not root (needed for `unshare -n` and `ip link set lo up`)")
    for tool in ("unshare", "ip", "env"):
        if not shutil.which(tool):
            problems.append(f"`{tool}` not found on PATH")
    if not problems:
        r = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True)
        if r.returncode != 0:
            problems.append(f"`unshare -n` does not work here: {r.stderr.strip()[:200]}")
    return problems


def ensure_client(version: str = PINNED_VERSION, timeout: float = 600) -> Path:
    """Install ``opencode-ai@version`` into the cache (if absent; under flock) and return the binary."""
    exe = executable(version)
    if exe.is_file() and os.access(exe, os.X_OK):
        return exe
    npm = shutil.which("npm")
    if not npm:
        raise PrerequisiteMissing(f"npm not found on PATH (needed to install {PACKAGE}@{version})")
    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    with open(CACHE_ROOT / ".install.lock", "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if exe.is_file() and os.access(exe, os.X_OK):  # another run installed it while we waited
            return exe
        d = cache_dir(version)
        d.mkdir(parents=True, exist_ok=True)
        try:
            r = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(d), f"{PACKAGE}@{version}"],
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise PrerequisiteMissing(f"npm registry unreachable: `npm install {PACKAGE}@{version}` timed out")
        if r.returncode != 0:
            raise PrerequisiteMissing(
                f"npm registry unreachable or install failed for {PACKAGE}@{version}: {r.stderr.strip()[-400:]}")
    if not exe.is_file():
        raise PrerequisiteMissing(f"installed {PACKAGE}@{version} but no binary at {exe}")
    return exe


def client_version(exe: Path) -> str:
    return json.loads((exe.parent.parent / "package.json").read_text())["version"]
