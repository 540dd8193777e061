"""Crush (charmbracelet/crush): one SQLite database per project, ``<project>/.crush/crush.db`` (WAL).

Where (from Crush's ``internal/config/load.go`` ``GlobalConfigData`` and ``internal/projects``):
``--crush-home DIR`` (Crush's global data dir, the one holding ``projects.json``), then ``--home H``
-> ``H/.local/share/crush``, then ``CRUSH_GLOBAL_DATA``, then ``$XDG_DATA_HOME/crush``, then
``~/.local/share/crush``. ``projects.json`` is ``{"projects": [{"path", "data_dir", "last_accessed"}]}``;
each project's database is ``<data_dir>/crush.db`` (``data_dir`` defaults to ``<path>/.crush``).
A listed data dir that is absent is looked for again by its path's tail under the global dir and its
parent (a moved corpus, e.g. a copied sample): found, the session says so in ``extra.relocated_from``;
not found, it is a problem row and the coverage reason says the count is a lower bound.

Tables read (read-only, sqlite_ro.py): ``sessions`` (id, parent_session_id, title, message_count,
prompt_tokens, completion_tokens, cost, created_at, updated_at, summary_message_id),
``messages`` (id, session_id, role, parts JSON, model, provider, created_at, finished_at,
is_summary_message), ``files`` (id, session_id, path, content, version, created_at), ``read_files``
(session_id, path, read_at). Timestamps are
Unix seconds (``strftime('%s','now')``; a value above 1e11 is read as milliseconds).
Records: ``messages:<id>#<i>`` is the i-th part of a message; ``files:<id>`` a file-history row.

Usage: Crush keeps no per-message usage. ``sessions.prompt_tokens``/``completion_tokens`` hold the
LAST step's counts (``updateSessionUsage`` assigns, it does not add; a title generation then adds its
own), ``cost`` is the running sum of Crush's own price estimate: all three are in ``SessionRef.extra``
as written (``last_prompt_tokens``, ``last_completion_tokens``, ``recorded_cost``); no record carries
Tokens, so token sums for Crush are unknown (null), never 0.

File history: Crush stores a file's whole content before a session's first change to it and after
each change (tools/write.go, edit.go). Each row after the first of a path in a session is a
FileChange with ``new_content`` (a complete view, usable by recover) and ``old_content`` (the row
before); the first row is a baseline. A row equal to the one before is not a change. Crush stores an
absent file as empty content, so a first change from an empty baseline reads as ``create``.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Mapping

import orjson

from . import sqlite_ro
from .base import Discovery, FileChange, Problem, Provider, ReadReport, Record, Root, SessionRef

PROVIDER = "crush"
NEED = {
    "sessions": {"id", "parent_session_id", "title", "created_at", "updated_at"},
    "messages": {"id", "session_id", "role", "parts", "created_at"},
}
OPTIONAL_SESSION = ("message_count", "prompt_tokens", "completion_tokens", "cost", "summary_message_id")
KNOWN_PARTS = frozenset({"text", "reasoning", "image_url", "binary", "tool_call", "tool_result", "finish",
                         "shell_command"})
ROLES = {"user": "user", "assistant": "assistant", "tool": "tool", "system": "system"}
_EXIT = re.compile(r"(?:^|\n)Exit code (-?\d+)\s*$")


def iso_epoch(v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
        return None
    s = v / 1000.0 if v > 1e11 else float(v)
    try:
        d = datetime.fromtimestamp(s, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


def _d(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _s(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _json(s: Any) -> Any:
    if not isinstance(s, (str, bytes)) or not s:
        return None
    try:
        return orjson.loads(s)
    except orjson.JSONDecodeError:
        return None


class Crush(Provider):
    name = "crush"
    display = "Crush"
    session_cost_source = "Crush sessions.cost"
    home_flag = "--crush-home"
    env_var = "CRUSH_GLOBAL_DATA"
    default_rel = ".local/share/crush"
    process_names = ("crush",)
    client_packages = ("@charmland/crush",)
    activity_granularity = "project"
    shell_tools = {"bash": ("command", None)}
    file_tools = {"view": ("file_path", "read"), "edit": ("file_path", "update"), "multiedit": ("file_path", "update"),
                  "write": ("file_path", "write")}
    usage_unrecorded = ("Crush keeps no per-message usage (its sessions row holds only the last step's counts "
                        "and a running cost)")
    lacks = {"reinjection": "Crush writes no record of a file that changed on disk behind the session: a "
             "message's parts are text, reasoning, tool calls and results, binary, image_url and "
             "finish, and its files table is the history of the files the session itself wrote "
             "(vendored schema): nothing to audit",
             "compactions": "Crush's own data would answer, but no Crush client can write it here: its source "
                            "(charmbracelet/crush internal/agent/agent.go, nightly of 2026-08-21: Summarize) "
                            "creates an assistant message with is_summary_message, names it in "
                            "sessions.summary_message_id and only cuts the list it sends from that message on "
                            "(getSessionMessages), deleting no earlier message (its one Delete drops a cancelled "
                            "summary); the npm package @charmland/crush 0.96.1 fetches its binary in a "
                            "postinstall download (install.js) that cannot run offline, and the sample "
                            "examples/crush-home is built from the vendored SQL (tests/crush), not by the "
                            "client: no summary row a real client wrote to read",
             "plans": "Crush keeps a session's todo list in `sessions.todos` (TEXT, migration "
                      "20250812000000_add_todos_to_sessions.sql: the current list only, no history of updates); "
                      "its JSON shape is not in the vendored sources (tests/crush/vendor holds the SQL only) and no "
                      "Crush client can run here to write one: not read"}

    def record_images(self, ref: SessionRef, record: Record) -> list:
        """A message's ``binary`` part (an attachment: ``Path``, ``MIMEType``, ``Data`` -- Go's
        ``[]byte``, base64 in JSON) and an ``image_url`` part holding a data URL (a URL elsewhere: no
        bytes on disk)."""
        p = record.raw if isinstance(record.raw, dict) else None
        if p is None or record.native not in ("part/binary", "part/image_url"):
            return []
        from .artifacts import RecordImage, data_url

        data = _d(p.get("data"))
        carrier = "tool_result" if record.role == "tool" else "block"
        if record.native == "part/binary":
            mt = _s(data.get("MIMEType"))
            if mt is not None and not mt.startswith("image/"):
                return []
            b64 = data.get("Data") if isinstance(data.get("Data"), str) else None
            return [RecordImage(carrier, mt, b64, "base64" if b64 is not None else None, path=_s(data.get("Path")))]
        url = _s(data.get("url")) or ""
        mt, b64 = data_url(url)
        return [RecordImage(carrier, mt, b64, "base64" if b64 is not None else ("url" if url else None))]

    def locate(self, explicit: str | None = None, home: str | None = None,
               env: Mapping[str, str] | None = None) -> Root:
        env = os.environ if env is None else env
        if explicit:
            return Root(Path(explicit).expanduser(), self.home_flag, True)
        if home:
            return Root(Path(home).expanduser() / self.default_rel, "--home", True)
        if env.get("CRUSH_GLOBAL_DATA"):
            return Root(Path(env["CRUSH_GLOBAL_DATA"]).expanduser(), "CRUSH_GLOBAL_DATA")
        if env.get("XDG_DATA_HOME"):
            return Root(Path(env["XDG_DATA_HOME"]).expanduser() / "crush", "XDG_DATA_HOME")
        return Root(Path.home() / self.default_rel, "default")

    # ------------------------------------------------------------------ which
    def projects(self, root: Path, problems: list[Problem]) -> list[dict] | None:
        """projects.json entries with the database each resolves to (None: file unreadable)."""
        pj = root / "projects.json"
        try:
            data = orjson.loads(pj.read_bytes())
        except FileNotFoundError:
            return []
        except (OSError, orjson.JSONDecodeError) as e:
            problems.append(Problem(str(pj), f"cannot read projects.json: {e}"))
            return None
        items = _d(data).get("projects")
        if not isinstance(items, list):
            problems.append(Problem(str(pj), "projects.json has no projects list"))
            return None
        out = []
        for it in items:
            it = _d(it)
            path = _s(it.get("path"))
            dd = _s(it.get("data_dir")) or (str(Path(path) / ".crush") if path else None)
            if not dd:
                problems.append(Problem(str(pj), "a projects.json entry has neither path nor data_dir"))
                continue
            ddp = Path(dd)
            if not ddp.is_absolute() and path:
                ddp = Path(path) / ddp
            db, moved = ddp / "crush.db", None
            if not db.exists():
                found = self._relocate(root, ddp)
                if found is not None:
                    db, moved = found / "crush.db", str(ddp)
            out.append({"path": path, "data_dir": str(db.parent), "db": db, "relocated_from": moved,
                        "last_accessed": it.get("last_accessed")})
        # Crush's own server workspace lives in the global dir itself
        for extra in (root / ".crush" / "crush.db", root / "crush.db"):
            if extra.exists() and all(o["db"] != extra for o in out):
                out.append({"path": str(root), "data_dir": str(extra.parent), "db": extra, "relocated_from": None,
                            "last_accessed": None})
        return out

    @staticmethod
    def _relocate(root: Path, recorded: Path) -> Path | None:
        """A data dir recorded at a path that is gone: the same tail of path under the global dir or
        its parent (longest tail first; at least ``<project>/.crush``)."""
        parts = recorded.parts[1:] if recorded.is_absolute() else recorded.parts
        for k in range(len(parts), 1, -1):
            tail = Path(*parts[-k:])
            for base in (root, root.parent):
                cand = base / tail
                if (cand / "crush.db").is_file():
                    return cand
        return None

    def discover(self, root: Root) -> Discovery:
        if root.path is None:
            return Discovery([], self.coverage(root, "not_looked", reason="no data dir given"))
        if not root.path.exists():
            return Discovery([], self.coverage(root, "absent", 0, reason=f"{root.path} does not exist"))
        problems: list[Problem] = []
        projects = self.projects(root.path, problems)
        if projects is None:
            return Discovery([], self.coverage(root, "unreadable", None, problems[-1].why), problems)
        if not projects:
            return Discovery([], self.coverage(root, "absent", 0, reason="no projects.json entries and no crush.db"),
                             problems)
        refs: list[SessionRef] = []
        failed: list[tuple[str, str]] = []
        missing = 0
        seen: set[Path] = set()
        for pr in projects:
            db = pr["db"]
            if db in seen:
                continue
            seen.add(db)
            if not db.exists():
                missing += 1
                problems.append(Problem(str(db), "listed in projects.json but absent (project moved or removed)"))
                continue
            try:
                refs += self._db_sessions(db, pr)
            except sqlite_ro.StoreError as e:
                problems.append(Problem(str(db), e.reason))
                failed.append((e.state, f"{db}: {e.reason}"))
        if failed:
            state = "unknown_format" if all(s == "unknown_format" for s, _ in failed) else "unreadable"
            reason = "; ".join(r for _, r in failed)
            if refs:
                reason += f" ({len(refs)} sessions from the other projects are listed)"
            return Discovery(refs, self.coverage(root, state, None, reason), problems)  # type: ignore[arg-type]
        reason = None
        if missing:
            reason = (f"lower bound: {missing} project(s) in projects.json have no crush.db at the recorded path "
                      "or under this data dir")
        moved = sum(1 for p in projects if p["relocated_from"])
        if moved:
            reason = ((reason + "; ") if reason else "") + (
                f"{moved} project data dir(s) found by path tail under {root.path} (moved corpus)")
        return Discovery(refs, self.coverage(root, "ok", len(refs), reason), problems)

    def _cons(self) -> sqlite_ro.Connections:
        c = self.__dict__.get("_connections")
        if c is None:
            c = self.__dict__["_connections"] = sqlite_ro.Connections()
        return c

    def _db_sessions(self, db: Path, pr: dict) -> list[SessionRef]:
        con, cols = self._cons().get(db, NEED)
        if cols is None:
            return []  # created, not yet migrated
        try:
            have = [c for c in OPTIONAL_SESSION if c in cols["sessions"]]
            names = ["id", "parent_session_id", "title", "created_at", "updated_at", *have]
            sel = ", ".join(f'"{c}"' for c in names)
            rows = sqlite_ro.retry(lambda: con.execute(f"SELECT {sel} FROM sessions ORDER BY created_at, rowid").fetchall(), db)
        except sqlite_ro.StoreError:
            raise
        except Exception as e:
            raise sqlite_ro.classify(e, db) from e
        refs = []
        for row in rows:
            r = dict(zip(names, row))
            sid = r["id"]
            if not isinstance(sid, str):
                continue
            kind = "title" if sid.startswith("title-") else "task" if "$$" in sid else "main"
            refs.append(SessionRef(
                PROVIDER, sid, [db], project=pr["path"], project_source="projects.json",
                first_at=iso_epoch(r["created_at"]), last_at=iso_epoch(r["updated_at"]), size=None,
                title=r["title"] if isinstance(r["title"], str) else None,
                parent_session_id=r["parent_session_id"] or None, version=None,
                helper="title generation" if kind == "title" else None,
                extra={"store": "crush.db", "db_path": str(db), "data_dir": pr["data_dir"],
                       "relocated_from": pr["relocated_from"], "session_kind": kind,
                       "message_count": r.get("message_count"),
                       "last_prompt_tokens": r.get("prompt_tokens"),
                       "last_completion_tokens": r.get("completion_tokens"),
                       "recorded_cost": r.get("cost"), "summary_message_id": r.get("summary_message_id")}))
        return refs

    # ------------------------------------------------------------------ how
    def read(self, ref: SessionRef, report: ReadReport, *, raw: bool = False) -> Iterator[Record]:
        db = Path(ref.extra.get("db_path") or ref.paths[0])
        try:
            con, cols = self._cons().get(db, NEED)
        except sqlite_ro.StoreError as e:
            report.problems.append(Problem(str(db), e.reason))
            return
        report.files += 1
        if ref.extra.get("relocated_from"):
            report.notes.append(f"{ref.session_id}: projects.json records {ref.extra['relocated_from']} (absent); "
                                f"read from {db.parent}, found by the path's tail under the data dir")
        if cols is None:
            return
        try:
            with sqlite_ro.snapshot(con, db):
                yield from _Session(ref, report, str(db), raw).records(con, db, cols)
        except sqlite_ro.StoreError as e:
            report.problems.append(Problem(str(db), e.reason))
        except Exception as e:
            report.problems.append(Problem(str(db), sqlite_ro.classify(e, db).reason))

    # ------------------------------------------------------------------ search's prefilter
    def rule_out_rows(self, refs: list[SessionRef], needles: list[str] | None, ci: bool,
                      kinds: frozenset[str]) -> list[bool]:
        """For each ref: True when none of its session's ``messages.parts`` holds a needle, so no
        record can match (search/gate.py's guarantee at row level: outside ``meta``, whose
        texts the reader composes or takes from the files tables, a record's matchable text is JSON
        string values of its message's ``parts``; Go's encoding/json leaves printable ASCII as is
        but ``<``, ``>`` and ``&``, written ``\\u003c`` etc., so a needle holding one is not gated).
        Never True for a case-insensitive or ``meta`` query or a database that fails."""
        if ci or not needles or "meta" in kinds or any(c in n for n in needles for c in "<>&"):
            return [False] * len(refs)
        return sqlite_ro.rule_out_by_db(refs, "crush.db", lambda db: self._sessions_holding(db, list(needles)))

    def _sessions_holding(self, db: Path, needles: list[str]) -> set:
        con, cols = self._cons().get(db, NEED)
        if cols is None:
            raise sqlite_ro.StoreError("unknown_format", "not migrated")
        with sqlite_ro.snapshot(con, db):
            return {r[0] for r in sqlite_ro.retry(lambda: con.execute(
                f"SELECT DISTINCT session_id FROM messages WHERE {sqlite_ro.instr_any('parts', len(needles))}",
                needles).fetchall(), db)}

    def change_token(self, ref: SessionRef) -> str | None:
        """The session's row, and for each of its ``messages`` the id, ``updated_at`` (Crush
        stamps it on every update) and parts length, its ``files`` rows (id, version, update time,
        content length) and ``read_files`` rows; None when the database cannot be read."""
        db = Path(ref.extra.get("db_path") or ref.paths[0])
        sid = ref.session_id
        try:
            con, cols = self._cons().get(db, NEED)
            if cols is None:
                return None
            mu = "updated_at" if "updated_at" in cols["messages"] else "NULL"
            qs = [("SELECT * FROM sessions WHERE id = ?", (sid,)),
                  (f"SELECT id, {mu}, length(parts) FROM messages WHERE session_id = ? ORDER BY rowid", (sid,))]
            fc = sqlite_ro.columns(con, "files")
            if {"id", "session_id", "content"} <= fc:
                fu = "updated_at" if "updated_at" in fc else "NULL"
                fv = "version" if "version" in fc else "NULL"
                qs.append((f"SELECT id, {fv}, {fu}, length(content) FROM files WHERE session_id = ? ORDER BY rowid", (sid,)))
            if "session_id" in sqlite_ro.columns(con, "read_files"):
                qs.append(("SELECT * FROM read_files WHERE session_id = ? ORDER BY rowid", (sid,)))
            return sqlite_ro.rows_signature(con, db, qs)
        except Exception:  # noqa: BLE001 - cannot tell: read it
            return None

    # ------------------------------------------------------------------ live state (crush_live.py)
    def live_state(self, ref: SessionRef, world):
        """The data-dir lock (``crush.lock``, /proc/locks), the last message's finish part and its tool
        calls' results, the task sessions (crush_live.py)."""
        from . import crush_live

        return crush_live.live_state(self, ref, world)

    def whoami(self, env, world):
        """``$CRUSH_SESSION_ID`` (hook commands only); ``CRUSH=1`` in a shell tool names none."""
        from . import crush_live

        return crush_live.whoami(env, world)

    def subagents(self, ref: SessionRef, children, world, files: bool = False):
        """Task sessions joined to the agent-tool call their id names."""
        from . import crush_live

        return crush_live.subagents(self, ref, children, world)

    def footprint(self, ref: SessionRef) -> list[Path]:
        """Rows inside a project's shared crush.db: no file belongs to one session alone."""
        return []


