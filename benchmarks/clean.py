"""`clean`: compression of REAL transcripts (gzip vs zstd), and a capture/verify/restore run over a
replicated corpus (time, bytes, peak RSS).

    .venv/bin/python benchmarks/clean.py [--sessions 400] [--runs 3] [--skip-run]

Part 1 reads every session file the real clients wrote into examples/ (per provider; opencode and
Crush as the row exports `clean` writes for them) and compresses each file on its own, as the
archive stores it, with gzip 6/9 and zstd 3/9/19: ratio = bytes in / bytes out over all files,
speed = MB/s of input (compress) and of output restored (decompress), best of --runs.
Part 2 builds a Claude Code home of --sessions copies of real sessions (fresh ids) under
benchmarks/_corpus/clean/ and runs `clean capture --apply --waive-kept`, `clean verify` and one
`clean restore` on it, each as its own process.
"""
from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus_util import REPO, build_many_sessions, peak_rss_run  # noqa: E402

EX = REPO / "examples"


def real_files() -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {}

    def add(k, p):
        b = Path(p).read_bytes()
        if b:
            out.setdefault(k, []).append(b)

    for p in (EX / "claude-home").rglob("*"):
        if p.is_file() and (("projects" in p.parts) or ("file-history" in p.parts) or ("tasks" in p.parts)):
            add("Claude Code", p)
    for p in (EX / "codex-home").rglob("rollout-*"):
        add("Codex CLI", p)
    for p in (EX / "gemini-home" / "tmp").rglob("*"):
        if p.is_file() and ("chats" in p.parts or "logs" in p.parts):
            add("Gemini CLI", p)
    # database sessions: the rows export clean writes for each
    from sessionsift.clean.rows import _rows_bytes
    from sessionsift.providers.scope import RootRequest, survey

    with tempfile.TemporaryDirectory() as t:
        home = Path(t)
        for rel, src in ((".local/share/opencode", "opencode-home"), (".local/share/crush", "crush-home")):
            (home / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(EX / src, home / rel, symlinks=True)
        sv = survey(RootRequest(home=str(home), only=("opencode", "crush")))
        for e in sv.entries:
            if e.provider is None:
                continue
            for ref in e.sessions:
                out.setdefault(e.display + " (rows)", []).append(_rows_bytes(e.provider, ref))
    return out


CODECS = {
    "gzip-6": (lambda b: gzip.compress(b, 6), gzip.decompress),
    "gzip-9": (lambda b: gzip.compress(b, 9), gzip.decompress),
    "zstd-3": (lambda b: zstandard.ZstdCompressor(level=3).compress(b),
               lambda b: zstandard.ZstdDecompressor().decompress(b)),
    "zstd-9": (lambda b: zstandard.ZstdCompressor(level=9).compress(b),
               lambda b: zstandard.ZstdDecompressor().decompress(b)),
    "zstd-19": (lambda b: zstandard.ZstdCompressor(level=19).compress(b),
                lambda b: zstandard.ZstdDecompressor().decompress(b)),
}


def part1(runs: int) -> None:
    files = real_files()
    allf = [b for v in files.values() for b in v]
    files["all"] = allf
    print("| files | count | bytes | " + " | ".join(CODECS) + " |")
    print("|---|---|---|" + "---|" * len(CODECS))
    speed: dict[str, tuple[float, float]] = {}
    for k, bs in files.items():
        tot = sum(map(len, bs))
        cells = []
        for name, (c, d) in CODECS.items():
            best_c = best_d = 1e9
            out = []
            for _ in range(runs):
                t0 = time.perf_counter()
                out = [c(b) for b in bs]
                best_c = min(best_c, time.perf_counter() - t0)
                t0 = time.perf_counter()
                for o in out:
                    d(o)
                best_d = min(best_d, time.perf_counter() - t0)
            n = sum(map(len, out))
            cells.append(f"{tot / n:.2f}x")
            if k == "all":
                speed[name] = (tot / best_c / 1e6, tot / best_d / 1e6)
        print(f"| {k} | {len(bs)} | {tot:,} | " + " | ".join(cells) + " |")
    print("\nspeed over all files (MB/s of uncompressed bytes, best of %d):" % runs)
    for name, (cs, ds) in speed.items():
        print(f"  {name}: compress {cs:.0f}, decompress {ds:.0f}")


def part2(n: int) -> None:
    base = REPO / "benchmarks" / "_corpus" / "clean"
    src = build_many_sessions(base / f"src-{n}", n)
    home = base / "work"
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(src, home / ".claude")
    data = base / "data"
    shutil.rmtree(data, ignore_errors=True)
    size = sum(p.stat().st_size for p in (home / ".claude").rglob("*.jsonl"))
    py = [sys.executable, "-m", "sessionsift", "clean"]
    wall, rss, out = peak_rss_run(py + ["capture", "--apply", "--waive-kept", "--older-than", "0s", "--home",
                                        str(home), "--data-dir", str(data)])
    stored = sum(p.stat().st_size for p in (data / "archive" / "objects").rglob("*.zst"))
    print(f"\ncapture --apply: {n} sessions, {size / 1e6:.1f} MB in {wall:.2f} s "
          f"({size / 1e6 / wall:.1f} MB/s), peak RSS {rss / 1024:.0f} MB, stored {stored / 1e6:.1f} MB "
          f"({size / max(stored, 1):.2f}x; identical sessions are stored once)")
    left = sum(1 for _ in (home / ".claude").rglob("*.jsonl"))
    wall, rss, out = peak_rss_run(py + ["verify", "--data-dir", str(data)])
    print(f"verify: {wall:.2f} s, peak RSS {rss / 1024:.0f} MB; transcripts left at their paths: {left}")
    first = next(l for l in subprocess.run(py + ["list", "--data-dir", str(data), "--format", "json"],
                                            capture_output=True, text=True).stdout.splitlines() if '"capture"' in l)
    import json

    cid = json.loads(first)["capture_id"]
    wall, rss, out = peak_rss_run(py + ["restore", cid, "--data-dir", str(data)])
    print(f"restore one session: {wall:.2f} s")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=400)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-run", action="store_true")
    a = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    part1(a.runs)
    if not a.skip_run:
        part2(a.sessions)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
