"""The ranked-search index: whole turns in an SQLite FTS5 table, ranked by BM25 (`search --rank`,
docs/search.md "Ranked search").

**Where.** ``<index root>/ranked.sqlite`` (store.root_dir(): the same private directory as the
per-file index, 0700; the database 0600), or an in-memory database when the index is off (the
answer is then ranked by a scan: every session of the selection is read for it, nothing kept).

**What.** One row per turn (a unit this module does not define: the caller gives each session's
turns, built from its records by the library's own turn model): three text columns, ``prompt``
(the user's prompt), ``reply`` (the agent's messages and reasoning) and ``tools`` (its tool calls
and their results), tokenized by words (``porter unicode61 remove_diacritics 2``: case, accents
and English inflections folded), and beside it, in an ordinary table, the turn's session, lane,
number, first and last instant and a digest of its text. One row per session holds the reader's
change token (Provider.change_token) the turns were read at.

**Brought up to date** by :meth:`RankedIndex.put`: the caller reads again only a session whose
change token differs from the one stored (or that has none), and `put` keeps every turn whose
digest is unchanged, deletes the turns that changed or vanished and adds the new ones -- an
append adds its new turns (and the last turn again when it grew); a rewritten file re-adds the
turns it changed.

**Ranked** by FTS5's ``bm25()`` with the columns weighted prompt 3, reply 2, tools 1 (a word the
user typed counts more than one a tool printed); the score given is ``-bm25`` (higher is better).
The words of the query are OR-ed: a turn holding more of them, rarer ones, ranks higher.
"""

from __future__ import annotations

import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

SCHEMA = 1
"""Bumped when the tables change: a database of another schema is dropped and rebuilt."""

TOKENIZE = "porter unicode61 remove_diacritics 2"
WEIGHTS = (3.0, 2.0, 1.0)
"""bm25() weights of the columns prompt, reply, tools."""

NAME = "ranked.sqlite"


class RankUnavailable(Exception):
    """The ranked index cannot be used (no FTS5 in this SQLite, a database that does not open):
    the message says why."""


@dataclass
class TurnDoc:
    """One turn as it is indexed."""

    lane: str
    number: int
    prompt: str
    reply: str
    tools: str
    first_at: str | None = None
    last_at: str | None = None

    def digest(self) -> str:
        try:
            from _blake2 import blake2b
        except ImportError:  # pragma: no cover
            from hashlib import blake2b
        h = blake2b(digest_size=16)
        for part in (self.lane, str(self.number), self.prompt, self.reply, self.tools,
                     self.first_at or "", self.last_at or ""):
            h.update(part.encode("utf-8", "surrogatepass"))
            h.update(b"\0")
        return h.hexdigest()


@dataclass
class SessionMeta:
    provider: str
    session_id: str
    path: str | None
    project: str | None


@dataclass
class RankedHit:
    skey: str
    provider: str
    session_id: str
    path: str | None
    project: str | None
    lane: str
    number: int
    first_at: str | None
    last_at: str | None
    score: float
    prompt: str
    snippet: str
    """The best fragment of the turn, the matched words between \\x02 and \\x03."""
    column: str | None = None
    """Which column the snippet is from (prompt, reply or tools)."""


def session_key(provider: str, session_id: str, first_path: str | None) -> str:
    """A session's key: its provider, id and first file (two data roots may hold the same id)."""
    return f"{provider}\0{session_id}\0{first_path or ''}"


def db_path() -> Path:
    from .store import root_dir

    return root_dir() / NAME


_WORD = re.compile(r"\w+", re.UNICODE)


def words_of(text: str) -> list[str]:
    """The words of a query (what the tokenizer would find in it: runs of letters and digits)."""
    return _WORD.findall(text)


