"""The web page on a real loopback port, in this process: the app `docshelf ui` serves (or, with
``mcp=True``, what `docshelf serve --http` serves), run by uvicorn on a thread."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx2
import uvicorn

from docshelf.embed import HashEmbedder

if TYPE_CHECKING:
    from collections.abc import Callable

    from docshelf.config import Settings
    from docshelf.embed.base import Vectors
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

    guarded, page = page_only_app(shelf, settings, TOKEN)
    app = guarded
    if mcp:
        from docshelf.server.app import build_server

        server, _ = build_server(settings, shelf)
        app = http_app(server, settings, TOKEN, page)
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
        return f"{base}/login?token={page.login_link_token()}"

    try:
        yield Page(base, port, new_link)
    finally:
        server_.should_exit = True
        thread.join(10)
        sock.close()
        page.close()


# ----- a real browser: Debian's chromium driven by Playwright (never a downloaded browser) -----
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


# read at import: each test's clean environment drops DOCSHELF_* variables
_CHROMIUM = os.environ.get("DOCSHELF_TEST_CHROMIUM")


def chromium_path() -> str | None:
    import shutil

    return _CHROMIUM or shutil.which("chromium") or shutil.which("chromium-browser")


def login(page: object, served: Page) -> None:
    """Open the page through a fresh one-time login link and wait until it is ready."""
    page.goto(served.new_link())  # type: ignore[attr-defined]
    page.wait_for_selector("body[data-ready=true]", state="attached")  # type: ignore[attr-defined]


def shown_query(page: object, query: str, timeout: float = 30_000) -> None:
    """Wait until the hits for ``query`` are on the page (a CSS attribute test: the page's CSP
    forbids the eval that Playwright's wait_for_function needs)."""
    quoted = query.replace("\\", "\\\\").replace('"', '\\"')
    page.wait_for_selector(f'body[data-query="{quoted}"]', state="attached", timeout=timeout)  # type: ignore[attr-defined]


def save_screenshot(page: object, name: str) -> None:
    """With WEB_SCREENSHOTS=DIR, a small PNG of the page (256 colours) for docs/web.md (not a
    DOCSHELF_ variable: the tests clear those)."""
    import io
    from pathlib import Path

    where = os.environ.get("WEB_SCREENSHOTS")
    if not where:
        return
    from PIL import Image

    shot = Image.open(io.BytesIO(page.screenshot(type="png")))  # type: ignore[attr-defined]
    shot.convert("RGB").quantize(256, dither=Image.Dither.NONE).save(Path(where) / name, optimize=True)


def launch_browser() -> Iterator[object]:
    """A headless chromium for a test module, or a skip that says what to install."""
    import pytest

    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        pytest.skip("no playwright: `pip install -e '.[dev]'` installs it (it drives Debian's chromium)")
    path = chromium_path()
    if path is None:
        pytest.skip(
            "no chromium: `apt-get install chromium` (or set DOCSHELF_TEST_CHROMIUM) for the browser tests"
        )
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        except Error as exc:
            pytest.skip(f"chromium at {path} does not start: {str(exc).splitlines()[0]}")
        try:
            yield browser
        finally:
            browser.close()


class GatedEmbedder(HashEmbedder):
    """The hash embedder, holding every batch after the first few until ``gate`` opens: a write
    job is caught half-way, wherever the machine's speed would have it, to watch and cancel."""

    def __init__(self, free_batches: int = 3) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.free = free_batches
        self.batches = 0

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.batches += 1
        if self.batches > self.free:
            self.gate.wait(60)
        return super().embed_documents(texts)
