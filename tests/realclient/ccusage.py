"""ccusage, the peer usage reporter, installed from npm into a cache OUTSIDE the clone and run on a
corpus only (never on this machine's home).

Cache: ``${XDG_CACHE_HOME:-~/.cache}/sessionsift/ccusage/<version>`` computed from the REAL
environment when this module is imported (tests later point HOME at temp dirs), installed under
``flock`` so parallel runs do not race. ccusage 20 is a native binary shipped in a platform
package (``@ccusage/ccusage-linux-x64``); 20.0.24 is the newest version whose platform package
the registry serves here. It is run with ``env -i``: PATH, HOME and CLAUDE_CONFIG_DIR (the
corpus), TZ, and ``--offline`` (its embedded price table; it would otherwise fetch one).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

VERSION = "20.0.24"


def _cache_root(env: dict) -> Path:
    xdg = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(xdg) / "sessionsift" / "ccusage"


CACHE_ROOT = _cache_root(dict(os.environ))


class Missing(RuntimeError):
    """Raised naming exactly what is missing."""


def executable(version: str = VERSION) -> Path:
    return CACHE_ROOT / version / "node_modules" / ".bin" / "ccusage"


def ensure(version: str = VERSION, timeout: float = 600) -> Path:
    exe = executable(version)
    native = CACHE_ROOT / version / "node_modules" / "@ccusage" / "ccusage-linux-x64" / "bin" / "ccusage"
    if exe.exists() and native.exists():
        return exe
    npm = shutil.which("npm")
    if not npm:
        raise Missing(f"npm not found on PATH (needed to install ccusage@{version})")
    d = CACHE_ROOT / version
    d.mkdir(parents=True, exist_ok=True)
    with open(CACHE_ROOT / f"{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (exe.exists() and native.exists()):
            try:
                r = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(d), f"ccusage@{version}"],
                                   capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise Missing(f"npm registry unreachable: `npm install ccusage@{version}` timed out")
            if r.returncode != 0:
                raise Missing(f"npm install ccusage@{version} failed: {r.stderr.strip()[-400:]}")
    if not (exe.exists() and native.exists()):
        raise Missing(f"installed ccusage@{version} but its native binary is missing at {native}")
    return exe


def run(home: Path, args: list[str], claude_dir: Path | None = None, tz: str = "UTC",
        version: str = VERSION) -> dict:
    """ccusage ARGS --offline --json with HOME = `home` (its other agents' defaults live there)
    and CLAUDE_CONFIG_DIR = `claude_dir` (default home/.claude)."""
    exe = ensure(version)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TZ": tz,
           "CLAUDE_CONFIG_DIR": str(claude_dir or home / ".claude"), "NO_COLOR": "1"}
    p = subprocess.run([str(exe), *args, "--offline", "--json"], capture_output=True, text=True, env=env,
                       cwd=str(home), timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"ccusage {' '.join(args)} exited {p.returncode}: {p.stderr[-400:]}")
    return json.loads(p.stdout)
