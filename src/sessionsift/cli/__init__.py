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
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        out = []
        for name in COMMANDS:
            if self._load(name) is not None:
                out.append(name)
        return out

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._load(name)

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

    Exit codes: 0 answered; 1 nothing matched (where that is meaningful); 2 usage or target
    error; 3 answered, but some inputs could not be read (counts are lower bounds); 124 `wait`
    timed out; 130 interrupted.
    """


def main(argv: list[str] | None = None) -> None:
    from ..errors import MalformedLine, NoSuchRecord, SessionsiftError, TargetError, UsageError

    traceback = "--traceback" in (argv if argv is not None else sys.argv[1:])
    args = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--traceback"]
    try:
        rv = cli.main(args=args, prog_name="sessionsift", standalone_mode=False)
    except click.exceptions.Abort:
        sys.exit(ExitStatus.INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(ExitStatus.USAGE)
    except KeyboardInterrupt:
        sys.exit(ExitStatus.INTERRUPTED)
    except BrokenPipeError:
        sys.exit(ExitStatus.OK)
    except (UsageError, TargetError, NoSuchRecord, MalformedLine) as exc:
        if traceback:
            raise
        _error(exc)
        sys.exit(ExitStatus.USAGE if not isinstance(exc, MalformedLine) else ExitStatus.ERROR)
    except SessionsiftError as exc:
        if traceback:
            raise
        _error(exc)
        sys.exit(ExitStatus.ERROR)
    sys.exit(int(rv) if isinstance(rv, int) else 0)


def _error(exc: Exception) -> None:
    from .output import esc

    sys.stderr.write(f"sessionsift: error: {esc(str(exc))}\n")
    hint = getattr(exc, "hint", None)
    if hint:
        sys.stderr.write(f"sessionsift: hint: {esc(hint)}\n")
