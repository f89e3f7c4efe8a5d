"""Web pages: fetch a URL (and same-site links to ``web.depth``) into a mirror folder.

Standard library only (urllib): robots.txt is honoured for every URL, each request has a
size and a time limit, and a re-fetch sends If-None-Match / If-Modified-Since so unchanged
pages cost a 304. A page that fails to re-fetch keeps its old copy (and old index entry).
"""

from __future__ import annotations

import hashlib
import posixpath
import time
import urllib.error
import urllib.request
import urllib.robotparser
from collections import deque
from dataclasses import dataclass, field
from email.message import Message
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from docshelf.config import WebSettings
from docshelf.sources.mirror import (
    Manifest,
    MirrorFile,
    read_manifest,
    safe_name,
    write_atomic,
    write_manifest,
)
from docshelf.sources.netguard import PrivateAddress, check_url, guarded_handlers, same_site
from docshelf.types import SkippedFile

__all__ = ["FetchError", "Fetcher", "WebResult", "crawl"]

_TYPES = {
    "text/html": ".html",
    "application/xhtml+xml": ".html",
    "application/pdf": ".pdf",
    "text/plain": ".txt",
    "text/markdown": ".md",
    "application/json": ".json",
    "application/epub+zip": ".epub",
}
# Link targets worth a request: pages without an extension, server pages, and documents.
_PAGE_EXTS = frozenset({"", ".html", ".htm", ".xhtml", ".php", ".asp", ".aspx", ".jsp", ".shtml"})
_DOC_EXTS = frozenset({".pdf", ".txt", ".md", ".json", ".epub", ".docx", ".pptx", ".xlsx", ".csv", ".rst"})


class FetchError(Exception):
    """A URL could not be fetched; the message is the reason shown to the user."""


@dataclass
class Response:
    status: int
    url: str  # after redirects
    headers: Message
    body: bytes = b""


