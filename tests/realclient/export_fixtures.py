"""pytest fixture: the export_secrets scenario (tests/realclient/scenarios_export.py) run once per
test session with the real Claude Code client; skips naming a missing prerequisite, fails under
CI=true."""
from __future__ import annotations

import pytest

from . import scenarios_export as SX
from .fixtures import require_realclient


@pytest.fixture(scope="session")
def export_rc(tmp_path_factory):
    require_realclient()
    return SX.run_export_scenario(tmp_path_factory.mktemp("export-rc"))
