"""Regenerate the committed Kilo Code sample with the real client (offline).

    .venv/bin/python -m tests.realclient.kilo.make_examples

Runs the sample scenarios one after another against ONE shared data dir (one kilo.db holding every
session, as a user's does) under /tmp/ssift-kilo-sample (a fixed path, so the recorded work dirs are the
same each run), then writes:

* examples/kilo-home/kilo.db: a copy of the client's database taken together with its -wal and -shm (the
  client leaves nearly everything in the -wal), checkpointed in the copy so the committed file is
  self-contained; the client's log/, snapshot/, repos/, storage/session_diff/ and telemetry-id are left out;
* examples/kilo-ground-truth/<scenario>.json: each scenario's ground truth.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from ..common import isolate
from ..opencode.make_examples import copy_db
from .runner import run_scenario
from .scenarios import SAMPLE

REPO = Path(__file__).resolve().parents[3]
ROOT = Path("/tmp/ssift-kilo-sample")


def main(argv=None) -> int:
    argparse.ArgumentParser(description=f"Regenerate examples/kilo-home with the real client (offline, under {ROOT})."
                            ).parse_args(argv)
    rc = isolate.private_fixed_roots([ROOT], "tests.realclient.kilo.make_examples", list(sys.argv[1:] if argv is None else argv))
    if rc is not None:  # the canonical root, as this run's own (common/isolate.py)
        return rc
    for c in (ROOT.iterdir() if ROOT.is_dir() else ()):  # ROOT itself is a mount point here: empty it
        shutil.rmtree(c)
    shared = ROOT / "shared-data"
    truths = [run_scenario(n, ROOT, shared_data=shared) for n in SAMPLE]
    home = REPO / "examples" / "kilo-home"
    gt = REPO / "examples" / "kilo-ground-truth"
    for d in (home, gt):
        if d.exists():
            shutil.rmtree(d)
    copy_db(shared / "kilo", home / "kilo.db", "kilo.db")
    gt.mkdir(parents=True)
    for t in truths:
        (gt / f"{t['scenario']}.json").write_text(json.dumps(t, indent=2, sort_keys=True) + "\n")
        print(t["scenario"], t["client_version"], t["session_ids_from_client_events"], [r["rc"] for r in t["runs"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
