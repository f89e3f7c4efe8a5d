"""The page's HTTP side: the assets, the login, and a small JSON API over one Shelf.

Every response carries a Content-Security-Policy that allows this server's own script, style and
images only (no inline script, no other origin, no frames), so text that slipped into the page as
markup would still run nothing. Reads need a session; writes also need the session's CSRF token
in a header, which a form or an image on another site cannot send.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from docshelf import __version__
from docshelf.errors import AccessError, ConfigError, DocshelfError, NotFoundError, StoreError
from docshelf.shelf import SearchRequest, Shelf
from docshelf.web.auth import Sessions
from docshelf.web.jobs import Jobs
from docshelf.web.views import empty_status, reader_payload, result_payload, status_payload

__all__ = ["ASSETS", "CSP", "PageOptions", "WebPage", "page_app"]

log = logging.getLogger("docshelf.web")

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
ASSETS = {  # served from the package: no build step, no CDN; the scripts are ES modules
    "app.js": "text/javascript; charset=utf-8",
    "dom.js": "text/javascript; charset=utf-8",
    "search.js": "text/javascript; charset=utf-8",
    "reader.js": "text/javascript; charset=utf-8",
    "shelf.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "icon.svg": "image/svg+xml",
}
_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer makes a form post say "Origin: null"
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
_STATUS = {NotFoundError: 404, AccessError: 403, ConfigError: 400, StoreError: 503}
_MAX_QUERY = 4000


@dataclass
class PageOptions:
    """How a server offers the page: its token (asked once at login), whether it writes, and
    the folders an index started from the page may reach (none: inside roots already indexed)."""

    token: str
    read_only: bool = False
    allow_ingest: list[Path] = field(default_factory=list)
    token_hint: str = "the token of this server"


class _Secured:
    """Adds the security headers to every response of ``app``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        await self.app(scope, receive, secured)


def _error(exc: DocshelfError) -> JSONResponse:
    status = next((code for kind, code in _STATUS.items() if isinstance(exc, kind)), 422)
    return JSONResponse({"error": str(exc)}, status_code=status, headers={"Cache-Control": "no-store"})


def _names(value: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in (value or "").split(",") if p.strip())


