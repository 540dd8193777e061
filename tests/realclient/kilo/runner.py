"""Run a Kilo Code scenario with the real client against the Chat Completions mock, offline.

Kilo Code's CLI is built from opencode's code: the same ``run`` command (``kilo run --print-logs --format
json [--continue] PROMPT``), the same config shape (a ``provider`` entry using the bundled
``@ai-sdk/openai-compatible`` with a custom ``baseURL``), only under its own names: the config is
``$XDG_CONFIG_HOME/kilo/kilo.json``, the data dir ``$XDG_DATA_HOME/kilo`` (``kilo.db``), and the switches
are ``KILO_DISABLE_*``. So this runner is opencode's (tests/realclient/opencode/runner.py) with the
:data:`KILO` flavour: outer ``unshare -n``, inner loopback only, ``env -i``, HOME/XDG in temp dirs, the
mock on 127.0.0.1. Beyond opencode's switches it turns off Kilo's own network features
(``KILO_DISABLE_SESSION_INGEST``, ``_PRESENCE``, ``_CODEBASE_INDEXING``) and its PostHog telemetry
(``KILO_TELEMETRY_LEVEL=off``; the namespace would block it anyway, but its shutdown waits for a timeout).

CLI: ``python -m tests.realclient.kilo.runner [SCENARIO] [--root R] [--version V]``
"""
from __future__ import annotations

import sys
from pathlib import Path

from . import client as clientmod
from ..opencode import runner as oc
from .scenarios import ALL

KILO = oc.Flavor("kilo", "tests.realclient.kilo.runner", clientmod, "kilo", "kilo.json", "KILO_DISABLE_",
                 oc.DISABLE + ("SESSION_INGEST", "PRESENCE", "CODEBASE_INDEXING"), ALL,
                 {"KILO_TELEMETRY_LEVEL": "off"})


def run_scenario(name: str, root: Path, version: str = clientmod.PINNED_VERSION, timeout: float = 300,
                 shared_data: Path | None = None) -> dict:
    return oc.run_scenario(name, root, version, timeout, shared_data, flavor=KILO)


def start_scenario(name: str, root: Path, version: str = clientmod.PINNED_VERSION):
    return oc.start_scenario(name, root, version, flavor=KILO)


def main(argv=None) -> int:
    return oc.main(argv, flavor=KILO)


if __name__ == "__main__":
    sys.exit(main())
