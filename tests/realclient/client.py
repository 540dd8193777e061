"""Locating / installing the pinned Claude Code client, and checking prerequisites.

The client is installed with npm into a cache dir OUTSIDE the clone:
``$SESSIONSIFT_CLIENT_CACHE/<version>`` if that variable is set, else
``${XDG_CACHE_HOME:-~/.cache}/sessionsift/claude-code/<version>``.  The cache root is
computed from the REAL environment captured when this module is first imported
(tests later monkeypatch HOME/XDG to temp dirs; see tests/conftest.py).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

PINNED_VERSION = "2.1.258"
NEWEST_KNOWN_VERSION = "2.1.332"
PACKAGE = "@anthropic-ai/claude-code"
PLATFORM_PACKAGE = "@anthropic-ai/claude-code-linux-x64"


def _cache_root_from_env(env: dict) -> Path:
    if env.get("SESSIONSIFT_CLIENT_CACHE"):
        return Path(env["SESSIONSIFT_CLIENT_CACHE"])
    xdg = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(xdg) / "sessionsift" / "claude-code"


# Captured at import time, before any test fixture rewrites HOME / XDG_CACHE_HOME.
CACHE_ROOT: Path = _cache_root_from_env(dict(os.environ))


def cache_dir(version: str = PINNED_VERSION) -> Path:
    return CACHE_ROOT / version


def executable(version: str = PINNED_VERSION) -> Path:
    """The real native executable inside the platform package."""
    return cache_dir(version) / "node_modules" / PLATFORM_PACKAGE / "claude"


class PrerequisiteMissing(RuntimeError):
    """Raised with a message that names exactly which prerequisite is missing."""


def check_host() -> list[str]:
    """Prerequisites of the host (not the client install). Returns a list of problems."""
    problems = []
    if os.geteuid() != 0:
        problems.append("not root (needed for `unshare -n` and `ip link set lo up`)")
    for tool in ("unshare", "ip", "tmux"):
        if not shutil.which(tool):
            problems.append(f"`{tool}` not found on PATH")
    if not problems:
        r = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True)
        if r.returncode != 0:
            problems.append(f"`unshare -n` does not work here: {r.stderr.strip()[:200]}")
    return problems


def ensure_client(version: str = PINNED_VERSION, timeout: float = 600) -> Path:
    """Install ``@anthropic-ai/claude-code@version`` into the cache (if absent) and return the executable."""
    exe = executable(version)
    if exe.is_file() and os.access(exe, os.X_OK):
        return exe
    npm = shutil.which("npm")
    if not npm:
        raise PrerequisiteMissing(f"npm not found on PATH (needed to install {PACKAGE}@{version})")
    d = cache_dir(version)
    d.mkdir(parents=True, exist_ok=True)
    try:
        r = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(d), f"{PACKAGE}@{version}"],
            capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise PrerequisiteMissing(f"npm registry unreachable: `npm install {PACKAGE}@{version}` timed out")
    if r.returncode != 0:
        raise PrerequisiteMissing(
            f"npm registry unreachable or install failed for {PACKAGE}@{version}: {r.stderr.strip()[-400:]}")
    if not exe.is_file():
        raise PrerequisiteMissing(f"installed {PACKAGE}@{version} but no native executable at {exe}")
    return exe


def client_version(exe: Path) -> str:
    # the version is in the platform package's package.json
    import json
    pj = exe.parent / "package.json"
    return json.loads(pj.read_text())["version"]
