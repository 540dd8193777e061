"""Locating / installing the pinned Codex CLI, and checking prerequisites.

The client is installed with npm into a cache dir OUTSIDE the clone:
``$SESSIONSIFT_CODEX_CACHE/<version>`` if that variable is set, else
``${XDG_CACHE_HOME:-~/.cache}/sessionsift/codex/<version>``.  The cache root is computed from the
REAL environment captured when this module is first imported (tests later monkeypatch HOME/XDG
to temp dirs; see tests/conftest.py).  Installs run under ``flock`` on a lock file beside the
version dir, so parallel test runs (or engineers) never race on one install.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

PINNED_VERSION = "0.171.0"
# The newest release on npm when the harness was written is the pinned one (dist-tag latest =
# 0.171.0, published 2026-11-20); the comparison run in README.md uses the release before it.
NEWEST_KNOWN_VERSION = "0.171.0"
PREVIOUS_VERSION = "0.169.0"
PACKAGE = "@openai/codex"
BINARY_REL = Path("node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
LEGACY_BINARY_REL = Path("node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/codex/codex")
"""Releases before the per-platform packages (e.g. 0.50.0) ship every binary in the main package."""


def _cache_root_from_env(env: dict) -> Path:
    if env.get("SESSIONSIFT_CODEX_CACHE"):
        return Path(env["SESSIONSIFT_CODEX_CACHE"])
    xdg = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(xdg) / "sessionsift" / "codex"


# Captured at import time, before any test fixture rewrites HOME / XDG_CACHE_HOME.
CACHE_ROOT: Path = _cache_root_from_env(dict(os.environ))


def cache_dir(version: str = PINNED_VERSION) -> Path:
    return CACHE_ROOT / version


def executable(version: str = PINNED_VERSION) -> Path:
    """The static musl binary inside the platform package (called directly, no node)."""
    legacy = cache_dir(version) / LEGACY_BINARY_REL
    return legacy if legacy.is_file() else cache_dir(version) / BINARY_REL


class PrerequisiteMissing(RuntimeError):
    """Raised with a message that names exactly which prerequisite is missing."""


def check_host() -> list[str]:
    """Prerequisites of the host (not the client install). Returns a list of problems."""
    problems = []
    if os.uname().machine not in ("x86_64", "amd64"):
        problems.append(f"not an x86_64 host ({os.uname().machine}): the harness runs the linux-x64 binary")
    if os.geteuid() != 0:
        problems.append("not root (needed for `unshare -n` and `ip link set lo up`)")
    for tool in ("unshare", "ip"):
        if not shutil.which(tool):
            problems.append(f"`{tool}` not found on PATH")
    if not problems:
        r = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True)
        if r.returncode != 0:
            problems.append(f"`unshare -n` does not work here: {r.stderr.strip()[:200]}")
    return problems


def ensure_client(version: str = PINNED_VERSION, timeout: float = 600) -> Path:
    """Install ``@openai/codex@version`` into the cache (if absent) and return the executable."""
    exe = executable(version)
    if exe.is_file() and os.access(exe, os.X_OK):
        return exe
    npm = shutil.which("npm")
    if not npm:
        raise PrerequisiteMissing(f"npm not found on PATH (needed to install {PACKAGE}@{version})")
    d = cache_dir(version)
    d.parent.mkdir(parents=True, exist_ok=True)
    with open(d.parent / f".install-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be installing the same version
        if exe.is_file() and os.access(exe, os.X_OK):
            return exe
        d.mkdir(parents=True, exist_ok=True)
        try:
            r = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(d), f"{PACKAGE}@{version}"],
                capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise PrerequisiteMissing(f"npm registry unreachable: `npm install {PACKAGE}@{version}` timed out")
        if r.returncode != 0:
            raise PrerequisiteMissing(
                f"npm registry unreachable or install failed for {PACKAGE}@{version}: {r.stderr.strip()[-400:]}")
    exe = executable(version)
    if not exe.is_file():
        raise PrerequisiteMissing(f"installed {PACKAGE}@{version} but no executable at {exe}")
    return exe


def client_version(exe: Path) -> str:
    """The version from the platform package's package.json (``0.171.0-linux-x64`` -> ``0.171.0``)."""
    pj = Path(exe).parents[3] / "package.json"
    return json.loads(pj.read_text())["version"].split("-")[0]
