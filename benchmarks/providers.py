"""Benchmark for the providers layer (issue 12): `search` and `stats` over a home holding Claude
Code, Codex CLI and Gemini CLI sessions, sessionsift vs ripgrep in the same run (`rg -z` for the
compressed Codex rollouts), wall time (best and median of N interleaved runs, warm cache), CPU
seconds (user + sys of the process and its children, best run), peak RSS and the load average.
On a shared machine the wall ratio mostly measures the scheduler (rg's threads take a larger
share of busy cores); the CPU ratio is the work each side did. Sources are byte-compiled first
(as an install has them) and both sides run with the same niceness.

    .venv/bin/python benchmarks/providers.py [--size-mb 120] [--repeat 5] [--before CHECKOUT] [--cases NAME]

`--before` runs another checkout's sources in the same run (a before/after under the same load).

The corpus is built once under benchmarks/_corpus/providers-<size> (gitignored) by replicating
the committed REAL-client samples with fresh ids: examples/claude-home, examples/codex-home's
rollouts (plain and .zst) and examples/gemini-home's chats, about --size-mb MB of each. A rare
token is planted in 3 Codex and 3 Gemini sessions. opencode and Crush databases are not
replicated here (benchmarks/sqlite_stores.py measures them). Nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus_util import peak_rss_run, remap_ids  # noqa: E402
from search import machine  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
EX = REPO / "examples"
SSIFT = [str(REPO / ".venv" / "bin" / "sessionsift")] if (REPO / ".venv" / "bin" / "sessionsift").exists() else [
    sys.executable, "-m", "sessionsift"]
CANARY = b"zqxprovcanary7731"


def _plant(data: bytes, marker: bytes) -> bytes:
    """The canary inside the first occurrence of a prompt marker (`P1]`), or unchanged."""
    at = data.find(marker)
    return data if at < 0 else data[:at] + CANARY + b" " + data[at:]


def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor(level=3).compress(data)


def _unzstd(data: bytes) -> bytes:
    import zstandard

    with zstandard.ZstdDecompressor().stream_reader(data) as r:
        return r.read()


def build(dest: Path, size_mb: int) -> Path:
    marker = dest / ".built"
    if marker.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    target = size_mb * 1024 * 1024
    # Claude Code: copies of the real transcripts, one project dir per copy batch
    srcs = sorted((EX / "claude-home" / "projects").rglob("*.jsonl"))
    srcs = [s for s in srcs if "subagents" not in s.parts]
    written = i = 0
    while written < target:
        s = srcs[i % len(srcs)]
        data = remap_ids(s.read_bytes(), f"cl{i}")
        proj = dest / ".claude" / "projects" / f"-bench-prov-p{i % 16:02d}"
        proj.mkdir(parents=True, exist_ok=True)
        (proj / f"{uuid.uuid5(uuid.NAMESPACE_URL, f'prov-cl-{i}')}.jsonl").write_bytes(data)
        written += len(data)
        i += 1
    n_claude = i
    # Codex CLI: rollouts under sessions/YYYY/MM/DD (a third kept compressed, as the client may)
    rolls = sorted(p for p in (EX / "codex-home").rglob("rollout-*.jsonl*"))
    plain = {p.name.removesuffix(".zst"): p for p in rolls}
    written = i = planted = 0
    while written < target:
        name, p = sorted(plain.items())[i % len(plain)]
        raw = p.read_bytes()
        data = _unzstd(raw) if p.name.endswith(".zst") else raw
        data = remap_ids(data, f"cx{i}")
        if i % 97 == 13 and planted < 3:
            data, planted = _plant(data, b"P1]"), planted + 1
        new = str(uuid.uuid5(uuid.NAMESPACE_URL, f"prov-cx-{i}"))
        day = dest / ".codex" / "sessions" / "2026" / "12" / f"{1 + i % 28:02d}"
        day.mkdir(parents=True, exist_ok=True)
        fn = f"rollout-2026-12-01T09-{i // 60 % 60:02d}-{i % 60:02d}-{new}.jsonl"
        if i % 3 == 2:
            (day / (fn + ".zst")).write_bytes(_zstd(data))
        else:
            (day / fn).write_bytes(data)
        written += len(data)
        i += 1
    n_codex, cx_planted = i, planted
    # Gemini CLI: chats under tmp/<project>/chats (the projects.json of the sample is copied)
    chats = sorted((EX / "gemini-home" / "tmp").rglob("chats/session-*.json*"))
    (dest / ".gemini").mkdir(parents=True, exist_ok=True)
    for f in ("projects.json",):
        if (EX / "gemini-home" / f).exists():
            shutil.copy(EX / "gemini-home" / f, dest / ".gemini" / f)
    written = i = planted = 0
    while written < target:
        c = chats[i % len(chats)]
        data = remap_ids(c.read_bytes(), f"gm{i}")
        if i % 97 == 29 and planted < 3:
            data, planted = _plant(data, b"P1]"), planted + 1
        proj = c.parent.parent.name
        d = dest / ".gemini" / "tmp" / proj / "chats"
        d.mkdir(parents=True, exist_ok=True)
        short = uuid.uuid5(uuid.NAMESPACE_URL, f"prov-gm-{i}").hex[:8]
        (d / f"session-2026-12-01T{i // 60 % 24:02d}-{i % 60:02d}-{short}{''.join(c.suffixes)}").write_bytes(data)
        for marker_file in (c.parent.parent / ".project_root",):
            if marker_file.exists() and not (d.parent / ".project_root").exists():
                shutil.copy(marker_file, d.parent / ".project_root")
        written += len(data)
        i += 1
    marker.write_text(f"claude {n_claude} sessions, codex {n_codex} rollouts ({cx_planted} planted), "
                      f"gemini {i} chats ({planted} planted), about {size_mb} MB each\n")
    return dest


def _runs(cmd: list[str], env: dict | None = None) -> tuple[float, int, bytes, float]:
    """(wall s, peak RSS KiB, stdout, CPU s = user + sys of the child and its children)."""
    if not os.path.exists("/usr/bin/time"):
        return (*peak_rss_run(cmd, env), float("nan"))
    import time

    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", *cmd], capture_output=True, env=env)
    wall = time.perf_counter() - t0
    try:
        rss, user, sys_ = p.stderr.strip().splitlines()[-1].split()
        return wall, int(rss), p.stdout, float(user) + float(sys_)
    except (ValueError, IndexError):
        return wall, -1, p.stdout, float("nan")


def bench(ssift: list[str], rg: list[str], repeat: int, env: dict | None = None):
    """Interleaved runs (ssift, rg, ssift, rg, ...) so both see the same load; per side: best and
    median wall, max peak RSS, last stdout, least CPU."""
    s_runs, r_runs = [], []
    for _ in range(repeat):
        s_runs.append(_runs(ssift, env))
        r_runs.append(_runs(rg))
    out = []
    for runs in (s_runs, r_runs):
        walls = sorted(r[0] for r in runs)
        out.append((walls[0], statistics.median(walls), max(r[1] for r in runs), runs[-1][2],
                    min(r[3] for r in runs)))
    return out


def before_cmd(src: str) -> tuple[list[str], dict]:
    """The same CLI from another checkout's sources (for a before/after in the same run)."""
    env = dict(os.environ, PYTHONPATH=str(Path(src).resolve() / "src"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(src).resolve() / "src")], env=env,
                   capture_output=True)
    return [sys.executable, "-m", "sessionsift"], env


