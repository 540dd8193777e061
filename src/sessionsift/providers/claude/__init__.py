"""Claude Code on the providers layer.

Where: ``--claude-home`` > ``--home DIR`` (``DIR/.claude``) > a non-empty ``CLAUDE_CONFIG_DIR`` >
``~/.claude`` (the base precedence; an empty ``CLAUDE_CONFIG_DIR`` counts as unset, PATH-011).
Which: ``<root>/projects/<ENCODED-cwd>/<session-id>.jsonl``, with the session's subagent lanes
(``<session-id>/subagents/...``) as further paths of the same SessionRef (discover.py).
How: records.py maps each line (or content block) to the shared Record. Claude Code's own
commands keep the deep model (``sessionsift.providers.claude.model``: labels, turns, survival).
"""

from __future__ import annotations

_LAZY = ("ClaudeCode", "HEAD_BYTES", "TAIL_BYTES", "SIBLINGS", "lane_name")


def __getattr__(name: str):
    """The reader class lives in provider.py, imported at its first use: a module of this package
    that needs none of the providers layer (usage.py's light scan of a few appended lines, the
    statusline's path) is imported without it."""
    if name in _LAZY:
        from . import provider

        return getattr(provider, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
