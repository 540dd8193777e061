"""`usage` on a large Claude Code store, against `rg -c '"usage"'` and ccusage in the same run.

    .venv/bin/python benchmarks/usage.py [--size-mb 1000] [--runs 5] [--big-mb 300] [--no-ccusage]

Corpus: whole real-client sessions (examples/claude-home = Claude Code 2.1.258, and
examples/newest-client/2.1.332, or the homes under SSIFT_BENCH_SRC), main and subagent lanes,
copied with every uuid and message/request/tool id remapped per copy (benchmarks/_corpus_util.py:
copies that share message ids would be counted once by both tools), one project dir per 100
sessions; plus one large transcript of concatenated remapped sessions (`--big-mb`).

Each case runs `--runs` times on a warm page cache; best and median wall time and the peak RSS
(/usr/bin/time) are printed with the load average before and after. ccusage (npm, installed by
tests/realclient/ccusage.py into ~/.cache/sessionsift/ccusage/<version>) runs with HOME and
CLAUDE_CONFIG_DIR at the corpus, `--offline`. The totals of both tools are compared (they must
agree: same dedup unit on this corpus).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _corpus_util import REPO, build_usage_home, peak_rss_run, remap_ids, source_sessions  # noqa: E402


def roots() -> list[Path]:
    env = os.environ.get("SSIFT_BENCH_SRC")
    if env:
        return [Path(p) for p in env.split(os.pathsep)]
    return [REPO / "examples" / "claude-home", REPO / "examples" / "newest-client" / "2.1.332" / "claude-home"]


def build_big(dest: Path, size_mb: int) -> Path:
    marker = dest / f".built-{size_mb}"
    sid = "bbbbbbbb-0000-4000-8000-00000000usage"[:36]
    path = dest / "projects" / "-bench-usage-big" / f"{sid}.jsonl"
    if marker.exists():
        return dest
    import shutil

    shutil.rmtree(dest, ignore_errors=True)
    path.parent.mkdir(parents=True)
    srcs = [m.read_bytes() for m, _lanes in source_sessions(roots())]
    written = k = 0
    with open(path, "wb") as f:
        while written < size_mb << 20:
            data = remap_ids(srcs[k % len(srcs)], f"big{k}")
            f.write(data if data.endswith(b"\n") else data + b"\n")
            written += len(data)
            k += 1
    marker.write_text("ok")
    return dest


def du(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*.jsonl"))


def timed(cmd: list[str], runs: int, env: dict | None = None) -> dict:
    walls, rss, out = [], [], b""
    for _ in range(runs):
        w, r, out = peak_rss_run(cmd, env)
        walls.append(w)
        rss.append(r)
    return {"best": min(walls), "median": statistics.median(walls), "rss_mb": max(rss) / 1024, "out": out}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def ours_totals(out: bytes) -> dict:
    s = json.loads(out.splitlines()[-1])
    return {k: s[k] for k in ("messages", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")}


def cc_totals(out: bytes) -> dict:
    t = json.loads(out)["totals"]
    return {"input_tokens": t["inputTokens"], "output_tokens": t["outputTokens"],
            "cache_read_tokens": t["cacheReadTokens"], "cache_write_tokens": t["cacheCreationTokens"]}


def case(name: str, home: Path, runs: int, with_cc: bool, rows: list) -> None:
    projects = home / "projects"
    subprocess.run(["cat", *map(str, projects.rglob("*.jsonl"))], stdout=subprocess.DEVNULL)  # warm cache
    rg = timed(["rg", "-c", '"usage"', str(projects)], runs)
    me = timed([sys.executable, "-m", "sessionsift", "usage", "daily", "--claude-home", str(home),
                "--format", "json", "--timezone", "UTC"], runs)
    row = {"case": name, "mb": du(home) / 2**20, "rg": rg, "ours": me, "totals": ours_totals(me["out"])}
    if with_cc:
        from tests.realclient import ccusage as CC

        exe = CC.ensure()
        with tempfile.TemporaryDirectory() as tmp:
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "CLAUDE_CONFIG_DIR": str(home),
                   "TZ": "UTC", "NO_COLOR": "1"}
            cc = timed([str(exe), "claude", "daily", "--offline", "--json"], runs, env)
        row["ccusage"] = cc
        ct = cc_totals(cc["out"])
        row["agree"] = all(row["totals"][k] == v for k, v in ct.items())
        row["cc_totals"] = ct
    rows.append(row)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=1000)
    ap.add_argument("--big-mb", type=int, default=300)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-ccusage", action="store_true")
    a = ap.parse_args()
    corpus = HERE / "_corpus"
    many = build_usage_home(corpus / f"usage-{a.size_mb}", a.size_mb, roots())
    big = build_big(corpus / f"usage-big-{a.big_mb}", a.big_mb) if a.big_mb else None
    print(f"load before: {load()}  (2 cores: {os.cpu_count()})")
    rows: list[dict] = []
    case(f"{sum(1 for _ in (many / 'projects').glob('*/*.jsonl'))} sessions", many, a.runs, not a.no_ccusage, rows)
    if big is not None:
        case("one large transcript", big, a.runs, not a.no_ccusage, rows)
    print(f"load after: {load()}")
    print()
    print("| case | MB | rg -c '\"usage\"' best/median s | sessionsift best/median s | ratio to rg (best) "
          "| ccusage best/median s | sessionsift / ccusage (best) | peak RSS MB ours / ccusage | totals agree |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        rg, me = r["rg"], r["ours"]
        cc = r.get("ccusage")
        print(f"| {r['case']} | {r['mb']:.0f} | {rg['best']:.2f} / {rg['median']:.2f} | {me['best']:.2f} / {me['median']:.2f} "
              f"| {me['best'] / rg['best']:.1f}x | "
              + (f"{cc['best']:.2f} / {cc['median']:.2f} | {me['best'] / cc['best']:.2f}x | {me['rss_mb']:.0f} / {cc['rss_mb']:.0f} | "
                 f"{'yes' if r['agree'] else 'NO ' + json.dumps(r['cc_totals'])} |" if cc else f"- | - | {me['rss_mb']:.0f} / - | - |"))
    print()
    for r in rows:
        print(f"{r['case']}: {json.dumps(r['totals'])}")
    return 0 if all(r.get("agree", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