GOALS = {"selective literal, all": 1.5, "selective literal, codex": 1.5, "selective literal, gemini": 1.5,
         "stats, codex+gemini": 8.0}
"""Issue 16's goals for these cases (ratio to rg in the same run)."""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=120, help="about this many MB per provider")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--before", default=None, help="another checkout (its src/ is run too, in the same run)")
    ap.add_argument("--cases", default=None, help="only the cases whose name contains this")
    a = ap.parse_args()
    if not shutil.which("rg"):
        raise SystemExit("ripgrep missing: apt-get install -y ripgrep")
    home = build(HERE / "_corpus" / f"providers-{a.size_mb}", a.size_mb)
    print(f"machine: {machine()}")
    print(f"corpus: {home} - {(home / '.built').read_text().strip()}")
    for sub in (".claude", ".codex", ".gemini"):
        files = [p for p in (home / sub).rglob("*") if p.is_file()]
        print(f"  {sub}: {len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.0f} MB on disk")
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    subprocess.run(["rg", "-c", "-z", "--hidden", "--no-messages", "zzzzwarm", str(home)], capture_output=True)
    h = ["--home", str(home)]
    cx = ["--codex-home", str(home / ".codex")]
    gm = ["--gemini-home", str(home / ".gemini")]
    cases = [
        ("selective literal, all", ["search", CANARY.decode(), "-c", *h],
         ["rg", "-c", "-z", "--hidden", CANARY.decode(), str(home)]),
        ("selective literal, codex", ["search", CANARY.decode(), "-c", *cx],
         ["rg", "-c", "-z", CANARY.decode(), str(home / ".codex")]),
        ("selective literal, gemini", ["search", CANARY.decode(), "-c", *gm],
         ["rg", "-c", CANARY.decode(), str(home / ".gemini")]),
        ("regex -i, all", ["search", "-i", "-c", r"exit code [0-9]+|traceback", *h],
         ["rg", "-c", "-z", "--hidden", "-i", r"exit code [0-9]+|traceback", str(home)]),
        ("stats, codex+gemini", ["stats", "--format", "json", *cx, *gm],
         ["rg", "-c", "-z", '"type"', str(home / ".codex"), str(home / ".gemini")]),
        ("list, all", ["list", "--format", "json", *h],
         ["rg", "-c", "-z", "--hidden", '"type"', str(home)]),
        ("list, codex+gemini", ["list", "--format", "json", *cx, *gm],
         ["rg", "-c", "-z", '"type"', str(home / ".codex"), str(home / ".gemini")]),
    ]
    if a.cases:
        cases = [c for c in cases if a.cases in c[0]]
    now_env = dict(os.environ)
    now_env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode as a user's install has it (compiled once)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "src")], env=now_env, capture_output=True)
    sides = [("now", SSIFT, now_env)]
    if a.before:
        bc, benv = before_cmd(a.before)
        sides.insert(0, ("before", bc, benv))
    print(f"{'case':<26} {'side':<6} {'ssift best/med s':>16} {'rg best/med s':>14} {'ratio best/med':>14} "
          f"{'goal':>5} {'CPU s ssift/rg':>14} {'CPU ratio':>9} {'RSS MB':>6} {'load':>5}")
    for name, sc, rc in cases:
        for side, cmd, env in sides:
            (sb, sm, sr, sout, sc_cpu), (rb, rm, _rr, _, rc_cpu) = bench([*cmd, *sc], rc, a.repeat, env)
            goal = GOALS.get(name)
            ratio_b, ratio_m = (sb / rb if rb else float("inf")), (sm / rm if rm else float("inf"))
            mark = "" if goal is None else ("met" if ratio_b <= goal else "MISS")
            print(f"{name:<26} {side:<6} {sb:7.2f}/{sm:<8.2f} {rb:6.2f}/{rm:<7.2f} {ratio_b:6.1f}/{ratio_m:<7.1f} "
                  f"{('<=' + str(goal)) if goal else '-':>5} {sc_cpu:6.2f}/{rc_cpu:<7.2f} "
                  f"{(sc_cpu / rc_cpu if rc_cpu else float('inf')):9.1f} {sr / 1024:6.0f} {os.getloadavg()[0]:5.1f} {mark}")
            lines = sout.decode("utf-8", "replace").strip().splitlines() if sout else []
            if lines and not lines[-1].startswith("{"):
                print(f"    ssift: {' | '.join(lines[-3:])[:300]}")
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
