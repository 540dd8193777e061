"""Answers kept per session, for every agent read through its shared records: what one question
took of one session (`stats`' census, `usage`'s reading of its usage), kept with the identity of
every file and directory the reader opened or listed while taking it, and given back while each
of them is as it was -- so a second `stats` or `usage` over an unchanged store reads no record of
these sessions (Claude Code's transcripts keep their own per-file census: providers/claude/cache).

**Key.** The question's name, the session's provider and id, and a digest of the session's whole
`SessionRef` as discovery gave it this time (paths, project, parent, extra ...): a session
discovered differently is read again. One row per (question, provider, session): a newer reading
replaces the older.

**Freshness.** The reader's inputs are recorded by the audit hook fulltext.Traced uses (``open``,
``os.listdir``, ``os.scandir``, ``sqlite3.connect``; a database's ``-wal`` with it) and each one's
(device, inode, size, mtime, ctime, is-dir) taken after the reading; the answer is used only while
every input stats equal (fulltext.identity_fresh). The session's own files (and their ``-wal``)
are also stat'ed before the reading: if one changed while it was read (a client writing), the
answer is given but not kept. A file that did not exist (a probe) is kept as absent, so its
appearance is a change.

**Code.** A digest of every module of the package (path, size, mtime) is the database's
``code``: another sessionsift, or an edited reader, empties it.

**Values** are pickled (the question's own typed result, without the session's ref: the caller
puts the ref it discovered back; the database is private, 0600 in a 0700 directory, as every
index file; identities are marshalled). Anything failing here -- an unreadable database, a value that
no longer unpickles -- makes the answer be read from the records, never wrong and never absent.
"""

from __future__ import annotations

import marshal
import os
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeVar

if TYPE_CHECKING:
    import sqlite3

from . import config, store

SCHEMA = 1
T = TypeVar("T")


def db_path() -> Path:
    return store.root_dir() / "kept" / f"kept-{SCHEMA}.sqlite"


_CODE: list[bytes] = []


