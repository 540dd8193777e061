"""Benchmark for `search` (issue 4): a >= 1 GB corpus of REAL client transcripts replicated with
fresh ids; sessionsift vs ripgrep, wall time (best of N, warm cache) and peak RSS, in one run.

Goals: selective literal within 1.5x of `rg -c`; label census (`'' -t user.message --count`)
within 4x of `rg -c '"type":"user"'`; peak memory < 300 MB.

    .venv/bin/python benchmarks/search.py [--size-mb 1100] [--repeat 3]

The corpus is built once under benchmarks/_corpus/search-<size> (gitignored) from examples/
(or $SSIFT_BENCH_SRC, a claude home). A rare token is planted in 3 sessions for the selective
literal. Nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus_util import peak_rss_run, remap, source_transcripts  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SSIFT = [str(REPO / ".venv" / "bin" / "sessionsift")] if (REPO / ".venv" / "bin" / "sessionsift").exists() else [
    sys.executable, "-m", "sessionsift.cli"]
CANARY = b"zqxcanary4417"


def build(dest: Path, size_mb: int) -> Path:
    marker = dest / ".built"
    if marker.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    srcs = [s.read_bytes() for s in source_transcripts()]
    srcs = [s if s.endswith(b"\n") else s + b"\n" for s in srcs]
    rnd = random.Random(4)
    target = size_mb * 1024 * 1024
    written = 0
    i = 0
    planted = 0
    while written < target:
        proj = dest / "projects" / f"-bench-search-p{i % 24:02d}"
        proj.mkdir(parents=True, exist_ok=True)
        pieces = []
        for k in range(rnd.randint(1, 40)):
            pieces.append(remap(srcs[rnd.randrange(len(srcs))], f"s{i}-{k}"))
        data = b"".join(pieces)
        if i % 700 == 350 and planted < 3:
            # plant the selective literal in one prompt text
            key = b'"role":"user","content":"'
            at = data.find(key)
            if at >= 0:
                data = data[: at + len(key)] + CANARY + b" " + data[at + len(key):]
                planted += 1
        (proj / f"{uuid.uuid5(uuid.NAMESPACE_URL, f'search-bench-{i}')}.jsonl").write_bytes(data)
        written += len(data)
        i += 1
    marker.write_text(f"{i} sessions, {written} bytes, {planted} planted\n")
    return dest


def best(cmd: list[str], repeat: int) -> tuple[float, int, bytes]:
    runs = [peak_rss_run(cmd) for _ in range(repeat)]
    wall = min(r[0] for r in runs)
    rss = max(r[1] for r in runs)
    return wall, rss, runs[-1][2]


def machine() -> str:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) // 1024 // 1024} GiB"
    except OSError:
        pass
    rg = subprocess.run(["rg", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return (f"{platform.system()} {platform.release()}, {os.cpu_count()} cores ({cpu}), {mem} RAM, "
            f"Python {platform.python_version()}, {rg}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=1100)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if not shutil.which("rg"):
        raise SystemExit("ripgrep missing: apt-get install -y ripgrep")
    home = build(HERE / "_corpus" / f"search-{a.size_mb}", a.size_mb)
    proj = str(home / "projects")
    size = sum(p.stat().st_size for p in Path(proj).rglob("*.jsonl"))
    nfiles = sum(1 for _ in Path(proj).rglob("*.jsonl"))
    print(f"machine: {machine()}")
    print(f"corpus: {home} - {nfiles} transcripts, {size / 1e9:.2f} GB")
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    # warm the page cache
    subprocess.run(["rg", "-c", "--no-messages", "zzzzwarm", proj], capture_output=True)
    cases = [
        ("selective literal", [*SSIFT, "search", CANARY.decode(), "--claude-home", str(home)],
         ["rg", "-c", CANARY.decode(), proj], 1.5),
        ("  same, --count-lines", [*SSIFT, "search", CANARY.decode(), "--count-lines", "--claude-home", str(home)],
         ["rg", "-c", CANARY.decode(), proj], None),
        ("case-insensitive regex", [*SSIFT, "search", "-i", "-c", r"exit code [0-9]+|traceback", "--claude-home", str(home)],
         ["rg", "-c", "-i", r"exit code [0-9]+|traceback", proj], None),
        ("label census", [*SSIFT, "search", "", "-t", "user.message", "--count", "--claude-home", str(home)],
         ["rg", "-c", '"type":"user"', proj], 4.0),
        ("count-by tool", [*SSIFT, "search", "", "--count-by", "tool", "--claude-home", str(home)],
         ["rg", "-c", '"type":"tool_use"', proj], None),
    ]
    print(f"{'case':<24} {'ssift s':>8} {'rg s':>7} {'ratio':>6} {'goal':>5} {'ssift RSS MB':>12} {'rg RSS MB':>9}")
    rows = []
    for name, sc, rc, goal in cases:
        sw, sr, sout = best(sc, a.repeat)
        rw, rr, _ = best(rc, a.repeat)
        ratio = sw / rw if rw else float("inf")
        ok = "" if goal is None else ("ok" if ratio <= goal else "MISS")
        rows.append((name, sw, rw, ratio, goal, sr, rr))
        print(f"{name:<24} {sw:8.2f} {rw:7.2f} {ratio:6.2f} {('<=' + str(goal)) if goal else '-':>5} "
              f"{sr / 1024:12.0f} {rr / 1024:9.0f} {ok}")
        tail = sout.decode("utf-8", "replace").strip().splitlines()[-1:] if sout else []
        print(f"    ssift: {tail[0] if tail else ''}")
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())
    print("peak RSS: /usr/bin/time %M = the largest single process among sessionsift's parent and its "
          "pool workers (each worker maps files; resident pages are shared page cache)")


if __name__ == "__main__":
    main()
