"""`plan`'s text names the plans dir and where it came from once, without doubled parentheses
("(default (<claude-home>/plans))" before). Data: examples/claude-home, written by Claude Code."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOME = REPO / "examples" / "claude-home"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionsift", "plan", "--claude-home", str(HOME), *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO)


def test_plans_dir_line_has_single_parentheses():
    rows = [json.loads(x) for x in cli("--format", "json").stdout.splitlines() if x.strip()]
    srcs = [(r["plans_dir"], r["plans_dir_source"]) for r in rows if r.get("plans_dir_source")]
    assert srcs
    lines = [ln for ln in cli().stdout.splitlines() if "plans dir:" in ln]
    assert lines and len(lines) == len(srcs)
    for ln, (d, src) in zip(lines, srcs):
        assert ln == f"  plans dir: {d}; source: {src}", ln
        assert "((" not in ln and "))" not in ln, ln
