"""The full-text index: every record's searchable text, for every agent, as `search`'s
candidate picker (docs/index.md "Full-text index").

**Engine** (measured in benchmarks/fulltext.py): SQLite FTS5 from the standard library, the
``trigram`` tokenizer (substring semantics, ASCII case folded), contentless (``content=''``: no
copy of the text) and ``detail=none`` (no positions). A record is one row; its rowid is
``unit id << ROW_BITS | ordinal``. A *unit* is what one freshness verdict covers: a Claude Code
transcript (a lane), or one session of another agent read through its shared records.

**Candidates.** The pattern's literal factors (read/needles.py ``needles_for(text=True)``: an
OR-set of literals, one of which every match contains; case-insensitive flags respected; none of
3+ characters, or an alternation with a branch without one, means *no usable literal*) are
queried as ``(t1 AND t2 ...) OR ...`` of each literal's trigrams: every record whose text holds a
literal is returned (a superset: RE2 confirms). A unit with no candidate row cannot hold a match
and is not read; every other unit is searched exactly as without the index, so hits are the
scan's (tests/test_fulltext.py holds them equal on every agent's real-client samples).

**Upkeep.** Each unit keeps the identity of what its rows were made from: a lane's
``store.Identity`` (bytes covered, stat, fingerprints: an append is parsed alone and its rows
added; anything else is a rewrite), a shared session's stat of every file and directory its
reader opened or listed while reading it (an audit hook records them: a fork's parent, a shell
log) and a digest of its records' texts in order (re-read after a change; when the first rows'
texts are unchanged only the new ones are added). A rewritten or vanished unit gets a new id:
its old rows are no longer any unit's (``dead_rows``), and once they outnumber the live ones the
database is emptied and refilled as commands read (a contentless table cannot delete a row
without its text). Where it lives: next to the per-file index (store.py rules: private
directories, never under a data root being read; the database file 0600).
"""

from __future__ import annotations

import os
import stat as _stat
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, NamedTuple

from . import store

SCHEMA = 2
"""2: ``units.src_bytes`` may be NULL (a session whose reader gives no size: unknown, never 0)."""
ROW_BITS = 24
MAX_ROWS = (1 << ROW_BITS) - 1
BATCH_CHARS = 8 << 20
"""Text inserted per transaction (bounded memory while building)."""
MAX_TRIGRAMS = 16
"""Trigrams queried per literal (spread over it: any subset still holds every match)."""
NO_LITERAL = "pattern has no literal of 3+ characters"
ALWAYS = 1
"""Unit flag: always searched (its reading reported a problem, or it holds records its client cut
on disk: the answer counts both, as the byte gate leaves such sessions to the reader)."""


def db_path(schema: int = SCHEMA) -> Path:
    return store.root_dir() / "fulltext" / f"text-{schema}.sqlite"


# -- the pattern's literals ----------------------------------------------------------------------


def literals(patterns: tuple[str, ...] | list[str], ignore_case: bool, fixed: bool) -> list[str] | None:
    """The OR-set of literals one of which every match contains (None: no usable literal)."""
    from ..read.needles import needles_for

    if not patterns:
        return None
    lits, _ci = needles_for(patterns, ignore_case, fixed, text=True)
    return lits or None


def _quote(t: str) -> str:
    return '"' + t.replace('"', '""') + '"'


def match_expr(lits: list[str]) -> str:
    groups = []
    for lit in lits:
        tris = list(dict.fromkeys(lit[i:i + 3] for i in range(len(lit) - 2)))
        if len(tris) > MAX_TRIGRAMS:
            step = (len(tris) - 1) / (MAX_TRIGRAMS - 1)
            tris = list(dict.fromkeys(tris[round(k * step)] for k in range(MAX_TRIGRAMS)))
        groups.append("(" + " AND ".join(_quote(t) for t in tris) + ")")
    return " OR ".join(groups)


