"""The pages mounted beside the core ones (each adds its own routes and its navigation entry)."""

from __future__ import annotations


def routes(store, run_in_threadpool) -> list:
    return []
