"""A warm `usage` answers from the usage cache (providers/claude/cache/usagecache.py) exactly what the scan answers:
the same JSON, with and without `--no-index`, on the first run (which fills it), the second (which
reads it), after an append, a rewrite and a deletion of a transcript; `--no-index` writes nothing,
and `index clear` removes it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "examples" / "claude-home"


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SESSIONSIFT_", "XDG_", "CLAUDE_"))}
    env["SESSIONSIFT_INDEX_DIR"] = str(tmp_path / "idx")
    env["HOME"] = str(tmp_path / "userhome")
    env["TZ"] = "UTC"
    (tmp_path / "userhome").mkdir(exist_ok=True)
    return env


def _usage(env: dict, home: Path, *extra: str) -> tuple[int, list[dict]]:
    r = subprocess.run([sys.executable, "-m", "sessionsift", "usage", "daily", "--claude-home", str(home),
                        "--format", "json", *extra], capture_output=True, text=True, env=env, cwd=env["HOME"])
    return r.returncode, [json.loads(x) for x in r.stdout.splitlines() if x.strip()]


def _same(env: dict, home: Path) -> list[dict]:
    base = _usage(env, home, "--no-index")
    for _ in range(2):
        got = _usage(env, home)
        assert got == base
    return base[1]


def _caches(tmp_path: Path) -> list[Path]:
    return list((tmp_path / "idx").rglob("claude-usage/*/*.idx"))


def test_the_cached_usage_is_the_scans_through_appends_rewrites_and_deletions(tmp_path):
    env = _env(tmp_path)
    home = tmp_path / "claude"
    shutil.copytree(SRC, home)
    assert _usage(env, home, "--no-index")[0] == 0
    assert _caches(tmp_path) == []  # --no-index: nothing written
    rows = _same(env, home)
    assert len(_caches(tmp_path)) == 1
    tot = rows[-1]
    lanes = sorted((home / "projects").rglob("*.jsonl"))
    victim = next(p for p in lanes if b'"usage"' in p.read_bytes() and b'"type":"assistant"' in p.read_bytes())
    data = victim.read_bytes()
    line = next(x for x in data.splitlines(keepends=True) if b'"usage"' in x and b'"type":"assistant"' in x)
    # an append: the same response under a message id of its own (hand-made: no client writes a chosen id)
    with open(victim, "ab") as f:
        f.write(line.replace(b'"id":"msg_', b'"id":"msg_zqx', 1).replace(b'"uuid":"', b'"uuid":"f', 1))
    rows2 = _same(env, home)
    assert rows2[-1] != tot
    victim.write_bytes(data)  # rewritten as it was
    assert _same(env, home)[-1] == tot
    victim.unlink()
    _same(env, home)
    r = subprocess.run([sys.executable, "-m", "sessionsift", "index", "clear", "--claude-home", str(home), "--format",
                        "json"], capture_output=True, text=True, env=env, cwd=env["HOME"])
    assert r.returncode == 0
    assert _caches(tmp_path) == []
    assert any(json.loads(x).get("summary") == "usage" for x in r.stdout.splitlines() if x.strip())
