"""Reading a database that a running client may be writing, without disturbing it.

Rules (a client's database is read, never written; the same rules Codex's side stores need):

- open read-only through a ``file:<path>?mode=ro`` URI: the connection can never write, so it never
  takes a write lock, never checkpoints, never changes the journal mode; ``PRAGMA query_only`` is
  set as well. ``immutable=1`` is used only where no ``-wal``/``-shm`` exists (:func:`quiet_wal`):
  with a ``-wal`` present it would ignore it, and in WAL mode the newest commits live there until
  the client checkpoints them;
- the database is read in place, never copied (a copy of the main file without its ``-wal`` and
  ``-shm`` silently loses the newest commits);
- ``SQLITE_BUSY``/``locked`` is retried a bounded number of times (a busy timeout per attempt,
  a short back-off between attempts); a database still locked after that is reported, never
  treated as empty;
- a database that cannot be opened, is not a database, is malformed, or lacks a table or column
  the reader needs raises :class:`StoreError` with ``state`` ``unreadable`` or ``unknown_format``
  and a reason: the caller reports coverage null with that reason, never 0 sessions.

A read that spans several queries runs inside one read transaction (:func:`snapshot`), so every
row comes from the same committed state even while the client keeps writing.
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Mapping, TypeVar
from urllib.parse import quote

T = TypeVar("T")

BUSY_TIMEOUT_S = 0.5
"""sqlite's own busy handler waits this long per attempt."""
ATTEMPTS = 4
"""Attempts before a locked database is reported (about 2.5 s in all, with the back-off)."""


class StoreError(Exception):
    def __init__(self, state: str, reason: str):
        super().__init__(reason)
        self.state = state  # "unreadable" | "unknown_format"
        self.reason = reason


def _is_busy(e: BaseException) -> bool:
    m = str(e).lower()
    return "locked" in m or "busy" in m


def classify(e: BaseException, path: Path) -> StoreError:
    """Map an sqlite3 error to the coverage state and a reason a person can act on."""
    m = str(e)
    low = m.lower()
    if _is_busy(e):
        return StoreError("unreadable", f"locked: {m} (still busy after {ATTEMPTS} attempts)")
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return StoreError("unreadable", f"corrupt: {m}")
    if "no such table" in low or "no such column" in low:
        return StoreError("unknown_format", f"schema not known to this reader: {m}")
    if "unable to open" in low or "readonly" in low or "permission" in low:
        if not os.access(path, os.R_OK):
            return StoreError("unreadable", f"permission denied: {m}")
        return StoreError("unreadable", f"cannot open: {m}")
    return StoreError("unreadable", f"{type(e).__name__}: {m}")


def retry(fn: Callable[[], T], path: Path, attempts: int = ATTEMPTS) -> T:
    """Run ``fn``; on SQLITE_BUSY/locked try again (bounded), then raise StoreError."""
    delay = 0.05
    for i in range(attempts):
        try:
            return fn()
        except sqlite3.Error as e:
            if not _is_busy(e) or i == attempts - 1:
                raise classify(e, path) from e
            time.sleep(delay)
            delay *= 3
    raise AssertionError("unreachable")  # pragma: no cover


def connect(path: Path, *, trusted_schema: bool = False) -> sqlite3.Connection:
    """A read-only connection to ``path`` that has proved it can read the schema.

    ``trusted_schema`` turns SQLite's ``trusted_schema`` on, for a schema SQLite before 3.41
    refuses with it off (an index on ``json_extract()``: "unsafe use of json_extract()"); the
    connection is still ``mode=ro``, ``query_only`` and, on a quiet WAL database, immutable."""
    path = Path(path)
    if not path.exists():
        raise StoreError("unreadable", "database file is missing")
    if not path.is_file():
        raise StoreError("unreadable", "not a regular file")
    if not os.access(path, os.R_OK):
        raise StoreError("unreadable", "permission denied (cannot read the database file)")
    uri = "file:" + quote(str(path.absolute())) + "?mode=ro"
    if quiet_wal(path):
        uri += "&immutable=1"

    def _open() -> sqlite3.Connection:
        con = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                              check_same_thread=False)
        try:
            con.execute("PRAGMA query_only = ON")
            con.execute("PRAGMA trusted_schema = " + ("ON" if trusted_schema else "OFF"))
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except BaseException:
            con.close()
            raise
        return con

    return retry(_open, path)


