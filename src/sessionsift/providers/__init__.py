"""Providers: where each coding agent keeps its data and how its sessions read (see base.py).

The registry loads readers from the entry-point group ``sessionsift.providers``; the built-in
readers are registered there too (pyproject.toml), the way simonw/llm registers its back-ends,
so a reader for another agent can be installed from outside without touching this package.
A name in KNOWN with no loaded reader is reported as ``no_adapter`` (null), never 0.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .base import (Coverage, Discovery, FileChange, Problem, Provider, ReadReport, Record, Root,
                       SessionRef, Tokens)

_BASE = ("Coverage", "Discovery", "FileChange", "Problem", "Provider", "ReadReport", "Record", "Root",
         "SessionRef", "Tokens")


def __getattr__(name: str):
    """The shared shapes (base.py) are imported at their first use: a module under this package
    that needs none of them (providers.claude.usage's light scan: the statusline after a turn) is
    imported without base.py's dataclasses, pathlib and the line reader."""
    if name in _BASE:
        from . import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["Coverage", "Discovery", "FileChange", "Problem", "Provider", "ReadReport", "Record",
           "Root", "SessionRef", "Tokens", "KNOWN", "registry", "get", "load", "builtins_only", "load_failures",
           "ROLES", "having", "deep_name", "hook_usage"]

KNOWN: dict[str, str] = {
    "claude-code": "Claude Code",
    "codex": "Codex CLI",
    "gemini-cli": "Gemini CLI",
    "opencode": "opencode",
    "crush": "Crush",
    "pi": "pi",
    "qwen-code": "Qwen Code",
    "copilot-cli": "GitHub Copilot CLI",
    "kilo-code": "Kilo Code",
}
"""Every client the coverage line always names, in display order (outside readers follow)."""

_REGISTRY: dict[str, type[Provider]] | None = None
_FAILED: dict[str, str] = {}


BUILTIN: dict[str, str] = {
    "claude-code": "sessionsift.providers.claude:ClaudeCode",
    "codex": "sessionsift.providers.codex:Codex",
    "gemini-cli": "sessionsift.providers.gemini:GeminiCli",
    "opencode": "sessionsift.providers.opencode:Opencode",
    "crush": "sessionsift.providers.crush:Crush",
    "pi": "sessionsift.providers.pi:Pi",
    "qwen-code": "sessionsift.providers.qwen:QwenCode",
    "copilot-cli": "sessionsift.providers.copilot:CopilotCli",
    "kilo-code": "sessionsift.providers.kilo:KiloCode",
}
"""The entry points this package declares (pyproject.toml; tests/test_provider_registry.py holds them equal)."""

GROUP = "sessionsift.providers"


def registry() -> dict[str, type[Provider]]:
    """name -> Provider class, loaded once from entry points (KNOWN order first)."""
    global _REGISTRY
    if _REGISTRY is None:
        eps = _eps()
        found: dict[str, type[Provider]] = {}
        for name, value, load_ in eps:
            cls = _LOADED.get(name) or _try(name, value, load_)
            if cls is not None:
                found[getattr(cls, "name", name)] = cls
        ordered = {n: found[n] for n in KNOWN if n in found}
        ordered.update({n: c for n, c in found.items() if n not in ordered})
        for n in ordered:
            _FAILED.pop(n, None)
        _REGISTRY = ordered
    return _REGISTRY


_EPS: list | None = None
_FAST = False
_LOADED: dict[str, type[Provider]] = {}
"""Built-in readers imported one at a time by `load` (the lazy path)."""


def _eps() -> list:
    """(name, value, load) of every entry point of GROUP, read once."""
    global _EPS, _FAST
    if _EPS is None:
        eps = _builtin_only()
        _FAST = eps is not None
        if eps is None:
            from importlib.metadata import entry_points

            eps = [(ep.name, ep.value, ep.load) for ep in entry_points(group=GROUP)]
        _EPS = eps
    return _EPS


def _try(name: str, value: str, load_) -> type[Provider] | None:
    """The class entry point `name` names, or None with the reason kept for load_failures()."""
    from .base import Provider

    try:
        cls = load_()
        if not (isinstance(cls, type) and issubclass(cls, Provider)):
            raise TypeError(f"{value} is not a sessionsift Provider class")
    except Exception as exc:  # a broken outside plugin must not break the tool: no_adapter
        _FAILED.setdefault(name, f"cannot load {value}: {type(exc).__name__}: {exc}")
        return None
    return cls


def builtins_only() -> bool:
    """Whether the readers of this installation are exactly BUILTIN (no outside reader declared:
    `_builtin_only`). Then the names are KNOWN's, each display name KNOWN's and each root flag
    scope.FLAGS' (tests/test_provider_registry.py holds the classes to them), and `load` imports a
    reader's module only when that reader is asked for (a command pays the import of the readers it reads, not all of them:
    naming the others in the coverage line imported all of them, sqlite3 included)."""
    _eps()
    return _FAST


def load(name: str) -> type[Provider] | None:
    """The reader class named `name` (None: none, or it cannot be loaded: load_failures() says
    why), importing only its own module when `builtins_only()`; else from registry()."""
    if _REGISTRY is not None or not builtins_only():
        return registry().get(name)
    cls = _LOADED.get(name)
    if cls is None and name in BUILTIN and name not in _FAILED:
        value = BUILTIN[name]
        cls = _try(name, value, lambda: _load_builtin(value))
        if cls is not None:
            _LOADED[name] = cls
    return cls


def _load_builtin(value: str):
    import importlib

    mod, _, attr = value.partition(":")
    return getattr(importlib.import_module(mod), attr)


def _builtin_only() -> list | None:
    """The entry points of GROUP as importlib.metadata would list them, when every distribution
    on sys.path that declares the group declares exactly BUILTIN (then they are the built-in
    readers, in BUILTIN order); None when that cannot be told this way (an outside reader, a
    zipped or egg path entry, a meta-path finder that lists distributions of its own, no
    distribution declaring the group): the caller asks importlib.metadata. Importing it costs
    ~45 ms (email, zipfile, csv, and a scan of every distribution's metadata); this reads the
    entry_points.txt of each dist-info/egg-info directory (~2 ms)."""
    import os
    import sys
    from importlib.machinery import PathFinder

    if any(f is not PathFinder and getattr(f, "find_distributions", None) is not None for f in sys.meta_path):
        return None
    want = {(k, v) for k, v in BUILTIN.items()}
    seen = 0
    for root in sys.path:
        if not isinstance(root, str):
            return None
        try:
            children = os.listdir(root or ".")
        except OSError:
            if os.path.isfile(root or "."):
                return None  # a zip on sys.path: importlib.metadata would look inside
            continue
        if os.path.basename(root).lower().endswith(".egg"):
            return None
        for child in children:
            if not child.lower().endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(root or ".", child, "entry_points.txt"), "rb") as f:
                    text = f.read()
            except OSError:
                continue
            if GROUP.encode() not in text:
                continue
            got = _section(text.decode("utf-8", "replace"))
            if got != want:
                return None
            seen += 1
    if not seen:
        return None
    return [(k, v, lambda v=v: _load_builtin(v)) for k, v in BUILTIN.items()]


