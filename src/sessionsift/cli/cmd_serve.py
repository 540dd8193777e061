"""`serve`: a local web app over the sessions the shared options select (sessionsift.serve)."""

from __future__ import annotations

import functools

import click

from ..errors import UsageError
from .invocation import targeting
from .output import Out


@click.command("serve")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; anything but loopback needs --allow-remote.")
@click.option("--allow-remote", is_flag=True,
              help="Allow a non-loopback --host (anyone who can reach it and has the token can read every session).")
@click.option("--no-browser", is_flag=True, help="Do not open a browser; just print the address.")
@targeting(targets="many")
def serve_cmd(inv, port, host, allow_remote, no_browser):
    """Browse, search and watch every agent's sessions in a local web app: sessions, a session
    turn by turn, search, usage charts, live state, clean and worktrees scans (read only).
    The address printed holds a random token; every request needs it (docs/serve.md).

    Example: sessionsift serve --home examples/home
    """
    from .. import serve

    if host not in serve.LOOPBACK and not allow_remote:
        raise UsageError(f"--host {host} is not loopback: every session would be readable from the network "
                         "by anyone holding the token", hint="add --allow-remote if that is what you want")
    try:
        serve.require()
    except serve.MissingExtra as exc:
        raise UsageError(str(exc)) from None

    from .cmd_worktrees import harness_roots

    # the heavy answers run in worker processes, which make their own selection with this selector
    # (it pickles: a module-level function over the Invocation); a session list read from stdin
    # cannot be read again there, so with `--sessions-from -` they are made in the server
    srv = serve.build(functools.partial(_selection, inv), host=host, port=port, worktree_roots=harness_roots(inv),
                      workers=inv.sessions_from != "-")
    snap = srv.store.snapshot()  # a target that names nothing is a usage error before anything listens
    out = Out(inv.fmt, "serve")

    def ready(s) -> None:
        if host not in serve.LOOPBACK:
            out.err(f"warning: listening on {host}, not loopback: anyone who can reach it and has the token "
                    "reads every session")
        out.text(f"sessionsift serve: {s.url}")
        # --format json: one row, the address (docs/json.md "serve"); the pages are the answer
        out.row("server", {"url": s.url, "host": s.host, "port": s.port, "sessions": len(snap.listing.rows)})
        out.stream.flush()
        out.err(f"{len(snap.listing.rows)} sessions; read only; Ctrl-C stops it")
        if not no_browser:
            import webbrowser

            webbrowser.open(s.url)

    serve.run(srv, ready)
    return 0


def _selection(inv, targets: tuple[str, ...]):
    from .options import make_selection

    return make_selection(inv.with_targets(tuple(inv.targets) + tuple(targets)))
