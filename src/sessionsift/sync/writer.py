"""One run's Parquet files: rows stream into one file per (table, provider, date) partition of this
machine, in row groups; memory stays bounded (the largest buffer is flushed when all of them
together pass ``BUFFER_BYTES``). Nothing is visible under its final name before :meth:`close`,
and nothing is committed before the manifest names the run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import schema as S
from .store import Store

ROWS_PER_GROUP = 8192
BUFFER_BYTES = 48 << 20


@dataclass
class _Part:
    rel: str
    tmp: str
    writer: Any
    rows: list[dict] = field(default_factory=list)
    nbytes: int = 0
    count: int = 0


@dataclass
class Written:
    rel: str
    table: str
    rows: int
    bytes: int


def row_bytes(row: dict) -> int:
    """A cheap size estimate of a row held in memory."""
    n = 160
    for v in row.values():
        if isinstance(v, str):
            n += len(v)
        elif isinstance(v, list):
            n += sum(len(x) for x in v if isinstance(x, str)) + 8 * len(v)
    return n


class BatchWriter:
    def __init__(self, store: Store, machine: str, batch: int, run: str):
        self.store, self.machine, self.batch, self.run = store, machine, batch, run
        self.parts: dict[tuple[str, str, str], _Part] = {}
        self.schemas: dict[str, Any] = {}
        self.buffered = 0
        self.rows = 0
        self.row_bytes = 0
        self.counter: dict[str, int] = {}
        self.written: list[Written] = []

    def add(self, table: str, provider: str, date: str, row: dict) -> None:
        key = (table, provider, date)
        p = self.parts.get(key)
        if p is None:
            p = self._open(table, provider, date)
        row["batch"] = self.batch
        p.rows.append(row)
        p.count += 1
        n = row_bytes(row)
        p.nbytes += n
        self.buffered += n
        self.rows += 1
        self.row_bytes += n
        if len(p.rows) >= ROWS_PER_GROUP:
            self._flush(p)
        elif self.buffered >= BUFFER_BYTES:
            self._flush(max(self.parts.values(), key=lambda q: q.nbytes))

    def _open(self, table: str, provider: str, date: str) -> _Part:
        import pyarrow.parquet as pq

        sch = self.schemas.get(table)
        if sch is None:
            sch = self.schemas[table] = S.schema(table)
        k = self.counter.get(table, 0)
        self.counter[table] = k + 1
        rel = (f"{table}/machine={self.machine}/provider={provider}/date={date}/"
               f"b{self.batch:06d}-{self.run}-{k}.parquet")
        tmp = self.store.temp_for(rel)
        p = self.parts[(table, provider, date)] = _Part(rel, tmp, pq.ParquetWriter(tmp, sch, compression="zstd"))
        return p

    def _flush(self, p: _Part) -> None:
        if not p.rows:
            return
        from ..export.parquet import record_batch

        table = p.rel.split("/", 1)[0]
        p.writer.write_batch(record_batch(p.rows, self.schemas[table]))
        p.rows.clear()
        self.buffered -= p.nbytes
        p.nbytes = 0

    def close(self) -> list[Written]:
        """Finish every file and put it in place (whole); the list of what was written."""
        for key, p in list(self.parts.items()):
            self._flush(p)
            p.writer.close()
            size = self.store.place(p.tmp, p.rel)
            self.written.append(Written(p.rel, key[0], p.count, size))
            del self.parts[key]
        return self.written

    def abort(self) -> None:
        for p in self.parts.values():
            try:
                p.writer.close()
            except Exception:  # noqa: BLE001
                pass
            self.store.discard(p.tmp)
        self.parts.clear()
