"""The deep Scope a command reads (``Provider.deep_scope``: the reader whose lane, record and
lineage model the commands written against it read; providers.deep_name names it). Shared code
(cli/options.py) asks here; the reader builds it (``Provider.deep_scopes``), so the asking code
does not know which agent answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

DeepScope = Any
"""The deep reader's Scope (``home``, ``sessions``, ``problems``, ``index_off``, ...)."""


def _builder() -> Any:
    from . import deep_name, load

    cls = load(deep_name())
    got = cls.deep_scopes() if cls is not None else None
    if got is None:
        raise LookupError(f"the deep reader {deep_name()!r} offers no deep Scope")
    return got


def deep_root(explicit: str | None, home: str | None) -> Any:
    """The deep reader's data root by the root rule (its own flag, else --home DIR, else its
    environment variable, else its default): a dataclass with ``path`` and ``source``."""
    return _builder().root(explicit, home=home)


def deep_resolve(targets: Iterable[str], sessions_from: list[str] | None, choice: Any) -> DeepScope:
    """The targets resolved to the deep reader's sessions under `choice` (raises TargetError)."""
    return _builder().resolve(targets, sessions_from=sessions_from, choice=choice)


def deep_use_index(scope: DeepScope, off: str | None) -> DeepScope:
    """The index decision (`off`: why not; None: use it) carried to `scope` and its sessions."""
    return _builder().use_index(scope, off)


def deep_empty(path: Path, source: str) -> DeepScope:
    """An empty deep Scope of the root `path` (found by `source`)."""
    return _builder().empty(path, source)
