"""opencode.db at scale: discover + read every session, `search`, peak memory, against rg.

    .venv/bin/python benchmarks/sqlite_stores.py [--copies 600] [--runs 3]

Builds benchmarks/_corpus/opencode-big/opencode.db once by replicating the REAL sessions of
examples/opencode-home (written by opencode 1.18.33) ``--copies`` times: every session, message
and part row is copied with its ids suffixed ``_<k>`` (consistently across the three tables), so
each copy is a distinct session with the client's own row shapes. Prints, best of ``--runs``:

* the reader alone (library: discover + read all sessions, counting records), its peak RSS;
* ``sessionsift search hello --opencode-home DIR`` against ``rg -a -c hello opencode.db`` (rg only
  scans the bytes: it is a floor, not a peer -- the database pages hold the same JSON), and the
  same for a literal found in no row (selective: the rows are gated in SQL first).
"""
from __future__ import annotations

import argparse
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "examples" / "opencode-home" / "opencode.db"
OUT = REPO / "benchmarks" / "_corpus" / "opencode-big"


def build(copies: int) -> Path:
    db = OUT / "opencode.db"
    stamp = OUT / f".copies-{copies}"
    if stamp.exists() and db.exists():
        return db
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    shutil.copy2(SRC, db)
    con = sqlite3.connect(db)
    scols = [r[1] for r in con.execute("PRAGMA table_info(session)")]
    con.execute("CREATE TEMP TABLE s0 AS SELECT * FROM session")
    con.execute("CREATE TEMP TABLE m0 AS SELECT * FROM message")
    con.execute("CREATE TEMP TABLE p0 AS SELECT * FROM part")
    sel = ", ".join("id || :k" if c == "id" else "CASE WHEN parent_id IS NULL THEN NULL ELSE parent_id || :k END"
                    if c == "parent_id" else f'"{c}"' for c in scols)
    for k in range(1, copies):
        suf = {"k": f"_{k}"}
        con.execute(f"INSERT INTO session SELECT {sel} FROM s0", suf)
        con.execute("INSERT INTO message SELECT id || :k, session_id || :k, time_created, time_updated, data FROM m0", suf)
        con.execute("INSERT INTO part SELECT id || :k, message_id || :k, session_id || :k, time_created, time_updated, data "
                    "FROM p0", suf)
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    stamp.touch()
    return db


READ = r"""
import resource, sys, time
from sessionsift.providers import get, ReadReport
p = get("opencode")
t = time.perf_counter()
disc = p.discover(p.locate(explicit=sys.argv[1]))
n = 0
rep = ReadReport()
for ref in disc.sessions:
    for r in p.read(ref, rep):
        n += 1
print(time.perf_counter() - t, n, disc.coverage.sessions, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def best(cmd: list[str], runs: int) -> tuple[float, str]:
    out, ts = "", []
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
        ts.append(time.perf_counter() - t)
        out = r.stdout
    return min(ts), out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=600)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    db = build(a.copies)
    size = db.stat().st_size
    print(f"opencode.db: {size / 1e6:.1f} MB, {a.copies} copies of the sample's sessions")
    reads = [subprocess.run([sys.executable, "-c", READ, str(OUT)], capture_output=True, text=True, cwd=REPO).stdout.split()
             for _ in range(a.runs)]
    secs, recs, sessions, rss = min(reads, key=lambda x: float(x[0]))
    print(f"reader: {sessions} sessions, {recs} records in {float(secs):.2f} s "
          f"({size / 1e6 / float(secs):.0f} MB/s), peak RSS {rss} MB")
    t_rg, _ = best(["rg", "-a", "-c", "hello", str(db)], a.runs)
    t_s, out = best([sys.executable, "-m", "sessionsift", "search", "hello", "--opencode-home", str(OUT)], a.runs)
    print(f"search hello: {t_s:.2f} s; rg -a -c hello: {t_rg:.3f} s; ratio {t_s / t_rg:.0f}x")
    print("  " + (out.strip().splitlines() or ["?"])[-2][:160])
    # a selective literal (in no row): the rows are gated in SQL (Opencode.rule_out_rows)
    t_rg, _ = best(["rg", "-a", "-c", "zqxsqlcanary7731", str(db)], a.runs)
    t_s, out = best([sys.executable, "-m", "sessionsift", "search", "zqxsqlcanary7731", "--opencode-home", str(OUT)],
                    a.runs)
    print(f"search zqxsqlcanary7731 (selective): {t_s:.2f} s; rg -a -c: {t_rg:.3f} s; ratio {t_s / t_rg:.0f}x")
    print("  " + (out.strip().splitlines() or ["?"])[-2][:160])
    return 0


if __name__ == "__main__":
    sys.exit(main())
