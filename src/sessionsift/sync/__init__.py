"""Many machines' sessions in one dataset (docs/dataset.md).

``sync(dataset, selection, machine) -> SyncResult`` appends what is new on this machine (every
agent's sessions, records, usage events, tool calls and file changes) to a dataset folder or
``s3://`` prefix as Parquet partitioned by machine, provider and date, with one manifest per
machine; ``Dataset.open(url)`` reads it back and ``Dataset.connect()`` gives DuckDB views of the
current rows; ``answers`` computes `usage`, `stats`, `list` and `search` over every machine with
the same library code the local answers use. Imported lazily: pyarrow and DuckDB load only here.
"""

from __future__ import annotations

from typing import Any

__all__ = ["sync", "SyncResult", "Dataset", "open_store", "this_machine", "Machine"]


def __getattr__(name: str) -> Any:
    if name in ("sync", "SyncResult"):
        from . import run

        return getattr(run, name)
    if name == "Dataset":
        from .dataset import Dataset

        return Dataset
    if name == "open_store":
        from .store import open_store

        return open_store
    if name in ("this_machine", "Machine"):
        from . import machine

        return getattr(machine, name)
    raise AttributeError(name)
