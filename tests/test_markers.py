"""The pytest markers the project declares are the ones its tests use: a declared marker no test
carries selects nothing (`-m slow` ran zero tests), and an undeclared one is refused
(`--strict-markers` in pyproject)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_every_declared_marker_is_used_and_only_declared_ones_are():
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    declared = {m.split(":", 1)[0].strip() for m in cfg["markers"]}
    assert "--strict-markers" in cfg.get("addopts", "")
    builtin = {"parametrize", "skipif", "skip", "xfail", "usefixtures", "filterwarnings"}
    used = set()
    for f in (REPO / "tests").rglob("*.py"):
        used |= set(re.findall(r"pytest\.mark\.([a-z_]+)", f.read_text(errors="replace"))) - builtin
    assert declared == used, (sorted(declared - used), sorted(used - declared))