def clean(text: str) -> str:
    """The text as stored: NUL (FTS5 stops at one) and unencodable surrogates replaced; no
    substring free of them is lost."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


# -- what a reader opened --------------------------------------------------------------------------

_TRACE: list = []
_HOOKED: list = []
_SKIP = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})


def _hook(event: str, args) -> None:
    if not _TRACE or event not in ("open", "os.listdir", "os.scandir", "sqlite3.connect", "sessionsift.probe"):
        return
    tid, got = _TRACE[-1]
    if tid != threading.get_ident() or not args:
        return
    p = args[0]
    if isinstance(p, (str, bytes, os.PathLike)):
        p = os.fsdecode(p)
        if event == "sqlite3.connect":
            if p.startswith("file:"):
                p = p[5:].split("?", 1)[0]
            got.add(p + "-wal")  # a database in WAL mode changes there first
        got.add(p)


class Traced:
    """``with Traced() as paths:`` every file and directory opened or listed in the block (this
    thread), by the ``open``/``os.listdir``/``os.scandir``/``sqlite3.connect`` audit events, and
    every file whose existence a reader tested through read/probe.py (``sessionsift.probe``)."""

    def __enter__(self) -> set:
        if not _HOOKED:
            sys.addaudithook(_hook)
            _HOOKED.append(True)
        self.paths: set = set()
        _TRACE.append((threading.get_ident(), self.paths))
        return self.paths

    def __exit__(self, *exc) -> None:
        _TRACE.pop()


def _facts(p: str):
    try:
        st = os.stat(p)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, _stat.S_ISDIR(st.st_mode))


def inputs_identity(paths: Iterable[str]) -> tuple:
    """((path, stat facts or None), ...) of the inputs a reader used (code and the index's own
    files left out)."""
    top = os.fspath(store.cache_dir())
    out = {}
    for p in paths:
        if p.startswith(("file:", ":memory:")) or p == "" or p.endswith((".py", ".pyc", ".so")):
            continue
        a = os.path.abspath(p)
        if a.startswith(_SKIP) or a.startswith(top):
            continue
        out[a] = _facts(a)
    return tuple(sorted(out.items()))


def identity_fresh(ident: tuple) -> bool:
    return all(_facts(p) == f for p, f in ident)


# -- the database ----------------------------------------------------------------------------------


class Texts(NamedTuple):
    """What the index is handed to read texts, so that it imports no reader (it lies below them):
    built by the question that asks (search/records.py ``index_texts``)."""

    record: Callable
    """A shared Record's matchable text (search/records.py ``record_text``)."""
    line: Callable
    """The matchable text of one parsed line of a deep reader's lane (``Provider.line_text``)."""
    report: Callable
    """A new ReadReport (providers/base.py) for a reader's ``read``."""


@dataclass
class Unit:
    id: int
    key: str
    ident: object
    rows: int
    digest: bytes | None
    flags: int
    text_chars: int
    src_bytes: int | None
    """Bytes of the transcript or session it was made from (None: its reader gives no size)."""


