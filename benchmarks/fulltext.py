"""Issue 25 item 2, the engine measurement: a full-text index over every record's searchable text
(search/records.py `record_text`, what `search` matches), built with SQLite FTS5 and the trigram
tokenizer (the standard library's sqlite3) and, when installed, with tantivy (its Python bindings),
on one store; printed beside ripgrep over the same files in the same run.

    .venv/bin/python benchmarks/fulltext.py [--home DIR] [--glob 'PROJECT-GLOB,...'] [--repeat 5]

For each engine: build time (CPU and wall), peak RSS, index size on disk against the store's
bytes, and for the selective literal (planted in 3 prompts) and the phrase (in 40 large sessions)
the best query time and the records it returns - which must equal the RE2 scan's candidates
(every record whose text holds the literal) for the engine to serve as `search`'s candidate
picker. Nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
LITERALS = ("zqxcanary4417", "lanternfish quorum", "canary4417")
"""The selective literal, the phrase, and a literal factor inside a word (a pattern like
`canary44\d+` has it): a word tokenizer cannot pick its candidates."""


def records(files: list[Path]):
    """(doc id, session file, text) of every shared record of every Claude Code transcript."""
    from sessionsift.providers import get
    from sessionsift.providers.base import ReadReport, SessionRef
    from sessionsift.search.records import record_text

    prov = get("claude-code")
    n = 0
    for f in files:
        ref = SessionRef("claude-code", f.stem, [f])
        for r in prov.read(ref, ReadReport()):
            t = record_text(r)
            if t:
                n += 1
                yield n, str(f), t


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def best(fn, repeat: int):
    out, ts = None, []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return min(ts), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", default=str(HERE / "_corpus" / "speed-1000"))
    ap.add_argument("--glob", default="-bench-speed-large*,-bench-speed-p005,-bench-speed-p014,-bench-speed-p024")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--engines", default="fts5,fts5-contentless,fts5-detail-none,tantivy")
    ap.add_argument("--out", default=str(HERE / "_corpus" / "fulltext"))
    a = ap.parse_args()
    files = sorted({p for g in a.glob.split(",") for d in (Path(a.home) / "projects").glob(g) for p in d.glob("*.jsonl")})
    size = sum(p.stat().st_size for p in files)
    out = Path(a.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    print(f"store: {len(files)} transcripts, {size / 1e6:.0f} MB ({a.home}/projects/{a.glob}); load {os.getloadavg()[0]:.2f}")
    t0, c0 = time.perf_counter(), cpu()
    docs = list(records(files))
    print(f"records read (the shared reader, record_text): {len(docs)} in {time.perf_counter() - t0:.1f} s wall, "
          f"{cpu() - c0:.1f} s CPU; text {sum(len(t) for _i, _f, t in docs) / 1e6:.0f} MB")
    truth = {lit: sorted(i for i, _f, t in docs if lit in t) for lit in LITERALS}
    for lit in LITERALS:
        s, p = best(lambda: subprocess.run(["rg", "-c", "-F", lit, *map(str, files)], capture_output=True), a.repeat)
        print(f"rg -c -F {lit!r}: {s * 1000:.1f} ms; records holding it (RE2 scan's candidates): {len(truth[lit])}")

    # -- SQLite FTS5, trigram tokenizer (substring semantics: what RE2's literal factors need) --
    # three layouts: the default (a copy of the text kept), contentless (content=''), and contentless
    # with detail=none (no positions: a phrase's trigrams match anywhere in the record, a superset
    # of the scan's candidates that RE2 confirms)
    engines = a.engines.split(",")
    for key, name, opts in (("fts5", "fts5 trigram", ""), ("fts5-contentless", "fts5 trigram contentless", ", content=''"),
                            ("fts5-detail-none", "fts5 trigram contentless detail=none", ", content='', detail=none")):
        if key not in engines:
            continue
        db = out / (name.replace(" ", "_").replace("=", "") + ".db")
        t0, c0 = time.perf_counter(), cpu()
        con = sqlite3.connect(db)
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")
        con.execute(f"CREATE VIRTUAL TABLE r USING fts5(text, tokenize='trigram'{opts})")
        con.executemany("INSERT INTO r(rowid, text) VALUES (?, ?)", ((i, t) for i, _f, t in docs))
        con.commit()
        con.execute("INSERT INTO r(r) VALUES('optimize')")
        con.commit()
        build = time.perf_counter() - t0, cpu() - c0
        print(f"{name}: build {build[0]:.1f} s wall, {build[1]:.1f} s CPU; size {db.stat().st_size / 1e6:.0f} MB "
              f"({db.stat().st_size / size:.0%} of the store); peak RSS "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
        for lit in LITERALS:
            q = '"' + lit.replace('"', '""') + '"'
            if "detail=none" in opts:  # no positions: every trigram of the literal, ANDed (a superset)
                q = " AND ".join('"' + lit[k:k + 3].replace('"', '""') + '"' for k in range(len(lit) - 2))
            try:
                s, rows = best(lambda: [x[0] for x in con.execute(
                    "SELECT rowid FROM r WHERE r MATCH ? ORDER BY rowid", (q,))], a.repeat)
            except sqlite3.OperationalError as exc:  # detail=none: no phrase (a literal over 3 characters)
                print(f"  MATCH {lit!r}: refused: {exc}")
                continue
            print(f"  MATCH {lit!r}: {s * 1000:.1f} ms, {len(rows)} candidates, covers the scan's: "
                  f"{set(truth[lit]) <= set(rows)}, equal: {rows == truth[lit]}")
        con.close()

    # -- tantivy (word tokenizer, BM25): its Python bindings, when installed --
    if "tantivy" not in engines:
        return
    try:
        import tantivy
    except ImportError:
        print("tantivy: not installed (pip install tantivy)")
        return
    t0, c0 = time.perf_counter(), cpu()
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("text", stored=False)
    sb.add_integer_field("id", stored=True, indexed=True, fast=True)
    schema = sb.build()
    tdir = out / "tantivy"
    tdir.mkdir()
    ix = tantivy.Index(schema, path=str(tdir))
    w = ix.writer(heap_size=50_000_000, num_threads=1)
    for i, _f, t in docs:
        w.add_document(tantivy.Document(text=t, id=i))
    w.commit()
    w.wait_merging_threads()
    ix.reload()
    build = time.perf_counter() - t0, cpu() - c0
    tsize = sum(p.stat().st_size for p in tdir.rglob("*") if p.is_file())
    print(f"tantivy: build {build[0]:.1f} s wall, {build[1]:.1f} s CPU; size {tsize / 1e6:.0f} MB ({tsize / size:.0%} of "
          f"the store); peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    searcher = ix.searcher()
    for lit in LITERALS:
        q = ix.parse_query('"' + lit + '"', ["text"])

        def run():
            hits = searcher.search(q, limit=1_000_000).hits
            return sorted(searcher.doc(addr)["id"][0] for _s, addr in hits)

        s, rows = best(run, a.repeat)
        print(f"  tantivy phrase {lit!r}: {s * 1000:.1f} ms, {len(rows)} candidates, covers the scan's: "
              f"{set(truth[lit]) <= set(rows)}, equal: {rows == truth[lit]}")


def build_large(dest: Path, n: int, mb: int) -> Path:
    """A store of `n` LARGE sessions of about `mb` MB each (speed.py's real sessions concatenated,
    every id remapped per copy), the phrase planted once in each, the selective literal in 3."""
    sys.path.insert(0, str(HERE))
    import random
    import uuid

    from speed import CANARY, PHRASE, ROOTS, _plant
    from _corpus_util import remap_ids, source_sessions

    marker = dest / ".built"
    if marker.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    srcs = [m.read_bytes() for m, _lanes in source_sessions(ROOTS)]
    rnd = random.Random(25)
    for j in range(n):
        proj = dest / "projects" / f"-bench-large-p{j % 4}"
        proj.mkdir(parents=True, exist_ok=True)
        path = proj / f"{uuid.uuid5(uuid.NAMESPACE_URL, f'fulltext-large-{j}')}.jsonl"
        size = 0
        with open(path, "wb") as f:
            first = True
            while size < mb << 20:
                d = remap_ids(srcs[rnd.randrange(len(srcs))], f"ftl{j}-{size}")
                d = d if d.endswith(b"\n") else d + b"\n"
                if first:
                    d = _plant(d, PHRASE)
                    if j in (3, 17, 29):
                        d = _plant(d, CANARY)
                    first = False
                f.write(d)
                size += len(d)
    marker.write_text(f"{n} sessions of {mb} MB\n")
    return dest


def _run(cmd: list[str], env: dict) -> tuple[float, float, int, str]:
    """(wall s, CPU s of the child, peak RSS MB, the last line of stdout)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        rss = int(p.stderr.decode().strip().splitlines()[-1]) // 1024
    except (ValueError, IndexError):
        rss = -1
    out = p.stdout.decode("utf-8", "replace").strip().splitlines()
    return wall, cpu_s, rss, out[0] if out else ""


