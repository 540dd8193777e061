"""Issue 16: every row of its table, sessionsift against ripgrep in the same run, cold (`--no-index`)
and warm (the index fresh), best and median of interleaved runs, with the load average.

    .venv/bin/python benchmarks/speed.py [--size-mb 1000] [--big-mb 500] [--repeat 5] [--cases NAME]
                                         [--before CHECKOUT]

Corpus (built once under benchmarks/_corpus/speed-<size>/, gitignored), from REAL client output
only: whole Claude Code sessions (main and subagent lanes) of examples/claude-home (client 2.1.258)
and examples/newest-client (2.1.332), each copy with every uuid AND every message, request and
tool-use id remapped (copies that share message ids would make token dedup meaningless); 100
sessions per project dir. A rare token is planted in 3 prompts (the selective literal); 40 LARGE
sessions (real sessions concatenated, ~2.5 MB each) carry a phrase planted once in a prompt
(the phrase case). Plus one `--big-mb` transcript of concatenated remapped sessions (`stats`), and
for the multi-provider case providers.py's home (Claude, Codex rollouts - a third `.zst`, searched
by `rg -z` -, Gemini chats).

Each case prints sessionsift's and rg's best/median wall, their ratio (best/best and
median/median), both CPU times (user+sys, all processes, least of the runs: a load-independent figure),
its peak RSS, and the goal with met/MISSED. `--before CHECKOUT` also runs another checkout's
sources on every case, cold and warm (before/after under the same load). Nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from _corpus_util import remap_ids, source_sessions  # noqa: E402

EX = REPO / "examples"
ROOTS = [EX / "claude-home", EX / "newest-client" / "2.1.332" / "claude-home"]
PY = str(REPO / ".venv" / "bin" / "python") if (REPO / ".venv" / "bin" / "python").exists() else sys.executable
SSIFT = [PY, "-m", "sessionsift"]
CANARY = b"zqxcanary4417"
PHRASE = b"lanternfish quorum"


def _plant(data: bytes, token: bytes) -> bytes:
    key = b'"role":"user","content":"'
    at = data.find(key)
    if at < 0:
        return data
    at += len(key)
    return data[:at] + token + b" " + data[at:]


def build_home(dest: Path, size_mb: int) -> Path:
    marker = dest / ".built"
    if marker.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    srcs = [(m.read_bytes(), [(l.relative_to(m.parent / m.stem), l.read_bytes()) for l in lanes], m.stem)
            for m, lanes in source_sessions(ROOTS)]
    target = size_mb << 20
    written = k = planted = 0
    rnd = random.Random(16)
    # 40 large sessions with the phrase (main lane only: 2.5 MB of concatenated sessions each)
    for j in range(40):
        parts = []
        n = 0
        while n < (5 << 19):
            main, _lanes, stem = srcs[rnd.randrange(len(srcs))]
            d = remap_ids(main, f"large{j}-{n}")
            parts.append(d if d.endswith(b"\n") else d + b"\n")
            n += len(d)
        data = b"".join(parts)
        data = _plant(data, PHRASE)
        proj = dest / "projects" / f"-bench-speed-large{j % 4}"
        proj.mkdir(parents=True, exist_ok=True)
        (proj / f"{uuid.uuid5(uuid.NAMESPACE_URL, f'speed-large-{j}')}.jsonl").write_bytes(data)
        written += len(data)
    while written < target:
        main, lanes, stem = srcs[k % len(srcs)]
        salt = f"speed{k}"
        sid = str(uuid.uuid5(uuid.NAMESPACE_URL, salt + stem))
        proj = dest / "projects" / f"-bench-speed-p{k // 100:03d}"
        proj.mkdir(parents=True, exist_ok=True)
        data = remap_ids(main, salt).replace(stem.encode(), sid.encode())
        if k % 997 == 500 and planted < 3:
            data2 = _plant(data, CANARY)
            planted += data2 != data
            data = data2
        (proj / f"{sid}.jsonl").write_bytes(data)
        written += len(data)
        for rel, lane in lanes:
            p = proj / sid / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(remap_ids(lane, salt).replace(stem.encode(), sid.encode()))
            written += len(lane)
        k += 1
    marker.write_text(f"{k} sessions + 40 large, {written} bytes, canary in {planted}\n")
    return dest


def build_big(dest: Path, size_mb: int) -> Path:
    marker = dest / f".built-{size_mb}"
    path = dest / "projects" / "-bench-speed-big" / "bbbbbbbb-1616-4000-8000-000000000000.jsonl"
    if marker.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    path.parent.mkdir(parents=True)
    srcs = [m.read_bytes() for m, _l in source_sessions(ROOTS)]
    written = k = 0
    with open(path, "wb") as f:
        while written < size_mb << 20:
            d = remap_ids(srcs[k % len(srcs)], f"big{k}")
            f.write(d if d.endswith(b"\n") else d + b"\n")
            written += len(d)
            k += 1
    marker.write_text("ok")
    return dest


# -- measuring ----------------------------------------------------------------------------------


def run(cmd: list[str], env: dict | None = None) -> tuple[float, float, int, bytes]:
    """(wall s, cpu s of the process and its children, peak RSS KiB, stdout)."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", *cmd], capture_output=True, env=env)
    wall = time.perf_counter() - t0
    try:
        u, s, m = p.stderr.decode().strip().splitlines()[-1].split()
        return wall, float(u) + float(s), int(m), p.stdout
    except (ValueError, IndexError):
        return wall, float("nan"), -1, p.stdout