class FullText:
    """An open full-text database (one per answer; never carried across a fork)."""

    def __init__(self, con, path: Path):
        self.con = con
        self.path = path
        self._in_tx = 0
        self._pending = 0
        """Characters inserted since the last commit (committed every BATCH_CHARS: bounded memory
        and write-ahead log)."""

    @classmethod
    def open(cls, roots: Iterable = (), timeout: float = 10.0) -> "tuple[FullText | None, str | None]":
        """The database, or (None, why it is off) when it may not or cannot be used."""
        from . import config

        why = config.why_off(None)
        if why is not None:
            return None, why
        for r in roots:
            if r is not None and not store.usable_for(r):
                return None, f"the index directory {store.cache_dir()} lies inside the data root {r}"
        import sqlite3

        p = db_path()
        try:
            store.private_dirs(p.parent)
            if not p.exists():  # an older schema's database is no use any more
                for old in range(1, SCHEMA):
                    for suf in ("", "-wal", "-shm"):
                        try:
                            os.unlink(os.fspath(db_path(old)) + suf)
                        except OSError:
                            pass
            con = store.open_database(p, timeout)
            con.executescript(
                "CREATE TABLE IF NOT EXISTS units(id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT UNIQUE NOT NULL,"
                " ident BLOB NOT NULL, rows INTEGER NOT NULL, digest BLOB, flags INTEGER NOT NULL,"
                " text_chars INTEGER NOT NULL, src_bytes INTEGER);"
                "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
                "CREATE VIRTUAL TABLE IF NOT EXISTS text USING fts5(t, content='', detail=none,"
                " tokenize='trigram', columnsize=0);")
        except (OSError, sqlite3.Error) as exc:
            return None, f"the full-text index {p} could not be opened: {exc}"
        return cls(con, p), None

    def close(self) -> None:
        try:
            self.con.close()
        except Exception:  # noqa: BLE001 - closing a cache
            pass

    # -- reading --

    def units(self, keys: list[str]) -> dict[str, Unit]:
        import marshal

        out: dict[str, Unit] = {}
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            q = "SELECT id, key, ident, rows, digest, flags, text_chars, src_bytes FROM units WHERE key IN (%s)" % (
                ",".join("?" * len(part)))
            for row in self.con.execute(q, part):
                try:
                    ident = marshal.loads(row[2])
                except Exception:  # noqa: BLE001 - an unreadable identity is an absent unit
                    continue
                out[row[1]] = Unit(row[0], row[1], ident, row[3], row[4], row[5], row[6], row[7])
        return out

    def candidates(self, lits: list[str]) -> set[int]:
        """Ids of the units with a row holding every trigram of some literal."""
        rb = ROW_BITS
        return {r >> rb for (r,) in self.con.execute("SELECT rowid FROM text WHERE text MATCH ?", (match_expr(lits),))}

    def figures(self) -> dict:
        """{units, rows, dead_rows, text_chars, src_bytes, units_size_unknown, db_bytes} (db_bytes:
        the database and its write-ahead log on disk; src_bytes None when a unit's size is unknown
        -- never the sum of the others -- and units_size_unknown says how many)."""
        u, rows, tc, sb, unk = self.con.execute(
            "SELECT count(*), coalesce(sum(rows),0), coalesce(sum(text_chars),0), coalesce(sum(src_bytes),0),"
            " coalesce(sum(src_bytes IS NULL),0) FROM units"
        ).fetchone()
        size = 0
        for suf in ("", "-wal"):
            try:
                size += os.stat(os.fspath(self.path) + suf).st_size
            except OSError:
                pass
        return {"units": u, "rows": rows, "dead_rows": self._meta("dead_rows"), "text_chars": tc,
                "src_bytes": None if unk else sb, "units_size_unknown": unk, "db_bytes": size}

    def _meta(self, k: str) -> int:
        r = self.con.execute("SELECT v FROM meta WHERE k=?", (k,)).fetchone()
        return int(r[0]) if r else 0

    # -- writing --

    def begin(self) -> None:
        if not self._in_tx:
            self.con.execute("BEGIN IMMEDIATE")
        self._in_tx += 1

    def commit(self) -> None:
        self._in_tx -= 1
        if not self._in_tx:
            self.con.execute("COMMIT")

    def rollback(self) -> None:
        if self._in_tx:
            self._in_tx = 0
            self.con.execute("ROLLBACK")

    def _checkpoint(self) -> None:
        """Commit what is written so far (bounded memory) and start again."""
        if self._in_tx:
            self.con.execute("COMMIT")
            self.con.execute("BEGIN IMMEDIATE")

    def drop(self, unit: Unit | None) -> None:
        if unit is None:
            return
        self.con.execute("DELETE FROM units WHERE id=?", (unit.id,))
        self.con.execute("INSERT INTO meta(k, v) VALUES('dead_rows', ?) ON CONFLICT(k) DO UPDATE SET v = v + ?",
                         (unit.rows, unit.rows))

    def put(self, key: str, ident, texts: Iterator[str], flags: int, src_bytes: int | None, old: Unit | None = None,
            keep_rows: int = 0, digest_fn=None) -> Unit | None:
        """(Re)write unit `key`: with `old` and `keep_rows`, its first rows stay (an append: the
        texts are the new records only); else it is dropped and `texts` are all its rows. None
        when it has more rows than a rowid holds (then it is left out: always read)."""
        import marshal

        if old is not None and keep_rows:
            uid, n, chars = old.id, old.rows, old.text_chars
        else:
            self.drop(old)
            cur = self.con.execute("INSERT INTO units(key, ident, rows, digest, flags, text_chars, src_bytes)"
                                   " VALUES (?, ?, 0, NULL, ?, 0, ?)", (key, b"", flags, src_bytes))
            uid, n, chars = cur.lastrowid, 0, 0
        base = uid << ROW_BITS
        batch: list = []
        size = 0
        ins = "INSERT INTO text(rowid, t) VALUES (?, ?)"
        for t in texts:
            if not t:
                continue
            if n >= MAX_ROWS:
                self.con.execute("DELETE FROM units WHERE id=?", (uid,))
                return None
            t = clean(t)
            batch.append((base | n, t))
            n += 1
            size += len(t)
            if size >= BATCH_CHARS >> 2:
                self.con.executemany(ins, batch)
                chars += size
                self._pending += size
                batch, size = [], 0
                if self._pending >= BATCH_CHARS:
                    self._pending = 0
                    self._checkpoint()
        if batch:
            self.con.executemany(ins, batch)
        chars += size
        self._pending += size
        digest = digest_fn() if digest_fn is not None else None
        if self._pending >= BATCH_CHARS:
            self._pending = 0
            self.con.execute("UPDATE units SET ident=?, rows=?, digest=?, flags=?, text_chars=?, src_bytes=? WHERE id=?",
                             (marshal.dumps(ident), n, digest, flags, chars, src_bytes, uid))
            self._checkpoint()
            return Unit(uid, key, ident, n, digest, flags, chars, src_bytes)
        self.con.execute("UPDATE units SET ident=?, rows=?, digest=?, flags=?, text_chars=?, src_bytes=? WHERE id=?",
                         (marshal.dumps(ident), n, digest, flags, chars, src_bytes, uid))
        return Unit(uid, key, ident, n, digest, flags, chars, src_bytes)

    def forget(self, keys: Iterable[str]) -> None:
        """Drop the units of `keys` (their files are gone)."""
        for k, u in self.units(list(keys)).items():
            self.drop(u)

    def compact_if_needed(self) -> bool:
        """Empty the database when dead rows outnumber live ones (commands refill it)."""
        dead = self._meta("dead_rows")
        live = self.con.execute("SELECT coalesce(sum(rows),0) FROM units").fetchone()[0]
        if dead < 100_000 or dead <= live:
            return False
        self.con.executescript("BEGIN IMMEDIATE; DELETE FROM units; DELETE FROM meta;"
                               " DROP TABLE text;"
                               " CREATE VIRTUAL TABLE text USING fts5(t, content='', detail=none,"
                               " tokenize='trigram', columnsize=0); COMMIT;")
        self.con.execute("VACUUM")
        return True


