"""Regenerate the committed GitHub Copilot CLI sample with the real client (offline).

    .venv/bin/python -m tests.realclient.copilot.make_examples

Runs the sample scenarios (two at a time) under /tmp/ssift-copilot-sample (a fixed path, so the recorded
cwds are the same each run), then writes:

* examples/copilot-home/session-state/: every scenario's ``session-state/<id>/`` dir as the client left it
  (events.jsonl, workspace.yaml, checkpoints/, rewind-file-snapshots/, the killed scenario's stale
  inuse.<pid>.lock/.hold) and ``.session-operation-locks/`` -- one COPILOT_HOME holding every session, as a
  user's does. Left out: a session's ``session.db`` (the schema of the client's ``sql`` tool and workflow
  tables, 190 KB holding only its schema-version row: written in the compaction run, never read), each
  run's ``session-store.db`` (the client's derived cross-session index, one per scenario run, not read),
  ``logs/``, ``config.json`` and ``settings.json.lock``;
* examples/copilot-ground-truth/<scenario>.json: each scenario's ground truth;
* examples/copilot-1.0.92-home/ and examples/copilot-1.0.92-ground-truth/: the same scenarios run with the
  release before the pinned one (client.OLDER_VERSION), which writes no per-call usage record.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from . import client as clientmod
from ..common import host, isolate
from .runner import run_scenario
from .scenarios import SAMPLE

REPO = Path(__file__).resolve().parents[3]
ROOT = Path("/tmp/ssift-copilot-sample")


def main(argv=None) -> int:
    argparse.ArgumentParser(description=f"Regenerate examples/copilot-home with the real client (offline, under {ROOT})."
                            ).parse_args(argv)
    rc = isolate.private_fixed_roots([ROOT], "tests.realclient.copilot.make_examples", list(sys.argv[1:] if argv is None else argv))
    if rc is not None:  # the canonical root, as this run's own (common/isolate.py)
        return rc
    for c in (ROOT.iterdir() if ROOT.is_dir() else ()):  # ROOT itself is a mount point here: empty it
        shutil.rmtree(c)
    write(host.run_parallel(lambda n: run_scenario(n, ROOT), SAMPLE, 2), "copilot-home", "copilot-ground-truth")
    old = clientmod.OLDER_VERSION
    write(host.run_parallel(lambda n: run_scenario(n, ROOT / old, old), SAMPLE, 2), f"copilot-{old}-home",
          f"copilot-{old}-ground-truth")
    return 0


def write(truths: list[dict], home_name: str, gt_name: str) -> None:
    home = REPO / "examples" / home_name
    gt = REPO / "examples" / gt_name
    for d in (home, gt):
        if d.exists():
            shutil.rmtree(d)
    gt.mkdir(parents=True)
    for t in truths:
        src = Path(t["copilot_home"]) / "session-state"
        shutil.copytree(src, home / "session-state", symlinks=True, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("session.db"))
        (gt / f"{t['scenario']}.json").write_text(json.dumps(t, indent=2, sort_keys=True) + "\n")
        print(t["scenario"], t["client_version"], t["session_ids_on_disk"], [r["rc"] for r in t["runs"]])


if __name__ == "__main__":
    sys.exit(main())
