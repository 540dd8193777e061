"""Locating / installing the pinned Gemini CLI, and checking prerequisites.

The client is installed with npm into a cache dir OUTSIDE the clone, under ``flock`` so parallel runs
do not race: ``$SESSIONSIFT_GEMINI_CACHE/<version>`` if that variable is set, else
``${XDG_CACHE_HOME:-~/.cache}/sessionsift/gemini-cli/<version>``.  The cache root is computed from the
REAL environment captured when this module is first imported (tests later monkeypatch HOME/XDG to temp
dirs; see tests/conftest.py).
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

PINNED_VERSION = "0.61.0"
NEWEST_KNOWN_VERSION = "0.61.0"
"""The newest release on npm when this harness was written (2026-09-25; see README.md)."""
OLDER_VERSIONS = ("0.60.0",)
"""Older releases the README compares against (what moved)."""
PACKAGE = "@google/gemini-cli"


def _cache_root_from_env(env: dict) -> Path:
    if env.get("SESSIONSIFT_GEMINI_CACHE"):
        return Path(env["SESSIONSIFT_GEMINI_CACHE"])
    xdg = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(xdg) / "sessionsift" / "gemini-cli"


# Captured at import time, before any test fixture rewrites HOME / XDG_CACHE_HOME.
CACHE_ROOT: Path = _cache_root_from_env(dict(os.environ))


class PrerequisiteMissing(RuntimeError):
    """Raised with a message that names exactly which prerequisite is missing."""


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


def check_host() -> list[str]:
    """Prerequisites of the host (not the client install). Returns a list of problems."""
    problems = []
    if os.geteuid() != 0:
        problems.append("not root (needed for `unshare -n` and `ip link set lo up`)")
    for tool in ("unshare", "ip", "node", "tmux"):  # tmux drives the interactive (rewind) scenario
        if not shutil.which(tool):
            problems.append(f"`{tool}` not found on PATH")
    if not problems:
        r = subprocess.run(["node", "-e", "process.exit(+process.versions.node.split('.')[0] >= 20 ? 0 : 1)"])
        if r.returncode != 0:
            problems.append("node >= 20 is needed by @google/gemini-cli")
        r = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True)
        if r.returncode != 0:
            problems.append(f"`unshare -n` does not work here: {r.stderr.strip()[:200]}")
    return problems


def ensure_client(version: str = PINNED_VERSION, timeout: float = 900) -> Path:
    """Install ``@google/gemini-cli@version`` into the cache (if absent) and return its entry script."""
    exe = entry_script(version)
    if exe.is_file():
        return exe
    npm = shutil.which("npm")
    if not npm:
        raise PrerequisiteMissing(f"npm not found on PATH (needed to install {PACKAGE}@{version})")
    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    with open(CACHE_ROOT / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test process may be installing the same version
        if exe.is_file():
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
        raise PrerequisiteMissing(f"installed {PACKAGE}@{version} but found no {exe}")
    return exe


def client_version(exe: Path) -> str:
    """The version of the package whose entry script is ``exe``."""
    for d in exe.parents:
        pj = d / "package.json"
        if pj.is_file():
            return json.loads(pj.read_text())["version"]
    raise FileNotFoundError(f"no package.json above {exe}")
