"""`statusline`: the line for Claude Code's statusLine hook (docs/usage.md "statusline"). Its body
is cli/statusline_run.emit, which `sessionsift statusline` reaches without click (cli/__init__.py)
when its arguments are the plain ones; click parses anything else (and --help)."""

from __future__ import annotations

import click


@click.command("statusline")
@click.option("--claude-home", type=click.Path(file_okay=False), default=None,
              help="Claude Code data root (default: the one the hook's transcript_path lies in).")
@click.option("--no-cache", is_flag=True, help="Read every recent transcript again (no cache read or written).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format (json = JSON Lines, docs/json.md).")
def statusline_cmd(claude_home, no_cache, fmt):
    """One line for Claude Code's statusLine hook: this session's cost, today's, and the current
    five-hour window's time left and burn rate. Reads the hook's JSON on stdin.

    Set it in ~/.claude/settings.json: "statusLine": {"type": "command", "command": "sessionsift statusline"}

    Example: sessionsift statusline < hook.json
    """
    from .statusline_run import emit

    return emit(claude_home, fmt, not no_cache)
