"""Issue 25's store of MANY LARGE sessions: 40 Claude Code sessions of ~25 MB each (1 GB, every id
distinct), sessionsift against ripgrep in the same run, cold (`--no-index`) and warm, best and
median of interleaved runs, with the load average (speed.py's runner and report).

    .venv/bin/python benchmarks/large_sessions.py [--sessions 40] [--mb 25] [--repeat 3] [--cases NAME]
                                                  [--before CHECKOUT]

Corpus (built once under benchmarks/_corpus/large-<n>x<mb>/, gitignored), from REAL client output
only: each session is real main lanes of examples/claude-home and examples/newest-client
concatenated, every uuid and message/request/tool-use id remapped per copy (speed.py's sources and
remapping). The selective literal (`zqxcanary4417`) is planted in the first prompt of 3 sessions,
the phrase (`lanternfish quorum`) in every session's. Cases: the selective literal `-c`, the phrase
`-c`, `stats`, and `search --rank` (the ranked index's first build, its warm answer, and the scan
with the index off). Nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _corpus_util import remap_ids, source_sessions  # noqa: E402
from speed import CANARY, PHRASE, PY, ROOTS, SSIFT, _plant, bench, machine, report, run  # noqa: E402


def build(dest: Path, n: int, mb: int) -> Path:
    marker = dest / ".built"
    if marker.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    mains = [m.read_bytes() for m, _lanes in source_sessions(ROOTS)]
    rnd = random.Random(25)
    written = 0
    for j in range(n):
        parts = []
        k = 0
        while k < (mb << 20):
            d = remap_ids(mains[rnd.randrange(len(mains))], f"big{j}-{k}")
            parts.append(d if d.endswith(b"\n") else d + b"\n")
            k += len(d)
        data = _plant(b"".join(parts), PHRASE)
        if j in (7, 19, 33):
            data = _plant(data, CANARY)
        proj = dest / "projects" / f"-bench-large-p{j % 4}"
        proj.mkdir(parents=True, exist_ok=True)
        (proj / f"{uuid.uuid5(uuid.NAMESPACE_URL, f'large-{j}')}.jsonl").write_bytes(data)
        written += len(data)
    marker.write_text(f"{n} sessions of ~{mb} MB, {written} bytes\n")
    return dest


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=40)
    ap.add_argument("--mb", type=int, default=25)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default="")
    ap.add_argument("--before", default=None)
    a = ap.parse_args()
    home = build(HERE / "_corpus" / f"large-{a.sessions}x{a.mb}", a.sessions, a.mb)
    idx_dir = HERE / "_corpus" / f"large-index-{a.sessions}x{a.mb}"
    env = dict(os.environ, NO_COLOR="1", SESSIONSIFT_INDEX_DIR=str(idx_dir))
    for k in ("SESSIONSIFT_NO_INDEX", "CLAUDE_CONFIG_DIR", "PYTHONDONTWRITEBYTECODE"):
        env.pop(k, None)
    subprocess.run([PY, "-m", "compileall", "-q", str(HERE.parent / "src")], env=env, capture_output=True)
    before = dict(env, PYTHONPATH=str(Path(a.before).resolve() / "src")) if a.before else None
    proj = str(home / "projects")
    size = sum(p.stat().st_size for p in Path(proj).rglob("*.jsonl"))
    print(f"machine: {machine()}")
    print(f"corpus: {home} ({(home / '.built').read_text().strip()}): {size / 1e9:.2f} GB")
    print(f"load average before: {'%.2f %.2f %.2f' % os.getloadavg()}; repeat {a.repeat} (interleaved with rg)")
    subprocess.run(["rg", "-c", "--no-messages", "zzzzwarm", proj], capture_output=True)
    H = ["--claude-home", str(home)]
    t0 = time.perf_counter()
    subprocess.run([*SSIFT, "index", "update", *H], env=env, capture_output=True)
    print(f"index build (index update): {time.perf_counter() - t0:.1f} s; index size "
          f"{sum(p.stat().st_size for p in idx_dir.rglob('*.idx')) / 1e6:.1f} MB")
    cases = [
        ("selective literal -c", [*SSIFT, "search", CANARY.decode(), "-c", *H], ["rg", "-c", CANARY.decode(), proj],
         {"cold": 1.5, "warm": 0.5}),
        ("phrase in every session -c", [*SSIFT, "search", PHRASE.decode(), "-c", *H],
         ["rg", "-c", PHRASE.decode(), proj], {"cold": None, "warm": 0.5}),
        ("stats", [*SSIFT, "stats", *H, "--format", "json"], ["rg", "-c", '"type"', proj],
         {"cold": None, "warm": ("s", 0.1 * size / 1e9, 300)}),
    ]
    for name, sc, rc, goals in cases:
        if a.cases not in name:
            continue
        for mode in ("cold", "warm"):
            cmd = sc + (["--no-index"] if mode == "cold" else [])
            s, r = bench(cmd, rc, a.repeat, env)
            report(name, mode, s, r, goals[mode])
            if before is not None:
                s, r = bench(cmd, rc, a.repeat, before)
                report(name, "before", s, r, None)
    if a.cases in "search --rank":
        rank = [*SSIFT, "search", "--rank", "lanternfish quorum greeting", "-n", "5", *H]
        db = idx_dir / "v5" / "ranked.sqlite"
        for suf in ("", "-wal", "-shm"):
            Path(str(db) + suf).unlink(missing_ok=True)
        w, cpu, rss, _out = run(rank, env)
        dbsize = sum(Path(str(db) + suf).stat().st_size for suf in ("", "-wal") if Path(str(db) + suf).exists())
        print(f"{'search --rank first build':<34}       ssift {w:6.3f}s cpu {cpu:6.2f}s rss {rss / 1024:5.0f}MB "
              f"ranked.sqlite {dbsize / 1e6:.0f} MB ({100 * dbsize / size:.0f}% of the corpus) "
              f"load {os.getloadavg()[0]:5.2f}", flush=True)
        s, r = bench(rank, ["rg", "-c", "lanternfish", proj], a.repeat, env)
        report("search --rank", "warm", s, r, None)
        s, r = bench(rank + ["--no-index"], ["rg", "-c", "lanternfish", proj], 1, env)
        report("search --rank", "scan", s, r, None)
    print(f"load average after: {'%.2f %.2f %.2f' % os.getloadavg()}")


if __name__ == "__main__":
    main()
