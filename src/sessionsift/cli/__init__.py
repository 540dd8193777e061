"""The CLI: a thin click layer over the library. Commands load lazily so `--help` is fast and
never touches a data root."""

from __future__ import annotations

import sys

from .exit import ExitStatus

# command name -> "module:attribute" (modules under sessionsift.cli)
COMMANDS: dict[str, str] = {
    "list": "cmd_core:list_cmd",
    "show": "cmd_core:show_cmd",
    "stats": "cmd_core:stats_cmd",
    "search": "cmd_search:search_cmd",
    "status": "cmd_live:status_cmd",
    "wait": "cmd_live:wait_cmd",
    "whoami": "cmd_live:whoami_cmd",
    "agents": "cmd_live:agents_cmd",
    "files": "cmd_files:files_cmd",
    "recover": "cmd_recover:recover_cmd",
    "plan": "cmd_files:plan_cmd",
    "image": "cmd_files:image_cmd",
    "verbatim": "cmd_verbatim:verbatim_cmd",
    "audit": "cmd_audit:audit_cmd",
    "export": "cmd_export:export_cmd",
    "worktrees": "cmd_worktrees:worktrees_cmd",
    "usage": "cmd_usage:usage_cmd",
    "clean": "cmd_clean:clean_cmd",
    "index": "cmd_index:index_cmd",
    "sync": "cmd_sync:sync_cmd",
    "query": "cmd_sync:query_cmd",
    "statusline": "cmd_statusline:statusline_cmd",
    "serve": "cmd_serve:serve_cmd",
}

GROUP_HELP = """\
sessionsift: what your coding agents did, are doing, and left behind.

Reads what Claude Code, Codex CLI, Gemini CLI, opencode, Crush, pi, Qwen Code, GitHub Copilot CLI
and Kilo Code wrote to disk. Each one's root: its own flag (--claude-home, --codex-home,
--gemini-home, --opencode-home, --crush-home, --pi-home, --qwen-home, --copilot-home,
--kilo-home), or
--home DIR for all of them, else its environment variable or default (~/.claude, ~/.codex, ...);
once any root is named, a provider without one is not looked at (docs/cli.md). Every command
takes --format text|json, and --color auto|always|never (auto: colour on a terminal unless
NO_COLOR is set).

Exit codes: 0 answered (also: the reader closed the pipe); 1 nothing matched (where that is
meaningful); 2 usage or target error; 3 answered, but some inputs could not be read (counts
are lower bounds); 4 error (a malformed line under --strict, an internal error); 5-8
`recover`: at risk, partial, nothing known, deleted; 9 `audit secrets`: credentials found; 124
`wait` timed out; 130 interrupted.
"""
"""The group's help (app.py; rendered without click by fasthelp.py)."""


def __getattr__(name: str):
    if name in ("cli", "LazyGroup", "PipeClosed"):
        from . import app

        return getattr(app, name)
    raise AttributeError(name)


def main(argv: list[str] | None = None) -> None:
    raw = list(argv if argv is not None else sys.argv[1:])
    if raw in (["--help"], ["-h"]):
        from .fasthelp import group_help

        text = group_help()
        if text is not None:  # None: a command's help could not be read from its source
            from ..render import Out

            out = Out("text", "help")
            for line in text.split("\n"):
                out.text(line)
            sys.stdout.flush()
            sys.exit(0)
    if raw[:1] == ["statusline"]:  # run by Claude Code after every turn: no click on the plain path
        from .statusline_run import run as statusline

        try:
            code = statusline(raw[1:])
        except (Exception, KeyboardInterrupt) as exc:
            _handle(exc, raw, "--traceback" in raw)
            raise
        if code is not None:
            sys.exit(code)
    traceback = "--traceback" in raw
    args = [a for a in raw if a != "--traceback"]
    args = _colour_option(args)
    from .fastsearch import parse

    run = parse(args)  # a plain one-off search: no click before its scan (its import delays the first hit)
    if run is None:
        from .app import cli

        def run():
            return cli.main(args=args, prog_name="sessionsift", standalone_mode=False)
    try:
        rv = run()
        status = int(rv) if isinstance(rv, int) else 0
        sys.stdout.flush()
    except (Exception, KeyboardInterrupt) as exc:
        _handle(exc, args, traceback)
        raise  # --traceback: the error itself
    sys.exit(status)


