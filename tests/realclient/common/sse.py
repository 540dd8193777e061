"""The stdlib HTTP/SSE plumbing the scripted mocks share: a ``ThreadingHTTPServer`` bound to
127.0.0.1 serving in a daemon thread, a JSON-lines log of every request, and a request handler base
with JSON replies and SSE headers. Each mock keeps its own protocol: its routing, its frames and what
it remembers of the turns it served."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def event(kind: str, data: dict) -> bytes:
    """One SSE frame with an event name: ``event: KIND`` / ``data: <compact JSON>``."""
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class Handler(BaseHTTPRequestHandler):
    """HTTP/1.1, silent; ``extra_headers`` go on every JSON reply and SSE stream."""

    protocol_version = "HTTP/1.1"
    extra_headers: tuple[tuple[str, str], ...] = ()

    def log_message(self, *a):  # silence stderr
        pass

    def read_json(self) -> tuple[bytes, dict]:
        """The request body, raw and parsed (``{}`` when it is empty or not JSON)."""
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        return raw, body

    def send_json(self, code: int, obj) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in self.extra_headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def start_sse(self) -> None:
        """Status 200 and the headers of an event stream the server closes when it is done."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        for k, v in self.extra_headers:
            self.send_header(k, v)
        self.send_header("connection", "close")
        self.end_headers()


class MockServer:
    """A mock on ``127.0.0.1:port`` (0: any free port). Subclasses set up their own state, then call
    ``super().__init__``, and give :meth:`handler` (a :class:`Handler` subclass, usually closing over
    the mock). ``with mock:`` serves in a daemon thread and shuts the server down at the end."""

    url_path = ""
    """What :attr:`base_url` adds after the port (``/v1`` for the OpenAI-style clients)."""
    log_sort_keys = False

    def __init__(self, log_path: str | None = None, port: int = 0):
        self.log_path = log_path
        self._lock = threading.Lock()
        self.requests: list[dict] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self.handler())
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread: threading.Thread | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.url_path}"

    def start(self):
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *a) -> None:
        self.stop()

    def log(self, rec: dict) -> None:
        """Keep ``rec`` in :attr:`requests` and append it to the log file as one JSON line."""
        with self._lock:
            self.requests.append(rec)
            if self.log_path:
                with open(self.log_path, "a") as f:
                    f.write(json.dumps(rec, sort_keys=self.log_sort_keys) + "\n")
