"""Who may use the page: the server's token, asked once, then a session cookie; a CSRF token per
session for every write.

The cookie is HttpOnly (no script reads it) and SameSite=Strict (no other site's page sends
it), named after the port, so two servers on one host do not log each other out. `docshelf ui`
prints a login link carrying a one-time token, as Jupyter does; it is spent on first use, so a
link left in a terminal's scroll-back or a browser's history opens nothing later.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import secrets
import threading
from collections import OrderedDict
from importlib.resources import files
from urllib.parse import parse_qs

import anyio
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

__all__ = ["CSRF_HEADER", "Sessions", "cookie_name"]

CSRF_HEADER = "x-docshelf-csrf"
_MAX_SESSIONS = 256
_MAX_FORM_BYTES = 4096


def _next(where: str | None) -> str:
    """Where to go after logging in: a search of this page (``/?q=...``), never another site."""
    if not where or not where.startswith("/?") or any(c in where for c in "\\\r\n"):
        return "/"
    return where


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def cookie_name(request: Request) -> str:
    port = request.scope.get("server", (None, None))[1] or ""
    return f"docshelf-{port}" if port else "docshelf"


class Sessions:
    """The logins of one server: its token, one-time link tokens, and live sessions (in memory:
    a restarted server asks for the token again)."""

    def __init__(self, token: str, hint: str) -> None:
        self._token = token.strip().encode()
        self.hint = hint  # where the user finds the token, shown on the login form
        self._links: set[str] = set()
        self._sessions: OrderedDict[str, str] = OrderedDict()  # digest of the cookie -> CSRF token
        self._lock = threading.Lock()

    def login_link_token(self) -> str:
        """A new one-time token for a login link (`docshelf ui`)."""
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._links.add(_digest(token))
        return token

    def _spend_link(self, given: str) -> bool:
        with self._lock:
            key = _digest(given)
            if key in self._links:
                self._links.discard(key)
                return True
        return False

    def _is_token(self, given: str) -> bool:
        # compare_digest: no timing hint about how much of a guessed token was right
        return hmac.compare_digest(given.strip().encode(), self._token)

    def _open(self) -> str:
        sid = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[_digest(sid)] = secrets.token_urlsafe(24)
            while len(self._sessions) > _MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return sid

    def csrf_of(self, request: Request) -> str | None:
        """The CSRF token of the request's session; None when it has none (not logged in)."""
        sid = request.cookies.get(cookie_name(request))
        if not sid:
            return None
        with self._lock:
            return self._sessions.get(_digest(sid))

    def write_allowed(self, request: Request) -> bool:
        """A logged-in session whose page sent its CSRF token back in the header."""
        csrf = self.csrf_of(request)
        sent = request.headers.get(CSRF_HEADER, "")
        return csrf is not None and hmac.compare_digest(sent.encode(), csrf.encode())

    def _close(self, request: Request) -> None:
        sid = request.cookies.get(cookie_name(request))
        if sid:
            with self._lock:
                self._sessions.pop(_digest(sid), None)

    # ----- the handlers -----
    async def login(self, request: Request) -> Response:
        if request.method == "GET":
            link = request.query_params.get("token")
            goto = _next(request.query_params.get("next"))
            if link is None:
                return self._form(request, None, 200, goto)
            if self._spend_link(link):
                return self._enter(request, goto)
            return self._form(
                request,
                "This login link was used already or belongs to an earlier run: paste the token.",
                401,
            )
        body = await request.body()
        form = parse_qs(body[:_MAX_FORM_BYTES].decode("utf-8", "replace"))
        given, goto = form.get("token", [""])[0], _next(form.get("next", [""])[0])
        if given and self._is_token(given):
            return self._enter(request, goto)
        await anyio.sleep(0.5)  # a guess per half second per connection
        return self._form(request, "That is not this server's token.", 401, goto)

    async def logout(self, request: Request) -> Response:
        if not self.write_allowed(request):
            return Response("missing or wrong CSRF token", status_code=403)
        self._close(request)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(cookie_name(request), path="/", httponly=True, samesite="strict")
        return response

    def _enter(self, request: Request, goto: str = "/") -> Response:
        response = RedirectResponse(goto, status_code=303)
        response.set_cookie(
            cookie_name(request), self._open(), path="/", httponly=True, samesite="strict",
            secure=request.url.scheme == "https",
        )  # fmt: skip
        return response

    def _form(self, request: Request, message: str | None, status: int, goto: str = "/") -> Response:
        page = files("docshelf.web").joinpath("static/login.html").read_text("utf-8")
        said = f'<p class="error" role="alert">{html.escape(message)}</p>' if message else ""
        page = page.replace("<!--message-->", said).replace("<!--hint-->", html.escape(self.hint))
        page = page.replace(
            'name="next" type="hidden" value="/"', f'name="next" type="hidden" value="{html.escape(goto)}"'
        )
        return HTMLResponse(page, status_code=status, headers={"Cache-Control": "no-store"})
