"""Benchmark `status` on a ~500 MB transcript and `wait`'s idle CPU.

Goals (issue 5): `status` answers in < 1 s warm (tail read + prefiltered whole-file background
scan); `wait` uses no more than a few % of one core while idle. Reference measured in the same
run: `rg -c run_in_background` over the same file (one whole-file literal scan), so the ratio
says how close the prefiltered scan is to a plain byte scan.

Usage: .venv/bin/python benchmarks/status.py [--size-mb 500] [--repeat 3] [--idle-secs 20]

Figures are best-of-N wall (the machine is shared: best-of filters out other jobs) plus the CPU
time of the same runs (user+sys, the forked scan helper included), and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus_util import build_big_transcript  # noqa: E402

HERE = Path(__file__).resolve().parent
SS = [sys.executable, "-m", "sessionsift"]


def timed(cmd: list[str], repeat: int) -> tuple[float, float, int]:
    """Best wall, best CPU (user+sys, forked helpers included) and max peak RSS (KB) of `repeat` runs."""
    walls, cpus, rss = [], [], 0
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        r = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, check=False)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        try:
            rss = max(rss, int(r.stderr.decode().strip().splitlines()[-1]))
        except (ValueError, IndexError):
            pass
    return min(walls), min(cpus), rss


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--idle-secs", type=float, default=20.0)
    a = ap.parse_args()
    dest = HERE / "_corpus" / "big"
    path = build_big_transcript(dest, a.size_mb)
    home = str(dest)
    sid = path.stem
    size = path.stat().st_size
    print(f"transcript: {path} ({size / 1e6:.0f} MB); {os.cpu_count()} cores; load average {load()}")
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL)  # warm the page cache
    status = SS + ["status", sid, "--claude-home", home, "--format", "json"]
    w, c, m = timed(status, a.repeat)
    ws, cs, _ = timed(SS + ["--version"], a.repeat)
    print(f"status (warm, best of {a.repeat}): {w:.3f} s wall, {c:.2f} s CPU (both processes), peak RSS {m / 1024:.0f} MB"
          f"  [goal < 1 s: {'OK' if w < 1 else 'MISSED'}]; interpreter start + CLI import alone {ws:.3f} s")
    if shutil.which("rg"):
        wr, cr, mr = timed(["rg", "-c", "run_in_background", str(path)], a.repeat)
        print(f"reference rg -c run_in_background: {wr:.3f} s wall, {cr:.2f} s CPU; ratio status/rg = {w / wr:.1f}x")
    else:
        print("reference: ripgrep not installed (apt-get install -y ripgrep); no ratio")
    # wait idle CPU: nothing changes, so after the first assessment the process should only sleep
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(SS + ["wait", sid, "--claude-home", home, "--until", "human", "--timeout", str(a.idle_secs),
                             "--format", "json"], capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = next((json.loads(l) for l in r.stdout.decode().splitlines() if '"summary"' in l), {})
    # subtract the one-off start (interpreter, imports, first whole-file assessment) = one status run
    idle = max(0.0, cpu - c) / max(wall - w, 1e-9) * 100
    print(f"wait idle {wall:.1f} s (exit {r.returncode}, {summary.get('polls')} assessments, watcher "
          f"{summary.get('watcher')}): total CPU {cpu:.2f} s, start ~{c:.2f} s (one status run), idle load "
          f"{idle:.1f}% of one core  [goal: a few %: {'OK' if idle < 5 else 'MISSED'}]")
    print(f"load average at the end: {load()}")


if __name__ == "__main__":
    main()
