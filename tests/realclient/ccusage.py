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

import json
import os
import subprocess
from pathlib import Path

from .common import npm
from .common.host import PrerequisiteMissing

VERSION = "20.0.24"


CACHE_ROOT = npm.cache_root(dict(os.environ), "ccusage")


class Missing(PrerequisiteMissing):
    """Raised naming exactly what is missing."""


def executable(version: str = VERSION) -> Path:
    return CACHE_ROOT / version / "node_modules" / ".bin" / "ccusage"


def ensure(version: str = VERSION, timeout: float = 600) -> Path:
    exe = executable(version)
    native = CACHE_ROOT / version / "node_modules" / "@ccusage" / "ccusage-linux-x64" / "bin" / "ccusage"
    npm.install(f"ccusage@{version}", CACHE_ROOT / version, CACHE_ROOT / f"{version}.lock", lambda: native,
                ready=lambda p: p.exists() and exe.exists(), timeout=timeout, missing=Missing)
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
