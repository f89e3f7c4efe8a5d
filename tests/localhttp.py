"""A real HTTP server on 127.0.0.1 for the web and Drive tests: routes are functions of the
request, every request is recorded (and every accepted connection counted), and a "hang" route
blocks until the test ends."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    path: str  # with the query
    headers: dict[str, str]


Route = Callable[[Seen], Reply]


@dataclass
class Server:
    base: str
    routes: dict[str, Route]  # URL path (no query) -> handler
    seen: list[Seen]
    release: threading.Event  # set at the end: frees handlers that hang
    accepted: list[int] = field(default_factory=list)  # one entry per TCP connection accepted

    def paths(self) -> list[str]:
        return [s.path for s in self.seen]


@contextmanager
def serve(routes: dict[str, Route]) -> Iterator[Server]:
    seen: list[Seen] = []
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            req = Seen(self.path, {k.lower(): v for k, v in self.headers.items()})
            seen.append(req)
            route = routes.get(urlsplit(self.path).path)
            reply = route(req) if route else Reply(404, b"not here")
            if reply.status == -1:  # hang: never answer until the test is over
                release.wait(30)
                return
            self.send_response(reply.status)
            for k, v in reply.headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            if reply.status != 304:
                self.wfile.write(reply.body)

        def do_CONNECT(self) -> None:  # a proxy's tunnel request: recorded, and refused
            seen.append(Seen(f"CONNECT {self.path}", {k.lower(): v for k, v in self.headers.items()}))
            self.send_response(403)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    accepted: list[int] = []

    class Counting(ThreadingHTTPServer):
        def get_request(self) -> tuple[Any, Any]:
            conn = super().get_request()
            accepted.append(1)  # before any byte is read: a connect that sends nothing counts
            return conn

    httpd = Counting(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{httpd.server_port}", routes, seen, release, accepted)
    finally:
        release.set()
        httpd.shutdown()
        httpd.server_close()
