"""opencode (``opencode-ai`` on npm): sessions in ``opencode.db`` (SQLite, WAL) under its data dir.

Where: ``--opencode-home DIR`` (the data dir that holds ``opencode.db``, or a database file), then
``--home H`` -> ``H/.local/share/opencode``, then ``OPENCODE_DB`` (opencode's own variable naming
the database file; relative to the data dir unless absolute), then ``$XDG_DATA_HOME/opencode``,
then ``~/.local/share/opencode``. opencode has no variable of its own for the data dir (checked in
the 1.18.33 binary: ``OPENCODE_DB``, ``OPENCODE_DISABLE_CHANNEL_DB``, ``OPENCODE_CONFIG_DIR``; the
data dir is xdg-basedir's ``$XDG_DATA_HOME/opencode``).

Stores in a data dir: ``opencode.db`` (release channels latest/beta/prod), ``opencode-<channel>.db``
(other channels; each its own store), and the legacy JSON tree ``storage/`` (opencode_json.py).

Tables read (read-only; sqlite_ro.py): ``session`` (id, project_id, parent_id, directory, title,
version, time_created/updated/archived in ms, cost, tokens_*), ``message`` (id, session_id,
time_created, data JSON), ``part`` (id, message_id, session_id, time_created, data JSON),
``project`` (id, worktree). Locators are ``message:<id>``, ``part:<id>`` and ``part:<id>#output``
(a tool part's result half). ``time_archived`` is opencode's soft delete: the session is listed
with ``extra.archived = true``. The session row's ``cost`` and ``tokens_*`` are opencode's own sums
over the session's steps (``extra.recorded_cost``/``extra.recorded_tokens``, as written: its
``tokens_output`` follows the same per-release convention as the steps' ``output``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Iterator, Mapping

import orjson

from . import opencode_json, sqlite_ro
from .base import Discovery, Problem, Provider, ReadReport, Record, Root, SessionRef
from .opencode_records import SessionMapper, iso_ms

NEED = {
    "session": {"id", "directory", "title", "time_created", "time_updated"},
    "message": {"id", "session_id", "time_created", "data"},
    "part": {"id", "message_id", "session_id", "data"},
}
OPTIONAL_SESSION = ("project_id", "parent_id", "version", "time_archived", "slug", "agent", "cost",
                    "tokens_input", "tokens_output", "tokens_reasoning", "tokens_cache_read",
                    "tokens_cache_write", "workspace_id")


def _loads(b: Any) -> Any:
    if b is None:
        return None
    try:
        return orjson.loads(b)
    except (orjson.JSONDecodeError, TypeError):
        return None


class Opencode(Provider):
    name = "opencode"
    ccusage_agent: ClassVar[str | None] = "opencode"
    display = "opencode"
    session_cost_source: ClassVar[str | None] = "opencode session.cost"
    records_cost = True
    """Each step's message (and its step-finish part) carries opencode's price of it (``cost``, USD)."""

    def recorded_cost(self, record: Record) -> float | None:
        raw = record.raw
        if not isinstance(raw, dict):
            return None
        for d in (raw, raw.get("data"), raw.get("part"), raw.get("info")):
            if isinstance(d, dict):
                c = d.get("cost")
                if isinstance(c, (int, float)) and not isinstance(c, bool):
                    return float(c)
        return None
    home_flag = "--opencode-home"
    env_var = None
    default_rel = ".local/share/opencode"
    client_packages = ("opencode-ai",)
    process_names: ClassVar[tuple[str, ...]] = ("opencode", "opencode.exe")  # comm via the npm bin link; the exe it points to
    activity_granularity = "project"
    lacks = {"reinjection": "opencode writes no record of a file that changed on disk behind the session: a "
             "message's parts are text, reasoning, tool, step-start/step-finish, patch, snapshot, "
             "agent, subtask, retry and compaction (1.18.33), none re-sending a changed file, so "
             "there is nothing to audit"}
    shell_tools = {"bash": ("command", "workdir")}
    app: ClassVar[str] = "opencode"
    """The client's XDG application dir name (``$XDG_DATA_HOME/<app>``)."""
    db_env: ClassVar[str] = "OPENCODE_DB"
    """The client's own variable naming its database file (relative to the data dir unless absolute)."""
    db_main: ClassVar[str] = "opencode.db"
    """The database of the release channels latest/beta/prod."""
    db_globs: ClassVar[tuple[str, ...]] = ("opencode-*.db",)
    """The other channels' databases in the data dir (each its own store)."""
    file_tools = {"read": ("filePath", "read"), "edit": ("filePath", "update"), "multiedit": ("filePath", "update"),
                  "write": ("filePath", "write")}

    def read_view(self, call: Record, result: Record) -> tuple[str, str, bool] | None:
        from .opencode_records import read_output_lines

        lines = read_output_lines(call, result)
        if lines is None:
            return None
        return ("\n".join(lines), "opencode read output: every line of the file, numbered from 1, ending "
                "'(End of file - total N lines)', none cut (its lines as decoded: line breaks as \\n)", not lines)

    def plans(self, sel, audit: bool = False):
        """The last ``todowrite`` checklist of each session, the ``todo`` store read beside it
        (opencode_artifacts.py)."""
        from .opencode_artifacts import plans

        return plans(self, sel, audit)

    def plan_update(self, ref: SessionRef, record: Record):
        from .opencode_artifacts import plan_update

        return plan_update(record)

    def record_images(self, ref: SessionRef, record: Record) -> list:
        """Image ``file`` parts (a prompt's attachment) and a tool result's image attachments
        (opencode_artifacts.py)."""
        from .opencode_artifacts import record_images

        return record_images(ref, record)

    def compaction_of(self, ref: SessionRef, record: Record):
        """The summary text of a compaction (``part/text/summary``: a text part of the assistant
        message the ``compaction`` agent writes, ``summary: true``), after the user message holding
        the ``compaction`` part (``auto``: true when the client compacted by itself, false for
        ``/compact``). The database keeps every earlier message and part (measured with 1.18.33,
        scenario ``compacted``); a pruned tool output keeps its text too (``state.time.compacted``
        only stops it being sent again)."""
        if record.native == "part/compaction":
            o = record.raw if isinstance(record.raw, dict) else {}
            self.__dict__.setdefault("_compact_auto", {})[ref.session_id] = o.get("auto")
            return None
        if record.native != "part/text/summary":
            return None
        from .compaction import mark

        auto = self.__dict__.get("_compact_auto", {}).pop(ref.session_id, None)
        return mark(text=record.text, trigger={True: "auto", False: "manual"}.get(auto) if isinstance(auto, bool)
                    else None)

    # ------------------------------------------------------------------ where
    def locate(self, explicit: str | None = None, home: str | None = None,
               env: Mapping[str, str] | None = None) -> Root:
        env = os.environ if env is None else env
        if explicit:
            return Root(Path(explicit).expanduser(), self.home_flag, True)
        if home:
            return Root(Path(home).expanduser() / self.default_rel, "--home", True)
        data = Path(env["XDG_DATA_HOME"]).expanduser() / self.app if env.get("XDG_DATA_HOME") else None
        db = env.get(self.db_env)
        if db and db != ":memory:":
            p = Path(db).expanduser()
            if not p.is_absolute():
                p = (data or Path.home() / self.default_rel) / p
            return Root(p, self.db_env)
        if data is not None:
            return Root(data, "XDG_DATA_HOME")
        return Root(Path.home() / self.default_rel, "default")

    # ------------------------------------------------------------------ which
    def stores(self, root: Path) -> tuple[list[Path], bool]:
        """The databases under a data dir (or the named file) and whether a legacy tree exists."""
        if root.is_file() or root.suffix == ".db":
            return ([root] if root.exists() else []), False
        dbs = []
        if (root / self.db_main).exists():
            dbs.append(root / self.db_main)
        dbs += sorted({p for g in self.db_globs for p in root.glob(g) if p.is_file()})
        return dbs, (opencode_json.storage_dir(root) / "session").is_dir()

    def discover(self, root: Root) -> Discovery:
        if root.path is None:
            return Discovery([], self.coverage(root, "not_looked", reason="no data dir given"))
        if not root.path.exists():
            return Discovery([], self.coverage(root, "absent", 0, reason=f"{root.path} does not exist"))
        dbs, legacy = self.stores(root.path)
        problems: list[Problem] = []
        failed: list[tuple[str, str]] = []
        refs: list[SessionRef] = []
        for db in dbs:
            try:
                refs += self._db_sessions(db)
            except sqlite_ro.StoreError as e:
                problems.append(Problem(str(db), e.reason))
                failed.append((e.state, f"{db.name}: {e.reason}"))
        if legacy:
            in_db = {r.session_id for r in refs}
            for r in opencode_json.discover(root.path, problems, self.name):
                if r.session_id in in_db:
                    continue  # migrated into opencode.db; the database's copy is the one read
                refs.append(r)
        if not dbs and not legacy:
            return Discovery([], self.coverage(root, "absent", 0,
                                               reason=f"no {', '.join((self.db_main, *self.db_globs))} or storage/ here"),
                             problems)
        if failed:
            state = "unknown_format" if all(s == "unknown_format" for s, _ in failed) else "unreadable"
            reason = "; ".join(r for _, r in failed)
            if refs:
                reason += f" ({len(refs)} sessions read from the other stores are listed)"
            return Discovery(refs, self.coverage(root, state, None, reason), problems)  # type: ignore[arg-type]
        return Discovery(refs, self.coverage(root, "ok", len(refs)), problems)

    def _cons(self) -> sqlite_ro.Connections:
        c = self.__dict__.get("_connections")
        if c is None:
            c = self.__dict__["_connections"] = sqlite_ro.Connections()
        return c

    def _db_sessions(self, db: Path) -> list[SessionRef]:
        con, cols = self._cons().get(db, NEED)
        if cols is None:
            return []  # created, not yet migrated (seen while the client starts)
        try:
            have = [c for c in OPTIONAL_SESSION if c in cols["session"]]
            sel = ", ".join(f'"{c}"' for c in ["id", "directory", "title", "time_created", "time_updated", *have])
            worktrees: dict[str, str] = {}
            with sqlite_ro.snapshot(con, db):
                rows = sqlite_ro.retry(lambda: con.execute(f"SELECT {sel} FROM session ORDER BY time_created, id").fetchall(), db)
                pcols = sqlite_ro.retry(lambda: sqlite_ro.columns(con, "project"), db)
                if {"id", "worktree"} <= pcols:
                    worktrees = dict(sqlite_ro.retry(lambda: con.execute("SELECT id, worktree FROM project").fetchall(), db))
        except sqlite_ro.StoreError:
            raise
        except Exception as e:  # an sqlite3 error outside retry(): classify it the same way
            raise sqlite_ro.classify(e, db) from e
        names = ["id", "directory", "title", "time_created", "time_updated", *have]
        refs = []
        for row in rows:
            r = dict(zip(names, row))
            sid = r["id"]
            if not isinstance(sid, str):
                continue
            tok = {k[7:]: r[k] for k in names if k.startswith("tokens_")}
            refs.append(SessionRef(
                self.name, sid, [db], project=r["directory"] if isinstance(r["directory"], str) else None,
                project_source="session.directory", first_at=iso_ms(r["time_created"]),
                last_at=iso_ms(r["time_updated"]), size=None,
                title=r["title"] if isinstance(r["title"], str) else None,
                parent_session_id=r.get("parent_id") or None, version=r.get("version") or None,
                extra={"store": "sqlite", "db_path": str(db), "project_id": r.get("project_id"),
                       "worktree": worktrees.get(r.get("project_id") or ""),
                       "archived": r.get("time_archived") is not None,
                       "time_archived": iso_ms(r.get("time_archived")), "slug": r.get("slug"),
                       "agent": r.get("agent"), "recorded_cost": r.get("cost"),
                       "recorded_tokens": tok or None}))
        return refs

    # ------------------------------------------------------------------ how
    def read(self, ref: SessionRef, report: ReadReport, *, raw: bool = False) -> Iterator[Record]:
        if ref.extra.get("store") == "legacy-json":
            yield from opencode_json.read(ref, report, raw)
            return
        db = Path(ref.extra.get("db_path") or ref.paths[0])
        try:
            con, cols = self._cons().get(db, NEED)
        except sqlite_ro.StoreError as e:
            report.problems.append(Problem(str(db), e.reason))
            return
        report.files += 1
        if cols is None:
            return
        mapper = SessionMapper(ref.session_id, report, path=str(db), is_child=bool(ref.parent_session_id), raw=raw,
                               data_dir=db.parent, provider=self.name)
        try:
            with sqlite_ro.snapshot(con, db):
                yield from self._rows(con, db, ref.session_id, mapper, report)
        except sqlite_ro.StoreError as e:
            report.problems.append(Problem(str(db), e.reason))
        except Exception as e:  # a malformed page met mid-read: say so, keep what was read
            report.problems.append(Problem(str(db), sqlite_ro.classify(e, db).reason))

    def _rows(self, con, db: Path, sid: str, mapper: SessionMapper, report: ReadReport) -> Iterator[Record]:
        # streamed: one message and its parts in memory at a time, whatever the session's size
        msgs = sqlite_ro.retry(lambda: con.execute(
            "SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,)), db)
        for mid, mt, mdata in msgs:
            report.bytes += len(mdata or b"")
            m = _loads(mdata)
            if not isinstance(m, dict):
                report.malformed_lines.append(f"{db}:message:{mid}")
                m = {}
            parts = []
            for pid, pt, pdata in con.execute(
                    "SELECT id, time_created, data FROM part WHERE message_id = ? ORDER BY id", (mid,)):
                report.bytes += len(pdata or b"")
                p = _loads(pdata)
                if not isinstance(p, dict):
                    report.malformed_lines.append(f"{db}:part:{pid}")
                    p = {"type": None}
                parts.append((pid, p, pt))
            yield from mapper.message(mid, m, mt, parts)
        # parts whose message row is missing (kept, never dropped)
        orphans = con.execute("SELECT id, message_id, time_created, data FROM part WHERE session_id = ? "
                              "AND message_id NOT IN (SELECT id FROM message WHERE session_id = ?) ORDER BY id",
                              (sid, sid)).fetchall()
        if orphans:
            report.notes.append(f"{len(orphans)} part row(s) of {sid} have no message row")
            for pid, mid, pt, pdata in orphans:
                p = _loads(pdata)
                yield from mapper.part(pid, p if isinstance(p, dict) else {"type": None}, pt, None, None, {}, True)
        yield from self._v2_rows(con, sid, mapper, report)

    def _v2_rows(self, con, sid: str, mapper: SessionMapper, report: ReadReport) -> Iterator[Record]:
        """``session_message`` / ``session_input`` (opencode's newer session state; empty in every
        1.18.33 run measured): not modelled yet, so their rows are kept as ``unknown`` records and
        counted, never dropped silently."""
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "session_message" in tables and {"id", "session_id", "type", "seq", "data"} <= sqlite_ro.columns(con, "session_message"):
            for rid, typ, seq, data in con.execute("SELECT id, type, seq, data FROM session_message WHERE session_id = ? "
                                                   "ORDER BY seq", (sid,)):
                native = f"session_message/{typ}"
                report.unknown_kinds[native] += 1
                report.records += 1
                yield Record(self.name, sid, f"session_message:{rid}", "harness", "unknown", native, path=mapper.path,
                             raw=_loads(data) if mapper.raw else None)
        if "session_input" in tables and {"id", "session_id", "prompt", "delivery"} <= sqlite_ro.columns(con, "session_input"):
            for rid, prompt, delivery in con.execute("SELECT id, prompt, delivery FROM session_input WHERE session_id = ? "
                                                     "ORDER BY admitted_seq", (sid,)):
                native = f"session_input/{delivery}"
                report.unknown_kinds[native] += 1
                report.records += 1
                yield Record(self.name, sid, f"session_input:{rid}", "user", "unknown", native, path=mapper.path,
                             text=prompt if isinstance(prompt, str) else None)

    # ------------------------------------------------------------------ search's prefilter
    def rule_out_rows(self, refs: list[SessionRef], needles: list[str] | None, ci: bool,
                      kinds: frozenset[str]) -> list[bool]:
        """For each ref: True when none of the rows its session is read from holds a needle, so no
        record can match (search/gate.py's guarantee, at row level: outside ``meta``, whose
        texts the mapper composes or reads from saved files, a record's matchable text is JSON
        string values of its ``part``/``message`` rows; opencode's JSON.stringify leaves printable
        ASCII other than quote and backslash as is). SQLite's ``instr`` looks inside each value,
        whole (the file's bytes would not do: a long value is split across overflow pages). Never
        True for a case-insensitive or ``meta`` query, a legacy JSON session, a session with
        ``session_input`` rows (a plain text column, not modelled), or a database that fails."""
        if ci or not needles or "meta" in kinds:
            return [False] * len(refs)
        return sqlite_ro.rule_out_by_db(refs, "sqlite", lambda db: self._sessions_holding(db, list(needles)))

    def _sessions_holding(self, db: Path, needles: list[str]) -> set:
        """Ids of the sessions that may hold a needle: whose message rows or part rows (by the
        part's own session_id and by its message's) hold one, and every session with
        session_input rows."""
        con, cols = self._cons().get(db, NEED)
        if cols is None:
            raise sqlite_ro.StoreError("unknown_format", "not migrated")
        def cond(col: str) -> str:
            return sqlite_ro.instr_any(col, len(needles))
        found: set = set()
        with sqlite_ro.snapshot(con, db):
            for a, b in sqlite_ro.retry(lambda: con.execute(
                    f"SELECT p.session_id, m.session_id FROM part p LEFT JOIN message m ON m.id = p.message_id "
                    f"WHERE {cond('p.data')}", needles).fetchall(), db):
                found.update((a, b))
            found.update(r[0] for r in sqlite_ro.retry(lambda: con.execute(
                f"SELECT DISTINCT session_id FROM message WHERE {cond('data')}", needles).fetchall(), db))
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "session_input" in tables:
                found.update(r[0] for r in con.execute("SELECT DISTINCT session_id FROM session_input"))
        return found

    def change_token(self, ref: SessionRef) -> str | None:
        """A legacy JSON session: its files' metadata (the default). A session in opencode.db: its
        session row and, for each of its message and part rows (and ``session_message`` /
        ``session_input`` rows), the id, update time and payload length (opencode stamps
        ``time_updated`` on every write of a row); None when the database cannot be read."""
        if ref.extra.get("store") == "legacy-json":
            return super().change_token(ref)
        db = Path(ref.extra.get("db_path") or ref.paths[0])
        sid = ref.session_id
        try:
            con, cols = self._cons().get(db, NEED)
            if cols is None:
                return None
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            upd = lambda t: "time_updated" if "time_updated" in cols.get(t, sqlite_ro.columns(con, t)) else "NULL"  # noqa: E731
            qs = [("SELECT * FROM session WHERE id = ?", (sid,)),
                  (f"SELECT id, {upd('message')}, length(data) FROM message WHERE session_id = ? ORDER BY id", (sid,)),
                  (f"SELECT id, message_id, {upd('part')}, length(data) FROM part WHERE session_id = ? OR message_id IN "
                   "(SELECT id FROM message WHERE session_id = ?) ORDER BY id", (sid, sid))]
            for t in ("session_message", "session_input"):
                if t in tables and "session_id" in sqlite_ro.columns(con, t):
                    qs.append((f"SELECT * FROM {t} WHERE session_id = ? ORDER BY rowid", (sid,)))
            return sqlite_ro.rows_signature(con, db, qs)
        except Exception:  # noqa: BLE001 - cannot tell: read it
            return None

    # ------------------------------------------------------------------ live state (opencode_live.py)
    def live_state(self, ref: SessionRef, world):
        """The last message's step and parts (no ``time.completed``, tool parts pending or running),
        the opencode processes holding the database open, the child sessions (opencode_live.py)."""
        from . import opencode_live

        if ref.extra.get("store") == "legacy-json":
            return opencode_live.legacy_state(ref)

        return opencode_live.live_state(self, ref, world)

    def whoami(self, env, world):
        """``OPENCODE=1`` / ``OPENCODE_PID`` in its shell tool's environment: no session id."""
        from . import opencode_live

        return opencode_live.whoami(env, world, self)

    def subagents(self, ref: SessionRef, children, world, files: bool = False):
        """Child sessions joined to the ``task`` part whose metadata names them."""
        from . import opencode_live

        return opencode_live.subagents(self, ref, children, world)

    def summary_files(self, ref: SessionRef) -> list[Path]:
        """A legacy JSON session's session file, every message file and every part file of it (the
        reader reads each); a database session's database and its ``-wal`` (Provider's)."""
        if ref.extra.get("store") == "legacy-json":
            return opencode_json.read_files(ref)
        return super().summary_files(ref)

    def footprint(self, ref: SessionRef) -> list[Path]:
        """Legacy JSON sessions own their files; a session inside opencode.db owns rows, not files:
        nothing can be removed without writing to the database, which sessionsift never does."""
        if ref.extra.get("store") == "legacy-json":
            return opencode_json.footprint(ref)
        return []