def bench(a: list[str], b: list[str], repeat: int, env_a: dict | None = None):
    ra, rb = [], []
    for _ in range(repeat):
        ra.append(run(a, env_a))
        rb.append(run(b))
    def agg(rs):
        w = sorted(r[0] for r in rs)
        return {"best": w[0], "median": statistics.median(w), "cpu": min(r[1] for r in rs),
                "rss": max(r[2] for r in rs), "out": rs[-1][3]}
    return agg(ra), agg(rb)


ROWS: list[dict] = []


def report(name: str, mode: str, s: dict, r: dict, goal, note: str = "") -> None:
    """`goal`: a ratio to rg (best/best), or ("s", seconds, MB): an absolute best wall time (None:
    none in this mode) and a peak RSS bound."""
    rb, rm = s["best"] / r["best"], s["median"] / r["median"]
    if isinstance(goal, tuple):
        _s, secs, mb = goal
        ok = (secs is None or s["best"] <= secs) and s["rss"] / 1024 <= mb
        met, gtxt = ("met" if ok else "MISSED"), (f"<={secs:g}s," if secs is not None else "") + f"<={mb}MB"
    else:
        met = "" if goal is None else ("met" if rb <= goal else "MISSED")
        gtxt = "<=" + str(goal) + "x" if goal else "-"
    la = os.getloadavg()[0]
    ROWS.append(dict(name=name, mode=mode, s=s, r=r, rb=rb, rm=rm, goal=goal, met=met, load=la))
    print(f"{name:<34} {mode:<5} ssift {s['best']:6.3f}/{s['median']:6.3f}s cpu {s['cpu']:6.2f}s "
          f"rss {s['rss'] / 1024:5.0f}MB | rg {r['best']:6.3f}/{r['median']:6.3f}s cpu {r['cpu']:5.2f}s | "
          f"{rb:5.2f}x / {rm:5.2f}x  goal {gtxt:>13} {met:<6} load {la:5.2f} {note}",
          flush=True)


def tail(out: bytes) -> str:
    t = out.decode("utf-8", "replace").strip().splitlines()
    return t[0][:100] if t else ""


