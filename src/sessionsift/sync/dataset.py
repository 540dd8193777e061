"""Reading a dataset: its manifests, the files of committed runs, and DuckDB views of the current rows.

A run is committed when its machine's manifest names it; a file is part of the dataset when its
name carries a committed run id (``b<batch>-<run>-<n>.parquet``), so a file a killed run left
behind is never read. A row is current when its batch is at least its session's ``base_batch``
(the newest committed `sessions` row of that machine, provider and session): a session written
again after a rewrite leaves its older rows out of every view.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import orjson

from . import schema as S
from .store import Store, open_store

DUCKDB_MEMORY = "160MB"
"""DuckDB's own memory limit (it spills to a temp directory beyond it): the answers' peak stays
under 300 MB with Python's share."""


def run_of(name: str) -> str | None:
    base = name.rsplit("/", 1)[-1]
    if not base.startswith("b") or not base.endswith(".parquet"):
        return None
    parts = base.split("-")
    return parts[1] if len(parts) >= 3 else None


def machine_of(rel: str) -> str | None:
    for seg in rel.split("/"):
        if seg.startswith("machine="):
            return seg[8:]
    return None


def load_manifest(store: Store, machine: str) -> dict | None:
    raw = store.read_bytes(f"{S.MANIFESTS_DIR}/{machine}.json")
    if raw is None:
        return None
    try:
        m = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        from ..errors import SessionsiftError

        raise SessionsiftError(f"{store.url}: manifest of {machine} is not JSON ({exc})")
    return m if isinstance(m, dict) else None