def _read_only(p: Path, ask):
    """`ask(FullText)` over the database at `p` opened read-only (raises sqlite3.Error)."""
    import sqlite3

    con = sqlite3.connect(f"file:{p}?mode=ro", uri=True, timeout=5)
    try:
        return ask(FullText(con, p))
    finally:
        con.close()


def status() -> dict | None:
    """The database's figures (FullText.figures) with ``ratio`` (its bytes over the bytes of the
    files it indexed; None when a unit's size is unknown), for `index status`; None when there is
    none yet. Not created here."""
    import sqlite3

    p = db_path()
    if not p.exists():
        return None
    try:
        f = _read_only(p, FullText.figures)
    except sqlite3.Error as exc:
        return {"error": str(exc), "path": str(p)}
    f["path"] = str(p)
    f["ratio"] = round(f["db_bytes"] / f["src_bytes"], 4) if f["src_bytes"] else None
    return f


def session_states(refs: list) -> dict[tuple[str, str], dict] | None:
    """For `index status`: each shared session's unit in the full-text index (another agent's
    session read through its reader), by (provider, session id) -- ``{"state", "records"}``: "fresh" (every
    file and directory its reader opened is as it was when its rows were made), "changed" (one of
    them is not: the next search re-reads it), "absent" (never indexed), with the rows it holds
    (None when absent). None when there is no database yet; nothing is created or written here."""
    import sqlite3

    p = db_path()
    if not p.exists():
        return None
    try:
        units = _read_only(p, lambda ft: ft.units([session_key(r) for r in refs]))
    except sqlite3.Error:
        return None
    out: dict[tuple[str, str], dict] = {}
    for r in refs:
        u = units.get(session_key(r))
        state = "absent" if u is None else ("fresh" if session_fresh(u) else "changed")
        out[(r.provider, r.session_id)] = {"state": state, "records": None if u is None else u.rows}
    return out


def forget_units(keys: list[str]) -> int | None:
    """Drop the units of `keys` from an existing database (`index clear`); how many (None: there
    is no database or it could not be written)."""
    import sqlite3

    if not db_path().exists():
        return 0
    ft, _why = FullText.open()
    if ft is None:
        return None
    try:
        have = ft.units(keys)
        ft.begin()
        for u in have.values():
            ft.drop(u)
        ft.commit()
        ft.compact_if_needed()
        return len(have)
    except sqlite3.Error:
        return None
    finally:
        ft.close()


