"""Shared option bundles and the target-resolution step every multi-target command uses."""

from __future__ import annotations

import sys
from typing import Any, Callable

import click

from ..discover import Scope, resolve_targets
from ..errors import UsageError


def common_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                     show_default=True, help="Output format (json = JSON Lines, docs/json.md).")(f)
    f = click.option("--claude-home", type=click.Path(file_okay=False), default=None,
                     help="Claude Code data root (default: non-empty $CLAUDE_CONFIG_DIR, else ~/.claude).")(f)
    return f


def scope_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--sessions-from", type=str, default=None,
                     help="Restrict the scope to the session ids listed in FILE (or - for stdin); "
                          "an empty list is an empty scope.")(f)
    return f


def read_session_list(spec: str | None) -> list[str] | None:
    if spec is None:
        return None
    if spec == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(spec, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise UsageError(f"cannot read --sessions-from {spec}: {exc.strerror}")
    ids = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        ids.append(line.split()[0])
    return ids


def make_scope(targets: tuple[str, ...], claude_home: str | None, sessions_from: str | None = None) -> Scope:
    return resolve_targets(targets, claude_home, read_session_list(sessions_from))


def scope_header(scope: Scope) -> dict:
    return {
        "claude_home": str(scope.home.path),
        "claude_home_source": scope.home.source,
        "sessions": len(scope.sessions),
    }


def problems_json(problems: list) -> list[dict]:
    return [{"path": p.path, "why": p.why} for p in problems]
