"""Issue 16 / review finding 14: peak RSS of every command on ONE big Claude Code transcript
(goal: <= 300 MB whatever the corpus size). Nothing here is a test: it prints figures.

    .venv/bin/python benchmarks/memory.py [--big-mb 500] [--modes cold,build,warm] [--cases NAME]
                                          [--before CHECKOUT]

Corpus: speed.py's `--big-mb` transcript (benchmarks/_corpus/speed-big-<MB>/, built once,
gitignored): whole REAL sessions of examples/claude-home (client 2.1.258) and
examples/newest-client (2.1.332) concatenated, each copy with every uuid and message, request and
tool-use id remapped. Each command runs under `/usr/bin/time -f %M` (peak RSS of the process; a
forked worker is a process of its own and is reported by `time` only if it is larger) in up to
three modes: `cold` (`--no-index`), `build` (the index dir empty: the run builds it), `warm` (the
index fresh). HOME and the index dir are temp dirs. `--before CHECKOUT` also runs another
checkout's sources (cold) in the same run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from speed import PY, build_big  # noqa: E402

SID = "bbbbbbbb-1616"
EDITED = "/tmp/ssift-rc/files_basic/work/hello.py"
"""A file the real files_basic sessions write and edit (recover rebuilds it)."""


def cases(home: str, out: str) -> list[tuple[str, list[str], bool]]:
    """(name, argv after `sessionsift`, whether the command reads the index)."""
    H = ["--claude-home", home]
    return [
        ("show --turn 1", ["show", SID, "--turn", "1", *H], True),
        ("show --turn -1", ["show", SID, "--turn", "-1", *H], True),
        ("show --line", ["show", SID, "--line", "100000", *H], True),
        ("verbatim", ["verbatim", SID, *H], True),
        ("search (turn context)", ["search", "-F", "[files_basic P2]", *H], True),
        ("status", ["status", SID, *H], True),
        ("files", ["files", SID, *H], True),
        ("files --by summary", ["files", "--by", "summary", *H], True),
        ("plan", ["plan", SID, *H], True),
        ("recover", ["recover", SID, "--file", EDITED, *H], True),
        ("stats", ["stats", *H], True),
        ("agents", ["agents", SID, *H], True),
        ("usage daily", ["usage", "daily", *H], True),
        ("usage session", ["usage", "session", *H], True),
        ("export markdown", ["export", "markdown", SID, "--out", out, *H], True),
    ]


def run(argv: list[str], env: dict) -> tuple[int, int, str]:
    """(peak RSS KiB, exit code, first stdout line)."""
    p = subprocess.run(["nice", "/usr/bin/time", "-f", "%M", PY, "-m", "sessionsift", *argv],
                       capture_output=True, env=env)
    try:
        rss = int(p.stderr.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        rss = -1
    first = p.stdout.decode("utf-8", "replace").strip().splitlines()
    return rss, p.returncode, (first[0][:60] if first else "")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big-mb", type=int, default=500)
    ap.add_argument("--modes", default="cold,build,warm")
    ap.add_argument("--cases", default="", help="only cases whose name contains this")
    ap.add_argument("--before", default=None, help="another checkout, run cold in the same run")
    a = ap.parse_args()
    big = build_big(HERE / "_corpus" / f"speed-big-{a.big_mb}", a.big_mb)
    size = sum(p.stat().st_size for p in (big / "projects").rglob("*.jsonl"))
    modes = [m for m in a.modes.split(",") if m]
    tmp = Path(tempfile.mkdtemp(prefix="ssift-mem-"))
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SESSIONSIFT_", "CLAUDE_"))}
        env.update(HOME=str(tmp / "home"), XDG_CACHE_HOME=str(tmp / "cache"), NO_COLOR="1",
                   XDG_CONFIG_HOME=str(tmp / "config"), XDG_DATA_HOME=str(tmp / "data"),
                   SESSIONSIFT_INDEX_DIR=str(tmp / "index"))
        (tmp / "home").mkdir()
        subprocess.run(["cat", *map(str, (big / "projects").rglob("*.jsonl"))], stdout=subprocess.DEVNULL)
        print(f"transcript: {size / 1e6:.0f} MB, one file ({big}); load average "
              f"{'%.2f %.2f %.2f' % os.getloadavg()}")
        cols = modes + (["before"] if a.before else [])
        print(f"{'command':<24}" + "".join(f"{m + ' MB':>12}" for m in cols) + "   exit  first line")
        before_env = dict(env, PYTHONPATH=str(Path(a.before).resolve() / "src")) if a.before else None
        for name, argv, indexed in cases(str(big), str(tmp / "out")):
            if a.cases not in name:
                continue
            row, last = [], (0, "")
            for mode in cols:
                shutil.rmtree(tmp / "out", ignore_errors=True)
                e = before_env if mode == "before" else env
                if mode == "build":
                    shutil.rmtree(tmp / "index", ignore_errors=True)
                if mode == "warm" and not (tmp / "index").exists():
                    subprocess.run([PY, "-m", "sessionsift", "index", "update", "--claude-home", str(big)],
                                   env=env, capture_output=True)
                args = argv + (["--no-index"] if mode in ("cold", "before") or not indexed else [])
                rss, rc, first = run(args, e)
                row.append(f"{rss / 1024:12.0f}")
                last = (rc, first)
            print(f"{name:<24}" + "".join(row) + f"   {last[0]:>4}  {last[1]}", flush=True)
        print(f"load average after: {'%.2f %.2f %.2f' % os.getloadavg()}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