# -- a Claude Code transcript (a lane) -------------------------------------------------------------


def lane_key(path: str) -> str:
    return "lane\0" + store.abspath(path)


def lane_texts(buf, start: int, end: int, line_text) -> Iterator[str]:
    """The record text (`line_text`: the deep reader's, what its lane scan matches) of every line
    of buf[start:end). A mapping's pages are released behind the reader (read/lines.py Releaser):
    the first build over one 500 MB transcript held every page it had read, 660 MB of RSS."""
    from ..read.lines import Releaser, parse_line

    pos = start
    find = buf.find
    rel = Releaser(buf, start - start % 4096)
    while pos < end:
        e = find(b"\n", pos, end)
        if e < 0:
            e = end
        if e > pos:
            obj = parse_line(bytes(buf[pos:e]))
            if isinstance(obj, dict):
                t = line_text(obj)
                if t:
                    yield t
        pos = e + 1
        rel.passed(pos)


def lane_fresh(u: Unit | None, st: os.stat_result) -> bool:
    """Whether `u` covers the whole transcript as it is (`st`): unchanged since, and no bytes past
    the last newline (a final line without one is always searched)."""
    if u is None or not isinstance(u.ident, dict):
        return False
    i = u.ident
    return (i["end"] == st.st_size and (i["dev"], i["ino"], i["size"], i["mtime_ns"], i["ctime_ns"]) == (
        st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))


def update_lane(ft: FullText, path: str, u: Unit | None, texts: "Texts") -> str:
    """Bring lane `path`'s unit up to date: "fresh", "appended" or "built" (raises OSError)."""
    from ..read.lines import open_map

    st = os.stat(path)
    if lane_fresh(u, st):
        return "fresh"
    start, old, keep = 0, u, 0
    if u is not None and isinstance(u.ident, dict):
        ident = store.Identity.from_obj(u.ident)
        if store.judge(path, ident, st) in (store.GROWN, store.FRESH):
            start, keep = ident.end, u.rows
    with open_map(path) as m:
        buf = m.buf
        size = len(buf)
        st = os.stat(path)  # after mapping: a file still growing is judged GROWN next time
        nl = buf.rfind(b"\n", start, size) if size > start else -1
        end = nl + 1 if nl >= 0 else start
        ident = store.identity_of(st, end, store.fingerprints(buf, end))
        how = "appended" if keep else "built"
        got = ft.put(lane_key(path), ident.as_obj(), lane_texts(buf, start, end, texts.line), 0, end, old=old, keep_rows=keep)
    if got is None:
        return "built"
    return how


# -- a session read through its shared records -----------------------------------------------------


def session_key(ref) -> str:
    return "rec\0" + ref.provider + "\0" + ref.session_id + "\0" + "\0".join(store.abspath(os.fspath(p))
                                                                            for p in ref.paths)


def session_fresh(u: Unit | None) -> bool:
    return u is not None and isinstance(u.ident, tuple) and identity_fresh(u.ident)


def update_session(ft: FullText, prov, ref, u: Unit | None, reading: "Texts") -> str:
    """Bring a shared session's unit up to date: "fresh", "appended" or "built" (`reading.record`:
    the record's matchable text, search/records.py's, passed down)."""
    if session_fresh(u):
        return "fresh"
    record_text, ReadReport = reading.record, reading.report

    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover
        from hashlib import blake2b
    rep = ReadReport()
    texts: list[str] = []
    h = blake2b(digest_size=16)
    prefix = None
    n_old = u.rows if u is not None else 0
    with Traced() as opened:
        opened.update(os.fspath(p) for p in ref.paths)
        n = 0
        cut = False
        for r in prov.read(ref, rep):
            if r.copy_of is not None:
                continue
            cut = cut or bool(r.truncated)
            t = record_text(r)
            if not t:
                continue
            t = clean(t)
            texts.append(t)
            b = t.encode("utf-8")
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)
            n += 1
            if n == n_old:
                prefix = h.digest()
    ident = inputs_identity(opened)
    flags = ALWAYS if rep.problems or cut else 0  # its problems and cut records are the answer's to count
    size = ref.size  # None: the reader gives no size (unknown, not 0)
    if u is not None and n_old and n >= n_old and prefix is not None and prefix == u.digest and u.flags == flags:
        ft.put(u.key, ident, iter(texts[n_old:]), flags, size, old=u, keep_rows=n_old, digest_fn=h.digest)
        return "appended"
    ft.put(session_key(ref), ident, iter(texts), flags, size, old=u, digest_fn=h.digest)
    return "built"


