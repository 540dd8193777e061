"""Scenarios defined outside a harness's own library: ``"<module>:<name>"`` names scenario
``name`` of ``<module>.ALL`` (e.g. ``tests.realclient.codex.scenarios_review:long_haul``), so a
module can add scenarios without joining the library every fixture runs. A plain name is looked
up in the harness's own ``ALL``."""

from __future__ import annotations

import importlib


def lookup(name: str, default: dict):
    if ":" not in name:
        return default[name]
    mod, _, short = name.rpartition(":")
    return importlib.import_module(mod).ALL[short]


def short(name: str) -> str:
    """The scenario's own name (its directory under the run root)."""
    return name.rpartition(":")[2]