class _Session:
    def __init__(self, ref: SessionRef, report: ReadReport, path: str, raw: bool):
        self.ref = ref
        self.sid = ref.session_id
        self.report = report
        self.path = path
        self.raw = raw
        self.turn = 0
        self.is_child = bool(ref.parent_session_id)

    def rec(self, locator: str, role: str, kind: str, native: str, instant: str | None, obj: Any, **kw: Any) -> Record:
        self.report.records += 1
        return Record(PROVIDER, self.sid, locator, role, kind, native, path=self.path, instant=instant,  # type: ignore[arg-type]
                      turn=self.turn or None, raw=obj if self.raw else None, **kw)

    def records(self, con, db: Path, cols: dict) -> Iterator[Record]:
        """Messages in (created_at, rowid) order with the file-history rows placed where they belong:
        right after the write/edit tool result for the same path (Crush writes the history while the
        tool runs), else by their timestamp (seconds: rows of one second can only be ordered so)."""
        mcols = cols["messages"]
        opt = [c for c in ("model", "provider", "finished_at", "is_summary_message") if c in mcols]
        names = ["id", "role", "parts", "created_at", *opt]
        files = self._files(con)
        by_path: dict[str, list[tuple]] = {}
        for f in files:
            by_path.setdefault(f[3], []).append(f)
        done: set[str] = set()
        calls: dict[str, tuple[str, str | None]] = {}  # call id -> (path, content it writes)
        fi = 0
        msgs = con.execute(f"SELECT {', '.join(names)} FROM messages WHERE session_id = ? ORDER BY created_at, rowid",
                           (self.sid,))
        for row in msgs:
            m = dict(zip(names, row))
            while fi < len(files) and (files[fi][0] or 0) < (m["created_at"] or 0):
                if files[fi][2] not in done:
                    done.add(files[fi][2])
                    yield from self._file(files[fi])
                fi += 1
            for r in self._message(m):
                yield r
                if r.kind == "tool_call" and isinstance(r.tool_input, dict) and r.call_id \
                        and isinstance(r.tool_input.get("file_path"), str):
                    c = r.tool_input.get("content")
                    calls[r.call_id] = (r.tool_input["file_path"], c if r.tool_name == "write" and isinstance(c, str) else None)
                elif r.kind == "tool_result" and r.call_id in calls and not r.is_error:
                    path, content = calls.pop(r.call_id)
                    for f in by_path.get(path, []):
                        if f[2] in done:
                            continue
                        done.add(f[2])
                        yield from self._file(f)
                        changed = f[6] and f[5] != f[4]
                        if changed and (content is None or f[4] == content):
                            break
        for f in files:
            if f[2] not in done:
                yield from self._file(f)
        yield from self._reads(con)

    def _reads(self, con) -> Iterator[Record]:
        """``read_files`` (Crush's file tracker: one row per path the session read or wrote, upserted
        to the LAST read; the path relative to Crush's working directory): meta records at the end."""
        rcols = sqlite_ro.columns(con, "read_files")
        if not {"session_id", "path", "read_at"} <= rcols:
            return
        for path, read_at in con.execute("SELECT path, read_at FROM read_files WHERE session_id = ? "
                                         "ORDER BY read_at, rowid", (self.sid,)):
            yield self.rec(f"read_files:{path}", "harness", "meta", "read_files", iso_epoch(read_at),
                           {"path": path, "read_at": read_at}, text=path if isinstance(path, str) else None)

    # file history ---------------------------------------------------------------
    def _files(self, con) -> list[tuple]:
        fcols = sqlite_ro.columns(con, "files")
        if not {"id", "session_id", "path", "content", "version", "created_at"} <= fcols:
            if fcols:
                self.report.notes.append("files table lacks columns this reader needs: file history not read")
            return []
        rows = con.execute("SELECT created_at, version, id, path, content FROM files WHERE session_id = ? "
                           "ORDER BY version, created_at, rowid", (self.sid,)).fetchall()
        prev: dict[str, str] = {}
        out = []
        for created, version, fid, path, content in rows:
            before = prev.get(path)
            out.append((created, version, fid, path, content, before, path in prev))
            prev[path] = content
        out.sort(key=lambda r: (r[0] or 0, r[1]))
        return out

    def _file(self, row: tuple) -> Iterator[Record]:
        created, version, fid, path, content, before, has_before = row
        self.report.bytes += len(content or "")
        obj = {"id": fid, "path": path, "version": version, "created_at": created, "content": content}
        inst = iso_epoch(created)
        if not has_before:
            yield self.rec(f"files:{fid}", "harness", "meta", "files/baseline", inst, obj, text=path)
            return
        if before == content:
            yield self.rec(f"files:{fid}", "harness", "meta", "files/unchanged", inst, obj, text=path)
            return
        action = "create" if before == "" else "update"
        fc = FileChange(str(path), action, new_content=content if isinstance(content, str) else None,  # type: ignore[arg-type]
                        old_content=before if isinstance(before, str) else None)
        yield self.rec(f"files:{fid}", "harness", "meta", "files/version", inst, obj, text=path, file_changes=(fc,))

    # messages ----------------------------------------------------------------------
    def _message(self, m: dict) -> Iterator[Record]:
        mid = m["id"]
        role = ROLES.get(m["role"])
        raw_parts = m["parts"]
        self.report.bytes += len(raw_parts or "")
        inst = iso_epoch(m["created_at"])
        model = m.get("model") if m["role"] == "assistant" else None
        parts = _json(raw_parts)
        if role is None:
            native = f"messages/{m['role']}"
            self.report.unknown_kinds[native] += 1
            yield self.rec(f"messages:{mid}", "harness", "unknown", native, inst, m, model=model)
            return
        if not isinstance(parts, list):
            self.report.malformed_lines.append(f"{self.path}:messages:{mid}")
            yield self.rec(f"messages:{mid}", "harness", "unknown", "messages/parts-unparsed", inst, m)
            self.report.unknown_kinds["messages/parts-unparsed"] += 1
            return
        if not parts:
            yield self.rec(f"messages:{mid}", role, "meta", f"messages/{m['role']}", inst, m, model=model,
                           text="(no parts: the step wrote nothing yet)")
            return
        prompt_taken = False
        summary = bool(m.get("is_summary_message"))
        for i, p in enumerate(parts):
            for r in self._part(f"messages:{mid}#{i}", role, p, inst, model, prompt_taken, summary):
                if r.kind == "prompt" or (self.is_child and r.role == "user" and r.native == "part/text"):
                    prompt_taken = True  # one turn opener per message (a child's: the delegated task)
                yield r

    def _part(self, loc: str, role: str, p: Any, inst: str | None, model: str | None, prompt_taken: bool,
              summary: bool) -> Iterator[Record]:
        p = _d(p)
        typ = p.get("type")
        data = _d(p.get("data"))
        native = f"part/{typ}" if isinstance(typ, str) else "part/?"
        if typ == "text":
            txt = _s(data.get("text"))
            if role == "user" and not self.is_child and not prompt_taken:
                self.turn += 1
                yield self.rec(loc, "user", "prompt", native, inst, p, text=txt)
            elif role == "user":
                if self.is_child and not prompt_taken:  # the task its parent delegated opens a turn
                    self.turn += 1
                yield self.rec(loc, "user", "meta" if self.is_child else "message", native, inst, p, text=txt)
            else:
                yield self.rec(loc, role, "message", native + ("/summary" if summary else ""), inst, p, text=txt,
                               model=model)
        elif typ == "reasoning":
            yield self.rec(loc, "assistant", "reasoning", native, inst, p, text=_s(data.get("thinking")), model=model)
        elif typ == "tool_call":
            inp = data.get("input")
            parsed = _json(inp)
            yield self.rec(loc, "assistant", "tool_call", native, inst, p, tool_name=_s(data.get("name")),
                           tool_input=parsed if parsed is not None else inp, call_id=_s(data.get("id")), model=model)
        elif typ == "tool_result":
            name = _s(data.get("name"))
            content = _s(data.get("content"))
            code = _bash_exit(name, content, data)
            flag = data.get("is_error")
            # the client's failure flag or a non-zero exit it wrote (docs/providers.md "What is_error means")
            err = True if flag is True or (code is not None and code != 0) else (False if flag is False else None)
            yield self.rec(loc, "tool", "tool_result", native, inst, p, tool_name=name,
                           call_id=_s(data.get("tool_call_id")), text=content, is_error=err, exit_code=code)
        elif typ == "finish":
            reason = _s(data.get("reason"))
            msg = _s(data.get("message"))
            yield self.rec(loc, "harness", "meta", native, inst, p, text=(reason or "") + (f": {msg}" if msg else ""),
                           is_error=True if reason in ("error", "content_filter") else None)
        elif typ == "shell_command":
            ex = data.get("exit_code")
            yield self.rec(loc, "user", "tool_call", native, inst, p, tool_name="shell_command",
                           tool_input={"command": data.get("command")}, text=_s(data.get("output")),
                           exit_code=ex if isinstance(ex, int) and not isinstance(ex, bool) else None)
        elif typ == "image_url":
            url = _s(data.get("url")) or ""
            yield self.rec(loc, role, "meta", native, inst, p,
                           text=url if not url.startswith("data:") else "(inline image data)")
        elif typ == "binary":
            b64 = data.get("Data")
            size = (len(b64) * 3) // 4 if isinstance(b64, str) else None
            yield self.rec(loc, role, "meta", native, inst, p,
                           text=f"{_s(data.get('Path')) or '(no path)'} ({_s(data.get('MIMEType')) or '?'}"
                                + (f", about {size} bytes)" if size is not None else ")"))
        else:
            self.report.unknown_kinds[native] += 1
            yield self.rec(loc, "harness", "unknown", native, inst, p)


def _bash_exit(name: str | None, content: str | None, data: dict) -> int | None:
    """Crush's bash tool puts no exit code in the record, only text: ``formatOutput`` ends the output
    with ``Exit code N`` when N != 0. Without that trailer a run with completion metadata (start and
    end times, not backgrounded, not aborted) exited 0; anything else stays unknown."""
    if name != "bash" or content is None:
        return None
    m = _EXIT.search(content)
    if m:
        return int(m.group(1))
    meta = _d(_json(data.get("metadata")))
    if meta.get("end_time") and not meta.get("background") and not data.get("is_error") \
            and "Command was aborted" not in content:
        return 0
    return None
