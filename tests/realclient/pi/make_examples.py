"""Regenerate the committed pi sample with the real client (offline).

    .venv/bin/python -m tests.realclient.pi.make_examples

Runs the sample scenarios (two at a time) under /tmp/ssift-pi-sample (a fixed path, so the recorded
cwds and the per-cwd folder names are the same each run), then writes:

* examples/pi-home/sessions/--<cwd>--/<time>_<id>.jsonl: every session file the client wrote, as
  written (one agent dir holding every scenario's sessions, as a user's does); the scenarios'
  models.json, settings.json and auth.json are left out;
* examples/pi-ground-truth/<scenario>.json: each scenario's ground truth.

The temp file holding the whole output of the cut bash result is not kept (it lives in the run's
TMPDIR): in the sample its path names a file that is gone, as it is once a machine's /tmp is cleaned.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from ..common import host, isolate
from .runner import run_scenario
from .scenarios import SAMPLE

REPO = Path(__file__).resolve().parents[3]
ROOT = Path("/tmp/ssift-pi-sample")


def main(argv=None) -> int:
    argparse.ArgumentParser(description=f"Regenerate examples/pi-home with the real client (offline, under {ROOT}).") \
        .parse_args(argv)
    rc = isolate.private_fixed_roots([ROOT], "tests.realclient.pi.make_examples", list(sys.argv[1:] if argv is None else argv))
    if rc is not None:  # the canonical root, as this run's own (common/isolate.py)
        return rc
    if ROOT.exists():
        shutil.rmtree(ROOT)
    truths = host.run_parallel(lambda n: run_scenario(n, ROOT), SAMPLE, 2)
    home = REPO / "examples" / "pi-home"
    gt = REPO / "examples" / "pi-ground-truth"
    for d in (home, gt):
        if d.exists():
            shutil.rmtree(d)
    gt.mkdir(parents=True)
    for t in truths:
        src = Path(t["agent_dir"]) / "sessions"
        for f in sorted(src.glob("*/*.jsonl")):
            dst = home / "sessions" / f.parent.name / f.name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dst)
        (gt / f"{t['scenario']}.json").write_text(json.dumps(t, indent=2, sort_keys=True) + "\n")
        print(t["scenario"], t["client_version"], [s["id"] for s in t["sessions"]], [r["rc"] for r in t["runs"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
