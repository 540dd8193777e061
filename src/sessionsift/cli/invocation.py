"""One invocation value per command line, built once from the option set every command shares.

Stage one of the CLI (ripgrep's low/high arguments): click parses the shared targeting options
-- TARGETs, ``--home``, each provider's root flag, ``--root NAME=DIR``, ``--provider``,
``--since``/``--until``, ``--project``, ``-n/--limit`` (where a command lists rows),
``--sessions-from``, ``--format``, ``--no-index`` -- into one frozen :class:`Invocation`, which
the command receives as its first argument and passes explicitly to everything it calls. Nothing
is kept in globals or in click's context. The click-free fast paths (cli/fastsearch.py) build the
same value. Stage two is the command's own: it asks the library and renders the result.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from ..errors import UsageError


@dataclass(frozen=True)
class Invocation:
    """What one command line asked for, before any data is read."""

    command: str
    """The command as typed after the program name: ``status``, ``audit size``."""
    fmt: str = "text"
    targets: tuple[str, ...] = ()
    sessions_from: str | None = None
    """``--sessions-from FILE`` (``-`` = stdin): the spec, read when the selection is made."""
    home: str | None = None
    roots: tuple[tuple[str, str], ...] = ()
    """(provider name as given, directory) in the order named: each provider's own root flag,
    then every ``--root NAME=DIR``."""
    providers: tuple[str, ...] = ()
    """``--provider NAME`` (repeatable): only these providers."""
    since: str | None = None
    until: str | None = None
    project: str | None = None
    limit: int | None = None
    """``-n/--limit N``: at most N rows (None: every row), on the commands that list rows."""
    no_index: bool = False
    """``--no-index``: scan the transcripts; neither use nor update the index."""
    dataset: str | None = None
    """``--dataset DATASET`` (the commands that answer over a synced dataset: docs/dataset.md)."""
    named: tuple[str, ...] = field(default=(), compare=False)
    """The shared options this command line gave, as typed (``--codex-home``, ``--since``)."""

    # -- what the library takes -------------------------------------------------------------

    def root_request(self):
        """The roots as the providers layer's RootRequest (docs/cli.md "Data roots")."""
        from ..providers.scope import RootRequest, canonical_name

        roots: dict[str, str] = {}
        for name, d in self.roots:
            roots[canonical_name(name)] = d
        return RootRequest(roots=roots, home=self.home, only=self.providers, index_off=self.index_off())

    def index_off(self) -> str | None:
        """Why the index is off for this run (None: it is used): ``--no-index``, else the
        environment variable SESSIONSIFT_NO_INDEX."""
        from ..index import config

        return config.why_off(forced=self.no_index)

    def session_list(self) -> list[str] | None:
        """The session ids of ``--sessions-from`` (None: not given)."""
        from .options import read_session_list

        return read_session_list(self.sessions_from)

    def narrowing(self):
        """The session filters of this command line (``--since``/``--until``/``--project``/
        ``--limit``) as the library's Narrowing (None when none was given)."""
        from ..providers.scope import Narrowing

        if self.since is None and self.until is None and self.project is None and self.limit is None:
            return None
        return Narrowing.parse(since=self.since, until=self.until, project=self.project, limit=self.limit)

    def with_targets(self, targets: tuple[str, ...] | list[str]) -> "Invocation":
        return replace(self, targets=tuple(targets))

    def refuse(self, *options: str, why: str) -> None:
        """A usage error when this command line gave any of `options`, which this command cannot
        honour (an answer narrower than the question must not pass for the whole one)."""
        given = [o for o in options if o in self.named]
        if given:
            raise UsageError(f"`{self.command}` {why}: {', '.join(given)} cannot narrow it")


# -- stage one: the shared option set ----------------------------------------------------------

def _root_keys() -> list[tuple[str, str, str, str]]:
    """(provider, flag, click parameter name, help) of every built-in provider's root flag."""
    from ..providers.scope import ROOTS

    return [(name, flag, flag.lstrip("-").replace("-", "_"), help_) for name, (flag, help_) in ROOTS.items()]