def is_empty(con: sqlite3.Connection, path: Path) -> bool:
    """True when the database has no tables at all: a file the client has created but not yet set up
    (opencode and Crush create the file, then run their migrations). Nothing is in it: a true 0."""
    return retry(lambda: con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0], path) == 0


def quiet_wal(path: Path) -> bool:
    """A WAL-mode database (header bytes 18-19 = 2) with neither ``-wal`` nor ``-shm`` beside it: no
    connection has it open (the first connection of a WAL database creates both, the last one
    checkpoints and removes them), so the main file holds every commit.

    Such a file is opened ``immutable=1``: a plain read-only open of a WAL database CREATES an empty
    ``-wal`` and a ``-shm`` beside it and leaves them there, which a reader of someone's data (a
    backup, a copied corpus, a read-only mount) must not do. A client that starts later writes to
    its new ``-wal`` (the main file changes only at a checkpoint, after ~1000 pages or at its exit),
    and :class:`Connections` drops the immutable connection as soon as a ``-wal``/``-shm`` appears.
    Rollback-journal databases are never opened immutable (their writers change the main file)."""
    try:
        with open(path, "rb") as f:
            hdr = f.read(20)
    except OSError:
        return False
    if len(hdr) < 20 or hdr[:16] != b"SQLite format 3\x00" or hdr[18] != 2 or hdr[19] != 2:
        return False
    return not any(path.with_name(path.name + s).exists() for s in ("-wal", "-shm"))


def columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in con.execute("SELECT * FROM pragma_table_info(?)", (table,))}


def require(con: sqlite3.Connection, path: Path, schema: Mapping[str, set[str] | frozenset[str]]) -> dict[str, set[str]]:
    """Check that each table has at least the named columns; return every table's columns.

    Raises StoreError(unknown_format) naming what is missing (a client version this reader does not
    know, or a database of some other program)."""
    got: dict[str, set[str]] = {}
    missing = []
    for t, need in schema.items():
        cols = retry(lambda t=t: columns(con, t), path)
        got[t] = cols
        if not cols:
            missing.append(f"table {t}")
        elif need - cols:
            missing.append(f"{t}.({', '.join(sorted(need - cols))})")
    if missing:
        raise StoreError("unknown_format", "schema not known to this reader: missing " + "; ".join(missing))
    return got


@contextmanager
def snapshot(con: sqlite3.Connection, path: Path) -> Iterator[sqlite3.Connection]:
    """One read transaction: every query inside sees the same committed state. Nested (a second
    session of the same database read while the first is still being iterated): the inner read
    shares the outer snapshot."""
    if con.in_transaction:
        yield con
        return
    retry(lambda: con.execute("BEGIN"), path)
    try:
        yield con
    finally:
        try:
            con.execute("COMMIT")
        except sqlite3.Error:
            pass


def rows_signature(con: sqlite3.Connection, path: Path, queries: list[tuple[str, tuple]]) -> str:
    """``rows-v1:<sha256>`` over every row the queries return, in one read transaction: a change
    token for one session's rows (``Provider.change_token``). The queries select small columns
    (ids, update times, ``length(...)``), never the payloads: cheap index reads."""
    import hashlib

    h = hashlib.sha256(b"rows-v1\0")
    with snapshot(con, path):
        for sql, params in queries:
            h.update(sql.encode() + b"\0")
            for row in retry(lambda: con.execute(sql, params).fetchall(), path):
                h.update(repr(row).encode("utf-8", "surrogatepass") + b"\n")
    return "rows-v1:" + h.hexdigest()


