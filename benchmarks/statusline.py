"""`sessionsift statusline` cold and warm on a large Claude Code store (goal: warm under 50 ms).

    .venv/bin/python benchmarks/statusline.py [--size-mb 200] [--runs 15] [--recent 20]

Corpus (under /var/tmp/<user>/ssift-bench-statusline, not in the repo): whole real-client sessions
(examples/claude-home, examples/newest-client/2.1.332) copied with fresh ids (benchmarks/
_corpus_util.build_usage_home) to about --size-mb MB; every transcript's mtime is set two weeks back
except --recent of them (a store where a few sessions ran today), one of which is "this session":
its records' timestamps are moved so that its last one is five minutes old (a window is open). The hook object is one
the real 2.1.258 client handed its statusLine command (tests/realclient/scenarios_statusline.py), its
session id and transcript path pointed at that session.

Printed: `python -c pass` (the interpreter's own start, the floor), cold (no cache), warm (the
cache filled, nothing changed) and warm after an append (one transcript grew by one real record):
best and median wall time and the CPU time of the child, with the load average before and after.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _corpus_util import REPO, build_usage_home  # noqa: E402

EXE = str(Path(sys.executable).with_name("sessionsift"))
HOOK = json.loads('{"effort":{"level":"high"},"model":{"id":"claude-opus-5[1m]","display_name":"Opus 5 (1M context)"},"workspace":{"current_dir":"/work","project_dir":"/work","added_dirs":[]},"version":"2.1.258","output_style":{"name":"default"},"cost":{"total_cost_usd":0.03607,"total_duration_ms":6155,"total_api_duration_ms":722,"total_lines_added":0,"total_lines_removed":0},"context_window":{"total_input_tokens":2414,"total_output_tokens":2,"context_window_size":1000000,"current_usage":{"input_tokens":2414,"output_tokens":2,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"used_percentage":0,"remaining_percentage":100},"exceeds_200k_tokens":false,"prompt_cache":{"warm":false,"caching_observed":false,"ttl":"5m","expires_at":null,"requests":3,"misses":0,"expected_rebuilds":0,"hit_ratio":0,"cache_write_tokens":0,"miss_recache_tokens":0,"last_miss_at":null,"recache_tokens_if_cold":2414},"fast_mode":false,"thinking":{"enabled":true}}')
"""What the real 2.1.258 client handed its statusLine command (scenarios_statusline), less its ids and paths."""


def timed(cmd: list[str], data: bytes, env: dict) -> tuple[float, float, bytes]:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, input=data, capture_output=True, env=env)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 3):
        raise SystemExit(f"{cmd} exited {p.returncode}: {p.stderr[-300:]!r}")
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), p.stdout


def series(label: str, cmd, data, env, runs: int, before=None) -> None:
    walls, cpus = [], []
    out = b""
    for _ in range(runs):
        if before:
            before()
        w, c, out = timed(cmd, data, env)
        walls.append(w)
        cpus.append(c)
    print(f"{label:34s} wall best {min(walls) * 1000:6.1f} ms  median {statistics.median(walls) * 1000:6.1f} ms   "
          f"CPU best {min(cpus) * 1000:6.1f} ms  median {statistics.median(cpus) * 1000:6.1f} ms")
    if out:
        print(f"{'':34s} -> {out.decode().strip()[:150]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=200)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--recent", type=int, default=20)
    a = ap.parse_args()
    base = Path(f"/var/tmp/{os.environ.get('USER', 'bench')}/ssift-bench-statusline")
    home = build_usage_home(base / "home", a.size_mb, [REPO / "examples" / "claude-home",
                                                       REPO / "examples" / "newest-client" / "2.1.332" / "claude-home"])
    mains = sorted(home.glob("projects/*/*.jsonl"))
    old = time.time() - 14 * 86400
    for p in home.rglob("*.jsonl"):
        os.utime(p, (old, old))
    cur = mains[len(mains) // 2]
    now = dt.datetime.now(dt.timezone.utc)
    lines = cur.read_bytes().splitlines()
    ts = [json.loads(x).get("timestamp") for x in lines]
    last = max(dt.datetime.fromisoformat(t.replace("Z", "+00:00")) for t in ts if isinstance(t, str))
    shift = now - dt.timedelta(minutes=5) - last  # its last record five minutes ago
    out = []
    for raw in lines:
        o = json.loads(raw)
        if isinstance(o.get("timestamp"), str):
            d = dt.datetime.fromisoformat(o["timestamp"].replace("Z", "+00:00")) + shift
            o["timestamp"] = d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"
        out.append(json.dumps(o, separators=(",", ":")))
    cur.write_text("\n".join(out) + "\n")
    for p in mains[: a.recent - 1]:
        os.utime(p, None)
    files = list(home.rglob("*.jsonl"))
    size = sum(p.stat().st_size for p in files)
    hook = dict(HOOK, session_id=cur.stem, transcript_path=str(cur), cwd="/work")
    data = json.dumps(hook).encode()
    idx = base / "index"
    env = dict(os.environ, SESSIONSIFT_INDEX_DIR=str(idx))
    env.pop("COLUMNS", None)
    print(f"corpus: {len(mains)} sessions, {len(files)} transcripts, {size / 1e6:.0f} MB; {a.recent} modified today; "
          f"load {os.getloadavg()[0]:.2f}")
    series("python -c pass", [sys.executable, "-c", "pass"], b"", env, a.runs)
    series("cold (no cache)", [EXE, "statusline"], data, env, max(3, a.runs // 5),
           before=lambda: shutil.rmtree(idx, ignore_errors=True))
    series("warm (nothing changed)", [EXE, "statusline"], data, env, a.runs)
    rec = lines[len(lines) // 2]

    def grow() -> None:
        with open(cur, "ab") as f:  # one real record again (a duplicate message id: counted once)
            f.write(rec + b"\n")
    series("warm, this session grew", [EXE, "statusline"], data, env, a.runs, before=grow)
    print(f"load after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
