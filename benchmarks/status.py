"""Benchmark `status` on a ~500 MB transcript and `wait`'s idle CPU.

Goals (issue 5): `status` answers in < 1 s warm (tail read + prefiltered whole-file background
scan); `wait` uses no more than a few % of one core while idle. Reference measured in the same
run: `rg -c run_in_background` over the same file (one whole-file literal scan), so the ratio
says how close the prefiltered scan is to a plain byte scan.

Usage: .venv/bin/python benchmarks/status.py [--size-mb 500] [--repeat 3] [--idle-secs 10]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus_util import build_big_transcript  # noqa: E402

HERE = Path(__file__).resolve().parent
SS = [sys.executable, "-m", "sessionsift"]


def timed(cmd: list[str], repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--idle-secs", type=float, default=10.0)
    a = ap.parse_args()
    dest = HERE / "_corpus" / "big"
    path = build_big_transcript(dest, a.size_mb)
    home = str(dest)
    sid = path.stem
    size = path.stat().st_size
    print(f"transcript: {path} ({size / 1e6:.0f} MB)")
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL)  # warm the page cache
    status = SS + ["status", sid, "--claude-home", home, "--format", "json"]
    t_status = timed(status, a.repeat)
    t_start = timed(SS + ["--version"], a.repeat)
    line = f"status (warm, median of {a.repeat}): {t_status:.3f} s  [goal < 1 s: {'OK' if t_status < 1 else 'MISSED'}]" \
           f"; interpreter start alone {t_start:.3f} s"
    print(line)
    if shutil.which("rg"):
        t_rg = timed(["rg", "-c", "run_in_background", str(path)], a.repeat)
        print(f"reference rg -c run_in_background: {t_rg:.3f} s; ratio status/rg = {t_status / t_rg:.2f}x")
    else:
        print("reference: ripgrep not installed (apt-get install -y ripgrep); no ratio")
    # wait idle CPU: nothing changes, so every poll is a heartbeat re-assessment
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(SS + ["wait", sid, "--claude-home", home, "--until", "human", "--timeout", str(a.idle_secs),
                             "--format", "json"], capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # subtract the one-off initial assessment (measured as one `status` run's CPU)
    b2 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(status, capture_output=True)
    a2 = resource.getrusage(resource.RUSAGE_CHILDREN)
    once = (a2.ru_utime - b2.ru_utime) + (a2.ru_stime - b2.ru_stime)
    idle = max(0.0, cpu - once) / max(wall, 1e-9) * 100
    print(f"wait idle {wall:.1f} s (exit {r.returncode}): total CPU {cpu:.2f} s, startup+first assessment ~{once:.2f} s, "
          f"idle load {idle:.1f}% of one core  [goal: a few %: {'OK' if idle < 5 else 'MISSED'}]")


if __name__ == "__main__":
    main()
