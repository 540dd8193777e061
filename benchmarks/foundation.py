"""Benchmarks for the foundation commands (issue: list reads < 5% of bytes over 1,000 sessions;
stats on a 500 MB transcript within 3x of `rg -c '"type"'`, peak memory < 300 MB).

Corpora are built from REAL client transcripts (examples/) replicated with fresh ids, under
benchmarks/_corpus/ (gitignored), once. Ratios are printed against references measured in the
same run; nothing here is a timed test.

    .venv/bin/python benchmarks/foundation.py [--sessions 1000] [--size-mb 500]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus_util import UUID_RE, peak_rss_run, remap, source_transcripts  # noqa: E402

HERE = Path(__file__).resolve().parent
SSIFT = [sys.executable, "-m", "sessionsift"]


def build_sessions(dest: Path, n: int) -> Path:
    """n sessions of realistic, varied size: each is 1-40 real transcripts concatenated with fresh
    ids (about 30 KB to 1.5 MB each)."""
    marker = dest / f".built-{n}"
    if marker.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    proj = dest / "projects" / "-bench-many"
    proj.mkdir(parents=True)
    srcs = [p.read_bytes() for p in source_transcripts()]
    rng = random.Random(7)
    for i in range(n):
        k = rng.choice([1, 2, 4, 8, 16, 40])
        parts = [remap(srcs[rng.randrange(len(srcs))], f"s{i}p{j}") for j in range(k)]
        sid = str(UUID_RE.search(remap(b"00000000-0000-4000-8000-000000000000", f"sid{i}")).group(0).decode())
        (proj / f"{sid}.jsonl").write_bytes(b"".join(p if p.endswith(b"\n") else p + b"\n" for p in parts))
    marker.write_text("ok")
    return dest


def build_big(dest: Path, size_mb: int) -> Path:
    from _corpus_util import build_big_transcript

    return build_big_transcript(dest, size_mb)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--size-mb", type=int, default=500)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--stats-only", action="store_true")
    a = ap.parse_args()
    env = dict(os.environ, NO_COLOR="1")
    env.pop("CLAUDE_CONFIG_DIR", None)

    if not a.stats_only:
        list_bench(a, env)
    stats_bench(a, env)


def list_bench(a: argparse.Namespace, env: dict) -> None:
    many = build_sessions(HERE / "_corpus" / "many", a.sessions)
    wall, rss, out = peak_rss_run([*SSIFT, "list", "--claude-home", str(many), "--format", "json"], env)
    summ = [json.loads(l) for l in out.splitlines() if l.strip()][-1]
    frac = summ["bytes_read"] / max(1, summ["bytes_total"])
    print(f"list: {summ['sessions']} sessions, read {summ['bytes_read']:,} of {summ['bytes_total']:,} bytes "
          f"= {100 * frac:.2f}% (goal < 5%); wall {wall:.2f}s, peak RSS {rss / 1024:.0f} MB")
    # stats over the same sessions (no goal in issue 3; printed for the record)
    subprocess.run(["cat", *map(str, (many / "projects").rglob("*.jsonl"))], stdout=subprocess.DEVNULL)
    rg_wall = min(peak_rss_run(["rg", "-c", '"type"', str(many / "projects")], env)[0] for _ in range(a.runs))
    runs = [peak_rss_run([*SSIFT, "stats", "--claude-home", str(many), "--format", "json"], env) for _ in range(a.runs)]
    wall = min(r[0] for r in runs)
    print(f"stats over {summ['sessions']} sessions (best of {a.runs}): sessionsift {wall:.2f}s / rg -c '\"type\"' "
          f"{rg_wall:.2f}s = {wall / rg_wall:.1f}x; peak RSS {max(r[1] for r in runs) / 1024:.0f} MB")


def stats_bench(a: argparse.Namespace, env: dict) -> None:
    big = build_big(HERE / "_corpus" / "big", a.size_mb)
    home = big.parent.parent.parent
    subprocess.run(["cat", str(big)], stdout=subprocess.DEVNULL)  # warm the cache
    size = big.stat().st_size
    load = os.getloadavg()[0]
    rg = [peak_rss_run(["rg", "-c", '"type"', str(big)], env) for _ in range(a.runs)]
    ss = [peak_rss_run([*SSIFT, "stats", str(big), "--claude-home", str(home), "--format", "json"], env)
          for _ in range(a.runs)]
    rg_wall = min(r[0] for r in rg)
    wall = min(r[0] for r in ss)
    rss = max(r[1] for r in ss)
    # the peak of each process (the reader of the first half, and the forked worker)
    probe = subprocess.run([sys.executable, "-c", PROBE, str(big)], capture_output=True, text=True, env=env)
    print(f"stats on {size / 2**20:.0f} MB (best of {a.runs}, load average {load:.2f} on {os.cpu_count()} cores): "
          f"sessionsift {wall:.2f}s / rg -c '\"type\"' {rg_wall:.2f}s = {wall / rg_wall:.1f}x (goal <= 3x); "
          f"peak RSS {rss / 1024:.0f} MB (goal < 300 MB); {probe.stdout.strip()}")


PROBE = """
import resource, sys, time
from pathlib import Path
from sessionsift.providers.claude.stats import lane_stats
from sessionsift.providers.claude.discover import Lane
t = time.perf_counter()
ls = lane_stats(Lane(Path(sys.argv[1]), "b", "main", "main"))
print(f"in-process {time.perf_counter() - t:.2f}s for {ls.read.records:,} records; "
      f"peak RSS reader {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB, "
      f"worker {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB")
"""

if __name__ == "__main__":
    main()
