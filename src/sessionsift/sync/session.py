"""One session's rows, read by the library functions every local answer uses.

A session that changed is read whole (its records' labels and turns, and some readers' records,
can depend on what came after them), in three passes:

- records, tool calls and file changes (export's `row_of`, Claude Code's deep labels and turns),
  with `stats --shared`'s census of the session taken from the same reading
  (``providers.census.session_stats``);
- its usage events, before any merge, as `usage` gathers them (``usage.collect``: Claude Code's
  fast path, every other provider through its reader);
- the facts `list` prints for it (its provider's ``summarize``).

Append or rewrite: the rows of each (table, file) stream in reading order. The dataset holds the
first ``n`` rows of a stream with their digest; when the new reading's first ``n`` rows hash to
it, only the rows after them are written (an appended transcript, new rows in a database). When
any stream differs (a rewritten file, a row updated in place, a reader rule changed), every row
of the session is written again and its ``base_batch`` moves to this run: rows of earlier runs are
no longer current (dataset.py's views).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

import orjson

from ..providers.base import Provider, ReadReport, SessionRef

SPOOL_BYTES = 16 << 20


class Mismatch(Exception):
    """The new reading does not begin with the rows the dataset holds: rewrite the session."""


@dataclass
class Prev:
    """What the dataset holds of a session (its newest committed `sessions` row)."""

    batch: int
    base_batch: int
    token: str | None
    reader_version: str | None
    state: dict = field(default_factory=dict)


class _Gate:
    __slots__ = ("n", "want", "h", "count")

    def __init__(self, n: int, want: str | None):
        self.n, self.want = n, want
        self.h = hashlib.sha256(b"sessionsift-rows-v1\0")
        self.count = 0

    def feed(self, row: dict) -> bool:
        """Hash the row; True when it is new (after the prefix the dataset holds)."""
        b = orjson.dumps(row, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
        self.h.update(len(b).to_bytes(8, "little") + b)
        self.count += 1
        if self.count == self.n and self.h.hexdigest() != self.want:
            raise Mismatch()
        return self.count > self.n


class Sink:
    """Rows of one session on their way to the run's writer: with a prefix to keep, new rows are
    staged (spooled to disk past SPOOL_BYTES) until the whole session read as an append."""

    def __init__(self, writer, provider: str, prev_state: dict | None):
        self.writer, self.provider = writer, provider
        self.prev = prev_state or {}
        self.gates: dict[tuple[str, str], _Gate] = {}
        self.staged = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) if self.prev else None
        self.new_rows = 0

    def emit(self, table: str, key: str, date: str, row: dict) -> None:
        g = self.gates.get((table, key))
        if g is None:
            n, want = (self.prev.get(table) or {}).get(key, (0, None))
            g = self.gates[(table, key)] = _Gate(n, want)
        if not g.feed(row):
            return
        self.new_rows += 1
        if self.staged is None:
            self.writer.add(table, self.provider, date, row)
        else:
            pickle.dump((table, date, row), self.staged, protocol=pickle.HIGHEST_PROTOCOL)

    def count(self, table: str, key: str) -> int:
        """Rows of this (table, file) stream so far (the next row's position in it)."""
        g = self.gates.get((table, key))
        return 0 if g is None else g.count

    def finish(self) -> dict:
        """Check that every stream the dataset holds was read again in full; the new state."""
        for table, streams in self.prev.items():
            for key, (n, _d) in streams.items():
                g = self.gates.get((table, key))
                if n and (g is None or g.count < n):
                    raise Mismatch()
        out: dict = {}
        for (table, key), g in self.gates.items():
            out.setdefault(table, {})[key] = [g.count, g.h.hexdigest()]
        if self.staged is not None:
            self.staged.seek(0)
            while True:
                try:
                    table, date, row = pickle.load(self.staged)
                except EOFError:
                    break
                self.writer.add(table, self.provider, date, row)
            self.staged.close()
            self.staged = None
        return out

    def drop(self) -> None:
        if self.staged is not None:
            self.staged.close()
            self.staged = None


def _day(d: datetime | None) -> str:
    return d.strftime("%Y-%m-%d") if d is not None else "unknown"


def _day_ts(ts: float | None) -> str:
    if ts is None:
        return "unknown"
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d")


def _nbytes(s: str | None) -> int | None:
    return None if s is None else len(s.encode("utf-8", "surrogatepass"))


class _Tee(Provider):
    """The session's provider, whose reading also writes the session's record rows: the census
    (session_stats) drives the one reading of pass A."""

    def __init__(self, prov: Provider, sink: Sink, deep):
        self._p, self._sink, self._deep = prov, sink, deep
        self.name = prov.name
        self.usage_unrecorded = getattr(prov, "usage_unrecorded", None)

    def read(self, ref: SessionRef, report: ReadReport, *, raw: bool = False):
        from ..export.parquet import row_of

        sink, deep = self._sink, self._deep
        for r in self._p.read(ref, report, raw=True):
            own_turn = r.turn
            f = deep.get((r.path, r.line)) if (deep and r.path is not None and r.line is not None) else None
            if f is not None:
                r.turn = f.turn
                labels = f.labels or (r.kind,)
            else:
                labels = (r.kind,)
            day, row = row_of(ref, r, labels)
            key = r.path or ""
            row["seq"] = sink.count("records", key)
            row["truncated"], row["rewound"] = r.truncated, r.rewound
            row["tool_input_json"] = None if r.tool_input is None else not isinstance(r.tool_input, str)
            sink.emit("records", key, day, row)
            if r.kind == "tool_call":
                sink.emit("tool_calls", key, day, {
                    "session_id": ref.session_id, "lane": r.lane, "locator": r.locator, "path": r.path,
                    "line": r.line, "instant": row["instant"], "turn": r.turn, "call_id": r.call_id,
                    "tool_name": r.tool_name, "tool_input": row["tool_input"],
                    "tool_input_bytes": row["tool_input_bytes"], "exit_code": r.exit_code, "is_error": r.is_error,
                    "model": r.model, "copy_of": r.copy_of, "file_changes": len(r.file_changes)})
            for i, c in enumerate(r.file_changes):
                sink.emit("file_changes", key, day, {
                    "session_id": ref.session_id, "lane": r.lane, "locator": r.locator, "path": r.path,
                    "line": r.line, "instant": row["instant"], "turn": r.turn, "call_id": r.call_id,
                    "tool_name": r.tool_name, "change": i, "file": c.path, "action": c.action, "move_to": c.move_to,
                    "new_content_bytes": _nbytes(c.new_content), "old_content_bytes": _nbytes(c.old_content),
                    "diff_bytes": _nbytes(c.diff), "copy_of": r.copy_of})
            r.raw = None
            r.turn = own_turn
            yield r


def ref_json(ref: SessionRef) -> dict:
    """A SessionRef as JSON (what a dataset answer rebuilds the ref from)."""
    extra = orjson.loads(orjson.dumps(ref.extra or {}, default=str))
    return {"provider": ref.provider, "session_id": ref.session_id, "paths": [str(p) for p in ref.paths],
            "project": ref.project, "project_source": ref.project_source, "first_at": ref.first_at,
            "last_at": ref.last_at, "size": ref.size, "title": ref.title, "parent_session_id": ref.parent_session_id,
            "version": ref.version, "helper": ref.helper, "extra": extra}


def _report_json(rep: ReadReport) -> dict:
    return {"files": rep.files, "bytes": rep.bytes, "records": rep.records, "malformed_lines": rep.malformed_lines,
            "zero_filled_lines": rep.zero_filled_lines, "invalid_utf8_lines": rep.invalid_utf8_lines,
            "torn_tail_bytes": rep.torn_tail_bytes, "unknown_kinds": dict(rep.unknown_kinds),
            "duplicates": rep.duplicates, "notes": rep.notes,
            "problems": [{"path": p.path, "why": p.why} for p in rep.problems]}


def _stats_json(st) -> dict:
    return {"records": st.records, "copies": st.copies, "kinds": dict(st.kinds), "prompts": st.prompts,
            "turns": st.turns, "tool_calls": dict(st.tool_calls), "tool_errors": dict(st.tool_errors),
            "tokens_by_model": st.tokens_by_model, "tokens_unknown": st.tokens_unknown,
            "usage_units_by_model": dict(st.usage_units_by_model),
            "tokens_cumulative_by_model": st.tokens_cumulative_by_model, "file_changes": st.file_changes,
            "report": _report_json(st.report)}


@dataclass
class Output:
    """What reading one session gave (besides the rows it wrote)."""

    state: dict
    stats: dict | None
    list_row: dict | None
    usage_info: dict
    problems: list[dict]
    new_rows: int


class Recorder:
    """A usage ledger that keeps every event as read, unmerged (the dataset merges at query time,
    across machines, with the same rule: usage.events.merge)."""

    def __init__(self) -> None:
        self.events: list = []
        self.copies_merged = 0
        self.by_key: dict = {}

    def add(self, e) -> None:
        self.events.append(e)


def _usage(prov: Provider, ref: SessionRef, deep_scope, sink: Sink, session_order: str) -> dict:
    from ..usage import collect as UC
    from ..providers.usage import ClientRecorded

    col = UC.Collected()
    col.ledger = Recorder()  # type: ignore[assignment]
    if deep_scope is not None:
        UC.collect_deep(col, prov, deep_scope, True)
    else:
        UC.collect_refs(col, ref.provider, prov, [ref])
    seqs: dict[str, int] = {}
    for e in col.ledger.events:
        k = e.path or ""
        i = seqs.get(k, 0)
        seqs[k] = i + 1
        sink.emit("usage", k, _day_ts(e.ts), {
            "key": e.key, "ref_session_id": ref.session_id, "session_id": e.session_id, "lane": e.lane,
            "project": e.project, "model": e.model, "ts": e.ts,
            "instant": None if e.ts is None else datetime.fromtimestamp(e.ts, timezone.utc),
            "input": e.input, "output": e.output, "cache_read": e.cache_read, "cache_write": e.cache_write,
            "cache_write_1h": e.cache_write_1h, "reasoning": e.reasoning, "speed": e.speed, "geo": e.geo,
            "service_tier": e.service_tier, "client_cost": e.client_cost, "copies": e.copies, "path": e.path,
            "session_order": session_order, "seq": i})
    infos = {}
    for (p, sid), info in col.sessions.items():
        cl = info.client
        infos[sid] = {"provider": p, "session_id": sid, "project": info.project, "lanes": info.lanes,
                      "paths": info.paths, "without_usage": info.without_usage,
                      "client": None if cl is None else cl.as_dict() if isinstance(cl, ClientRecorded) else None}
    return {"sessions": infos, "without_usage": [[lane, u.ts, u.project, u.model] for u, lane
                                                 in zip(col.without_usage, col.without_usage_lanes)],
            "copies_skipped": col.ledger.copies_merged,
            "tally": {p: t.__dict__ for p, t in col.tally.items()}, "notes": col.notes,
            "problems": [{"path": x.path, "why": x.why} for x in col.problems]}


ASK = object()
"""`read_one(forked_from=ASK)`: the session's lineage is asked of its provider."""


def _list_row(prov: Provider, ref: SessionRef, forked_from=ASK) -> dict | None:
    """What `list` prints of the session (its provider's `summarize`, the same for every agent) and
    its lineage where its client records one (`forked_from`: already found for the selection, as
    the selection reads - with its index decision; ASK: asked of the provider)."""
    try:
        sm = prov.summarize(ref)
    except Exception as exc:  # noqa: BLE001 - a reader's bug: the session is unreadable
        return {"error": f"reader failed: {type(exc).__name__}: {exc}"}
    d: dict = {"summary": asdict(sm)}
    if forked_from is not ASK:
        d["forked_from"] = forked_from
    elif prov.records_forks:
        try:
            d["forked_from"] = prov.forked_from(ref)
        except Exception:  # noqa: BLE001 - lineage unknown (never "no fork")
            pass
    return d


def read_one(prov: Provider, ref: SessionRef, writer, prev_state: dict | None, *, deep_scope=None,
             session_order: str = "", forked_from=ASK) -> Output:
    """Read one session and hand its rows to `writer`; with `prev_state`, only the rows after the
    prefix the dataset holds (raises Mismatch when the reading does not begin with it). `deep_scope`:
    the selection's deep Scope narrowed to the session (Scope.one), its usage read from its lanes;
    `forked_from`: its lineage found with the selection's (`_list_row`)."""
    from ..providers.census import session_stats

    sink = Sink(writer, ref.provider, prev_state)
    problems: list[dict] = []
    try:
        deep = prov.deep_facts(ref)
        try:
            st = session_stats(_Tee(prov, sink, deep), ref)
        except Mismatch:
            raise
        except Exception as exc:  # noqa: BLE001 - a reader's bug: the session is unreadable, say so
            st = None
            problems.append({"path": str(ref.paths[0]) if ref.paths else ref.session_id,
                             "why": f"reader failed: {type(exc).__name__}: {exc}"})
        if st is not None:
            problems += [{"path": p.path, "why": p.why} for p in st.report.problems]
        main_only = None
        if st is not None and prov.lanes_in_paths and len(ref.paths) > 1:
            # `stats --no-subagents` reads a Claude Code session's main lane alone
            from dataclasses import replace

            try:
                main_only = _stats_json(session_stats(prov, replace(ref, paths=ref.paths[:1])))
            except Exception:  # noqa: BLE001 - the full census above says what failed
                main_only = None
        usage = _usage(prov, ref, deep_scope, sink, session_order)
        state = sink.finish()
    except BaseException:
        sink.drop()
        raise
    stats = None if st is None else _stats_json(st)
    if stats is not None and main_only is not None:
        stats["main_only"] = main_only
    return Output(state, stats, _list_row(prov, ref, forked_from), usage, problems, sink.new_rows)


def session_order(ref: SessionRef, rank: int) -> str:
    """Where `usage` reads this session among the others (Claude Code: by project dir, then id)."""
    pd = (ref.extra or {}).get("project_dir") or (os.path.dirname(str(ref.paths[0])) if ref.paths else "")
    return f"{rank:02d}\0{pd}\0{ref.parent_session_id or ref.session_id}\0{ref.session_id}"
