"""The web page on a real loopback port, in this process: the app `docshelf ui` serves (or, with
``mcp=True``, what `docshelf serve --http` serves), run by uvicorn on a thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx2
import uvicorn

if TYPE_CHECKING:
    from collections.abc import Callable

    from docshelf.config import Settings
    from docshelf.shelf import Shelf

TOKEN = "test-token-0123456789abcdef"


@dataclass
class Page:
    base: str  # http://127.0.0.1:PORT
    port: int
    new_link: Callable[[], str]  # a fresh one-time login URL

    def client(self, login: bool = True) -> httpx2.Client:
        """An HTTP client, logged in (it keeps the session cookie) unless ``login`` is False."""
        client = httpx2.Client(base_url=self.base, timeout=30, follow_redirects=False)
        if login:
            reply = client.get(self.new_link())
            assert reply.status_code == 303, reply.text
        return client

    def csrf(self, client: httpx2.Client) -> str:
        return str(client.get("/api/session").json()["csrf"])


@contextmanager
def serve_page(shelf: Shelf, settings: Settings, mcp: bool = False) -> Iterator[Page]:
    from docshelf.server.http import http_app, page_only_app

    if mcp:
        from docshelf.server.app import build_server

        server, _ = build_server(settings, shelf)
        app = http_app(server, settings, TOKEN, shelf)
        links = None
    else:
        app, links = page_only_app(shelf, settings, TOKEN)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    config = uvicorn.Config(app, log_level="warning", lifespan="on" if mcp else "off")
    server_ = uvicorn.Server(config)
    thread = threading.Thread(target=server_.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server_.started and time.monotonic() < deadline:
        time.sleep(0.02)

    def new_link() -> str:
        assert links is not None, "the MCP server's page has no login links; log in with the token"
        return f"{base}/login?token={links()}"

    try:
        yield Page(base, port, new_link)
    finally:
        server_.should_exit = True
        thread.join(10)
        sock.close()