# -- the gate a search asks -------------------------------------------------------------------------


BUDGET_S = 1.5
"""Seconds a search may spend indexing transcripts and sessions that are new or rewritten (an
append is always taken in): the rest is searched as without the index (the byte gate) and indexed
by the next searches or at once by `index update`. $SESSIONSIFT_FULLTEXT_BUDGET overrides it
(seconds; negative: no limit)."""


def budget() -> float | None:
    v = os.environ.get("SESSIONSIFT_FULLTEXT_BUDGET", "")
    try:
        b = float(v) if v else BUDGET_S
    except ValueError:
        b = BUDGET_S
    return None if b < 0 else b


class _Clock:
    def __init__(self, limit: float | None):
        import time

        self.now = time.monotonic
        self.stop = None if limit is None else self.now() + limit

    def over(self) -> bool:
        return self.stop is not None and self.now() > self.stop


@dataclass
class Verdicts:
    """What the full-text index said for one search part."""

    used: bool = False
    why: str | None = None
    """Why it was not used (None: used)."""
    ruled_out: int = 0
    candidates: int = 0
    built: int = 0
    appended: int = 0
    fresh: int = 0
    left: int = 0
    """Units it could not answer for (always read, or their reading failed)."""
    deferred: int = 0
    """Units not indexed yet: the search's indexing budget ran out (BUDGET_S); searched without
    the index (counted in `left` too)."""

    def as_json(self) -> dict:
        return {"used": self.used, "why_not": self.why, "ruled_out": self.ruled_out,
                "candidates": self.candidates, "built": self.built, "appended": self.appended,
                "fresh": self.fresh, "not_indexed": self.left, "deferred": self.deferred}


def merged(parts: list) -> "Verdicts | None":
    """One verdict over several parts' (None: no part asked the index)."""
    got = [x for x in parts if x is not None]
    if not got:
        return None
    v = Verdicts(used=any(x.used for x in got), why=next((x.why for x in got if x.why), None))
    for f in ("ruled_out", "candidates", "built", "appended", "fresh", "left", "deferred"):
        setattr(v, f, sum(getattr(x, f) for x in got))
    return v


def note(v: "Verdicts | None") -> str | None:
    """The text line of a search's summary about the full-text index (None: nothing to say)."""
    if v is None:
        return None
    if not v.used:
        return f"full-text index: not used, scanned: {v.why}" if v.why else None
    now = v.built + v.appended
    if not now and not v.deferred:  # a warm answer: each part's line says what the index ruled out
        return None
    n = v.ruled_out + v.candidates + v.left
    return (f"full-text index: {now} of {n} transcripts/sessions indexed now ({v.built} new or rewritten, "
            f"{v.appended} appended); {v.ruled_out} ruled out (no record holds the pattern's literal)"
            + (f"; {v.deferred} not indexed yet, searched without it (each search indexes for up to "
               f"{BUDGET_S:g} s; `sessionsift index update` indexes them all)" if v.deferred else ""))


def gate_sessions(pairs: list, lits: list[str] | None, roots: Iterable, texts: "Texts",
                  limit: float | None = None) -> tuple[list[bool], Verdicts]:
    """For each (provider, SessionRef): True when the full-text index says no record of it holds a
    literal (so it need not be read). Sessions are brought up to date first (read now when new or
    changed). All False when the index is off or the pattern has no usable literal (said in
    the verdicts)."""
    v = Verdicts()
    out = [False] * len(pairs)
    if not lits:
        v.why = NO_LITERAL
        return out, v
    ft, why = FullText.open(roots)
    if ft is None:
        v.why = why
        return out, v
    import sqlite3

    try:
        keys = [session_key(ref) for _p, ref in pairs]
        have = ft.units(keys)
        ids: list[int | None] = []
        clock = _Clock(limit)
        ft.begin()
        try:
            for (prov, ref), k in zip(pairs, keys):
                u = have.get(k)
                if not ref.paths:
                    ids.append(None)
                    continue
                if not session_fresh(u) and (u is None or not u.rows) and clock.over():
                    ids.append(None)
                    v.deferred += 1
                    continue
                try:
                    how = update_session(ft, prov, ref, u, texts)
                except Exception:  # noqa: BLE001 - a reader's failure: the search reads it and says so
                    ids.append(None)
                    continue
                setattr(v, how, getattr(v, how) + 1)
                ids.append(-1 if how != "fresh" else (u.id if u is not None and not u.flags else None))
            ft.commit()
        except BaseException:
            ft.rollback()
            raise
        if any(i == -1 for i in ids):
            now = ft.units(keys)
            ids = [(now[k].id if k in now and not now[k].flags else None) if i == -1 else i for i, k in zip(ids, keys)]
        hit = ft.candidates(lits)
        for j, i in enumerate(ids):
            if i is None:
                v.left += 1
            elif i in hit:
                v.candidates += 1
            else:
                out[j] = True
                v.ruled_out += 1
        ft.compact_if_needed()
        v.used = True
    except sqlite3.Error as exc:
        v.why = f"the full-text index could not be used: {exc}"
        return [False] * len(pairs), v
    finally:
        ft.close()
    return out, v


