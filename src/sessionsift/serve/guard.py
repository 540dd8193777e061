"""The app's door: every request passes here before any page is made (pure ASGI middleware).

In order: only GET and HEAD (405: nothing the app does changes anything on disk); the Host header
must name this server as it was bound (400: a DNS-rebinding page reaches us under a name of its
own); an Origin header, where the browser sends one, must be this server's (403); the token --
``?token=`` in the URL printed at start, or the cookie the first visit with it set -- must match
(403). A visit with the right token in its URL sets the cookie (HttpOnly, SameSite=Strict, named
by port so two servers on one machine do not overwrite each other's) and is redirected to the
same address without it, so the token does not stay in the address bar or the history.

Every answer carries a strict Content-Security-Policy (scripts, styles, connections and images
from this origin only, plus ``data:`` images; no inline script, no frame, no form posting
elsewhere), ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` and
``Cache-Control: no-store``.
"""

from __future__ import annotations

import hmac
from urllib.parse import parse_qsl, urlencode

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")

SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]

STATUS_METHOD = 405
STATUS_HOST = 400
STATUS_ORIGIN = 403
STATUS_TOKEN = 403


def cookie_name(port: int) -> str:
    return f"sessionsift_token_{port}"


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The Host header values this server answers to: the address it is bound to, and the
    loopback names when it is bound to loopback (never a name a DNS server could hand out)."""
    names = {host}
    if host in ("127.0.0.1", "localhost", "::1"):
        names |= {"127.0.0.1", "localhost", "[::1]"}
    out = set()
    for n in names:
        n = f"[{n}]" if ":" in n and not n.startswith("[") else n
        out.add(f"{n}:{port}".lower())
        if port == 80:
            out.add(n.lower())
    return frozenset(out)


class Guard:
    def __init__(self, app, *, token: str, host: str, port: int) -> None:
        self.app = app
        self.token = token
        self.port = port
        self.hosts = allowed_hosts(host, port)
        self.origins = frozenset(f"http://{h}" for h in self.hosts)
        self.cookie = cookie_name(port)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if scope["method"] not in ("GET", "HEAD"):
            return await _refuse(send, STATUS_METHOD, "only GET: this app changes nothing", [(b"allow", b"GET, HEAD")])
        if headers.get("host", "").lower() not in self.hosts:
            return await _refuse(send, STATUS_HOST, "this server does not answer to that Host")
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            return await _refuse(send, STATUS_ORIGIN, "a request from another origin")
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = next((v for k, v in query if k == "token"), None)
        if given is not None:
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return await _refuse(send, STATUS_TOKEN, "wrong token: open the address sessionsift serve printed")
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            loc = scope.get("path", "/") + (f"?{rest}" if rest else "")
            cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
            return await _send(send, 303, b"", [(b"location", loc.encode("latin-1")),
                                                 (b"set-cookie", cookie.encode("latin-1"))])
        if not hmac.compare_digest(_cookie(headers.get("cookie", ""), self.cookie).encode(), self.token.encode()):
            return await _refuse(send, STATUS_TOKEN, "no token: open the address sessionsift serve printed "
                                                     "(it ends in ?token=...)")

        async def secured(msg) -> None:
            if msg["type"] == "http.response.start":
                msg = {**msg, "headers": [*msg.get("headers", []), *SECURITY_HEADERS]}
            await send(msg)

        return await self.app(scope, receive, secured)


def _cookie(header: str, name: str) -> str:
    for part in header.split(";"):
        k, _, v = part.strip().partition("=")
        if k == name:
            return v
    return ""


async def _send(send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS, *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


async def _refuse(send, status: int, why: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await _send(send, status, f"{status}: {why}\n".encode(), extra)
