"""Providers: where each coding agent keeps its data and how its sessions read (see base.py).

The registry loads readers from the entry-point group ``sessionsift.providers``; the built-in
readers are registered there too (pyproject.toml), the way simonw/llm registers its back-ends,
so a reader for another agent can be installed from outside without touching this package.
A name in KNOWN with no loaded reader is reported as ``no_adapter`` (null), never 0.
"""

from __future__ import annotations

from .base import (Coverage, Discovery, FileChange, Problem, Provider, ReadReport, Record, Root,
                   SessionRef, Tokens)

__all__ = ["Coverage", "Discovery", "FileChange", "Problem", "Provider", "ReadReport", "Record",
           "Root", "SessionRef", "Tokens", "KNOWN", "registry", "get", "load_failures"]

KNOWN: dict[str, str] = {
    "claude-code": "Claude Code",
    "codex": "Codex CLI",
    "gemini-cli": "Gemini CLI",
    "opencode": "opencode",
    "crush": "Crush",
}
"""Every client the coverage line always names, in display order (outside readers follow)."""

_REGISTRY: dict[str, type[Provider]] | None = None
_FAILED: dict[str, str] = {}


def registry() -> dict[str, type[Provider]]:
    """name -> Provider class, loaded once from entry points (KNOWN order first)."""
    global _REGISTRY
    if _REGISTRY is None:
        from importlib.metadata import entry_points

        found: dict[str, type[Provider]] = {}
        for ep in entry_points(group="sessionsift.providers"):
            try:
                cls = ep.load()
                if not (isinstance(cls, type) and issubclass(cls, Provider)):
                    raise TypeError(f"{ep.value} is not a sessionsift Provider class")
            except Exception as exc:  # a broken outside plugin must not break the tool: no_adapter
                _FAILED.setdefault(ep.name, f"cannot load {ep.value}: {type(exc).__name__}: {exc}")
                continue
            found[getattr(cls, "name", ep.name)] = cls
        ordered = {n: found[n] for n in KNOWN if n in found}
        ordered.update({n: c for n, c in found.items() if n not in ordered})
        for n in ordered:
            _FAILED.pop(n, None)
        _REGISTRY = ordered
    return _REGISTRY


def load_failures() -> dict[str, str]:
    """Entry-point name -> why its reader could not be loaded (reported as ``no_adapter``)."""
    registry()
    return dict(_FAILED)


def get(name: str) -> Provider | None:
    cls = registry().get(name)
    return cls() if cls is not None else None
