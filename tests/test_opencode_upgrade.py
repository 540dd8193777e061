"""Real upgrades of one data dir, with the real clients:

* 1.1.65 (JSON tree) -> 1.2.27: 1.2.27 migrates the tree into opencode.db on its first start and
  leaves the tree in place: both stores hold the old session, which must be counted once (read
  from the database, its old-release token convention normalised);
* 1.1.65 -> 1.18.33: 1.18.33 has no migration code any more, so the old session stays only in the
  tree (opencode 1.18 itself no longer lists it); sessionsift lists it from there.
"""
from __future__ import annotations

import pytest

from tests.realclient.opencode import client as clientmod
from tests.realclient.opencode.checks import _read, check_scenario
from tests.realclient.opencode.fixtures import OpencodeRun, require_opencode

pytestmark = pytest.mark.realclient


def _upgrade(root, new_version):
    from tests.realclient.opencode.runner import run_scenario

    require_opencode(clientmod.OLDER_VERSION)
    require_opencode(new_version)
    shared = root / "data"
    old = run_scenario("shell_write", root / "old", clientmod.OLDER_VERSION, shared_data=shared)
    data = shared / "opencode"
    assert (data / "storage" / "session").is_dir() and not (data / "opencode.db").exists()
    new = run_scenario("failing", root / "new", new_version, shared_data=shared)
    assert (data / "opencode.db").exists() and (data / "storage" / "session").is_dir()  # tree left in place
    disc, sessions = _read(data)
    ids = [r.session_id for r in disc.sessions]
    assert sorted(ids) == sorted(old["session_ids_from_client_events"] + new["session_ids_from_client_events"])
    assert len(ids) == len(set(ids)) == disc.coverage.sessions
    for truth in (old, new):
        d, s = _read(data, truth["cwd"])
        check_scenario(OpencodeRun(truth["scenario"], data, truth), s)
    return old, new, {r.session_id: r for r in disc.sessions}


def test_migrated_tree_is_read_once_from_the_database(tmp_path_factory):
    old, new, refs = _upgrade(tmp_path_factory.mktemp("oc-up-migrate"), clientmod.MIGRATING_VERSION)
    assert all(r.extra["store"] == "sqlite" for r in refs.values())
    assert refs[old["session_ids_from_client_events"][0]].version == clientmod.OLDER_VERSION


def test_tree_not_migrated_by_1_18_is_still_listed(tmp_path_factory):
    old, new, refs = _upgrade(tmp_path_factory.mktemp("oc-up-nomigrate"), clientmod.PINNED_VERSION)
    assert refs[old["session_ids_from_client_events"][0]].extra["store"] == "legacy-json"
    assert refs[new["session_ids_from_client_events"][0]].extra["store"] == "sqlite"
