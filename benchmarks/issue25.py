"""Issue 25's goal rows on one store shape, before and after, ratios to ripgrep in the same run.

    .venv/bin/python benchmarks/issue25.py SHAPE [--repeat 2] [--before CHECKOUT] [--profile ROW]

SHAPE (corpora under benchmarks/_corpus/, gitignored, built by the other scripts' builders):
`small` (speed.py build_home: many small transcripts + 40 of 2.5 MB), `large` (large_sessions.py
build: 40 sessions of 25 MB, every id distinct), `big` (speed.py build_big: one ~500 MB file),
`shared` (shared_ids.py build: originals and their forks sharing record ids). `--size` scales the
small/big/shared builds (MB, or families for shared).

For each version (this checkout, and `--before`'s sources through PYTHONPATH) over an empty index
directory of its own: `index update` (the first build, timed), then the rows: the selective literal
warm (ms per GB) and cold (`--no-index`, x rg), the phrase warm (x rg), the census `-t
user.message --count` warm and cold (x rg), `stats` and `usage daily` warm (s per GB), the index's
size (per-file index, full-text, ranked) against the corpus, and the peak RSS over every run. Warm
is the best of `--repeat` runs after one untimed run; cold is one run. rg runs beside each row (best
of as many). `--profile ROW` prints the top of a cProfile of that row's warm command (after).
Nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from speed import CANARY, PHRASE, PY, SSIFT, machine, run  # noqa: E402

C = HERE / "_corpus"


def corpus(shape: str, size: int | None) -> tuple[Path, str, str]:
    """(claude home, the selective literal, the widely present literal) of a shape."""
    if shape == "small":
        import speed

        return speed.build_home(C / f"speed-{size or 500}", size or 500), CANARY.decode(), PHRASE.decode()
    if shape == "large":
        import large_sessions

        return large_sessions.build(C / "large-40x25", 40, 25), CANARY.decode(), PHRASE.decode()
    if shape == "big":
        import speed

        return speed.build_big(C / f"speed-big-{size or 500}", size or 500), CANARY.decode(), "greeting"
    if shape == "shared":
        import shared_ids

        n = size or 20
        return shared_ids.build(C / f"shared-{n}x2", n, 2), CANARY.decode(), PHRASE.decode()
    raise SystemExit(f"unknown shape {shape!r}")


def dir_bytes(d: Path, pat: str) -> int:
    return sum(p.stat().st_size for p in d.rglob(pat) if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("shape")
    ap.add_argument("--size", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--before", default=None)
    ap.add_argument("--profile", default="")
    ap.add_argument("--rows", default="")
    a = ap.parse_args()
    home, sel, wide = corpus(a.shape, a.size)
    proj = str(home / "projects")
    files = list(Path(proj).rglob("*.jsonl"))
    size = sum(p.stat().st_size for p in files)
    gb = size / 1e9
    base = dict(os.environ, NO_COLOR="1")
    for k in ("SESSIONSIFT_NO_INDEX", "CLAUDE_CONFIG_DIR", "PYTHONDONTWRITEBYTECODE", "SESSIONSIFT_FULLTEXT_BUDGET"):
        base.pop(k, None)
    base["HOME"] = str(C / "_home")
    Path(base["HOME"]).mkdir(parents=True, exist_ok=True)
    subprocess.run([PY, "-m", "compileall", "-q", str(HERE.parent / "src")], env=base, capture_output=True)
    versions = [("after", None)]
    if a.before:
        src = Path(a.before).resolve() / "src"
        subprocess.run([PY, "-m", "compileall", "-q", str(src)], env=base, capture_output=True)
        versions.insert(0, ("before", str(src)))
    print(f"machine: {machine()}")
    print(f"shape {a.shape}: {home}: {len(files)} transcripts, {gb:.3f} GB; "
          f"selective {sel!r}, wide {wide!r}")
    print(f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load before {'%.2f %.2f %.2f' % os.getloadavg()}")
    subprocess.run(["rg", "-c", "--no-messages", "zzzzwarm", proj], capture_output=True)
    H = ["--claude-home", str(home)]
    rows = [  # name, sessionsift args, rg args, mode
        ("selective warm", ["search", sel, "-c", *H], ["rg", "-c", sel, proj], "warm"),
        ("selective cold", ["search", sel, "-c", *H, "--no-index"], ["rg", "-c", sel, proj], "cold"),
        ("phrase warm", ["search", wide, "-c", *H], ["rg", "-c", wide, proj], "warm"),
        ("census warm", ["search", "", "-t", "user.message", "--count", *H], ["rg", "-c", '"type":"user"', proj], "warm"),
        ("census cold", ["search", "", "-t", "user.message", "--count", *H, "--no-index"],
         ["rg", "-c", '"type":"user"', proj], "cold"),
        ("stats warm", ["stats", *H, "--format", "json"], ["rg", "-c", '"type"', proj], "warm"),
        ("usage daily warm", ["usage", "daily", *H, "--format", "json"], ["rg", "-c", '"usage"', proj], "warm"),
    ]
    rows = [r for r in rows if a.rows in r[0]]
    res: dict = {}
    for vname, src in versions:
        idx = C / f"_idx-{a.shape}-{vname}"
        shutil.rmtree(idx, ignore_errors=True)
        env = dict(base, SESSIONSIFT_INDEX_DIR=str(idx))
        if src:
            env["PYTHONPATH"] = src
        w, cpu, rss, _o = run([*SSIFT, "index", "update", *H], env)
        res[(vname, "first build")] = (w, cpu, rss, None)
        rgc = min(run(["rg", "-c", '"type"', proj])[0] for _ in range(2))
        print(f"[{vname}] index update (first build): {w:.1f} s wall, {cpu:.1f} s CPU, {rss / 1024:.0f} MB RSS "
              f"(rg -c '\"type\"' {rgc:.3f} s); load {os.getloadavg()[0]:.2f}", flush=True)
        peak = rss
        for name, args, rga, mode in rows:
            if mode == "warm":
                run([*SSIFT, *args], env)  # brings what it reads up to date; untimed
            n = a.repeat if mode == "warm" else 1
            ss, rs = [], []
            for _ in range(n):
                ss.append(run([*SSIFT, *args], env))
                rs.append(run(rga)[0])
            best = min(ss, key=lambda r: r[0])
            rgb = min(rs)
            peak = max(peak, max(r[2] for r in ss))
            res[(vname, name)] = (best[0], best[1], max(r[2] for r in ss), rgb)
            out = best[3].decode("utf-8", "replace").strip().splitlines()
            print(f"[{vname}] {name:<18} {best[0]:7.3f} s (cpu {best[1]:6.2f}) rg {rgb:6.3f} s = {best[0] / rgb:6.2f}x rg;"
                  f" {1000 * best[0] / gb:7.0f} ms/GB; {best[0] / gb:6.2f} s/GB; rss {max(r[2] for r in ss) / 1024:4.0f} MB;"
                  f" out {out[0][:40] if out else ''!r}; load {os.getloadavg()[0]:.2f}", flush=True)
        lane = dir_bytes(idx, "*.idx") + dir_bytes(idx, "*.summary*")
        ft = dir_bytes(idx, "text-*.sqlite*")
        rk = dir_bytes(idx, "ranked.sqlite*")
        tot = dir_bytes(idx, "*")
        res[(vname, "index")] = (tot, ft, rk)
        print(f"[{vname}] index dir {tot / 1e6:.1f} MB = {100 * tot / size:.1f}% of the corpus (full-text "
              f"{ft / 1e6:.1f} MB = {100 * ft / size:.1f}%, ranked {rk / 1e6:.1f} MB, per-file {lane / 1e6:.1f} MB); "
              f"peak RSS {peak / 1024:.0f} MB", flush=True)
        res[(vname, "peak")] = peak
    if a.profile:
        name, args = next((r[0], r[1]) for r in rows if a.profile in r[0])
        env = dict(base, SESSIONSIFT_INDEX_DIR=str(C / f"_idx-{a.shape}-after"))
        pf = C / f"_prof-{a.shape}.out"
        subprocess.run([PY, "-m", "cProfile", "-o", str(pf), "-m", "sessionsift", *args], env=env,
                       capture_output=True)
        import pstats

        print(f"profile of {name} (after):")
        pstats.Stats(str(pf)).sort_stats("cumulative").print_stats(18)
    print(f"load after {'%.2f %.2f %.2f' % os.getloadavg()}")


if __name__ == "__main__":
    main()