def code_digest() -> bytes:
    """A digest of sessionsift's modules (path, size, mtime), once per process."""
    if _CODE:
        return _CODE[0]
    from hashlib import blake2b

    top = Path(__file__).resolve().parent.parent
    h = blake2b(digest_size=16)
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                p = os.path.join(d, f)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                h.update(f"{p}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    _CODE.append(h.digest())
    return _CODE[0]


def ref_digest(ref) -> bytes:
    """A digest of every field of a SessionRef."""
    from hashlib import blake2b

    r = ref
    t = (r.provider, r.session_id, tuple(map(os.fspath, r.paths)), r.project, r.project_source, r.first_at,
         r.last_at, r.size, r.title, r.parent_session_id, r.version, r.helper, r.extra)
    return blake2b(repr(t).encode("utf-8", "surrogateescape"), digest_size=16).digest()


class Kept:
    """An open database of kept answers (one per answer; never carried across a fork)."""

    def __init__(self, con: "sqlite3.Connection") -> None:
        self.con = con
        self.hits = 0
        self.misses = 0

    @classmethod
    def open(cls, index_off: bool | str | None = None, roots: Iterable = ()) -> "Kept | None":
        """The database, or None when the index is off or it cannot be used (then every answer is
        read from the records)."""
        if config.why_off(index_off) is not None:
            return None
        for r in roots:
            if r is not None and not store.usable_for(r):
                return None
        import sqlite3  # only when the index is on: a command that keeps nothing loads no sqlite3

        try:
            con = store.open_database(db_path())
            con.executescript(
                "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v BLOB NOT NULL);"
                "CREATE TABLE IF NOT EXISTS kept(what TEXT NOT NULL, provider TEXT NOT NULL, sid TEXT NOT NULL,"
                " ref BLOB NOT NULL, ident BLOB NOT NULL, value BLOB NOT NULL);"
                "CREATE UNIQUE INDEX IF NOT EXISTS kept_key ON kept(what, provider, sid);"
                "CREATE TABLE IF NOT EXISTS peek(what TEXT NOT NULL, path TEXT NOT NULL, facts BLOB NOT NULL,"
                " value BLOB NOT NULL, PRIMARY KEY(what, path));")
            code = code_digest()
            row = con.execute("SELECT v FROM meta WHERE k='code'").fetchone()
            if row is None or bytes(row[0]) != code:
                con.execute("BEGIN IMMEDIATE")
                con.execute("DELETE FROM kept")
                con.execute("DELETE FROM peek")
                con.execute("INSERT INTO meta(k, v) VALUES('code', ?) ON CONFLICT(k) DO UPDATE SET v=excluded.v",
                            (code,))
                con.execute("COMMIT")
        except (OSError, sqlite3.Error):
            return None
        return cls(con)

    @classmethod
    def for_selection(cls, sel) -> "Kept | None":
        """:meth:`open` for a selection (providers.scope.Selection): its ``index_off`` and the data
        roots it looked at (the index may not lie inside one)."""
        return cls.open(getattr(sel, "index_off", None), roots_of(sel))

    def close(self) -> None:
        import sqlite3

        try:
            self.con.close()
        except sqlite3.Error:
            pass

    def get(self, what: str, refs: list) -> dict[int, object]:
        """{position in `refs`: the kept answer} for each ref whose answer is kept and fresh."""
        import sqlite3

        from .fulltext import identity_fresh

        want: dict[tuple[str, str], list[int]] = {}
        for i, r in enumerate(refs):
            want.setdefault((r.provider, r.session_id), []).append(i)
        out: dict[int, object] = {}
        provs = sorted({k[0] for k in want})
        try:
            for prov in provs:
                sids = [k[1] for k in want if k[0] == prov]
                for j in range(0, len(sids), 500):
                    part = sids[j:j + 500]
                    q = ("SELECT sid, ref, ident, value FROM kept WHERE what=? AND provider=? AND sid IN (%s)"
                         % ",".join("?" * len(part)))
                    for sid, rd, ident, value in self.con.execute(q, [what, prov, *part]):
                        for i in want.get((prov, sid), ()):
                            if bytes(rd) != ref_digest(refs[i]):
                                continue
                            try:
                                idt = marshal.loads(ident)
                                if not identity_fresh(idt):
                                    continue
                                out[i] = pickle.loads(value)
                            except Exception:  # noqa: BLE001 - an unusable row is an answer not kept
                                continue
        except sqlite3.Error:
            return {}
        self.hits += len(out)
        self.misses += len(refs) - len(out)
        return out

    def put(self, what: str, rows: list[tuple[Any, tuple, object]]) -> None:
        """Keep (ref, inputs identity, answer) for each row; a failure keeps nothing."""
        if not rows:
            return
        import sqlite3

        try:
            data = [(what, r.provider, r.session_id, ref_digest(r), marshal.dumps(ident), pickle.dumps(v, 5))
                    for r, ident, v in rows]
            self.con.execute("BEGIN IMMEDIATE")
            try:
                self.con.executemany("INSERT OR REPLACE INTO kept(what, provider, sid, ref, ident, value)"
                                     " VALUES (?, ?, ?, ?, ?, ?)", data)
                self.con.execute("COMMIT")
            except BaseException:
                self.con.execute("ROLLBACK")
                raise
        except (sqlite3.Error, pickle.PicklingError, TypeError, AttributeError, ValueError):
            return

    def figures(self) -> dict:
        """{answers: kept rows per question} for `index status`."""
        import sqlite3

        try:
            return {"answers": dict(self.con.execute("SELECT what, count(*) FROM kept GROUP BY what").fetchall())}
        except sqlite3.Error:
            return {"answers": None}


class Peeks:
    """What a discovery learnt of each file it peeked at (a head and tail read), kept under the
    file's (device, inode, size, mtime, ctime) -- table ``peek``, one row per (question, path),
    every row under one data root read and written at once. :meth:`get` gives a value back while
    the file stats as it did when it was read; :meth:`put` keeps one only when the file stated the
    same before and after its reading (a file written while it was read is read again next time).
    Values are marshalled (JSON-like values only). At :meth:`close`, the rows of files under the
    root that were not looked up this time (deleted, moved) go."""

    def __init__(self, kept: Kept, what: str, root: str) -> None:
        import sqlite3

        self.kept, self.what, self.root = kept, what, root
        self.rows: dict[str, tuple[bytes, bytes]] = {}
        self.new: list[tuple[str, bytes, bytes]] = []
        self.seen: set[str] = set()
        lo, hi = root + os.sep, root + chr(ord(os.sep) + 1)
        try:
            for path, facts, value in kept.con.execute(
                    "SELECT path, facts, value FROM peek WHERE what=? AND path>=? AND path<?", (what, lo, hi)):
                self.rows[path] = (bytes(facts), bytes(value))
        except sqlite3.Error:
            self.rows = {}

    @classmethod
    def open(cls, what: str, root, index_off: bool | str | None = None) -> "Peeks | None":
        """The kept peeks under data root `root`, or None when the index is off or unusable there,
        or no question has kept an answer yet (a discovery alone creates no index file: `index
        status`, `show` leave none behind)."""
        if config.why_off(index_off) is not None or not db_path().exists():
            return None
        k = Kept.open(index_off, (root,))
        if k is None:
            return None
        return cls(k, what, os.path.abspath(os.fspath(root)))

    @staticmethod
    def facts(path) -> tuple | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def get(self, path) -> tuple[object, tuple | None]:
        """(the kept value or None, the file's facts now: hand them to :meth:`put`)."""
        p = os.path.abspath(os.fspath(path))
        self.seen.add(p)
        now = self.facts(p)
        row = self.rows.get(p)
        if row is not None and now is not None:
            try:
                if marshal.loads(row[0]) == now:
                    return marshal.loads(row[1]), now
            except (EOFError, ValueError, TypeError):
                pass
        return None, now

    def put(self, path, before: tuple | None, value: Any) -> None:
        """Keep `value` for `path` if it still stats as `before` (taken before it was read)."""
        p = os.path.abspath(os.fspath(path))
        if before is None or self.facts(p) != before:
            return
        try:
            self.new.append((p, marshal.dumps(before), marshal.dumps(value)))
        except ValueError:  # not a marshallable value: not kept
            return

    def close(self) -> None:
        """Write what was learnt and drop the rows of files no longer there; a failure keeps nothing."""
        import sqlite3

        con = self.kept.con
        gone = [p for p in self.rows if p not in self.seen]
        try:
            if self.new or gone:
                con.execute("BEGIN IMMEDIATE")
                try:
                    con.executemany("DELETE FROM peek WHERE what=? AND path=?", [(self.what, p) for p in gone])
                    con.executemany("INSERT OR REPLACE INTO peek(what, path, facts, value) VALUES (?, ?, ?, ?)",
                                    [(self.what, *r) for r in self.new])
                    con.execute("COMMIT")
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
        except sqlite3.Error:
            pass
        finally:
            self.kept.close()


def roots_of(sel) -> tuple:
    """The data roots a selection looked at."""
    return tuple(e.root.path for e in sel.survey.entries if e.root is not None and e.root.path is not None)


def _own_files(ref) -> list[str]:
    out = []
    for p in ref.paths:
        p = os.path.abspath(os.fspath(p))
        out += [p, p + "-wal"]
    return out


def taken(ref, fn: Callable[[], T]) -> tuple[T, tuple | None]:
    """(fn(), the identity of what it read) -- None instead of the identity when one of the
    session's own files changed while it was read (the answer is then not to be kept)."""
    from .fulltext import Traced, _facts, inputs_identity

    own = _own_files(ref)
    before = [_facts(p) for p in own]
    with Traced() as opened:
        opened.update(own)
        value = fn()
    ident = inputs_identity(opened)
    now = dict(ident)
    if any(now.get(p, b) != b for p, b in zip(own, before)):
        return value, None
    return value, ident


def status() -> dict | None:
    """{path, db_bytes, answers: {question: sessions kept}} for `index status`; None when there is
    none yet (not created here)."""
    import sqlite3

    p = db_path()
    if not p.exists():
        return None
    size = 0
    for suf in ("", "-wal"):
        try:
            size += os.stat(os.fspath(p) + suf).st_size
        except OSError:
            pass
    try:
        con = sqlite3.connect(f"file:{p}?mode=ro", uri=True, timeout=5)
        try:
            answers = dict(con.execute("SELECT what, count(*) FROM kept GROUP BY what").fetchall())
        finally:
            con.close()
    except sqlite3.Error as exc:
        return {"path": str(p), "db_bytes": size, "answers": None, "error": str(exc)}
    return {"path": str(p), "db_bytes": size, "answers": answers}


def forget(refs: list) -> int | None:
    """Drop every kept answer of `refs`' sessions (`index clear` over a selection): how many rows
    went, None when there is no database or it cannot be written."""
    import sqlite3

    p = db_path()
    if not p.exists() or not refs:
        return None if not p.exists() else 0
    try:
        con = sqlite3.connect(p, timeout=10, isolation_level=None)
        try:
            con.execute("BEGIN IMMEDIATE")
            n = 0
            for r in refs:
                n += con.execute("DELETE FROM kept WHERE provider=? AND sid=?", (r.provider, r.session_id)).rowcount
            con.execute("COMMIT")
        finally:
            con.close()
    except sqlite3.Error:
        return None
    return n
