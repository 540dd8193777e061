"""`export parquet`: every record of every session as a Parquet dataset partitioned by provider and
date (docs/export.md "parquet": the schema, its version, and the same query in DuckDB and Spark SQL).

Layout: ``DIR/records/provider=<p>/date=<YYYY-MM-DD>/<session>.<fp12>-<rv8>.parquet`` (hive
partitioning; ``date`` is the UTC day of the record's instant, ``unknown`` for a record with none).
One file per session and day, so a session's new version replaces exactly its own files: the
superseded files move to ``DIR/superseded/`` (the dataset never holds two versions of a session),
and the ledger records each file with the reading's fingerprint.

Bounded memory: rows stream into row groups of at most ``ROWS_PER_GROUP`` rows or
``BYTES_PER_GROUP`` bytes of text (``pyarrow.parquet.ParquetWriter.write_batch``); pyarrow is
imported only here.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson

from ..providers.base import Provider, ReadReport, Record, SessionRef
from . import keep
from .source import read_session

SCHEMA_NAME = "sessionsift.records"
SCHEMA_VERSION = 1
ROWS_PER_GROUP = 8192
BYTES_PER_GROUP = 32 << 20
COLUMNS: list[tuple[str, str, str]] = [
    # name, arrow type, meaning (docs/export.md is generated from the same words)
    ("schema_version", "int16", "this schema's version (1)"),
    ("session_id", "string", "the session"),
    ("project", "string", "the working directory the session recorded (null: none recorded)"),
    ("parent_session_id", "string", "for a child/subagent session: the session that spawned it"),
    ("lane", "string", "main, a Claude Code subagent lane (agent-<id>), Gemini's rewound"),
    ("is_subagent", "bool", "a subagent lane or a child session"),
    ("locator", "string", "back to the bytes or the row: L12, L12#1, part:prt_..."),
    ("path", "string", "the file holding the record (transcript or database)"),
    ("line", "int64", "1-based physical line (null for a database row)"),
    ("byte_offset", "int64", "offset of the line in the file (a .jsonl.zst rollout: in its decompressed stream)"),
    ("record_bytes", "int64", "bytes of the record's line (null for a row)"),
    ("uuid", "string", "the record's own id where it has one (Claude Code uuid, a message/part id)"),
    ("instant", "timestamp[us, tz=UTC]", "when it was written, where recorded"),
    ("role", "string", "user, assistant, system, tool, harness"),
    ("kind", "string", "prompt, message, reasoning, tool_call, tool_result, meta, unknown"),
    ("native", "string", "the provider's own type (assistant/text, response_item/function_call, part/tool)"),
    ("labels", "list<string>", "Claude Code's labels (docs/labels.md); other providers: [kind]"),
    ("turn", "int64", "turn number (Claude Code: the deep model's)"),
    ("tool_name", "string", "tool of a call"),
    ("call_id", "string", "pairs a tool_call with its tool_result"),
    ("exit_code", "int64", "a command's exit code where recorded (null: unknown, never 0 by default)"),
    ("is_error", "bool", "the call/result failed (null: unknown)"),
    ("model", "string", "model of an assistant record"),
    ("tokens_input", "int64", "input tokens not read from cache"),
    ("tokens_output", "int64", "output tokens (reasoning included)"),
    ("tokens_cache_read", "int64", "cache reads"),
    ("tokens_cache_write", "int64", "cache writes"),
    ("tokens_reasoning", "int64", "reasoning tokens"),
    ("tokens_total", "int64", "total as the provider wrote it"),
    ("tokens_dedup_key", "string", "records sharing a key repeat one usage object: take the max per key"),
    ("tokens_cumulative", "bool", "a running total (never summed)"),
    ("copy_of", "string", "locator of the record this one repeats (count it once: WHERE copy_of IS NULL)"),
    ("file_changes", "int32", "file changes the record carries"),
    ("text", "string", "the record's text as written"),
    ("text_bytes", "int64", "UTF-8 bytes of text"),
    ("tool_input", "string", "a call's input as JSON"),
    ("tool_input_bytes", "int64", "UTF-8 bytes of tool_input"),
]
PARTITIONS = [("provider", "string", "the reader (claude-code, codex, gemini-cli, opencode, crush, ...)"),
              ("date", "string", "UTC day of instant (YYYY-MM-DD), unknown when the record has none")]


def arrow_type(name: str):
    """The pyarrow type of a column type as COLUMNS names it (also used by sync's tables)."""
    import pyarrow as pa

    if name == "list<string>":
        return pa.list_(pa.string())
    if name.startswith("timestamp"):
        return pa.timestamp("us", tz="UTC")
    return {"string": pa.string(), "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(),
            "bool": pa.bool_(), "double": pa.float64()}[name]


def arrow_schema(columns: list[tuple[str, str, str]] | None = None, name: str = SCHEMA_NAME,
                 version: int = SCHEMA_VERSION):
    import pyarrow as pa

    return pa.schema([pa.field(n, arrow_type(ty)) for n, ty, _ in (COLUMNS if columns is None else columns)],
                     metadata={"sessionsift.schema": name, "sessionsift.schema_version": str(version)})


def record_batch(rows: list[dict], schema):
    """One Arrow record batch of `rows` (dicts keyed by the schema's names; text that is not valid
    UTF-8 -- lone surrogates from an invalid byte -- is replaced, never dropped)."""
    import pyarrow as pa

    cols = {n: [_scrub(r.get(n)) for r in rows] for n in schema.names}
    return pa.RecordBatch.from_pydict(cols, schema=schema)


def _instant(s: str | None) -> datetime | None:
    if not s:
        return None
    try:
        d = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None
    if d.tzinfo is None:
        d = d.replace(tzinfo=timezone.utc)
    return d.astimezone(timezone.utc)


def _uuid(r: Record) -> str | None:
    raw = r.raw
    if isinstance(raw, dict):
        for k in ("uuid", "id"):
            v = raw.get(k)
            if isinstance(v, str):
                return v
        p = raw.get("payload")
        if isinstance(p, dict) and isinstance(p.get("id"), str):
            return p["id"]
    if ":" in r.locator and not r.locator.startswith("L"):
        return r.locator.split(":", 1)[1].split("#", 1)[0]
    return None


def row_of(ref: SessionRef, r: Record, labels: tuple[str, ...]) -> tuple[str, dict]:
    inst = _instant(r.instant)
    tok = r.tokens
    ti = None
    if r.tool_input is not None:
        ti = r.tool_input if isinstance(r.tool_input, str) else orjson.dumps(r.tool_input, default=str).decode(
            "utf-8", "replace")
    text = r.text
    is_sub = r.lane != "main" or ref.is_subagent
    return (inst.strftime("%Y-%m-%d") if inst else "unknown"), {
        "schema_version": SCHEMA_VERSION, "session_id": ref.session_id, "project": ref.project,
        "parent_session_id": ref.session_id if r.lane != "main" and ref.parent_session_id is None else ref.parent_session_id,
        "lane": r.lane, "is_subagent": is_sub, "locator": r.locator, "path": r.path, "line": r.line,
        "byte_offset": r.offset, "record_bytes": r.length, "uuid": _uuid(r), "instant": inst, "role": r.role,
        "kind": r.kind, "native": r.native, "labels": list(labels), "turn": r.turn, "tool_name": r.tool_name,
        "call_id": r.call_id, "exit_code": r.exit_code, "is_error": r.is_error, "model": r.model,
        "tokens_input": tok.input if tok else None, "tokens_output": tok.output if tok else None,
        "tokens_cache_read": tok.cache_read if tok else None, "tokens_cache_write": tok.cache_write if tok else None,
        "tokens_reasoning": tok.reasoning if tok else None, "tokens_total": tok.total if tok else None,
        "tokens_dedup_key": tok.dedup_key if tok else None, "tokens_cumulative": tok.cumulative if tok else None,
        "copy_of": r.copy_of, "file_changes": len(r.file_changes), "text": text,
        "text_bytes": None if text is None else len(text.encode("utf-8", "surrogatepass")),
        "tool_input": ti, "tool_input_bytes": None if ti is None else len(ti.encode("utf-8", "surrogatepass")),
    }


def _scrub(v: Any) -> Any:
    if isinstance(v, str):
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            return v.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return v


@dataclass
class _Part:
    path: Path
    writer: Any
    rows: list[dict] = field(default_factory=list)
    nbytes: int = 0
    count: int = 0


@dataclass
class SessionParquet:
    files: dict[str, Path] = field(default_factory=dict)
    """date -> file written."""
    rows: int = 0
    report: ReadReport = field(default_factory=ReadReport)


def write_session(prov: Provider, ref: SessionRef, records_dir: Path, name: str) -> SessionParquet:
    """Stream one session's records into its per-day files (temp names until closed)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema()
    parts: dict[str, _Part] = {}
    out = SessionParquet()

    def flush(p: _Part) -> None:
        if p.rows:
            p.writer.write_batch(record_batch(p.rows, schema))
            p.rows.clear()
            p.nbytes = 0

    try:
        for r, labels in read_session(prov, ref, out.report, raw=True):
            day, row = row_of(ref, r, labels)
            r.raw = None
            p = parts.get(day)
            if p is None:
                d = records_dir / f"provider={ref.provider}" / f"date={day}"
                d.mkdir(parents=True, exist_ok=True)
                tmp = d / f".tmp-{name}"
                p = parts[day] = _Part(tmp, pq.ParquetWriter(str(tmp), schema, compression="zstd"))
            p.rows.append(row)
            p.count += 1
            p.nbytes += (row["text_bytes"] or 0) + (row["tool_input_bytes"] or 0)
            out.rows += 1
            if len(p.rows) >= ROWS_PER_GROUP or p.nbytes >= BYTES_PER_GROUP:
                flush(p)
        for day, p in parts.items():
            flush(p)
            p.writer.close()
            final = p.path.with_name(name)
            os.replace(p.path, final)
            out.files[day] = final
    except BaseException:
        for p in parts.values():
            try:
                p.writer.close()
            except Exception:  # noqa: BLE001
                pass
            try:
                os.unlink(p.path)
            except OSError:
                pass
        raise
    return out


@dataclass
class ParquetOutcome:
    ref: SessionRef
    status: str
    files: list[Path] = field(default_factory=list)
    rows: int | None = 0
    """Rows of the session in the dataset; None when a current session's ledger entry does not say."""
    version: int | None = None
    superseded: list[str] = field(default_factory=list)
    fingerprint: str | None = None
    fingerprint_kind: str | None = None
    reader_version: str | None = None
    why: str | None = None
    omissions: dict = field(default_factory=dict)


def export_parquet(pairs: Iterable[tuple[Provider, SessionRef]], out_dir: Path, *,
                   force: bool = False) -> Iterator[ParquetOutcome]:
    from .. import ledger

    out_dir = Path(out_dir)
    records_dir = out_dir / "records"
    for prov, ref in pairs:
        try:
            fp, how = keep.session_fingerprint(prov, ref)
            if fp is None:
                fp = keep.rows_fingerprint(prov, ref)
            rv = keep.reader_version(prov, "parquet", SCHEMA_VERSION, __file__)
        except Exception as exc:  # noqa: BLE001
            yield ParquetOutcome(ref, "failed", why=f"fingerprint failed: {type(exc).__name__}: {exc}")
            continue
        prior = keep.prior_versions(ref.provider, ref.session_id, "parquet", out_dir)
        same = [e for e in prior if e.get("fingerprint") == fp and e.get("reader_version") == rv]
        if same and not force and all(ledger.check_written(e)[0] for e in same
                                      if (e.get("extra") or {}).get("run") == (same[-1].get("extra") or {}).get("run")):
            last = same[-1]
            run = (last.get("extra") or {}).get("run")
            files = [Path(e["path"]) for e in same if (e.get("extra") or {}).get("run") == run]
            ex = last.get("extra") or {}
            n = ex.get("session_rows")
            v = ex.get("version")
            # what the ledger does not say is unknown (null), never 0
            yield ParquetOutcome(ref, "current", files, n if type(n) is int else None,
                                 v if type(v) is int else None, fingerprint=fp, fingerprint_kind=how,
                                 reader_version=rv)
            continue
        name = keep.version_name(ref.session_id, fp, rv, "parquet")
        try:
            sp = write_session(prov, ref, records_dir, name)
        except Exception as exc:  # noqa: BLE001
            yield ParquetOutcome(ref, "failed", fingerprint=fp, reader_version=rv,
                                 why=f"writing failed: {type(exc).__name__}: {exc}")
            continue
        new = {str(p.resolve()) for p in sp.files.values()}
        moved = _supersede(out_dir, prior, new)
        runs = {(e.get("extra") or {}).get("run") for e in prior}
        version = len(runs - {None}) + 1
        run = f"{name}"
        for day, p in sorted(sp.files.items()):
            ledger.record(kind="export", provider=ref.provider, session_id=ref.session_id, fingerprint=fp, path=p,
                          format="parquet", reader_version=rv,
                          extra={"version": version, "run": run, "date": day, "session_rows": sp.rows,
                                 "schema": f"{SCHEMA_NAME}/{SCHEMA_VERSION}", "superseded": moved,
                                 "omissions": sp.report.omissions()})
        yield ParquetOutcome(ref, "written", list(sp.files.values()), sp.rows, version, moved, fp, how, rv,
                             omissions=sp.report.omissions())


def _supersede(out_dir: Path, prior: list[dict], keep_paths: set[str]) -> list[str]:
    """Move a session's earlier files out of the dataset (into DIR/superseded/), so a query never
    counts two versions of one session."""
    moved = []
    root = (out_dir / "records").resolve()
    for e in prior:
        p = Path(e.get("path", ""))
        if str(p) in keep_paths or not p.is_file():
            continue
        try:
            rel = p.resolve().relative_to(root)
        except ValueError:
            continue
        dest = out_dir / "superseded" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(p), dest)
        moved.append(str(dest))
    return moved