def gate_lanes(lanes: list, stats: list, lits: list[str] | None, roots: Iterable, texts: "Texts",
               limit: float | None = None) -> tuple[set[int], Verdicts]:
    """The positions of the lanes no record of which holds a literal (not to be scanned), each lane
    brought up to date first; `stats`: one os.stat_result (or None) per lane; `roots`: the data
    roots the database may not lie under."""
    v = Verdicts()
    if not lits:
        v.why = NO_LITERAL
        return set(), v
    ft, why = FullText.open(roots)
    if ft is None:
        v.why = why
        return set(), v
    import sqlite3

    out: set[int] = set()
    try:
        keys = [lane_key(os.fspath(ln.path)) for ln in lanes]
        have = ft.units(keys)
        fresh_ids: dict[int, int] = {}
        clock = _Clock(limit)
        ft.begin()
        try:
            for i, (ln, st, k) in enumerate(zip(lanes, stats, keys)):
                if st is None:
                    v.left += 1
                    continue
                u = have.get(k)
                if lane_fresh(u, st):
                    v.fresh += 1
                    fresh_ids[i] = u.id  # type: ignore[union-attr]
                    continue
                if u is None and clock.over():  # (an append or a rewrite is taken in whatever the budget)
                    v.left += 1
                    v.deferred += 1
                    continue
                try:
                    how = update_lane(ft, os.fspath(ln.path), u, texts)
                except OSError:
                    v.left += 1
                    continue
                setattr(v, how, getattr(v, how) + 1)
                fresh_ids[i] = -1
            ft.commit()
        except BaseException:
            ft.rollback()
            raise
        if any(x == -1 for x in fresh_ids.values()):
            now = ft.units(keys)
            for i in list(fresh_ids):
                if fresh_ids[i] == -1:
                    u = now.get(keys[i])
                    try:
                        ok = u is not None and lane_fresh(u, os.stat(lanes[i].path))
                    except OSError:
                        ok = False
                    if ok:
                        fresh_ids[i] = u.id  # type: ignore[union-attr]
                    else:
                        del fresh_ids[i]
                        v.left += 1
        hit = ft.candidates(lits)
        for i, uid in fresh_ids.items():
            if uid in hit:
                v.candidates += 1
            else:
                out.add(i)
                v.ruled_out += 1
        ft.compact_if_needed()
        v.used = True
    except sqlite3.Error as exc:
        v.why = f"the full-text index could not be used: {exc}"
        return set(), v
    finally:
        ft.close()
    return out, v


