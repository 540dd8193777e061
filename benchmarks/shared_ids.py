"""Issue 25's store of resumed and forked sessions (records shared between sessions): `stats`,
a census and a phrase search, sessionsift against ripgrep in the same run, cold (`--no-index`)
and warm, best and median of interleaved runs, with the load average.

    .venv/bin/python benchmarks/shared_ids.py [--families 40] [--forks 2] [--repeat 3] [--before CHECKOUT]

Corpus (built once under benchmarks/_corpus/shared-<families>x<forks>/, gitignored), from REAL
client output only: each family's original is a large session (real sessions of
examples/claude-home and examples/newest-client concatenated with every id remapped, ~2.5 MB);
each fork is written the way `claude --resume <id> --fork-session` writes one (measured:
examples/captured/reply-before-prompt, tests/realclient/scenarios_robust.py `robust_fork`): the
client's first lines, a queue-operation at the fork's time, then a copy of every record of the
original (same uuid, parentUuid, timestamp, message; only sessionId differs), then the fork's own
records (another remapped real session, its first record chained to the last copy). A phrase is
planted in each original's first prompt (so every fork holds it too).

`--before CHECKOUT` also runs another checkout's sources on every case (before/after under the
same load). Nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import time
import uuid
from pathlib import Path

from speed import PHRASE, ROOTS, SSIFT, _plant, bench, machine, report
from _corpus_util import remap_ids, source_sessions

HERE = Path(__file__).resolve().parent
SID = re.compile(rb'"sessionId":"[0-9a-f-]{36}"')


def _last_uuid(data: bytes) -> str | None:
    for line in reversed(data.splitlines()):
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if isinstance(o, dict) and isinstance(o.get("uuid"), str):
            return o["uuid"]
    return None


def _chain(data: bytes, parent: str) -> bytes:
    """`data` with its first root record (parentUuid null) chained to `parent`."""
    return data.replace(b'"parentUuid":null', b'"parentUuid":"' + parent.encode() + b'"', 1)


def build(dest: Path, families: int, forks: int) -> Path:
    marker = dest / ".built"
    if marker.exists():
        return dest
    srcs = [m.read_bytes() for m, _l in source_sessions(ROOTS)]
    rnd = random.Random(25)
    written = 0
    for j in range(families):
        parts, n = [], 0
        while n < (5 << 19):
            d = remap_ids(srcs[rnd.randrange(len(srcs))], f"fam{j}-{n}")
            parts.append(d if d.endswith(b"\n") else d + b"\n")
            n += len(d)
        orig = _plant(b"".join(parts), PHRASE)
        osid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"shared-orig-{j}"))
        orig = SID.sub(b'"sessionId":"' + osid.encode() + b'"', orig)
        proj = dest / "projects" / f"-bench-shared-p{j % 4}"
        proj.mkdir(parents=True, exist_ok=True)
        (proj / f"{osid}.jsonl").write_bytes(orig)
        written += len(orig)
        last = _last_uuid(orig)
        for k in range(forks):
            fsid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"shared-fork-{j}-{k}"))
            head = (json.dumps({"type": "permission-mode", "permissionMode": "default", "sessionId": fsid},
                               separators=(",", ":")) + "\n"
                    + json.dumps({"type": "queue-operation", "operation": "enqueue",
                                  "timestamp": f"2099-01-{1 + k:02d}T00:00:00.000Z", "sessionId": fsid},
                                 separators=(",", ":")) + "\n").encode()
            own = remap_ids(srcs[rnd.randrange(len(srcs))], f"fork{j}-{k}")
            own = own if own.endswith(b"\n") else own + b"\n"
            data = head + SID.sub(b'"sessionId":"' + fsid.encode() + b'"', orig + (_chain(own, last) if last else own))
            (proj / f"{fsid}.jsonl").write_bytes(data)
            written += len(data)
    marker.write_text(f"{families} originals x {forks} forks each, {written} bytes\n")
    return dest


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--families", type=int, default=40)
    ap.add_argument("--forks", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default="")
    ap.add_argument("--before", default=None)
    a = ap.parse_args()
    home = build(HERE / "_corpus" / f"shared-{a.families}x{a.forks}", a.families, a.forks)
    idx_dir = HERE / "_corpus" / f"shared-index-{a.families}x{a.forks}"
    env = dict(os.environ, NO_COLOR="1", SESSIONSIFT_INDEX_DIR=str(idx_dir))
    for k in ("SESSIONSIFT_NO_INDEX", "CLAUDE_CONFIG_DIR", "PYTHONDONTWRITEBYTECODE"):
        env.pop(k, None)
    before = dict(env, PYTHONPATH=str(Path(a.before).resolve() / "src")) if a.before else None
    proj = str(home / "projects")
    size = sum(p.stat().st_size for p in Path(proj).rglob("*.jsonl"))
    print(f"machine: {machine()}")
    print(f"corpus: {home} ({(home / '.built').read_text().strip()}): "
          f"{sum(1 for _ in Path(proj).rglob('*.jsonl'))} transcripts, {size / 1e9:.2f} GB")
    print(f"load average before: {'%.2f %.2f %.2f' % os.getloadavg()}; repeat {a.repeat} (interleaved with rg)")
    subprocess.run(["rg", "-c", "--no-messages", "zzzzwarm", proj], capture_output=True)
    H = ["--claude-home", str(home)]
    t0 = time.perf_counter()
    subprocess.run([*SSIFT, "index", "update", *H], env=env, capture_output=True)
    print(f"index build (index update): {time.perf_counter() - t0:.1f} s; index size "
          f"{sum(p.stat().st_size for p in idx_dir.rglob('*.idx')) / 1e6:.1f} MB")
    cases = [
        ("stats, shared ids", [*SSIFT, "stats", *H, "--format", "json"], ["rg", "-c", '"type"', proj],
         {"cold": None, "warm": None}),
        ("census -t user.message, shared", [*SSIFT, "search", "", "-t", "user.message", "--count", *H],
         ["rg", "-c", '"type":"user"', proj], {"cold": 4.0, "warm": 0.5}),
        ("phrase -c, shared ids", [*SSIFT, "search", PHRASE.decode(), "-c", *H], ["rg", "-c", PHRASE.decode(), proj],
         {"cold": None, "warm": 0.5}),
    ]
    for name, sc, rc, goals in cases:
        if a.cases not in name:
            continue
        for mode in ("cold", "warm"):
            cmd = sc + (["--no-index"] if mode == "cold" else [])
            s, r = bench(cmd, rc, a.repeat, env)
            report(name, mode, s, r, goals[mode], (s["out"].decode("utf-8", "replace").strip().splitlines() or [""])[0][:60]
                   if mode == "cold" else "")
            if before is not None:
                s, r = bench(cmd, rc, a.repeat, before)
                report(name, "before", s, r, None)
    print(f"load average after: {'%.2f %.2f %.2f' % os.getloadavg()}")


if __name__ == "__main__":
    main()