def _colour_option(args: list[str]) -> list[str]:
    """Take the global `--color auto|always|never` (anywhere before `--`) off the command line
    and set it for the rendering path (render.COLOR); a bad value is a usage error (exit 2)."""
    from .. import render

    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out.extend(args[i:])
            break
        if a == "--color" or a.startswith("--color="):
            if a == "--color":
                if i + 1 >= len(args):
                    _bad_colour(None)
                v = args[i + 1]
                i += 2
            else:
                v = a.split("=", 1)[1]
                i += 1
            if v not in ("auto", "always", "never"):
                _bad_colour(v)
            render.COLOR = v
            continue
        out.append(a)
        i += 1
    return out


def _bad_colour(v: str | None) -> None:
    from .output import err_line

    err_line(f"sessionsift: usage error: --color wants auto, always or never" + (f", got {v!r}" if v is not None else ""))
    sys.exit(ExitStatus.USAGE)


def _handle(exc: BaseException, args: list[str], traceback: bool) -> None:
    """End a run that raised as documented (exit codes in GROUP_HELP); returns only when the
    caller should re-raise it (--traceback). click is imported here if the run did not (the fast
    path)."""
    import click

    from ..errors import MalformedLine, SessionsiftError, StoreError
    from .app import PipeClosed

    if isinstance(exc, (PipeClosed, BrokenPipeError)):
        _quiet_pipe()
        sys.exit(ExitStatus.OK)
    if isinstance(exc, (click.exceptions.Abort, KeyboardInterrupt)):
        sys.exit(ExitStatus.INTERRUPTED)
    if isinstance(exc, click.exceptions.Exit):  # --help, --version
        sys.exit(exc.exit_code)
    if isinstance(exc, click.ClickException):
        exc.show()
        _fail(exc, ExitStatus.USAGE, args)
    if isinstance(exc, SessionsiftError):
        if traceback:
            return
        _error(exc)
        _fail(exc, ExitStatus.ERROR if isinstance(exc, (MalformedLine, StoreError)) or type(exc) is SessionsiftError
              else ExitStatus.USAGE, args)
    if traceback:
        return
    from .output import err_line

    err_line(f"sessionsift: internal error: {type(exc).__name__}: {exc}")
    err_line("sessionsift: hint: run again with --traceback and report it")
    _fail(exc, ExitStatus.ERROR, args)


def _fail(exc: BaseException, status: int, args: list[str]) -> None:
    """Close a JSON stream with a summary naming the error, then exit with `status`."""
    from ..render import close_with_error

    try:
        close_with_error(exc, status, _command_of(args), _wants_json(args))
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_pipe()
    sys.exit(status)


def _command_of(args: list[str]) -> str | None:
    for a in args:
        if a in COMMANDS:
            return a
    return None


def _wants_json(args: list[str]) -> bool:
    for i, a in enumerate(args):
        if a == "--format" and i + 1 < len(args) and args[i + 1] == "json":
            return True
        if a == "--format=json":
            return True
    return False


def _quiet_pipe() -> None:
    """The reader went away: point stdout at /dev/null so the final flush cannot fail loudly."""
    import os

    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError):
        pass


def _error(exc: Exception) -> None:
    from ..errors import UsageError
    from .output import err_line

    err_line(f"sessionsift: {'usage error' if isinstance(exc, UsageError) else 'error'}: {exc}")
    hint = getattr(exc, "hint", None)
    if hint:
        err_line(f"sessionsift: hint: {hint}")
