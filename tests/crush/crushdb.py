"""Build Crush databases the way Crush does, for testing the reader without the Crush binary.

Crush cannot run here (see vendor/SOURCE.md), so test databases are made from Crush's OWN source:

* the schema comes from its goose migrations (vendor/migrations, applied in version order, Up
  sections only, recorded in ``goose_db_version`` as goose does), with the pragmas of its
  ``internal/db/connect.go`` (WAL journal, ...);
* rows are written only through its sqlc queries (vendor/sql/*.sql, run by name: CreateSession,
  CreateMessage, UpdateMessage, CreateFile, UpdateTitleAndUsage, ...), so timestamps come from
  the same ``strftime('%s', 'now')`` (seconds) Crush uses;
* message ``parts`` are marshalled the way ``internal/message/message.go`` ``marshalParts`` does:
  ``[{"type": ..., "data": <the Go struct as encoding/json writes it>}]`` with the JSON tags of
  ``internal/message/content.go`` (``BinaryContent`` has no tags: ``Path``, ``MIMEType``, ``Data``
  as base64), Go's HTML-safe escaping of ``<``, ``>``, ``&``;
* the service logic that decides what gets written is ported line by line where it matters:
  ``message.Create`` appends ``Finish{Reason: "stop"}`` to every non-assistant message,
  ``message.Update`` sets ``finished_at`` from the finish part, ``history`` stores a file's
  content before the first change (version 0) and after each change (versions per path across
  sessions), ``session.CreateTaskSession`` names an agent-tool child ``<message id>$$<call id>``,
  and ``updateSessionUsage`` keeps the LAST step's prompt/completion tokens and sums the cost.
"""
from __future__ import annotations

import base64
import json
import re
import sqlite3
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VENDOR = Path(__file__).resolve().parent / "vendor"
SOURCE_COMMIT = "37f36e93824e5c4f892e4a817f7f628e2682fe14"

# internal/db/connect.go
PRAGMAS = {"foreign_keys": "ON", "journal_mode": "WAL", "page_size": "4096", "temp_store": "MEMORY",
           "cache_size": "-8000", "synchronous": "NORMAL", "secure_delete": "ON", "busy_timeout": "30000"}


def _up_section(sql: str) -> str:
    up = sql.split("-- +goose Down")[0]
    up = up.split("-- +goose Up", 1)[1]
    return up.replace("-- +goose StatementBegin", "").replace("-- +goose StatementEnd", "")


def migrations() -> list[tuple[int, str]]:
    out = []
    for f in sorted((VENDOR / "migrations").glob("*.sql")):
        out.append((int(f.name.split("_", 1)[0]), _up_section(f.read_text())))
    return out


def queries() -> dict[str, str]:
    """sqlc query name -> SQL, from vendor/sql/*.sql (``-- name: X :one|:many|:exec`` blocks)."""
    out: dict[str, str] = {}
    for f in sorted((VENDOR / "sql").glob("*.sql")):
        for block in re.split(r"^-- name: ", f.read_text(), flags=re.M)[1:]:
            head, _, body = block.partition("\n")
            out[head.split()[0]] = body.strip().rstrip(";")
    return out