def targeting(*, targets: str | None = "many", limit: bool = False, window: str = "sessions",
              fmt: bool = True, dataset: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the option set every command shares and hand the command one :class:`Invocation`.

    ``targets``: ``"many"`` (``TARGETS...``), ``"one"`` (``TARGET``) or None (the command takes
    its own positional arguments and sets ``inv.targets`` itself). ``limit``: the command lists
    rows, so it takes ``-n/--limit``. ``window``: what ``--since``/``--until`` select, for the help
    text (``sessions``: sessions active in the window; ``records``; ``days``). ``fmt``: the
    command takes ``--format`` from here (False where it declares its own choices).
    The command function is called as ``f(inv, **its_own_options)``.
    """
    import click

    what = {"sessions": "Sessions active at or after: a duration ago (2h, 3d), a date (2026-11-30, 20261130) or an ISO instant.",
            "records": "Records at or after: a duration ago (2h, 3d), a date or an ISO instant.",
            "days": "First day (YYYY-MM-DD, YYYYMMDD, or 7d / 2w back), in --timezone."}[window]
    what_until = {"sessions": "Sessions active at or before: a duration ago, a date (the whole day) or an ISO instant.",
                  "records": "Records at or before: a duration ago, a date (the whole day) or an ISO instant.",
                  "days": "Last day, inclusive."}[window]

    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        roots = _root_keys()

        def run(**kw: Any) -> Any:
            ctx = click.get_current_context()
            command = " ".join(ctx.command_path.split()[1:]) or ctx.info_name or "?"
            named = []
            pairs: list[tuple[str, str]] = []
            for name, flag, key, _h in roots:
                v = kw.pop(key, None)
                if v:
                    pairs.append((name, v))
                    named.append(flag)
            for spec in kw.pop("root", ()) or ():
                n, sep, d = spec.partition("=")
                if not sep or not n or not d:
                    raise UsageError(f"--root wants NAME=DIR, got {spec!r}")
                pairs.append((n, d))
                named.append(f"--root {n}=...")
            home = kw.pop("home", None)
            provider = tuple(kw.pop("provider", ()) or ())
            since, until = kw.pop("since", None), kw.pop("until", None)
            project = kw.pop("project", None)
            lim = kw.pop("limit", None) if limit else None
            sessions_from = kw.pop("sessions_from", None)
            no_index = bool(kw.pop("no_index", False))
            ds = kw.pop("dataset", None) if dataset else None
            for opt, v in (("--home", home), ("--provider", provider), ("--since", since), ("--until", until),
                           ("--project", project), ("--limit", lim), ("--sessions-from", sessions_from),
                           ("--no-index", no_index)):
                if v:
                    named.append(opt)
            tg: tuple[str, ...] = ()
            if targets == "many":
                tg = tuple(kw.pop("targets", ()) or ())
            elif targets == "one":
                tg = (kw.pop("target"),)
            inv = Invocation(command=command, fmt=kw.pop("fmt", "text") if fmt else "text", targets=tg,
                             sessions_from=sessions_from, home=home, roots=tuple(pairs), providers=provider,
                             since=since, until=until, project=project, limit=lim, no_index=no_index,
                             dataset=ds, named=tuple(named))
            return f(inv, **kw)

        functools.update_wrapper(run, f)
        del run.__wrapped__  # click reads the parameters it declared, not f's signature
        g: Callable[..., Any] = run
        opts = []
        if targets == "many":
            opts.append(click.argument("targets", nargs=-1))
        elif targets == "one":
            opts.append(click.argument("target"))
        opts.append(click.option("--home", "home", type=click.Path(file_okay=False), default=None,
                                 help="Look for every provider's data under DIR (DIR/.claude, DIR/.codex, ...); "
                                      "once any root is named, providers without one are not looked at."))
        for name, flag, key, help_ in roots:
            opts.append(click.option(flag, key, type=click.Path(file_okay=False), default=None, help=help_))
        opts.append(click.option("--root", "root", multiple=True, metavar="NAME=DIR",
                                 help="Data root of provider NAME (any reader, also one installed from outside)."))
        opts.append(click.option("--provider", "provider", multiple=True, metavar="NAME",
                                 help="Only these providers (repeatable), e.g. claude-code, codex, gemini-cli, "
                                      "opencode, crush, or an installed outside reader."))
        opts.append(click.option("--since", default=None, help=what))
        opts.append(click.option("--until", default=None, help=what_until))
        opts.append(click.option("--project", default=None, metavar="DIR|NAME",
                                 help="Only sessions whose project is DIR (or under it), or whose project "
                                      "directory is named NAME."))
        if limit:
            opts.append(click.option("-n", "--limit", "limit", type=click.IntRange(min=0), default=None,
                                     help="At most N rows (the newest first)."))
        opts.append(click.option("--sessions-from", "sessions_from", type=str, default=None,
                                 help="Only the session ids listed in FILE (or - for stdin); an empty list is an "
                                      "empty scope."))
        if fmt:
            opts.append(click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                                     show_default=True, help="Output format (json = JSON Lines, docs/json.md)."))
        if dataset:
            opts.append(click.option("--dataset", "dataset", default=None, metavar="DATASET",
                                     help="Answer over every machine of a dataset `sync` wrote (a folder or "
                                          "s3://bucket/prefix), with DuckDB; no data root is read."))
        opts.append(click.option("--no-index", "no_index", is_flag=True,
                                 help="Scan the transcripts: neither use nor update the index (docs/index.md)."))
        n0 = len(getattr(g, "__click_params__", []))
        for o in reversed(opts):
            g = o(g)
        # the command's own options first in --help, the shared set after them
        ps = g.__click_params__  # type: ignore[attr-defined]
        g.__click_params__ = ps[n0:] + ps[:n0]  # type: ignore[attr-defined]
        return g

    return deco


def plain(command: str, **kw: Any) -> Invocation:
    """An Invocation built without click (the fast paths, tests, other programs)."""
    return Invocation(command=command, **kw)