class _SameSite(urllib.request.HTTPRedirectHandler):
    """Follow redirects to http(s) on the same site only, where robots.txt allows the target
    (urllib would follow ftp, and any host: a public page redirecting to an intranet one)."""

    def __init__(self, fetcher: Fetcher) -> None:
        self.fetcher = fetcher

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        if urlsplit(newurl).scheme not in ("http", "https"):
            raise FetchError(f"redirects to a non-web URL ({newurl})")
        if not same_site(req.full_url, newurl):
            raise FetchError(f"redirects to another site ({newurl}); index that URL itself to fetch it")
        if not urlsplit(req.full_url).path.endswith("/robots.txt"):
            refused = self.fetcher.refusal(newurl)
            if refused is not None:
                raise FetchError(f"redirects to {newurl}, which {refused[0]}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class Fetcher:
    """GETs with the ``web`` limits and a robots.txt cache per site; ``private_ok`` False (an
    agent's ingest) refuses to connect to loopback, private and link-local addresses."""

    def __init__(self, settings: WebSettings, private_ok: bool = True) -> None:
        self.settings = settings
        self.private_ok = private_ok
        self.max_bytes = int(settings.max_mb * 1_048_576)
        guards = [] if private_ok else guarded_handlers()
        self._opener = urllib.request.build_opener(_SameSite(self), *guards)
        # site -> (rules or None for "allow all", why robots.txt was unreachable or "")
        self._robots: dict[str, tuple[urllib.robotparser.RobotFileParser | None, str]] = {}

    def get(self, url: str, headers: dict[str, str] | None = None, max_bytes: int | None = None) -> Response:
        """The response (200 with body, or 304), or FetchError with the reason."""
        limit = self.max_bytes if max_bytes is None else max_bytes
        req = urllib.request.Request(url, headers={"User-Agent": self.settings.user_agent, **(headers or {})})
        started = time.monotonic()
        timeout = self.settings.timeout_s
        try:
            with self._opener.open(req, timeout=timeout) as resp:
                length = resp.headers.get("Content-Length")
                if length and length.isdigit() and int(length) > limit:
                    raise FetchError(f"larger than {limit / 1_048_576:g} MB (web.max_mb)")
                parts: list[bytes] = []
                size = 0
                while chunk := resp.read(65536):
                    size += len(chunk)
                    if size > limit:
                        raise FetchError(f"larger than {limit / 1_048_576:g} MB (web.max_mb)")
                    if time.monotonic() - started > timeout:  # a server trickling bytes
                        raise FetchError(f"took over {timeout:g} s (web.timeout_s)")
                    parts.append(chunk)
                return Response(resp.status, resp.url, resp.headers, b"".join(parts))
        except urllib.error.HTTPError as exc:
            if exc.code == 304:
                return Response(304, url, exc.headers)
            raise FetchError(f"HTTP {exc.code} {exc.reason}") from None
        except (TimeoutError, urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, PrivateAddress):
                raise FetchError(str(reason)) from None
            if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
                raise FetchError(f"no answer within {timeout:g} s (web.timeout_s)") from None
            raise FetchError(f"cannot fetch ({reason})") from None

    def refusal(self, url: str) -> tuple[str, bool] | None:
        """Why ``url`` is not fetched (a local address for an agent, or robots.txt) and whether
        that is only for now (robots.txt unreachable), or None when fetching it is allowed."""
        if not self.private_ok:
            try:
                check_url(url)  # before robots.txt, whose refusal would wrap the reason
            except PrivateAddress as exc:
                return str(exc), True  # a copy the user fetched before stays
        parts = urlsplit(url)
        site = f"{parts.scheme}://{parts.netloc}"
        if site not in self._robots:
            self._robots[site] = self._read_robots(site)
        rules, unreachable = self._robots[site]
        if rules is None or rules.can_fetch(self.settings.user_agent, url):
            return None
        if unreachable:
            return f"robots.txt could not be read ({unreachable}), so nothing is fetched from the site", True
        return "robots.txt does not allow fetching it", False

    def _read_robots(self, site: str) -> tuple[urllib.robotparser.RobotFileParser | None, str]:
        rules = urllib.robotparser.RobotFileParser(site + "/robots.txt")
        try:
            resp = self.get(site + "/robots.txt", max_bytes=512 * 1024)
        except FetchError as exc:
            text = str(exc)
            if text.startswith("HTTP 4") and not text.startswith(("HTTP 401", "HTTP 403")):
                return None, ""  # no robots.txt: everything is allowed
            # 401/403 (as urllib's own reader) or unreachable (RFC 9309): assume nothing is allowed
            rules.parse(["User-agent: *", "Disallow: /"])
            return rules, "" if text.startswith("HTTP 40") else text
        rules.parse(resp.body.decode("utf-8", "replace").splitlines())
        # http://site/robots.txt moved to https://site/robots.txt (or to www.site): the rules of
        # that site too, which the page's own redirect would otherwise read again
        final = urlsplit(resp.url)
        self._robots.setdefault(f"{final.scheme}://{final.netloc}", (rules, ""))
        return rules, ""


class _Links(HTMLParser):
    def __init__(self, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "base" and values.get("href"):
            self.base = urljoin(self.base, values["href"] or "")
        elif tag == "a" and values.get("href") and "nofollow" not in (values.get("rel") or ""):
            self.links.append(urljoin(self.base, values["href"] or "").split("#", 1)[0])


def _links(body: bytes, base: str) -> list[str]:
    parser = _Links(base)
    parser.feed(body.decode("utf-8", "replace"))
    return parser.links


def _extension(url: str, content_type: str) -> str | None:
    """The mirror file extension: from the content type, else from the URL for documents."""
    mime = content_type.split(";", 1)[0].strip().lower()
    ext = posixpath.splitext(urlsplit(url).path)[1].lower()
    if mime in _TYPES:
        return _TYPES[mime]
    return ext if ext in _DOC_EXTS else None


def _worth_following(url: str) -> bool:
    return posixpath.splitext(urlsplit(url).path)[1].lower() in _PAGE_EXTS | _DOC_EXTS


def rel_path(url: str, ext: str) -> str:
    """The mirror path of a page: its URL path, a hash of the query, and ``ext``."""
    parts = urlsplit(url)
    segments = [safe_name(unquote(s)) for s in parts.path.split("/") if s]
    if not segments or parts.path.endswith("/"):
        segments.append("index")
    stem, old_ext = posixpath.splitext(segments[-1])
    same = old_ext.lower() == ext or (ext == ".html" and old_ext.lower() in (".htm", ".xhtml"))
    if not same:  # "page.php" -> "page.php.html"
        stem = segments[-1]
    if parts.query:
        stem += "-" + hashlib.sha256(parts.query.encode()).hexdigest()[:8]
    segments[-1] = stem + ext
    return "/".join(segments)


def _charset_to_utf8(body: bytes, content_type: str) -> bytes:
    """HTML declared in another charset by the header only: re-encode it as UTF-8."""
    msg = Message()
    msg["content-type"] = content_type
    charset = msg.get_param("charset")
    if isinstance(charset, str) and charset.lower().replace("-", "") not in ("utf8", "usascii"):
        try:
            return body.decode(charset).encode("utf-8")
        except (LookupError, UnicodeDecodeError):
            return body
    return body


@dataclass
class WebResult:
    """What a crawl did to its mirror."""

    root: Path
    fetched: list[str] = field(default_factory=list)  # URLs with new content
    unchanged: list[str] = field(default_factory=list)  # 304 or same bytes
    removed: list[str] = field(default_factory=list)  # mirror files dropped (gone or unreachable now)
    skipped: list[SkippedFile] = field(default_factory=list)


def crawl(start: str, root: Path, settings: WebSettings, fetcher: Fetcher | None = None) -> WebResult:
    """Fetch ``start`` and its same-site links (to ``settings.depth``) into ``root``; the
    default fetcher may reach local addresses (``Fetcher(settings, private_ok=False)`` may not)."""
    fetcher = fetcher or Fetcher(settings)
    old = read_manifest(root) or Manifest("web", start)
    by_url = {rec.url: rel for rel, rec in old.files.items()}
    manifest = Manifest("web", start)
    result = WebResult(root)
    site = urlsplit(start)[:2]
    queue: deque[tuple[str, int]] = deque([(start, 0)])
    seen = {start}
    while queue:
        url, depth = queue.popleft()
        if len(manifest.files) >= settings.max_pages:
            result.skipped.append(
                SkippedFile(url, f"not fetched: {settings.max_pages} pages already (web.max_pages)")
            )
            break
        page = _fetch_one(url, old, by_url, manifest, root, fetcher, result)
        if page is None or depth >= settings.depth:
            continue
        for link in _links(*page):
            if urlsplit(link)[:2] == site and link not in seen and _worth_following(link):
                seen.add(link)
                queue.append((link, depth + 1))
    for rel in old.files.keys() - manifest.files.keys():
        (root / rel).unlink(missing_ok=True)
        result.removed.append(rel)
    write_manifest(root, manifest)
    return result


def _fetch_one(
    url: str, old: Manifest, by_url: dict[str, str], manifest: Manifest, root: Path,
    fetcher: Fetcher, result: WebResult,
) -> tuple[bytes, str] | None:  # fmt: skip
    """Fetch one URL into the mirror; an HTML page's body and final URL (for links), or None."""
    prev_rel = by_url.get(url)
    prev = old.files.get(prev_rel) if prev_rel else None
    refused = fetcher.refusal(url)
    if refused is not None:
        why, for_now = refused
        if for_now and prev is not None and prev_rel is not None:
            why += "; the copy fetched before stays indexed"
            result.skipped.append(SkippedFile(url, why))
            return _keep(url, prev_rel, prev, root, manifest)  # offline: no reason to drop it
        result.skipped.append(SkippedFile(url, why))
        return None
    headers: dict[str, str] = {}
    if prev is not None and prev_rel is not None and (root / prev_rel).is_file():
        if prev.etag:
            headers["If-None-Match"] = prev.etag
        if prev.last_modified:
            headers["If-Modified-Since"] = prev.last_modified
    try:
        resp = fetcher.get(url, headers)
    except FetchError as exc:
        gone = str(exc).startswith(("HTTP 404", "HTTP 410"))
        keep = "" if gone or prev is None else "; the copy fetched before stays indexed"
        result.skipped.append(SkippedFile(url, f"{exc}{keep}"))
        if prev is not None and prev_rel is not None and not gone:
            return _keep(url, prev_rel, prev, root, manifest)
        return None
    if resp.status == 304 and prev is not None and prev_rel is not None:
        manifest.files[prev_rel] = MirrorFile(
            url, resp.headers.get("ETag") or prev.etag,
            resp.headers.get("Last-Modified") or prev.last_modified, time.time(),
        )  # fmt: skip
        result.unchanged.append(url)
        return _keep(url, prev_rel, manifest.files[prev_rel], root, manifest)
    content_type = resp.headers.get("Content-Type", "")
    ext = _extension(resp.url, content_type)
    if ext is None:
        result.skipped.append(SkippedFile(url, f"unsupported content type {content_type or 'unknown'}"))
        return None
    rel = rel_path(url, ext)
    body = _charset_to_utf8(resp.body, content_type) if ext == ".html" else resp.body
    target = root / rel
    if target.is_file() and target.read_bytes() == body:
        result.unchanged.append(url)  # same bytes: keep the mtime, sync has nothing to do
    else:
        write_atomic(target, body)
        result.fetched.append(url)
    etag, modified = resp.headers.get("ETag"), resp.headers.get("Last-Modified")
    manifest.files[rel] = MirrorFile(url, etag, modified, time.time())
    return (body, resp.url) if ext == ".html" else None


def _keep(url: str, rel: str, rec: MirrorFile, root: Path, manifest: Manifest) -> tuple[bytes, str] | None:
    """Keep the copy fetched before; an HTML page's links are still followed from it, so one
    failed page does not drop the pages below it."""
    manifest.files[rel] = rec
    if not rel.endswith(".html"):
        return None
    try:
        return (root / rel).read_bytes(), url
    except OSError:
        return None