def create_db(data_dir: Path) -> sqlite3.Connection:
    """``<data_dir>/crush.db`` with Crush's pragmas and every migration applied (goose bookkeeping)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(data_dir / "crush.db", isolation_level=None)
    for k, v in PRAGMAS.items():
        con.execute(f"PRAGMA {k} = {v}")
    # goose's sqlite3 dialect: its version table
    con.execute("CREATE TABLE IF NOT EXISTS goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                "version_id INTEGER NOT NULL, is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')))")
    con.execute("INSERT INTO goose_db_version (version_id, is_applied) VALUES (0, 1)")
    for version, up in migrations():
        con.executescript("BEGIN;" + up + ";COMMIT;")
        con.execute("INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)", (version,))
    return con


# ----------------------------------------------------------------------------- parts (content.go)

def go_json(obj: Any) -> str:
    """encoding/json output: compact, HTML-safe (<, >, & and U+2028/9 escaped), non-ASCII as is."""
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return (s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def text(t: str) -> dict:
    return {"type": "text", "data": {"text": t}}


def reasoning(thinking: str, started_at: int = 0, finished_at: int = 0, signature: str = "") -> dict:
    d: dict[str, Any] = {"thinking": thinking, "signature": signature, "thought_signature": "", "tool_id": "",
                         "responses_data": None}
    if started_at:
        d["started_at"] = started_at
    if finished_at:
        d["finished_at"] = finished_at
    return {"type": "reasoning", "data": d}


def image_url(url: str, detail: str = "") -> dict:
    d = {"url": url}
    if detail:
        d["detail"] = detail
    return {"type": "image_url", "data": d}


def binary(path: str, mime: str, data: bytes) -> dict:
    return {"type": "binary", "data": {"Path": path, "MIMEType": mime, "Data": base64.b64encode(data).decode()}}


def tool_call(call_id: str, name: str, inp: dict | str, finished: bool = True) -> dict:
    return {"type": "tool_call", "data": {"id": call_id, "name": name,
                                          "input": inp if isinstance(inp, str) else go_json(inp),
                                          "provider_executed": False, "finished": finished}}


def tool_result(call_id: str, name: str, content: str, metadata: dict | None = None, is_error: bool = False,
                data: str = "", mime: str = "") -> dict:
    return {"type": "tool_result", "data": {"tool_call_id": call_id, "name": name, "content": content,
                                            "data": data, "mime_type": mime,
                                            "metadata": go_json(metadata) if metadata is not None else "",
                                            "is_error": is_error}}


def finish(reason: str, t: int = 0, message: str = "", details: str = "") -> dict:
    d: dict[str, Any] = {"reason": reason, "time": t}
    if message:
        d["message"] = message
    if details:
        d["details"] = details
    return {"type": "finish", "data": d}


def shell_command(command: str, output: str, exit_code: int) -> dict:
    return {"type": "shell_command", "data": {"command": command, "output": output, "exit_code": exit_code}}


# ----------------------------------------------------------------------------- services

@dataclass
class Message:
    id: str
    session_id: str
    role: str
    parts: list[dict] = field(default_factory=list)


class Crush:
    """The slice of Crush's session/message/history services a scenario needs, over its queries."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con
        self.q = queries()

    def run(self, name: str, *args: Any) -> list[tuple]:
        return self.con.execute(self.q[name], args).fetchall()

    def now(self) -> int:
        return int(self.con.execute("SELECT strftime('%s', 'now')").fetchone()[0])

    # session.Service
    def create_session(self, title: str, sid: str | None = None, parent: str | None = None) -> str:
        sid = sid or str(uuid.uuid4())
        self.run("CreateSession", sid, parent, title, 0, 0, 0, 0.0)
        return sid

    def create_task_session(self, message_id: str, call_id: str, parent: str, title: str) -> str:
        return self.create_session(title, f"{message_id}$${call_id}", parent)

    def create_title_session(self, parent: str) -> str:
        return self.create_session("Generate a title", f"title-{parent}", parent)

    def step_usage(self, sid: str, prompt_tokens: int, completion_tokens: int, cost: float) -> None:
        """agent.updateSessionUsage + sessions.Save: last step's tokens, cost summed."""
        row = self.con.execute("SELECT title, cost, summary_message_id, todos FROM sessions WHERE id = ?", (sid,)).fetchone()
        self.run("UpdateSession", row[0], prompt_tokens, completion_tokens, row[2], row[1] + cost, row[3], sid)

    # message.Service
    def create_message(self, sid: str, role: str, parts: list[dict], model: str = "mock-model",
                       provider: str = "mock") -> Message:
        if role != "assistant":
            parts = parts + [finish("stop")]
        mid = str(uuid.uuid4())
        self.run("CreateMessage", mid, sid, role, go_json(parts), model, provider if provider else None, 0)
        return Message(mid, sid, role, list(parts))

    def update_message(self, m: Message) -> None:
        fin = next((p["data"]["time"] for p in m.parts if p["type"] == "finish"), None)
        self.run("UpdateMessage", go_json(m.parts), fin, m.id)

    # history.Service
    def file_create(self, sid: str, path: str, content: str, version: int = 0) -> None:
        self.run("CreateFile", str(uuid.uuid4()), sid, path, content, version)

    def file_create_version(self, sid: str, path: str, content: str) -> None:
        rows = self.con.execute(self.q["ListFilesByPath"], (path,)).fetchall()
        if not rows:
            return self.file_create(sid, path, content)
        cols = [d[0] for d in self.con.execute(self.q["ListFilesByPath"], (path,)).description]
        latest = dict(zip(cols, rows[0]))
        self.file_create(sid, path, content, latest["version"] + 1)

    def file_latest(self, sid: str, path: str) -> str | None:
        r = self.con.execute(self.q["GetFileByPathAndSession"], (path, sid)).fetchone()
        return None if r is None else r[3]

    def record_write(self, sid: str, path: str, old: str, new: str) -> None:
        """tools/write.go and edit.go commitFileChange: history before the first change, then after."""
        prev = self.file_latest(sid, path)
        if prev is None:
            self.file_create(sid, path, old)
        if (prev or "") != old:
            self.file_create_version(sid, path, old)
        self.file_create_version(sid, path, new)

    def record_read(self, sid: str, path: str, cwd: Path) -> None:
        """filetracker.RecordRead: the path relative to Crush's working directory, upserted."""
        import os
        self.run("RecordFileRead", sid, os.path.relpath(os.path.normpath(path), cwd))

    def record_new_file_edit(self, sid: str, path: str, content: str) -> None:
        """tools/edit.go createNewFile: an empty version 0, then the content."""
        self.file_create(sid, path, "")
        self.file_create_version(sid, path, content)
