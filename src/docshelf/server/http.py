"""Streamable HTTP: loopback by default, a bearer token on every request, Host/Origin checks."""

from __future__ import annotations

import hmac
import logging

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from docshelf.config import Settings
from docshelf.server.http_guard import HeaderTimeoutProtocol, HostGuard
from docshelf.server.token import MIN_TOKEN_CHARS, TOKEN_FILE, load_or_create_token

__all__ = ["TOKEN_FILE", "BearerAuth", "http_app", "load_or_create_token", "serve_http"]

log = logging.getLogger("docshelf.server")
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


def http_app(server: MCPServer, settings: Settings, token: str) -> ASGIApp:
    """The MCP endpoint at /mcp behind the token and the DNS-rebinding checks."""
    cfg = settings.server
    hosts = [f"{h}:*" for h in _LOOPBACK] + [f"{cfg.host}:*"] + cfg.allowed_hosts
    origins = [f"http://{h}:*" for h in _LOOPBACK] + cfg.allowed_origins
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
    app = server.streamable_http_app(transport_security=security, host=cfg.host)
    return HostGuard(BearerAuth(app, token), hosts, origins)


async def serve_http(server: MCPServer, settings: Settings, token: str) -> None:
    """Serve until interrupted (uvicorn logs to stderr)."""
    import uvicorn

    cfg = settings.server
    if cfg.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("serving on %s: reachable from other machines; the token is the only guard", cfg.host)
    protocol = type("Protocol", (HeaderTimeoutProtocol,), {"header_timeout_s": cfg.header_timeout_s})
    config = uvicorn.Config(
        http_app(server, settings, token), host=cfg.host, port=cfg.port, log_level="warning",
        http=protocol,
    )  # fmt: skip
    await uvicorn.Server(config).serve()
