"""The ASGI application (Starlette): routes to the pages, the packaged static files, the guard in
front of everything (guard.py), and the watcher that keeps the store current (store.py)."""

from __future__ import annotations

import asyncio
import contextlib
from importlib import resources

from .store import Store

STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".svg": "image/svg+xml", ".png": "image/png"}


def static_files() -> dict[str, tuple[bytes, str]]:
    """name -> (bytes, content type) of every file in the package's static/ directory, plus the
    export renderer's stylesheet (export/html.py CSS) as export.css: read once, at start."""
    from ..export.html import CSS

    out = {"export.css": (CSS.encode(), STATIC_TYPES[".css"])}
    for f in resources.files(__package__).joinpath("static").iterdir():
        suffix = "." + f.name.rsplit(".", 1)[-1]
        if f.is_file() and suffix in STATIC_TYPES:
            out[f.name] = (f.read_bytes(), STATIC_TYPES[suffix])
    return out


def make_app(store: Store, *, token: str, host: str, port: int, watch: bool = True):
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
    from starlette.routing import Route

    from . import search, session, sessions
    from .guard import Guard

    files = static_files()

    def q(request) -> dict:
        return {k: v for k, v in request.query_params.items()}

    async def sessions_page(request):
        return HTMLResponse(await run_in_threadpool(lambda: store.page(("sessions", tuple(sorted(q(request).items()))),
                                                                       lambda: sessions.render(store, q(request)))))

    async def session_page(request):
        prov, sid = request.path_params["provider"], request.path_params["sid"]
        row = await run_in_threadpool(session.find, store, prov, sid)
        if row is None:
            return PlainTextResponse(f"404: no session {sid} of {prov} in this selection\n", status_code=404)
        return HTMLResponse(await run_in_threadpool(lambda: store.page(("session", prov, sid),
                                                                       lambda: session.render(store, row))))

    async def files_page(request):
        from . import files as F

        prov, sid = request.path_params["provider"], request.path_params["sid"]
        row = await run_in_threadpool(session.find, store, prov, sid)
        if row is None:
            return PlainTextResponse(f"404: no session {sid} of {prov} in this selection\n", status_code=404)
        path = request.query_params.get("path")
        if path is None:
            return HTMLResponse(await run_in_threadpool(lambda: store.page(("files", prov, sid),
                                                                           lambda: F.render_list(store, row))))
        return HTMLResponse(await run_in_threadpool(lambda: store.page(("file", prov, sid, path),
                                                                       lambda: F.render_file(store, row, path))))

    async def search_page(request):
        return HTMLResponse(await run_in_threadpool(search.render, store, q(request)))

    async def static(request):
        got = files.get(request.path_params["name"])
        if got is None:
            return PlainTextResponse("404: no such file\n", status_code=404)
        return Response(got[0], media_type=got[1])

    async def favicon(request):
        return Response(b"", status_code=204)

    routes = [Route("/", sessions_page), Route("/session/{provider}/{sid}", session_page),
              Route("/session/{provider}/{sid}/files", files_page),
              Route("/search", search_page), Route("/static/{name}", static), Route("/favicon.ico", favicon)]
    from . import extra

    routes += extra.routes(store, run_in_threadpool)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        stop = asyncio.Event()
        task = asyncio.create_task(store.watch(stop)) if watch else None
        try:
            yield
        finally:
            stop.set()
            if task is not None:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    app = Starlette(routes=routes, lifespan=lifespan)
    return Guard(app, token=token, host=host, port=port)