def machine() -> str:
    import platform

    cpu = "?"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    rg = subprocess.run(["rg", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return f"{platform.system()} {platform.release()}, {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {rg}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=1000)
    ap.add_argument("--big-mb", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cases", default="")
    ap.add_argument("--before", default=None)
    a = ap.parse_args()
    home = build_home(HERE / "_corpus" / f"speed-{a.size_mb}", a.size_mb)
    big = build_big(HERE / "_corpus" / f"speed-big-{a.big_mb}", a.big_mb)
    idx_dir = HERE / "_corpus" / f"speed-index-{a.size_mb}"
    env = dict(os.environ, NO_COLOR="1", SESSIONSIFT_INDEX_DIR=str(idx_dir))
    for k in ("SESSIONSIFT_NO_INDEX", "CLAUDE_CONFIG_DIR", "PYTHONDONTWRITEBYTECODE"):
        env.pop(k, None)  # bytecode as a user's install has it (compiled once, below)
    subprocess.run([PY, "-m", "compileall", "-q", str(REPO / "src")], env=env, capture_output=True)
    before = None
    if a.before:
        before = dict(env, PYTHONPATH=str(Path(a.before).resolve() / "src"))
    proj, bproj = str(home / "projects"), str(big / "projects")
    size = sum(p.stat().st_size for p in Path(proj).rglob("*.jsonl"))
    nfiles = sum(1 for _ in Path(proj).rglob("*.jsonl"))
    print(f"machine: {machine()}")
    print(f"corpus: {home} ({(home / '.built').read_text().strip()}): {nfiles} transcripts, {size / 1e9:.2f} GB; "
          f"big: {bproj} {sum(p.stat().st_size for p in Path(bproj).rglob('*.jsonl')) / 1e6:.0f} MB")
    print(f"load average before: {'%.2f %.2f %.2f' % os.getloadavg()}; repeat {a.repeat} (interleaved with rg)")
    for d in (proj, bproj):
        subprocess.run(["rg", "-c", "--no-messages", "zzzzwarm", d], capture_output=True)
    H = ["--claude-home", str(home)]
    B = ["--claude-home", str(big)]
    t0 = time.perf_counter()
    for target in (H, B):
        subprocess.run([*SSIFT, "index", "update", *target], env=env, capture_output=True)
    print(f"index build (index update, both homes): {time.perf_counter() - t0:.1f} s; index size "
          f"{sum(p.stat().st_size for p in idx_dir.rglob('*.idx')) / 1e6:.1f} MB")
    want = a.cases

    def case(name: str) -> bool:
        return want in name

    cases = [
        ("selective literal -c", [*SSIFT, "search", CANARY.decode(), "-c", *H], ["rg", "-c", CANARY.decode(), proj],
         {"cold": 1.5, "warm": None}),
        ("phrase in 40 large sessions -c", [*SSIFT, "search", PHRASE.decode(), "-c", *H],
         ["rg", "-c", PHRASE.decode(), proj], {"cold": None, "warm": 1.5}),
        ("census -t user.message --count", [*SSIFT, "search", "", "-t", "user.message", "--count", *H],
         ["rg", "-c", '"type":"user"', proj], {"cold": 4.0, "warm": 1.0}),
        (f"stats {a.big_mb} MB", [*SSIFT, "stats", *B, "--format", "json"], ["rg", "-c", '"type"', bproj],
         {"cold": 8.0, "warm": 1.5}),
        ("stats 1 GB many sessions", [*SSIFT, "stats", *H, "--format", "json"], ["rg", "-c", '"type"', proj],
         {"cold": None, "warm": None}),
        ("files --by summary 1 GB", [*SSIFT, "files", "--by", "summary", *H, "--format", "json"],
         ["rg", "-c", '"tool_use"', proj], {"cold": ("s", None, 300), "warm": ("s", 2.0, 300)}),
    ]
    if case("recover"):
        # the file the corpus touches most (its path as files --by file names it), recovered whole
        p = subprocess.run([*SSIFT, "files", "--by", "file", *H, "--format", "json"], env=env, capture_output=True)
        import json

        rows = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
        top = max((x for x in rows if x.get("kind") == "file"), key=lambda x: sum(x["ops"].values()))["file"]
        cases.append(("recover --file (most touched)", [*SSIFT, "recover", "--file", top, *H,
                      "--format", "json"], ["rg", "-c", "-F", top, proj], {"cold": ("s", None, 300),
                                                                        "warm": ("s", 2.0, 300)}))
    for name, sc, rc, goals in cases:
        if not case(name):
            continue
        for mode in ("cold", "warm"):
            cmd = sc + (["--no-index"] if mode == "cold" else [])
            s, r = bench(cmd, rc, a.repeat, env)
            report(name, mode, s, r, goals[mode], tail(s["out"]) if mode == "cold" else "")
            if before is not None:  # the same command, the older sources, under the same load
                s, r = bench(cmd, rc, a.repeat, before)
                report(name, "before", s, r, None)
    if case("help"):
        s, r = bench([*SSIFT[:1], "-m", "sessionsift", "--help"], [PY, "-c", "pass"], a.repeat * 2, env)
        ROWS.append({})
        d = s["best"] - r["best"]
        print(f"{'--help vs bare interpreter':<34}       ssift {s['best']:6.3f}/{s['median']:6.3f}s cpu {s['cpu']:5.3f}s | "
              f"python -c pass {r['best']:6.3f}/{r['median']:6.3f}s cpu {r['cpu']:5.3f}s | +{d:.3f}s "
              f"(goal <= +0.050s) {'met' if d <= 0.05 else 'MISSED'} load {os.getloadavg()[0]:.2f}")
        if before is not None:
            s2, _ = bench([*SSIFT[:1], "-m", "sessionsift", "--help"], [PY, "-c", "pass"], a.repeat, before)
            print(f"{'  before':<34}       ssift {s2['best']:6.3f}/{s2['median']:6.3f}s cpu {s2['cpu']:5.3f}s")
    if case("multi"):
        from providers import build as build_providers

        mh = build_providers(HERE / "_corpus" / "providers-60", 60)
        s, r = bench([*SSIFT, "search", "zqxprovcanary7731", "-c", "--home", str(mh), "--no-index"],
                     ["rg", "-c", "-z", "--hidden", "zqxprovcanary7731", str(mh)], a.repeat, env)
        report("multi-provider literal -c", "cold", s, r, None, tail(s["out"]))
        if before is not None:
            s, r = bench([*SSIFT, "search", "zqxprovcanary7731", "-c", "--home", str(mh), "--no-index"],
                         ["rg", "-c", "-z", "--hidden", "zqxprovcanary7731", str(mh)], a.repeat, before)
            report("multi-provider literal -c", "before", s, r, None, tail(s["out"]))
    print(f"load average after: {'%.2f %.2f %.2f' % os.getloadavg()}")


if __name__ == "__main__":
    main()
