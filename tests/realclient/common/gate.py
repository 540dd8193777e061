"""A gate the test opens: a mock holds a scripted reply until the test releases it.

Live-state tests snapshot a real client WHILE its turn is open: the mock serves every reply up to
the gated one, then waits (in the harness, never in the test) until the test creates the gate's
file, so no step rests on a duration. `hold` runs in the mock's server thread; `release` in the
test. A gate never opened ends at `limit` seconds (the client then gets its reply and the test,
which asserted before releasing, has already failed or moved on)."""
from __future__ import annotations

import time
from pathlib import Path

LIMIT = 300.0


def path(s_dir: Path | str, name: str) -> Path:
    return Path(s_dir) / f"gate-{name}"


def hold(s_dir: Path | str, name: str, limit: float = LIMIT) -> bool:
    """Block until the gate ``name`` of scenario dir ``s_dir`` is released; False at ``limit``."""
    p = path(s_dir, name)
    end = time.monotonic() + limit
    while not p.exists():
        if time.monotonic() >= end:
            return False
        time.sleep(0.05)
    return True


def release(s_dir: Path | str, name: str) -> None:
    path(s_dir, name).write_text("released\n")
