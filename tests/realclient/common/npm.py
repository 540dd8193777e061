"""A real client (or peer tool) installed with npm into a cache OUTSIDE the clone, under ``flock``.

The cache root is ``$<OVERRIDE>[/<sub>]`` when the harness's override variable is set, else
``${XDG_CACHE_HOME:-~/.cache}/sessionsift/<name>``. Each harness computes it from the REAL
environment when its module is imported (tests later point HOME/XDG at temp dirs; see
tests/conftest.py). Installs hold an exclusive ``flock`` on the harness's lock file, and look again
once they hold it, so parallel runs (or engineers) never race on one install.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable

from .host import PrerequisiteMissing


def cache_root(env: dict, name: str, override: str | None = None, override_sub: str = "") -> Path:
    """The cache root for ``name`` in environment ``env`` (pass ``dict(os.environ)`` at import)."""
    if override and env.get(override):
        return Path(env[override]) / override_sub if override_sub else Path(env[override])
    xdg = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(xdg) / "sessionsift" / name


def version(env: dict, var: str, pin: str) -> str:
    """The client version a harness runs: ``$var`` in ``env`` when it is set and not empty, else
    ``pin`` (pass ``dict(os.environ)`` at import). ``SSIFT_KILO_VERSION=7.7.9 ptest tests/test_kilo_realclient.py``
    runs that client's tests with another release; nothing else changes (the same offline launch)."""
    return (env.get(var) or "").strip() or pin


def executable_ready(exe: Path) -> bool:
    return exe.is_file() and os.access(exe, os.X_OK)


def install(spec: str, prefix: Path, lock: Path, locate: Callable[[], Path],
            ready: Callable[[Path], bool] = executable_ready, timeout: float = 600,
            missing: type[Exception] = PrerequisiteMissing) -> Path:
    """``npm install spec`` into ``prefix`` unless ``ready(locate())`` already; return ``locate()``.

    ``spec`` is ``package@version``. Every failure raises ``missing`` naming what is missing: npm
    itself, the registry (a timeout or a failed install), or the executable after the install."""
    exe = locate()
    if ready(exe):
        return exe
    npm = shutil.which("npm")
    if not npm:
        raise missing(f"npm not found on PATH (needed to install {spec})")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)  # another process may be installing the same version
        if not ready(locate()):  # else it was installed while we waited
            prefix.mkdir(parents=True, exist_ok=True)
            try:
                r = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), spec],
                                   capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise missing(f"npm registry unreachable: `npm install {spec}` timed out")
            if r.returncode != 0:
                raise missing(f"npm registry unreachable or install failed for {spec}: {r.stderr.strip()[-400:]}")
    exe = locate()
    if not ready(exe):
        raise missing(f"installed {spec} but found no executable at {exe}")
    return exe
