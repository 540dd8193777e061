"""`sessionsift serve`: a local web app to browse, search and watch every agent's sessions.

A front end like cli/ (it renders the library's typed answers: sessionsift.listing,
show.session, search, usage, live, clean and worktrees scans), behind a guard (guard.py): bound
to 127.0.0.1 unless told otherwise, a random token in the printed address (then a cookie), the
Host and Origin headers checked, a strict Content-Security-Policy, GET only -- nothing the app does
changes anything on disk. Every asset is in the package (static/, export/html.py's stylesheet);
the page loads nothing from anywhere else.

Needs the optional extra ``serve`` (Starlette and uvicorn): ``pip install 'sessionsift[serve]'``.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Callable

INSTALL_HINT = "pip install 'sessionsift[serve]'  (Starlette and uvicorn)"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class MissingExtra(ImportError):
    pass


def require() -> None:
    """Raise MissingExtra naming the install command when Starlette or uvicorn is missing."""
    import importlib

    missing = []
    for m in ("starlette", "uvicorn"):
        try:
            importlib.import_module(m)
        except ImportError:
            missing.append(m)
    if missing:
        raise MissingExtra(f"`sessionsift serve` needs {' and '.join(missing)}: {INSTALL_HINT}")


@dataclass
class Server:
    host: str
    port: int
    token: str
    app: Any
    store: Any

    @property
    def url(self) -> str:
        h = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{h}:{self.port}/?token={self.token}"


def build(selector: Callable[[tuple[str, ...]], Any], *, host: str = "127.0.0.1", port: int = 8765,
          token: str | None = None, watch: bool = True,
          worktree_roots: tuple[str | None, str | None, str | None] = (None, None, None),
          workers: bool = False) -> Server:
    """The app over the sessions `selector(targets)` selects (a Selection), not yet serving.
    `workers`: the live status and the usage reports are made in worker processes (serve/worker.py;
    `selector` must then pickle)."""
    require()
    from .app import make_app
    from .store import Store

    store = Store(selector, worktree_roots, workers=workers)
    tok = token or secrets.token_urlsafe(24)
    return Server(host, port, tok, make_app(store, token=tok, host=host, port=port, watch=watch), store)


def run(server: Server, on_ready: Callable[[Server], None] | None = None) -> None:
    """Serve until interrupted (uvicorn; the socket is bound before `on_ready` is called)."""
    import socket

    import uvicorn

    fam = socket.AF_INET6 if ":" in server.host else socket.AF_INET
    sock = socket.socket(fam, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((server.host, server.port))
    if server.port == 0:
        server.port = sock.getsockname()[1]
        from .app import make_app

        server.app = make_app(server.store, token=server.token, host=server.host, port=server.port)
    sock.listen(128)
    cfg = uvicorn.Config(server.app, log_level="warning", access_log=False, server_header=False,
                         proxy_headers=False, lifespan="on", timeout_graceful_shutdown=1)
    srv = uvicorn.Server(cfg)
    if on_ready is not None:
        on_ready(server)
    srv.run(sockets=[sock])