def _section(text: str) -> set[tuple[str, str]] | None:
    """The (name, value) pairs of GROUP's section in an entry_points.txt (None: not plainly one)."""
    out: set[tuple[str, str]] = set()
    cur = None
    found = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            cur = line
            found = found or line == "[" + GROUP + "]"
            continue
        if cur == "[" + GROUP + "]":
            name, sep, value = line.partition("=")
            if not sep:
                return None
            out.add((name.strip(), value.strip()))
    return out if found else None


def load_failures() -> dict[str, str]:
    """Entry-point name -> why its reader could not be loaded (reported as ``no_adapter``)."""
    registry()
    return dict(_FAILED)


def get(name: str) -> Provider | None:
    cls = registry().get(name)
    return cls() if cls is not None else None


ROLES: dict[str, tuple[str, ...]] = {
    "deep_scope": ("claude-code",),
    "usage_windows": ("claude-code",),
    "statusline_hook": ("claude-code",),
    "worktree_argv_flags": ("claude-code",),
    "worktree_repo_dir": ("claude-code",),
    "worktree_lock_reason": ("claude-code",),
    "worktree_dir": ("codex",),
    "record_labels": ("claude-code",),
}
"""The built-in readers whose class declares each capability attribute shared code asks for by
role (Provider.deep_scope, usage_windows, statusline_hook, worktree_argv_flags, worktree_repo_dir, worktree_dir,
record_labels), in
KNOWN order: what `having` answers when `builtins_only()` without importing every reader
(tests/test_architecture.py holds it equal to the classes)."""


def having(attr: str) -> tuple[str, ...]:
    """The names of the readers whose class declares ``attr`` (a truthy class attribute of
    Provider), in registry order: shared code asks for a capability, never for an agent's name."""
    if attr in ROLES and builtins_only() and _REGISTRY is None:
        return ROLES[attr]
    return tuple(n for n, c in registry().items() if getattr(c, attr, None))


def deep_name() -> str:
    """The reader that offers the deep ``Scope`` (``Provider.deep_scope``: ``Selection.claude``,
    its lane, record and lineage model): the commands written against that model read its
    sessions, and its root is the one their ``--<agent>-home`` flag names."""
    got = having("deep_scope")
    return got[0] if got else ROLES["deep_scope"][0]


def hook_usage():
    """The light transcript reading of the reader whose statusLine hook `statusline` serves
    (``ROLES["statusline_hook"]``, Claude Code's providers/claude/usage.py ``light_usage``):
    ``read(path, start, light) -> (offset read to, usage events)``. Only that module is imported
    (no reader class, no entry points): the hook's light path after every turn."""
    from .claude.usage import light_usage

    return light_usage
