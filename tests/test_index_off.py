"""The key CLI tests once more with the index off (SESSIONSIFT_NO_INDEX=1): every command answers
the same by scanning (the rest of the suite runs with the index on, its default). This is the
suite's "--no-index pass" (issue 16); it runs in a child pytest so the setting cannot leak."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KEY_TESTS = ["tests/test_cli_contract.py", "tests/test_core_realdata.py", "tests/test_search.py"]


def test_key_cli_tests_pass_with_the_index_off(tmp_path):
    env = dict(os.environ, SESSIONSIFT_NO_INDEX="1", SESSIONSIFT_INDEX_DIR=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *KEY_TESTS],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    assert " passed" in p.stdout.splitlines()[-1]
    # and nothing was indexed: the switch really was off
    assert not (tmp_path / "cache").exists()


HOME = REPO / "examples" / "home"


def test_the_no_index_flag_writes_nothing_to_the_index(tmp_path):
    """`--no-index` means neither use nor write the index (docs/index.md). `list --no-index` wrote
    Claude Code's fork families (Provider.lineage knew no index decision) and `sync --no-index` its
    usage cache and fork families: each command over every agent's sample leaves no index directory."""
    env = {k: v for k, v in os.environ.items() if k != "SESSIONSIFT_NO_INDEX"}
    cases = [(["list"], 0), (["stats"], 0), (["usage", "daily"], 0), (["usage", "session"], 0),
             (["search", "", "--count-by", "day"], 0), (["search", "the", "-c"], 0), (["files"], 0),
             (["status"], 0), (["sync", "--to", str(tmp_path / "ds"), "--machine", "m"], 0)]
    for i, (args, rc) in enumerate(cases):
        idx = tmp_path / f"idx-{i}"
        p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--home", str(HOME), "--no-index"],
                           env=dict(env, SESSIONSIFT_INDEX_DIR=str(idx)), capture_output=True, text=True, timeout=300)
        assert p.returncode == rc, (args, p.returncode, p.stderr[-2000:])
        assert not idx.exists(), (args, sorted(str(x.relative_to(idx)) for x in idx.rglob("*")))
