"""`statusline`: the line for Claude Code's statusLine hook (docs/usage.md "statusline"). Its body
is cli/statusline_run.emit, which `sessionsift statusline` reaches without click (cli/__init__.py)
when its arguments are the plain ones; click parses anything else (and --help)."""

from __future__ import annotations

import click


from .invocation import targeting


@click.command("statusline")
@targeting(targets=None)
@click.option("--no-cache", is_flag=True, help="Read every recent transcript again (no cache read or written).")
def statusline_cmd(inv, no_cache):
    """One line for Claude Code's statusLine hook: this session's cost, today's, and the current
    five-hour window's time left and burn rate. Reads the hook's JSON on stdin.

    Set it in ~/.claude/settings.json: "statusLine": {"type": "command", "command": "sessionsift statusline"}

    Example: sessionsift statusline < hook.json
    """
    from ..providers import having
    from .statusline_run import emit

    inv.refuse(*[n for n in inv.named if n not in ("--claude-home", "--format", "--no-index")],
               why="answers for the session the hook names on stdin (its root: --claude-home, else the one its "
                   "transcript_path lies in)")
    hooked = having("statusline_hook")  # the client that runs the hook (Provider.statusline_hook)
    return emit(inv.root_request().roots.get(hooked[0]) if hooked else None, inv.fmt, not no_cache)