def update_all(lanes: list, pairs: list, roots: Iterable, texts: "Texts", step=None, limit: float | None = None,
               timeout: float = 10.0) -> Verdicts:
    """Bring every lane and every shared session of the scope up to date in the full-text index
    (`step(nbytes)` after each: progress). `limit`: seconds for new units (`index update`: none;
    a command that read records: budget()) -- past it a unit never indexed is deferred (counted),
    an append or a rewrite is taken in all the same. `timeout`: seconds to wait for another
    writer. The verdicts count them."""
    import sqlite3

    v = Verdicts()
    ft, why = FullText.open(roots, timeout)
    if ft is None:
        v.why = why
        return v
    clock = _Clock(limit)
    try:
        have = ft.units([lane_key(os.fspath(ln.path)) for ln in lanes] + [session_key(r) for _p, r in pairs])
        ft.begin()
        try:
            for ln in lanes:
                p = os.fspath(ln.path)
                u = have.get(lane_key(p))
                n = 0
                try:
                    st = os.stat(p)
                    n = st.st_size
                    if lane_fresh(u, st):
                        v.fresh += 1
                    elif u is None and clock.over():
                        v.left += 1
                        v.deferred += 1
                    else:
                        how = update_lane(ft, p, u, texts)
                        setattr(v, how, getattr(v, how) + 1)
                except OSError:
                    v.left += 1
                if step is not None:
                    step(n)
            for prov, ref in pairs:
                if not ref.paths:
                    v.left += 1
                    continue
                u = have.get(session_key(ref))
                if not session_fresh(u) and (u is None or not u.rows) and clock.over():
                    v.left += 1
                    v.deferred += 1
                    continue
                try:
                    how = update_session(ft, prov, ref, u, texts)
                    setattr(v, how, getattr(v, how) + 1)
                except Exception:  # noqa: BLE001 - a reader's failure: searches read it and say so
                    v.left += 1
                if step is not None:
                    step(ref.size or 0)
            ft.commit()
        except BaseException:
            ft.rollback()
            raise
        ft.compact_if_needed()
        v.used = True
    except sqlite3.Error as exc:
        v.why = f"the full-text index could not be written: {exc}"
    finally:
        ft.close()
    return v


def selection_units(sel, subagents: bool = True) -> tuple[list, list, list]:
    """(Claude Code's lanes, the (provider, SessionRef) of every other session, the data roots) of
    a selection: what `update_all` brings up to date."""
    lanes: list = []
    sc = getattr(sel, "claude", None)
    if sc is not None:
        for s in sc.sessions:
            if s.session_id in sc.explicit_lanes:
                lanes.append(sc.explicit_lanes[s.session_id])
            else:
                lanes.extend(s.lanes(subagents))
    pairs = [(sel.survey.provider(r.provider), r) for r in sel.refs]
    pairs = [(p, r) for p, r in pairs if p is not None]
    roots = [e.root.path for e in sel.survey.entries if e.root is not None and e.root.path is not None]
    return lanes, pairs, roots


def after_reading(sel, texts: "Texts", subagents: bool = True, lanes: list | None = None) -> Verdicts | None:
    """What a command that read the selection's records (a census, `stats`, a search the index
    could not pick for) does after its answer: bring the full-text index up to date for them
    within the search's budget (budget(); appends always), waiting for no other writer, so the
    next search is answered from the index. None when the index is off; never raises (the index
    only saves time). `texts`: what the index is handed to read (search/records.py index_texts).
    `lanes`: the Claude Code lanes the command read (None: every lane of the selection; a lane
    answered from its per-file index was not read, and checking thousands of them costs a warm
    answer its time)."""
    from . import config

    if config.why_off(getattr(sel, "index_off", None)) is not None:
        return None
    try:
        all_lanes, pairs, roots = selection_units(sel, subagents)
        lanes = all_lanes if lanes is None else lanes
        if not lanes and not pairs:
            return None
        return update_all(lanes, pairs, roots, texts, limit=budget(), timeout=0.2)
    except Exception as exc:  # noqa: BLE001 - the index only saves time
        return Verdicts(why=f"the full-text index failed: {type(exc).__name__}: {exc}")


class Picker:
    """The full-text index as a search part's candidate picker, passed down to a provider's own
    search (the capability never imports the index): ``picker.lanes(lanes, stats, root)`` is
    `gate_lanes` for the pattern's literals, never raising (a failure is a verdict: the scan
    answers)."""

    def __init__(self, lits: list[str] | None, roots: tuple = (), texts: "Texts | None" = None):
        self.literals = lits
        self.texts = texts
        """What the index is handed to read a lane's texts (it imports no reader)."""
        self.roots = roots
        """Every data root of the answer: one database serves them all, so it may lie under none."""

    def lanes(self, lanes: list, stats: list, root) -> tuple[set[int], Verdicts]:
        try:
            if self.texts is None:
                return set(), Verdicts(why="the full-text index was handed no reader of lane texts")
            return gate_lanes(lanes, stats, self.literals, (root, *self.roots), self.texts, budget())
        except Exception as exc:  # noqa: BLE001 - the index only saves time
            return set(), Verdicts(why=f"the full-text index failed: {type(exc).__name__}: {exc}")
