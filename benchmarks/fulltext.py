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


if __name__ == "__main__":
    main()