def cli_main(stores: list[str], repeat: int) -> None:
    ssift = str(HERE.parent / ".venv" / "bin" / "sessionsift")
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    for spec in stores:
        name, rest = spec.split("=", 1)
        home, _, lits = rest.partition(":")
        lits_l = lits.split(",") if lits else [LITERALS[0], LITERALS[1]]
        proj = Path(home) / "projects"
        files = list(proj.rglob("*.jsonl"))
        size = sum(p.stat().st_size for p in files)
        idx = Path(f"/tmp/ssift-ftbench-{os.getpid()}-{name}")
        shutil.rmtree(idx, ignore_errors=True)
        env = dict(os.environ, SESSIONSIFT_INDEX_DIR=str(idx))
        subprocess.run(["rg", "-c", "-F", "zzzzwarm", str(proj)], capture_output=True)  # page cache warm
        print(f"\nstore {name}: {len(files)} transcripts, {size / 1e6:.0f} MB ({home}); load {os.getloadavg()[0]:.2f}")
        # the first run over an empty index directory builds the per-file and the full-text index
        first = _run([ssift, "search", lits_l[0], "-c", "--claude-home", home], env)
        st = subprocess.run([ssift, "index", "status", "--claude-home", home], capture_output=True, env=env, text=True)
        ftline = next((x for x in st.stdout.splitlines() if x.startswith("full-text index")), "?")
        print(f"  first run (builds): {first[0]:.1f} s wall, {first[1]:.1f} s CPU, peak RSS {first[2]} MB")
        print(f"  {ftline}")
        for lit in lits_l:
            rg = min(_run(["rg", "-c", "-F", lit, str(proj)], env)[0] for _ in range(repeat))
            scan = min((_run([ssift, "search", lit, "-c", "--no-index", "--claude-home", home], env)
                        for _ in range(repeat)), key=lambda r: r[0])
            warm = min((_run([ssift, "search", lit, "-c", "--claude-home", home], env) for _ in range(repeat)),
                       key=lambda r: r[0])
            print(f"  {lit!r}: rg {rg * 1000:.0f} ms | --no-index {scan[0] * 1000:.0f} ms ({scan[0] / rg:.2f}x rg), "
                  f"count {scan[3]} | warm {warm[0] * 1000:.0f} ms ({warm[0] / rg:.2f}x rg; CPU {warm[1] * 1000:.0f} ms, "
                  f"RSS {warm[2]} MB), count {warm[3]} | load {os.getloadavg()[0]:.2f}")
        shutil.rmtree(idx, ignore_errors=True)
    print("\nload average after: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    if "--build-large" in sys.argv:
        ap = argparse.ArgumentParser()
        ap.add_argument("--build-large", required=True)
        ap.add_argument("--n", type=int, default=40)
        ap.add_argument("--mb", type=int, default=25)
        a = ap.parse_args()
        print(build_large(Path(a.build_large), a.n, a.mb))
    elif "--cli" in sys.argv:
        ap = argparse.ArgumentParser()
        ap.add_argument("--cli", nargs="+", required=True)
        ap.add_argument("--repeat", type=int, default=5)
        a = ap.parse_args()
        cli_main(a.cli, a.repeat)
    else:
        main()