def sidecars(path: Path) -> list[Path]:
    """The database file and whichever of its ``-wal``/``-shm``/``-journal`` exist."""
    out = [path]
    for suf in ("-wal", "-shm", "-journal"):
        p = path.with_name(path.name + suf)
        if p.exists():
            out.append(p)
    return out


class Connections:
    """Read-only connections kept open per database for the life of one provider object, so reading
    many sessions of one database opens it (and checks its schema) once. An idle read-only
    connection holds no lock and no snapshot: the client checkpoints and writes as if it were not
    there. A file replaced since (another inode) is reopened."""

    def __init__(self) -> None:
        self._open: dict[str, tuple[tuple[int, int], sqlite3.Connection, dict[str, set[str]] | None, bool]] = {}
        self._pid = os.getpid()

    def get(self, path: Path, schema: Mapping[str, set[str] | frozenset[str]]) -> tuple[sqlite3.Connection, dict[str, set[str]] | None]:
        """(connection, columns per table); columns None when the database has no tables yet.
        Raises StoreError as :func:`connect` and :func:`require` do (nothing is cached then)."""
        if os.getpid() != self._pid:  # a forked child: never use the parent's connections (sqlite's rule)
            self._open = {}
            self._pid = os.getpid()
        key = str(Path(path).absolute())
        try:
            st = os.stat(path)
            ident = (st.st_dev, st.st_ino)
        except OSError:
            ident = (0, 0)
        hit = self._open.get(key)
        if hit is not None and hit[0] == ident and hit[2] is not None and not (
                hit[3] and any(Path(path).with_name(Path(path).name + s).exists() for s in ("-wal", "-shm"))):
            return hit[1], hit[2]
        if hit is not None:
            hit[1].close()
            del self._open[key]
        immutable = quiet_wal(Path(path))
        try:
            con, cols = self._open_checked(path, schema, trusted=False)
        except StoreError as e:
            if "unsafe use of" not in e.reason:
                raise
            # an index on json_extract() (Kilo Code's recall_message_role_idx, Codex CLI's
            # thread_history), which SQLite before 3.41 refuses to parse with trusted_schema OFF: only
            # after that refusal, reopen with it ON (still mode=ro and query_only)
            con, cols = self._open_checked(path, schema, trusted=True)
        if cols is None:  # not set up yet: ask again next time
            return con, None
        self._open[key] = (ident, con, cols, immutable)
        return con, cols

    @staticmethod
    def _open_checked(path: Path, schema, trusted: bool):
        con = connect(path, trusted_schema=trusted)
        try:
            return con, (None if is_empty(con, path) else require(con, path, schema))
        except BaseException:
            con.close()
            raise

    def close(self) -> None:
        if os.getpid() == self._pid:
            for _, con, _, _ in self._open.values():
                con.close()
        self._open.clear()

    def __del__(self) -> None:  # pragma: no cover - best effort at interpreter exit
        try:
            self.close()
        except Exception:
            pass


def rule_out_by_db(refs: list, store: str, holding) -> list[bool]:
    """For each ref: True when its session is not in ``holding(db_path)`` (the ids of the sessions
    of that database whose rows may hold a needle), for the refs whose ``extra["store"]`` is
    `store`; False for every other ref and for every ref of a database `holding` fails on (a
    prefilter only saves time: such sessions are read)."""
    out = [False] * len(refs)
    by_db: dict[str, list[int]] = {}
    for j, ref in enumerate(refs):
        db = ref.extra.get("db_path")
        if ref.extra.get("store") == store and isinstance(db, str):
            by_db.setdefault(db, []).append(j)
    for db, idx in by_db.items():
        try:
            found = holding(Path(db))
        except Exception:
            continue
        for j in idx:
            out[j] = refs[j].session_id not in found
    return out


def instr_any(col: str, n: int) -> str:
    """An SQL condition: `col` holds one of n needles (``instr``: the whole value, whatever pages
    it spans; case-sensitive)."""
    return "(" + " OR ".join(f"instr({col}, ?) > 0" for _ in range(n)) + ")"