@dataclass
class Dataset:
    store: Store
    manifests: dict[str, dict] = field(default_factory=dict)
    committed: dict[str, dict[str, int]] = field(default_factory=dict)
    """machine -> {run id: batch} of its committed runs."""
    _files: dict = field(default_factory=dict)

    @classmethod
    def open(cls, url_or_store: "str | Store") -> "Dataset":
        store = open_store(url_or_store) if isinstance(url_or_store, str) else url_or_store
        ds = cls(store)
        rels = store.list(S.MANIFESTS_DIR, ".json")
        if not rels:
            from ..errors import TargetError

            raise TargetError(f"no dataset at {store.url}: it holds no machine manifest ({S.MANIFESTS_DIR}/*.json)",
                              hint="write one with `sessionsift sync --to DATASET`")
        for rel in rels:
            name = rel.rsplit("/", 1)[-1][:-5]
            m = load_manifest(store, name)
            if not m or m.get("schema") != S.MANIFEST:
                continue
            ds.manifests[name] = m
            ds.committed[name] = {r["run"]: r["batch"] for r in m.get("runs", []) if r.get("run")}
        return ds

    def files(self, table: str, machine: str | None = None) -> list[str]:
        """Relative paths of the committed files of `table` (of one machine, or all)."""
        key = (table, machine)
        got = self._files.get(key)
        if got is None:
            prefix = f"{table}/machine={machine}" if machine else table
            got = []
            for rel in self.store.list(prefix, ".parquet"):
                m, run = machine_of(rel), run_of(rel)
                if m is not None and run is not None and run in self.committed.get(m, {}):
                    got.append(rel)
            self._files[key] = got
        return got

    # -- DuckDB ---------------------------------------------------------------------------------
    def connect(self, tables: tuple[str, ...] = tuple(S.TABLES)):
        """An in-process DuckDB connection with a view per table of the current rows (`sessions`:
        the newest version of each session; `sessions_versions`: every version) and `manifests`."""
        import duckdb

        import tempfile

        spill = tempfile.mkdtemp(prefix="ssift-duckdb-")  # where a sort larger than the limit spills
        import atexit
        import shutil

        atexit.register(shutil.rmtree, spill, True)
        con = duckdb.connect(config={"memory_limit": DUCKDB_MEMORY, "threads": min(4, os.cpu_count() or 2),
                                     "preserve_insertion_order": False, "temp_directory": spill})
        for t in dict.fromkeys(("sessions", *tables)):
            self._register(con, t)
        con.execute("CREATE VIEW sessions_versions AS SELECT * FROM sessions_all")
        # the newest version of each session (a join, not a window: a query reads only its columns)
        con.execute("CREATE VIEW sessions AS SELECT s.* FROM sessions_all s JOIN (SELECT machine AS m_, provider AS p_, "
                    "session_id AS s_, max(batch) AS b_ FROM sessions_all GROUP BY ALL) n ON s.machine = n.m_ "
                    "AND s.provider = n.p_ AND s.session_id = n.s_ AND s.batch = n.b_")
        for t in tables:
            if t == "sessions":
                continue
            sid = "ref_session_id" if t == "usage" else "session_id"
            cols = ", ".join(f't."{c}"' for c, _ty, _m in S.TABLES[t]) + ", t.machine, t.provider, t.date"
            con.execute(f"CREATE VIEW {t} AS SELECT {cols} FROM {t}_all t JOIN "
                        f"(SELECT machine, provider, session_id AS s_id, base_batch FROM sessions) s "
                        f"ON t.machine = s.machine AND t.provider = s.provider AND t.{sid} = s.s_id "
                        f"WHERE t.batch >= s.base_batch")
        import pyarrow as pa

        rows = [{"machine": k, "machine_id": m.get("machine_id"), "host": m.get("host"),
                 "runs": len(m.get("runs", [])), "last_batch": max((r["batch"] for r in m.get("runs", [])), default=None),
                 "last_sync": (m.get("runs") or [{}])[-1].get("committed"), "sessionsift": m.get("sessionsift")}
                for k, m in sorted(self.manifests.items())]
        tbl = pa.Table.from_pylist(rows, schema=pa.schema([("machine", pa.string()), ("machine_id", pa.string()),
                                                            ("host", pa.string()), ("runs", pa.int64()),
                                                            ("last_batch", pa.int64()), ("last_sync", pa.string()),
                                                            ("sessionsift", pa.string())]))
        con.register("manifests_arrow", tbl)
        con.execute("CREATE VIEW manifests AS SELECT * FROM manifests_arrow")
        return con

    def _register(self, con, table: str) -> None:
        import pyarrow as pa

        files = self.files(table)
        parts = pa.schema([(n, pa.string()) for n, _t, _m in S.PARTITIONS])
        if not files:
            sch = S.schema(table)
            empty = pa.Table.from_pylist([], schema=pa.schema(list(sch) + list(parts)))
            con.register(f"{table}_arrow", empty)
            con.execute(f"CREATE VIEW {table}_all AS SELECT * FROM {table}_arrow")
            return
        if self.store.local:
            lst = "[" + ", ".join("'" + self.store.path(f).replace("'", "''") + "'" for f in files) + "]"
            con.execute(f"CREATE VIEW {table}_all AS SELECT * FROM read_parquet({lst}, hive_partitioning = true, "
                        "hive_types = {'machine': VARCHAR, 'provider': VARCHAR, 'date': VARCHAR}, union_by_name = true)")
            return
        import pyarrow.dataset as pds

        d = pds.dataset([self.store.path(f) for f in files], filesystem=self.store.fs, format="parquet",
                        partitioning=pds.partitioning(parts, flavor="hive"),
                        partition_base_dir=self.store.path(table), schema=pa.schema(list(S.schema(table)) + list(parts)))
        con.register(f"{table}_arrow", d)
        con.execute(f"CREATE VIEW {table}_all AS SELECT * FROM {table}_arrow")


def machine_states(ds: Dataset, machine: str) -> dict:
    """(provider, session id) -> session.Prev: what the dataset holds of each session this machine
    synced (its newest committed `sessions` row)."""
    import pyarrow.parquet as pq

    from .session import Prev

    out: dict = {}
    cols = ["session_id", "batch", "base_batch", "change_token", "reader_version", "state"]
    for rel in ds.files("sessions", machine):
        prov = next((s[9:] for s in rel.split("/") if s.startswith("provider=")), None)
        if ds.store.local:
            t = pq.read_table(ds.store.path(rel), columns=cols)
        else:
            with ds.store.fs.open_input_file(ds.store.path(rel)) as f:
                t = pq.read_table(f, columns=cols)
        for r in t.to_pylist():
            k = (prov, r["session_id"])
            old = out.get(k)
            if old is None or r["batch"] > old.batch:
                out[k] = Prev(r["batch"], r["base_batch"], r["change_token"], r["reader_version"],
                              orjson.loads(r["state"]) if r["state"] else {})
    return out
