"""The pages mounted beside the core ones (each adds its route and its navigation entry)."""

from __future__ import annotations


def routes(store, run_in_threadpool, cached_page) -> list:
    """`cached_page(key, make)`: the app's page answer (app.py: rendered once per generation)."""
    from starlette.routing import Route

    import asyncio

    from starlette.responses import StreamingResponse

    from . import live, scans, usage
    from .layout import PAGES

    def q(request) -> dict:
        return dict(request.query_params.items())

    async def usage_page(request):
        qq = q(request)
        return await cached_page(("usage", tuple(sorted(qq.items()))), lambda: usage.render(store, qq))

    async def live_page(request):
        return await cached_page(("live",), lambda: live.render(store))

    async def live_events(request):
        """Server-sent events: the state now, then again at every change the watcher sees (a
        comment every 15 s keeps the connection open)."""
        q: asyncio.Queue = asyncio.Queue(maxsize=1)
        store.listeners.add(q)

        async def stream():
            try:
                yield "retry: 1000\n\n"
                yield await run_in_threadpool(live.event, store)
                while True:
                    try:
                        await asyncio.wait_for(q.get(), timeout=15)
                    except asyncio.TimeoutError:
                        yield ": keep-alive\n\n"
                        continue
                    yield await run_in_threadpool(live.event, store)
            finally:
                store.listeners.discard(q)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"x-accel-buffering": "no"})

    async def clean_page(request):
        qq = q(request)
        return await cached_page(("clean", tuple(sorted(qq.items()))), lambda: scans.render_clean(store, qq))

    async def worktrees_page(request):
        repos = tuple(r for r in request.query_params.getlist("repo") if r)
        return await cached_page(("worktrees", repos), lambda: scans.render_worktrees(store, repos))

    for p in (("/usage", "Usage"), ("/live", "Live"), ("/clean", "Clean"), ("/worktrees", "Worktrees")):
        if p not in PAGES:
            PAGES.append(p)
    return [Route("/usage", usage_page), Route("/live", live_page), Route("/live/events", live_events),
            Route("/clean", clean_page), Route("/worktrees", worktrees_page)]