def match_expr(words: list[str]) -> str:
    """An FTS5 MATCH expression: every word quoted (no operator the user did not mean), OR-ed."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in dict.fromkeys(words))


class RankedIndex:
    """The ranked index, opened on disk (:meth:`open`) or in memory (:meth:`memory`)."""

    def __init__(self, con: sqlite3.Connection, where: str | None):
        self.con = con
        self.where = where
        """The database file, or None in memory."""
        self._tokens: dict[str, str | None] | None = None

    # -- opening --------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | None = None) -> "RankedIndex":
        """The on-disk index (created when absent; rebuilt when its schema is another). Raises
        RankUnavailable with the reason when it cannot be used."""
        from .store import _private_dirs

        path = db_path() if path is None else Path(path)
        try:
            _private_dirs(path.parent)
            fresh = not path.exists()
            if fresh:  # created private: the turns' text is the user's
                fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
                os.close(fd)
            con = sqlite3.connect(path, timeout=30, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise RankUnavailable(f"the ranked index {path} cannot be opened: {exc}") from exc
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            idx = cls(con, str(path))
            idx._schema()
        except sqlite3.DatabaseError as exc:
            con.close()
            if "FTS5" in str(exc).upper() and "no such module" in str(exc):
                raise RankUnavailable(f"this Python's SQLite ({sqlite3.sqlite_version}) has no FTS5") from exc
            # a database that does not read is never trusted: it is rebuilt from the transcripts
            try:
                for suf in ("", "-wal", "-shm"):
                    if os.path.exists(str(path) + suf):
                        os.unlink(str(path) + suf)
                return cls.open(path)
            except (OSError, RankUnavailable) as exc2:
                raise RankUnavailable(f"the ranked index {path} does not read ({exc}) and cannot be "
                                      f"rebuilt: {exc2}") from exc2
        return idx

    @classmethod
    def memory(cls) -> "RankedIndex":
        con = sqlite3.connect(":memory:", isolation_level=None)
        idx = cls(con, None)
        try:
            idx._schema()
        except sqlite3.OperationalError as exc:
            raise RankUnavailable(f"this Python's SQLite ({sqlite3.sqlite_version}) has no FTS5: {exc}") from exc
        return idx

    def _schema(self) -> None:
        c = self.con
        have = c.execute("PRAGMA user_version").fetchone()[0]
        if have not in (0, SCHEMA):
            for t in ("turn_fts", "turn", "session"):
                c.execute(f"DROP TABLE IF EXISTS {t}")
        c.execute("CREATE TABLE IF NOT EXISTS session(skey TEXT PRIMARY KEY, provider TEXT, session_id TEXT, "
                  "path TEXT, project TEXT, token TEXT)")
        c.execute("CREATE TABLE IF NOT EXISTS turn(id INTEGER PRIMARY KEY, skey TEXT NOT NULL, lane TEXT, "
                  "number INTEGER, first_at TEXT, last_at TEXT, digest TEXT)")
        c.execute("CREATE INDEX IF NOT EXISTS turn_skey ON turn(skey)")
        c.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS turn_fts USING fts5(prompt, reply, tools, "
                  f"tokenize='{TOKENIZE}')")
        c.execute(f"PRAGMA user_version={SCHEMA}")

    def close(self) -> None:
        self.con.close()

    # -- keeping it up to date ------------------------------------------------------------

    def tokens(self) -> dict[str, str | None]:
        """Every indexed session's change token, by session key."""
        if self._tokens is None:
            self._tokens = dict(self.con.execute("SELECT skey, token FROM session"))
        return self._tokens

    def begin(self) -> None:
        self.con.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.con.execute("COMMIT")

    def put(self, skey: str, meta: SessionMeta, token: str | None, turns: list[TurnDoc]) -> tuple[int, int]:
        """Bring one session's turns to `turns` (read at `token`); (turns added, turns removed)."""
        c = self.con
        old = {(lane, num): (tid, dg) for tid, lane, num, dg in
               c.execute("SELECT id, lane, number, digest FROM turn WHERE skey=?", (skey,))}
        added = removed = 0
        keep = set()
        for t in turns:
            k = (t.lane, t.number)
            dg = t.digest()
            cur = old.get(k)
            if cur is not None and cur[1] == dg and k not in keep:
                keep.add(k)
                continue
            if cur is not None and k not in keep:
                self._delete(cur[0])
                removed += 1
                keep.add(k)
            tid = c.execute("INSERT INTO turn(skey, lane, number, first_at, last_at, digest) VALUES (?,?,?,?,?,?)",
                            (skey, t.lane, t.number, t.first_at, t.last_at, dg)).lastrowid
            c.execute("INSERT INTO turn_fts(rowid, prompt, reply, tools) VALUES (?,?,?,?)",
                      (tid, t.prompt, t.reply, t.tools))
            added += 1
        for k, (tid, _dg) in old.items():
            if k not in keep:
                self._delete(tid)
                removed += 1
        c.execute("INSERT OR REPLACE INTO session(skey, provider, session_id, path, project, token) "
                  "VALUES (?,?,?,?,?,?)", (skey, meta.provider, meta.session_id, meta.path, meta.project, token))
        if self._tokens is not None:
            self._tokens[skey] = token
        return added, removed

    def _delete(self, tid: int) -> None:
        self.con.execute("DELETE FROM turn_fts WHERE rowid=?", (tid,))
        self.con.execute("DELETE FROM turn WHERE id=?", (tid,))

    # -- asking ---------------------------------------------------------------------------

    def counts(self, skeys: list[str], subagents: bool = True) -> tuple[int, int]:
        """(sessions, turns) of these sessions in the index (`subagents=False`: main lanes' turns)."""
        self._select(skeys)
        n = self.con.execute("SELECT count(*) FROM turn WHERE skey IN (SELECT skey FROM temp.sel)"
                             + ("" if subagents else " AND lane='main'")).fetchone()[0]
        s = self.con.execute("SELECT count(*) FROM session WHERE skey IN (SELECT skey FROM temp.sel)").fetchone()[0]
        return s, n

    def _select(self, skeys: list[str]) -> None:
        c = self.con
        c.execute("CREATE TEMP TABLE IF NOT EXISTS sel(skey TEXT PRIMARY KEY)")
        c.execute("DELETE FROM temp.sel")
        c.executemany("INSERT OR IGNORE INTO temp.sel VALUES (?)", ((k,) for k in skeys))

    def query(self, words: list[str], skeys: list[str], limit: int,
              subagents: bool = True) -> tuple[list[RankedHit], int]:
        """The `limit` best turns of the sessions `skeys` for `words` (best first) and how many
        turns hold any of the words (`subagents=False`: main lanes' turns only)."""
        if not words:
            return [], 0
        c = self.con
        self._select(skeys)
        expr = match_expr(words)
        w = ", ".join(str(x) for x in WEIGHTS)
        lanes = "" if subagents else " AND t.lane='main'"
        total = c.execute("SELECT count(*) FROM turn_fts JOIN turn t ON t.id = turn_fts.rowid "
                          "WHERE turn_fts MATCH ? AND t.skey IN (SELECT skey FROM temp.sel)" + lanes,
                          (expr,)).fetchone()[0]
        rows = c.execute(
            f"SELECT t.id, t.skey, t.lane, t.number, t.first_at, t.last_at, bm25(turn_fts, {w}) AS b "
            "FROM turn_fts JOIN turn t ON t.id = turn_fts.rowid "
            "WHERE turn_fts MATCH ? AND t.skey IN (SELECT skey FROM temp.sel)" + lanes
            + " ORDER BY b, t.skey, t.lane, t.number LIMIT ?", (expr, limit)).fetchall()
        hits = []
        for tid, skey, lane, num, fa, la, b in rows:
            prov, sid, path, project = c.execute(
                "SELECT provider, session_id, path, project FROM session WHERE skey=?", (skey,)).fetchone()
            prompt, snip, col = self._snippet(tid, expr)
            hits.append(RankedHit(skey, prov, sid, path, project, lane, num, fa, la, -b, prompt, snip, col))
        return hits, total

    def _snippet(self, tid: int, expr: str) -> tuple[str, str, str | None]:
        """(the turn's prompt, its best fragment, that fragment's column) for one matched turn."""
        c = self.con
        prompt = c.execute("SELECT prompt FROM turn_fts WHERE rowid=?", (tid,)).fetchone()[0] or ""
        best: tuple[str, str | None] = ("", None)
        for i, col in enumerate(("prompt", "reply", "tools")):
            s = c.execute(f"SELECT snippet(turn_fts, {i}, char(2), char(3), '…', 24) FROM turn_fts "
                          "WHERE turn_fts MATCH ? AND rowid=?", (expr, tid)).fetchone()
            if s and s[0] and "\x02" in s[0]:
                best = (s[0], col)
                break
        return prompt, best[0], best[1]

    def size(self) -> int | None:
        """Bytes of the database on disk (with its write-ahead log); None in memory."""
        if self.where is None:
            return None
        n = 0
        for suf in ("", "-wal"):
            try:
                n += os.stat(self.where + suf).st_size
            except OSError:
                pass
        return n
