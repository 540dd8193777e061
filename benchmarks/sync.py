"""`sync` at scale, simulated: N machines of S MB each synced into one dataset, a day's work synced
again, and `usage daily --dataset` over every machine (docs/dataset.md; figures in README.md).

    .venv/bin/python benchmarks/sync.py [--machines 20] [--size-mb 1000] [--day-mb 20] [--root /var/tmp/sync]

Each machine's store is whole real-client Claude Code sessions (examples/claude-home, 2.1.258, and
examples/newest-client/2.1.332, main and subagent lanes) copied with every uuid and message,
request and tool-use id remapped per machine and copy (benchmarks/_corpus_util.remap_ids: the
machines' responses are distinct, as on real machines). Built under --root (never /tmp, never the
repo). Every command runs as its own process under /usr/bin/time (peak RSS); the load average
before and after is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _corpus_util import REPO, peak_rss_run, remap_ids, source_sessions  # noqa: E402

ROOTS = [REPO / "examples" / "claude-home", REPO / "examples" / "newest-client" / "2.1.332" / "claude-home"]


def build(dest: Path, size_mb: int, machine: str, start: int = 0) -> tuple[int, int]:
    """Copies of the real sessions into `dest/.claude` up to `size_mb` MB from copy number `start`;
    (copies, bytes) written."""
    srcs = [(m.read_bytes(), [(l.relative_to(m.parent / m.stem), l.read_bytes()) for l in lanes], m.stem)
            for m, lanes in source_sessions(ROOTS)]
    written = 0
    k = start
    while written < size_mb << 20:
        main, lanes, stem = srcs[k % len(srcs)]
        salt = f"{machine}-{k}"
        sid = str(uuid.uuid5(uuid.NAMESPACE_URL, salt + stem))
        proj = dest / ".claude" / "projects" / f"-bench-sync-p{k // 100}"
        proj.mkdir(parents=True, exist_ok=True)
        (proj / f"{sid}.jsonl").write_bytes(remap_ids(main, salt).replace(stem.encode(), sid.encode()))
        written += len(main)
        for rel, data in lanes:
            p = proj / sid / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(remap_ids(data, salt).replace(stem.encode(), sid.encode()))
            written += len(data)
        k += 1
    return k - start, written


def grow(dest: Path, n: int) -> int:
    """Append to `n` existing transcripts what the client appends in a resumed session: the
    session's own records once more (the same bytes; its responses dedup to themselves)."""
    added = 0
    for p in sorted((dest / ".claude" / "projects").rglob("*.jsonl"))[:n]:
        if "subagents" in p.parts:
            continue
        data = p.read_bytes()
        with open(p, "ab") as f:
            f.write(data)
        added += len(data)
    return added


def run(cmd: list[str], env: dict) -> dict:
    wall, rss, out = peak_rss_run(cmd, env)
    last = {}
    for line in out.splitlines()[::-1]:
        if line.startswith(b"{"):
            last = json.loads(line)
            break
    return {"wall": round(wall, 2), "rss_mb": round(rss / 1024, 1), "summary": last}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--machines", type=int, default=20)
    ap.add_argument("--size-mb", type=int, default=1000)
    ap.add_argument("--day-mb", type=int, default=20, help="new sessions of a day's work on one machine")
    ap.add_argument("--grow", type=int, default=5, help="existing transcripts the day's work appends to")
    ap.add_argument("--root", default="/var/tmp/sync")
    ap.add_argument("--keep", action="store_true", help="keep the stores and the dataset built before")
    a = ap.parse_args()
    root = Path(a.root)
    if not a.keep:
        shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    ds = root / "dataset"
    exe = [sys.executable, "-m", "sessionsift"]
    print(f"load before: {load()}", flush=True)
    results = []
    for i in range(a.machines):
        name = f"m{i:02d}"
        home = root / name
        if not (home / ".built").exists():
            t0 = time.perf_counter()
            copies, size = build(home, a.size_mb, name)
            (home / ".built").write_text(str(copies))
            print(f"{name}: built {copies} sessions, {size / 1e6:.0f} MB in {time.perf_counter() - t0:.1f} s", flush=True)
        env = {**os.environ, "XDG_STATE_HOME": str(home / "state"), "SESSIONSIFT_INDEX_DIR": str(home / "index")}
        r = run([*exe, "sync", "--to", str(ds), "--claude-home", str(home / ".claude"), "--machine", name,
                 "--format", "json"], env)
        s = r["summary"]
        print(f"{name}: first sync {r['wall']} s, peak {r['rss_mb']} MB, {s.get('new')} sessions, "
              f"{s.get('rows', {}).get('records')} records, {s.get('bytes', 0) / 1e6:.0f} MB of Parquet in "
              f"{s.get('runs')} run(s); load {load()}", flush=True)
        results.append(("first", name, r))
    m0 = root / "m00"
    env0 = {**os.environ, "XDG_STATE_HOME": str(m0 / "state"), "SESSIONSIFT_INDEX_DIR": str(m0 / "index")}
    sync0 = [*exe, "sync", "--to", str(ds), "--claude-home", str(m0 / ".claude"), "--format", "json"]
    r = run(sync0, env0)
    print(f"m00: re-sync (nothing new) {r['wall']} s, peak {r['rss_mb']} MB, unchanged {r['summary'].get('unchanged')}, "
          f"files written {r['summary'].get('files')}", flush=True)
    # a day's work on m00: new sessions, and transcripts that grew
    copies = int((m0 / ".built").read_text())
    n_new, new_bytes = build(m0, a.day_mb, "m00", start=copies)
    (m0 / ".built").write_text(str(copies + n_new))
    grown = grow(m0, a.grow)
    r = run(sync0, env0)
    s = r["summary"]
    print(f"m00: a day's work ({n_new} new sessions, {new_bytes / 1e6:.1f} MB; {a.grow} transcripts grown by "
          f"{grown / 1e6:.1f} MB): sync {r['wall']} s, peak {r['rss_mb']} MB, new {s.get('new')}, appended "
          f"{s.get('appended')}, rewritten {s.get('rewritten')}, unchanged {s.get('unchanged')}, "
          f"{s.get('rows', {}).get('records')} records written", flush=True)
    for rep in ("daily",):
        r = run([*exe, "usage", rep, "--dataset", str(ds), "--timezone", "UTC", "--format", "json"], os.environ.copy())
        s = r["summary"]
        print(f"usage {rep} --dataset over {a.machines} machines: {r['wall']} s, peak {r['rss_mb']} MB, "
              f"{s.get('messages')} responses, {s.get('total_tokens')} tokens, ${s.get('cost_usd')}", flush=True)
    r = run([*exe, "usage", "daily", "--claude-home", str(m0 / ".claude"), "--timezone", "UTC", "--format", "json"],
            env0)
    print(f"usage daily on m00 alone (local files): {r['wall']} s, peak {r['rss_mb']} MB, "
          f"{r['summary'].get('messages')} responses", flush=True)
    du = sum(f.stat().st_size for f in ds.rglob("*") if f.is_file())
    print(f"dataset: {du / 1e9:.2f} GB; load after: {load()}", flush=True)


if __name__ == "__main__":
    main()
