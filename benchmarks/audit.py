"""Benchmark `audit reinjection`.

Two shapes:
- `sparse`: benchmarks/_corpus/big (one ~500 MB transcript with no `edited_text_file` at all, the
  common case): answered by one block scan for the literal, no line framing.
- `dense`: a ~100 MB transcript made of copies of the real 2.1.258 sessions that DO carry deliveries
  (examples: files_basic, interactive), so every line is framed and the candidate lines parsed.

Reference measured in the same run: `rg -c edited_text_file` over the same files (one literal scan).
Figures are best-of-N wall and the ratio to the reference, plus the load average (shared machine).

Usage: .venv/bin/python benchmarks/audit.py [--repeat 3] [--dense-mb 100]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus_util import build_big_transcript  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SS = [sys.executable, "-m", "sessionsift"]


def best(cmd: list[str], repeat: int) -> float:
    walls = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        walls.append(time.perf_counter() - t0)
    return min(walls)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dense-mb", type=int, default=100)
    a = ap.parse_args()
    rg = shutil.which("rg")
    if not rg:
        raise SystemExit("ripgrep (rg) is needed as the reference: apt-get install -y ripgrep")
    sparse = HERE / "_corpus" / "big"
    build_big_transcript(sparse, 500)
    src = HERE / "_corpus" / "audit-src"
    if not src.exists():
        for name in ("-tmp-ssift-rc-files-basic-work", "-tmp-ssift-rc-interactive-work"):
            d = src / "projects" / name
            d.mkdir(parents=True)
            for f in (REPO / "examples" / "claude-home" / "projects" / name).glob("*.jsonl"):
                shutil.copy(f, d / f.name)
    dense = HERE / "_corpus" / f"audit-dense-{a.dense_mb}"
    build_big_transcript(dense, a.dense_mb, src=src)
    print(f"load average: {os.getloadavg()}")
    for label, home in (("sparse", sparse), ("dense", dense)):
        ours = best(SS + ["audit", "reinjection", "--claude-home", str(home), "--format", "json"], a.repeat)
        ref = best([rg, "-c", "edited_text_file", str(home / "projects")], a.repeat)
        size = sum(p.stat().st_size for p in (home / "projects").rglob("*.jsonl"))
        print(f"{label:6s} {size / 1e6:7.1f} MB  audit {ours:6.2f} s  rg {ref:6.2f} s  ratio {ours / ref:6.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