def _int(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    try:
        value = default if raw in (None, "") else int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, not {raw!r}") from None
    return min(high, max(low, value))


class Page:
    """The handlers, over one shelf."""

    def __init__(self, shelf: Shelf, options: PageOptions) -> None:
        self.shelf = shelf
        self.options = options
        self.sessions = Sessions(options.token, options.token_hint)
        self.jobs = Jobs(shelf, list(options.allow_ingest))
        self._facets: tuple[int, dict[str, Any]] | None = None
        root = files("docshelf.web").joinpath("static")
        self.index_html = root.joinpath("index.html").read_bytes()
        self.assets = {name: root.joinpath(name).read_bytes() for name in ASSETS}

    # ----- plumbing -----
    async def _call(self, request: Request, work: Callable[[], Any], write: bool = False) -> Response:
        if self.sessions.csrf_of(request) is None:
            return JSONResponse({"error": "log in first", "login": "/login"}, status_code=401)
        if write and self.options.read_only:
            return JSONResponse({"error": "this server is read-only"}, status_code=403)
        if write and not self.sessions.write_allowed(request):
            return JSONResponse({"error": "missing or wrong CSRF token; reload the page"}, status_code=403)
        try:
            body = await anyio.to_thread.run_sync(work)
        except DocshelfError as exc:
            return _error(exc)
        except OSError as exc:  # a full disk, a data dir gone read-only: one line, as the CLI says it
            why = (
                f"{exc.strerror or exc}; check free disk space and the permissions of the data dir and corpus"
            )
            return JSONResponse({"error": why}, status_code=503, headers={"Cache-Control": "no-store"})
        except Exception as exc:  # a bug of ours: one line for the page, the traceback in the log
            log.exception("web %s failed", request.url.path)
            why = f"unexpected {type(exc).__name__}: {exc}; this is a docshelf bug, please report it"
            return JSONResponse({"error": why}, status_code=500, headers={"Cache-Control": "no-store"})
        if isinstance(body, Response):
            return body
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    def _ready(self) -> Shelf:
        """The shelf with its index open (one made since the server started is opened now)."""
        shelf = self.shelf
        if not shelf.exists():
            how = "" if self.options.read_only else ", or index a folder from the Shelf tab"
            raise StoreError(
                f"there is no docshelf index at {shelf.settings.store.data_dir} yet: run "
                f"`docshelf index PATH`{how}"
            )
        shelf.start()  # idempotent: the index and model load in the background
        return shelf

    # ----- pages and assets -----
    async def index(self, request: Request) -> Response:
        if self.sessions.csrf_of(request) is None:  # after the login, back to this search
            where = (
                f"/login?next={quote('/?' + request.url.query, safe='')}" if request.url.query else "/login"
            )
            return RedirectResponse(where, status_code=303)
        return Response(self.index_html, media_type="text/html; charset=utf-8",
                        headers={"Cache-Control": "no-store"})  # fmt: skip

    async def asset(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return Response("not found", status_code=404)
        return Response(self.assets[name], media_type=ASSETS[name], headers={"Cache-Control": "no-cache"})

    # ----- reads -----
    async def session(self, request: Request) -> Response:
        def work() -> dict[str, Any]:
            return {
                "csrf": self.sessions.csrf_of(request), "read_only": self.options.read_only,
                "version": __version__, "model_state": self.shelf.model_state,
                "has_index": self.shelf.exists(),
            }  # fmt: skip

        return await self._call(request, work)

    async def search(self, request: Request) -> Response:
        q = request.query_params

        def work() -> dict[str, Any]:
            query = q.get("q", "").strip()
            if not query:
                return {"query": "", "hits": [], "note": None, "mode": None, "took_ms": 0}
            if len(query) > _MAX_QUERY:
                raise ConfigError(f"the query has {len(query)} characters; keep it under {_MAX_QUERY}")
            mode = q.get("mode") or None
            shelf = self._ready()
            wait = 0.0 if mode == "keyword" else min(1.0, shelf.settings.server.model_wait_s)
            req = SearchRequest(
                query, k=_int(request, "k", 20, 1, 100), mode=mode,  # type: ignore[arg-type]
                collections=_names(q.get("collection")), path_glob=q.get("glob") or None,
                tags=_names(q.get("tags")), file_types=_names(q.get("types")), model_wait_s=wait,
            )  # fmt: skip
            return result_payload(shelf.search(req))

        return await self._call(request, work)

    async def read(self, request: Request) -> Response:
        def work() -> dict[str, Any]:
            chunk = request.query_params.get("chunk", "")
            if not chunk:
                raise ConfigError("name the passage to read (chunk=)")
            before = _int(request, "before", 1, 0, 50)
            after = _int(request, "after", 1, 0, 50)
            return reader_payload(self._ready(), chunk, before, after)

        return await self._call(request, work)

    async def page(self, request: Request) -> Response:
        q = request.query_params

        def work() -> dict[str, Any]:
            doc = q.get("doc", "")
            if not doc:
                raise ConfigError("name the document (doc=)")
            page = _int(request, "page", 0, 0, 1_000_000) or None
            width = _int(request, "w", 1000, 200, 2400)
            got = self._ready().page_image(doc, page, chunk_id=q.get("chunk") or None, width=width)
            return {
                "doc_id": got.document.id, "path": got.document.path, "page": got.page,
                "pages": got.pages, "width": got.width, "height": got.height, "boxes": got.boxes,
                "note": got.note, "png": base64.b64encode(got.png).decode("ascii"),
            }  # fmt: skip

        return await self._call(request, work)

    async def facets(self, request: Request) -> Response:
        def work() -> dict[str, Any]:
            shelf = self._ready()
            generation = shelf.generation()
            if self._facets is None or self._facets[0] != generation:
                docs = shelf.list_documents()
                self._facets = (generation, {
                    "collections": shelf.collections(),
                    "file_types": sorted({d.file_type for d in docs}),
                    "tags": sorted({t for d in docs for t in d.tags})[:500],
                })  # fmt: skip
            return self._facets[1]

        return await self._call(request, work)

    async def status(self, request: Request) -> Response:
        def work() -> dict[str, Any]:
            allowed = [str(p) for p in self.options.allow_ingest]
            if not self.shelf.exists():  # an empty shelf: what to index, and where from
                try:
                    self._ready()
                except StoreError as exc:
                    return empty_status(str(exc), self.options.read_only, allowed)
            shelf = self._ready()
            roots = [r for name in shelf.collections() for r in shelf.roots(name)]
            return status_payload(shelf, shelf.status(), self.options.read_only, allowed or roots)

        return await self._call(request, work)

    # ----- writes -----
    async def start_job(self, request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return JSONResponse({"error": "send a JSON object"}, status_code=400)

        def work() -> dict[str, Any]:
            return self.jobs.start(
                str(body.get("action", "")), body.get("target"), body.get("collection")
            ).as_dict()

        return await self._call(request, work, write=True)

    async def job(self, request: Request) -> Response:
        def work() -> dict[str, Any]:
            job = self.jobs.get(request.path_params["job"])
            if job is None:
                raise NotFoundError("no such job; it may belong to an earlier run of the server")
            return job.as_dict()

        return await self._call(request, work)

    async def cancel(self, request: Request) -> Response:
        def work() -> dict[str, Any]:
            job = self.jobs.get(request.path_params["job"])
            if job is None:
                raise NotFoundError("no such job; it may belong to an earlier run of the server")
            job.cancel.set()
            return job.as_dict()

        return await self._call(request, work, write=True)

    async def current_job(self, request: Request) -> Response:
        return await self._call(
            request, lambda: {"job": self.jobs.last.as_dict() if self.jobs.last else None}
        )


@dataclass
class WebPage:
    """The page as an ASGI app, what makes a one-time login token for a link, and ``close()``,
    which cancels a running write job and waits for it, so the shelf closes under no writer."""

    app: ASGIApp
    login_link_token: Callable[[], str]
    close: Callable[[], None]


def page_app(shelf: Shelf, options: PageOptions) -> WebPage:
    page = Page(shelf, options)
    routes = [
        Route("/", page.index),
        Route("/login", page.sessions.login, methods=["GET", "POST"]),
        Route("/logout", page.sessions.logout, methods=["POST"]),
        Route("/static/{name}", page.asset),
        Route("/api/session", page.session),
        Route("/api/search", page.search),
        Route("/api/read", page.read),
        Route("/api/page", page.page),
        Route("/api/facets", page.facets),
        Route("/api/status", page.status),
        Route("/api/jobs", page.start_job, methods=["POST"]),
        Route("/api/jobs/current", page.current_job),
        Route("/api/jobs/{job}", page.job),
        Route("/api/jobs/{job}/cancel", page.cancel, methods=["POST"]),
    ]
    return WebPage(_Secured(Starlette(routes=routes)), page.sessions.login_link_token, page.jobs.close)
