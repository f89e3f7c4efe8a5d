"""Streamable HTTP: loopback by default, a bearer token on every request, Host/Origin checks.

The same port serves the web page at ``/`` (its login asks for the same token once, then keeps
a session cookie); `docshelf ui` serves the page alone on a free loopback port.
"""

from __future__ import annotations

import hmac
import logging
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from docshelf.config import Settings
from docshelf.server.http_guard import HeaderTimeoutProtocol, HostGuard
from docshelf.server.token import MIN_TOKEN_CHARS, TOKEN_FILE, load_or_create_token

if TYPE_CHECKING:
    from docshelf.shelf import Shelf
    from docshelf.web import WebPage

__all__ = [
    "TOKEN_FILE",
    "BearerAuth",
    "http_app",
    "load_or_create_token",
    "page_only_app",
    "serve_http",
    "serve_page",
]

log = logging.getLogger("docshelf.server")
HOW_SERVE = "`docshelf serve --http` prints it when it makes it."
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


class BearerAuth:
    """ASGI wrapper answering 401 unless ``Authorization: Bearer <token>`` matches."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if len(token.strip()) < MIN_TOKEN_CHARS:  # an empty token would let every request in
            raise ValueError("refusing to serve HTTP with an empty or short bearer token")
        self.app = app
        self.token = token.strip().encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scheme, _, value = Headers(scope=scope).get("authorization", "").partition(" ")
            # compare_digest: no timing hint about how much of a guessed token was right
            if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), self.token):
                response = JSONResponse(
                    {
                        "error": "unauthorized",
                        "error_description": "send Authorization: Bearer <token>; the token is in "
                        f"the docshelf data dir ({TOKEN_FILE}) or the server.token setting",
                    },
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="docshelf"'},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _checks(settings: Settings, host: str) -> tuple[list[str], list[str]]:
    """The Host and Origin values this server answers (loopback, its bind address, configured)."""
    cfg = settings.server
    hosts = [f"{h}:*" for h in _LOOPBACK] + [f"{host}:*"] + cfg.allowed_hosts
    origins = [f"http://{h}:*" for h in _LOOPBACK] + cfg.allowed_origins
    return hosts, origins


def _page(shelf: Shelf, settings: Settings, token: str, how: str) -> WebPage:
    """The web page over ``shelf``; ``how`` says how to get the token, after where it is, on the
    login form."""
    from docshelf.web import PageOptions, page_app

    cfg = settings.server
    where = "the server.token setting" if cfg.token is not None else str(settings.store.data_dir / TOKEN_FILE)
    options = PageOptions(
        token, read_only=cfg.read_only, allow_ingest=list(cfg.allow_ingest),
        token_hint=f"The token is in {where}; {how}",
    )  # fmt: skip
    return page_app(shelf, options)


class _Doors:
    """/mcp (and its lifespan) to the MCP app behind the bearer token, every other path to the page."""

    def __init__(self, mcp: ASGIApp, page: ASGIApp) -> None:
        self.mcp = mcp
        self.page = page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path == "/mcp" or path.startswith("/mcp/"):
            await self.mcp(scope, receive, send)
        else:
            await self.page(scope, receive, send)


def http_app(server: MCPServer, settings: Settings, token: str, page: WebPage | None = None) -> ASGIApp:
    """The MCP endpoint at /mcp behind the token and the DNS-rebinding checks; with ``page``, the
    web page at every other path behind the same Host/Origin checks and its own login."""
    cfg = settings.server
    hosts, origins = _checks(settings, cfg.host)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
    app: ASGIApp = BearerAuth(server.streamable_http_app(transport_security=security, host=cfg.host), token)
    if page is not None:
        app = _Doors(app, page.app)
    return HostGuard(app, hosts, origins)


def _protocol(settings: Settings) -> type:
    return type("Protocol", (HeaderTimeoutProtocol,), {"header_timeout_s": settings.server.header_timeout_s})


async def serve_http(server: MCPServer, settings: Settings, token: str, shelf: Shelf | None = None) -> None:
    """Serve until interrupted (uvicorn logs to stderr); with ``shelf``, the web page too."""
    import uvicorn

    cfg = settings.server
    if cfg.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("serving on %s: reachable from other machines; the token is the only guard", cfg.host)
    page = None if shelf is None else _page(shelf, settings, token, HOW_SERVE)
    config = uvicorn.Config(
        http_app(server, settings, token, page), host=cfg.host, port=cfg.port, log_level="warning",
        http=_protocol(settings),
    )  # fmt: skip
    try:
        await uvicorn.Server(config).serve()
    finally:
        if page is not None:  # a write job from the page stops before the shelf is closed
            await anyio.to_thread.run_sync(page.close)


def page_only_app(shelf: Shelf, settings: Settings, token: str) -> tuple[ASGIApp, WebPage]:
    """The web page alone on loopback (`docshelf ui`), behind the Host/Origin checks."""
    page = _page(shelf, settings, token, "or start `docshelf ui` again for a new login link.")
    hosts, origins = _checks(settings, "127.0.0.1")
    return HostGuard(page.app, hosts, origins), page


async def serve_page(
    shelf: Shelf, settings: Settings, token: str, port: int, listening: Callable[[str], None]
) -> None:
    """Serve the page on 127.0.0.1:``port`` (0: a free one) until interrupted; ``listening`` gets
    the login URL, with a one-time token, once the port accepts connections."""
    import uvicorn

    app, page = page_only_app(shelf, settings, token)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        from docshelf.errors import ConfigError

        raise ConfigError(
            f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); pick another --port"
        ) from None
    sock.listen(128)
    bound = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", http=_protocol(settings))
    listening(f"http://127.0.0.1:{bound}/login?token={page.login_link_token()}")
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        sock.close()
        await anyio.to_thread.run_sync(page.close)
