"""The pages mounted beside the core ones (each adds its route and its navigation entry)."""

from __future__ import annotations


def routes(store, run_in_threadpool) -> list:
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    from . import usage
    from .layout import PAGES

    def q(request) -> dict:
        return dict(request.query_params.items())

    async def usage_page(request):
        return HTMLResponse(await run_in_threadpool(lambda: store.page(("usage", tuple(sorted(q(request).items()))),
                                                                       lambda: usage.render(store, q(request)))))

    for p in (("/usage", "Usage"),):
        if p not in PAGES:
            PAGES.append(p)
    return [Route("/usage", usage_page)]
