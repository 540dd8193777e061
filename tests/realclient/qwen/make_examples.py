"""Regenerate the committed Qwen Code sample with the real client (offline).

    .venv/bin/python -m tests.realclient.qwen.make_examples

Runs the sample scenarios (two at a time) under /tmp/ssift-qwen-sample (a fixed path, so the recorded
cwds and the project folder names are the same each run), then writes:

* examples/qwen-home/projects/<project>/chats/<id>.jsonl and .../subagents/<id>/agent-*.{jsonl,meta.json}:
  every session and subagent file the client wrote, as written (one Qwen dir holding every scenario's
  projects, as a user's does), and usage_record.jsonl (the runs' usage summaries, concatenated);
  settings.json, the extension store, the memory files, the saved tool outputs and the OpenAI log
  markers are left out;
* examples/qwen-ground-truth/<scenario>.json: each scenario's ground truth.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from ..common import host
from .runner import run_scenario
from .scenarios import SAMPLE

REPO = Path(__file__).resolve().parents[3]
ROOT = Path("/tmp/ssift-qwen-sample")


def main(argv=None) -> int:
    argparse.ArgumentParser(description=f"Regenerate examples/qwen-home with the real client (offline, under {ROOT}).") \
        .parse_args(argv)
    if ROOT.exists():
        shutil.rmtree(ROOT)
    truths = host.run_parallel(lambda n: run_scenario(n, ROOT), SAMPLE, 2)
    home = REPO / "examples" / "qwen-home"
    gt = REPO / "examples" / "qwen-ground-truth"
    for d in (home, gt):
        if d.exists():
            shutil.rmtree(d)
    gt.mkdir(parents=True)
    usage = []
    for t in truths:
        src = Path(t["qwen_dir"])
        for f in sorted(src.glob("projects/*/chats/*.jsonl")) + sorted(src.glob("projects/*/subagents/*/agent-*")):
            if f.name.endswith(".stream"):
                continue
            dst = home / f.relative_to(src)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dst)
        u = src / "usage_record.jsonl"
        if u.is_file():
            usage.append(u.read_text())
        (gt / f"{t['scenario']}.json").write_text(json.dumps(t, indent=2, sort_keys=True) + "\n")
        print(t["scenario"], t["client_version"], [s["id"] for s in t["sessions"]], [r["rc"] for r in t["runs"]])
    (home / "usage_record.jsonl").write_text("".join(usage))
    return 0


if __name__ == "__main__":
    sys.exit(main())
