"""The click application: the group, its lazy command loading and the EPIPE rule. Imported by
`sessionsift.cli.main` only when a command runs (`sessionsift --help` is answered without click:
cli/fasthelp.py)."""

from __future__ import annotations

import importlib

import click

from . import COMMANDS, GROUP_HELP


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

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """An unknown command name gets the nearest names as a suggestion (`lsit` -> `list`)."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            import difflib

            near = difflib.get_close_matches(name, list(COMMANDS), n=3, cutoff=0.6)
            if near:
                ctx.fail(f"No such command {name!r}. Did you mean {' or '.join(repr(n) for n in near)}?")
        return super().resolve_command(ctx, args)

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
        cmd = getattr(m, attr, None)
        if cmd is not None:
            from .complete import attach

            attach(cmd)  # TARGET arguments complete session ids
        return cmd


@click.group(cls=LazyGroup, help=GROUP_HELP, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="sessionsift")
def cli() -> None:
    pass
