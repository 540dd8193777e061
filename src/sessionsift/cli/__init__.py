"""The CLI: a thin click layer over the library. Commands load lazily so `--help` is fast and
never touches a data root."""

from __future__ import annotations

import importlib
import sys

import click

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
    "recover": "cmd_files:recover_cmd",
    "plan": "cmd_files:plan_cmd",
    "image": "cmd_files:image_cmd",
    "verbatim": "cmd_verbatim:verbatim_cmd",
    "audit": "cmd_audit:audit_cmd",
    "worktrees": "cmd_worktrees:worktrees_cmd",
    "usage": "cmd_usage:usage_cmd",
}


class PipeClosed(Exception):
    """The reader of our stdout closed it (`ssift search '' | head -1`)."""


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        out = []
        for name in COMMANDS:
            if self._load(name) is not None:
                out.append(name)
        return out

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._load(name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            # click turns EPIPE into exit 1; a reader that closed the pipe is no error
            raise PipeClosed() from exc

    def _load(self, name: str) -> click.Command | None:
        spec = COMMANDS.get(name)
        if spec is None:
            return None
        mod, attr = spec.split(":")
        try:
            m = importlib.import_module(f"sessionsift.cli.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name == f"sessionsift.cli.{mod}":
                return None
            raise
        return getattr(m, attr, None)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="sessionsift")
def cli() -> None:
    """sessionsift: what your coding agents did, are doing, and left behind.

    Reads Claude Code transcripts under a data root chosen by: --claude-home, else a non-empty
    CLAUDE_CONFIG_DIR, else ~/.claude. Every command takes --format text|json.

    Exit codes: 0 answered (also: the reader closed the pipe); 1 nothing matched (where that is
    meaningful); 2 usage or target error; 3 answered, but some inputs could not be read (counts
    are lower bounds); 4 error (a malformed line under --strict, an internal error); 5-8
    `recover`: at risk, partial, nothing known, deleted; 124 `wait` timed out; 130 interrupted.
    """


def main(argv: list[str] | None = None) -> None:
    from ..errors import MalformedLine, SessionsiftError

    raw = list(argv if argv is not None else sys.argv[1:])
    traceback = "--traceback" in raw
    args = [a for a in raw if a != "--traceback"]
    try:
        rv = cli.main(args=args, prog_name="sessionsift", standalone_mode=False)
        status = int(rv) if isinstance(rv, int) else 0
        sys.stdout.flush()
    except PipeClosed:
        _quiet_pipe()
        sys.exit(ExitStatus.OK)
    except BrokenPipeError:
        _quiet_pipe()
        sys.exit(ExitStatus.OK)
    except (click.exceptions.Abort, KeyboardInterrupt):
        sys.exit(ExitStatus.INTERRUPTED)
    except click.exceptions.Exit as exc:  # --help, --version
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        _fail(exc, ExitStatus.USAGE, args)
    except SessionsiftError as exc:
        if traceback:
            raise
        _error(exc)
        _fail(exc, ExitStatus.ERROR if isinstance(exc, MalformedLine) or type(exc) is SessionsiftError
              else ExitStatus.USAGE, args)
    except Exception as exc:  # noqa: BLE001 - an internal error still ends as documented
        if traceback:
            raise
        from .output import err_line

        err_line(f"sessionsift: internal error: {type(exc).__name__}: {exc}")
        err_line("sessionsift: hint: run again with --traceback and report it")
        _fail(exc, ExitStatus.ERROR, args)
    sys.exit(status)


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
