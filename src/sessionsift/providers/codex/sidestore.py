"""Codex CLI's SQLite side stores, read without disturbing a running client.

``$CODEX_HOME/state_<N>.sqlite`` (table ``threads``: one row per thread with ``rollout_path``,
``title``, ``first_user_message``, ``tokens_used``, ``model``, ``agent_nickname`` ...) and
``$CODEX_HOME/thread_history_<N>.sqlite`` (``thread_turns``: one row per turn with its
``status``) are in WAL mode and written while the client runs. Rules:

- Open them in place through :func:`sessionsift.providers.sqlite_ro.connect` (a ``file:...?mode=ro``
  URI, ``PRAGMA query_only``; ``immutable`` only while no ``-wal``/``-shm`` exists, so reading a
  store nobody has open leaves no files behind): never a copy of the main file without its
  ``-wal`` (that would miss committed writes still in the WAL), never a write lock, never a
  checkpoint; the queries of one store run in one read transaction.
- A busy database is retried a bounded number of times; still busy, it is a note, not an error.
- Their absence or a schema we do not know is a note: the rollout files are the source of truth,
  these only enrich a :class:`SessionRef` (title, first message, tokens_used, turn statuses).
- The highest ``<N>`` wins when several versions exist (the client migrates forward).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

THREAD_COLUMNS = ("id", "rollout_path", "title", "first_user_message", "tokens_used", "model",
                  "model_provider", "cwd", "source", "cli_version", "agent_nickname", "agent_role",
                  "agent_path", "archived", "thread_source", "created_at_ms", "updated_at_ms")
"""The ``threads`` columns used (an older schema may lack some; ``id`` and ``rollout_path`` are
required, otherwise the store is reported as an unknown schema)."""


@dataclass
class SideInfo:
    threads: dict[str, dict] = field(default_factory=dict)
    """thread id -> the known columns of its row."""
    by_path: dict[str, str] = field(default_factory=dict)
    """rollout_path -> thread id."""
    turns: dict[str, dict[str, int]] = field(default_factory=dict)
    """thread id -> turn status -> count (from thread_history_*.sqlite)."""
    notes: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


def _newest(root: Path, stem: str) -> Path | None:
    best: tuple[int, Path] | None = None
    try:
        entries = list(root.iterdir())
    except OSError:
        return None
    for p in entries:
        m = re.fullmatch(rf"{stem}_(\d+)\.sqlite", p.name)
        if m and (best is None or int(m.group(1)) > best[0]):
            best = (int(m.group(1)), p)
    return best[1] if best else None


def _query(path: Path, sql_of, notes: list[str]):
    """Run ``sql_of(con)`` on a read-only connection (bounded retries on busy); None on failure."""
    from .. import sqlite_ro

    try:
        try:
            con = sqlite_ro.connect(path)
        except sqlite_ro.StoreError as exc:
            if "unsafe use of" not in exc.reason:
                raise
            # thread_history_1.sqlite has an index on json_extract(), which SQLite before 3.41
            # refuses to parse under trusted_schema=OFF
            con = sqlite_ro.connect(path, trusted_schema=True)
    except sqlite_ro.StoreError as exc:
        notes.append(f"{path.name}: {exc.reason}")
        return None
    try:
        with sqlite_ro.snapshot(con, path):
            return sqlite_ro.retry(lambda: sql_of(con), path)
    except sqlite_ro.StoreError as exc:
        notes.append(f"{path.name}: {exc.reason}")
        return None
    finally:
        con.close()


def _columns(con: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in con.execute(f'PRAGMA table_info("{table}")')]


def load(root: Path) -> SideInfo:
    info = SideInfo()
    state = _newest(root, "state")
    if state is None:
        info.notes.append("no state_*.sqlite: titles and first messages come from the rollouts only")
    else:
        def threads(con):
            cols = _columns(con, "threads")
            if not {"id", "rollout_path"} <= set(cols):
                return None
            use = [c for c in THREAD_COLUMNS if c in cols]
            rows = con.execute("SELECT " + ", ".join(f'"{c}"' for c in use) + " FROM threads").fetchall()
            return [dict(zip(use, r)) for r in rows]
        rows = _query(state, threads, info.notes)
        if rows is None and not any(n.startswith(state.name) for n in info.notes):
            info.notes.append(f"{state.name}: unknown schema (no threads table with id, rollout_path); not used")
        for r in rows or []:
            tid = str(r["id"])
            info.threads[tid] = r
            if r.get("rollout_path"):
                info.by_path[str(r["rollout_path"])] = tid
        if rows is not None:
            info.sources.append(state.name)
    hist = _newest(root, "thread_history")
    if hist is not None:
        def turns(con):
            cols = _columns(con, "thread_turns")
            if not {"thread_id", "status"} <= set(cols):
                return None
            return con.execute("SELECT thread_id, status, count(*) FROM thread_turns GROUP BY 1, 2").fetchall()
        rows = _query(hist, turns, info.notes)
        if rows is None and not any(n.startswith(hist.name) for n in info.notes):
            info.notes.append(f"{hist.name}: unknown schema (no thread_turns(thread_id, status)); not used")
        for tid, status, n in rows or []:
            info.turns.setdefault(str(tid), {})[str(status)] = int(n)
        if rows is not None:
            info.sources.append(hist.name)
    return info
