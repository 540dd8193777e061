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
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    from . import search, session, sessions
    from .guard import Guard
    from .layout import encoded, path_param, unsurrogate

    files = static_files()

    def q(request) -> dict:
        return {k: v for k, v in request.query_params.items()}

    def html(body: bytes) -> Response:
        return Response(body, media_type="text/html; charset=utf-8")

    async def cached_page(key: tuple, make) -> Response:
        """A page rendered for this generation is sent from the event loop (no thread); else it
        is made in a thread, once however many requests ask for it meanwhile (store.page)."""
        got = store.cached(key)
        if got is not None:
            return html(got)
        return html(await run_in_threadpool(store.page, key, make))

    async def sessions_page(request):
        qq = q(request)
        return await cached_page(("sessions", tuple(sorted(qq.items()))), lambda: sessions.render(store, qq))

    def ids(request) -> tuple[str, str]:
        return path_param(request, 2), path_param(request, 3)

    async def session_page(request):
        prov, sid = ids(request)
        key = ("session", prov, sid)
        got = store.cached(key)  # made for this generation: the session is in its listing
        if got is not None:
            return html(got)
        row = await run_in_threadpool(session.find, store, prov, sid)
        if row is None:
            return PlainTextResponse(f"404: no session {unsurrogate(sid)} of {unsurrogate(prov)} in this selection\n",
                                     status_code=404)
        return await cached_page(key, lambda: session.render(store, row))

    async def files_page(request):
        from . import files as F

        prov, sid = ids(request)
        path = request.query_params.get("path")
        key = ("files", prov, sid) if path is None else ("file", prov, sid, path)
        got = store.cached(key)
        if got is not None:
            return html(got)
        row = await run_in_threadpool(session.find, store, prov, sid)
        if row is None:
            return PlainTextResponse(f"404: no session {unsurrogate(sid)} of {unsurrogate(prov)} in this selection\n",
                                     status_code=404)
        if path is None:
            return await cached_page(key, lambda: F.render_list(store, row))
        return await cached_page(key, lambda: F.render_file(store, row, path))

    async def search_page(request):
        return html(encoded(await run_in_threadpool(search.render, store, q(request))))

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

    routes += extra.routes(store, run_in_threadpool, cached_page)

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
            if store.workers is not None:
                store.workers.close()

    app = Starlette(routes=routes, lifespan=lifespan)
    return Guard(app, token=token, host=host, port=port)
