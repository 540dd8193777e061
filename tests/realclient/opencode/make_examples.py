"""Regenerate the committed opencode sample with the real client (offline).

    .venv/bin/python -m tests.realclient.opencode.make_examples

Runs the sample scenarios one after another against ONE shared data dir (one opencode.db holding
every session, as a user's does) under /tmp/ssift-oc-sample (a fixed path, so the recorded work
dirs are the same each run), then writes:

* examples/opencode-home/opencode.db: a copy of the client's database taken together with its
  -wal and -shm (never the main file alone), checkpointed in the copy so the committed file is
  self-contained; the client's log/, snapshot/ and repos/ dirs are left out;
* examples/opencode-ground-truth/<scenario>.json: each scenario's ground truth;
* examples/opencode-legacy-home/storage/: the JSON tree the older 1.1.65 writes for two scenarios,
  with examples/opencode-legacy-ground-truth/.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

from . import client as clientmod
from .fixtures import LEGACY_SAMPLE
from ..common import isolate
from .runner import run_scenario
from .scenarios import SAMPLE

REPO = Path(__file__).resolve().parents[3]
ROOT = Path("/tmp/ssift-oc-sample")


def copy_db(src_dir: Path, dst: Path, name: str = "opencode.db") -> None:
    """Copy the client's database with its -wal/-shm, then checkpoint the copy (ours, not the client's)."""
    with tempfile.TemporaryDirectory() as td:
        for suf in ("", "-wal", "-shm"):
            f = src_dir / f"{name}{suf}"
            if f.exists():
                shutil.copy2(f, Path(td) / f.name)
        con = sqlite3.connect(Path(td) / name)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("VACUUM")  # compacts the copy; the rows are the client's, unchanged
        con.close()
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(td) / name, dst)


def main(argv=None) -> int:
    argparse.ArgumentParser(description="Regenerate examples/opencode-home and examples/opencode-legacy-home "
                                        f"with the real client (offline, under {ROOT}).").parse_args(argv)
    rc = isolate.private_fixed_roots([ROOT], "tests.realclient.opencode.make_examples", list(sys.argv[1:] if argv is None else argv))
    if rc is not None:  # the canonical root, as this run's own (common/isolate.py)
        return rc
    if ROOT.exists():
        shutil.rmtree(ROOT)
    shared = ROOT / "shared-data"
    truths = [run_scenario(n, ROOT, shared_data=shared) for n in SAMPLE]
    home = REPO / "examples" / "opencode-home"
    gt = REPO / "examples" / "opencode-ground-truth"
    for d in (home, gt):
        if d.exists():
            shutil.rmtree(d)
    copy_db(shared / "opencode", home / "opencode.db")
    gt.mkdir(parents=True)
    for t in truths:
        (gt / f"{t['scenario']}.json").write_text(json.dumps(t, indent=2, sort_keys=True) + "\n")
    # the legacy JSON tree from an older release
    lshared = ROOT / "legacy-data"
    ltruths = [run_scenario(n, ROOT / "legacy", clientmod.OLDER_VERSION, shared_data=lshared) for n in LEGACY_SAMPLE]
    lhome = REPO / "examples" / "opencode-legacy-home"
    lgt = REPO / "examples" / "opencode-legacy-ground-truth"
    for d in (lhome, lgt):
        if d.exists():
            shutil.rmtree(d)
    shutil.copytree(lshared / "opencode" / "storage", lhome / "storage")
    lgt.mkdir(parents=True)
    for t in ltruths:
        (lgt / f"{t['scenario']}.json").write_text(json.dumps(t, indent=2, sort_keys=True) + "\n")
    for t in truths + ltruths:
        print(t["scenario"], t["client_version"], t["session_ids_from_client_events"], [r["rc"] for r in t["runs"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
