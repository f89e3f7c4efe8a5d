"""`docshelf index URL` against a real HTTP server on 127.0.0.1: robots.txt, same-site links to a
depth, size and time limits, ETag/Last-Modified re-fetches, URL citations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from docshelf.cli import app
from docshelf.config import WebSettings, load_settings
from docshelf.shelf import Shelf
from docshelf.sources.mirror import read_manifest
from docshelf.sources.web import Fetcher, FetchError, crawl, rel_path
from localhttp import Reply, Seen, Server, serve

INDEX = b"""<html><head><title>Docs home</title></head><body><nav>menu</nav>
<h1>Operations docs</h1><p>Start here for the pager rotation.</p>
<a href="guide.html">guide</a> <a href="/private/secret.html">secret</a>
<a href="big.html">big</a> <a href="slow">slow</a> <a href="latin.html">latin</a>
<a href="/docs/manual.txt#part-2">manual</a> <a href="logo.gif">logo</a>
<a href="http://elsewhere.invalid/page.html">off site</a></body></html>"""


class Site:
    """The pages; ``guide`` changes when ``version`` does."""

    def __init__(self) -> None:
        self.version = 1
        self.gone: set[str] = set()

    def guide(self, req: Seen) -> Reply:
        etag = f'"v{self.version}"'
        if req.headers.get("if-none-match") == etag:
            return Reply(304, headers={"ETag": etag})
        body = f"<h1>Guide</h1><p>Rotate the vault keys every {90 // self.version} days.</p>"
        return Reply(200, body.encode(), {"Content-Type": "text/html; charset=utf-8", "ETag": etag})

    def manual(self, req: Seen) -> Reply:
        modified = "Wed, 01 Jan 2025 00:00:00 GMT"
        if "/docs/manual.txt" in self.gone:
            return Reply(404)
        if req.headers.get("if-modified-since") == modified:
            return Reply(304)
        return Reply(200, b"Manual: escalate to the duty manager.", {"Content-Type": "text/plain",
                     "Last-Modified": modified})  # fmt: skip

    def routes(self) -> dict[str, object]:
        html = {"Content-Type": "text/html"}
        return {
            "/robots.txt": lambda r: Reply(200, b"User-agent: *\nDisallow: /private/\n"),
            "/docs/": lambda r: Reply(200, INDEX, html),
            "/docs/guide.html": self.guide,
            "/docs/manual.txt": self.manual,
            "/private/secret.html": lambda r: Reply(200, b"<p>secret</p>", html),
            "/docs/big.html": lambda r: Reply(200, b"<p>" + b"x" * 2_000_000 + b"</p>", html),
            "/docs/slow": lambda r: Reply(-1),
            "/docs/latin.html": lambda r: Reply(
                200,
                "<p>Grüße aus Köln</p>".encode("latin-1"),
                {"Content-Type": "text/html; charset=ISO-8859-1"},
            ),
            "/docs/logo.gif": lambda r: Reply(200, b"GIF89a", {"Content-Type": "image/gif"}),
        }


@pytest.fixture
def site() -> Site:
    return Site()


@pytest.fixture
def server(site: Site) -> object:
    with serve(site.routes()) as srv:  # type: ignore[arg-type]
        yield srv


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.setenv("DOCSHELF_STORE__DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DOCSHELF_WEB__DEPTH", "1")
    monkeypatch.setenv("DOCSHELF_WEB__TIMEOUT_S", "0.5")
    monkeypatch.setenv("DOCSHELF_WEB__MAX_MB", "1")
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def index(cli: CliRunner, *args: str) -> dict[str, object]:
    result = cli.invoke(app, ["index", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_index_url_follows_site_links_and_respects_limits(
    cli: CliRunner, server: Server, tmp_path: Path
) -> None:
    report = index(cli, server.base + "/docs/")
    assert report["added"] == 4
    (mirror,) = (tmp_path / "data" / "sources").glob("web-127.0.0.1-*")
    manifest = read_manifest(mirror)
    assert manifest is not None and manifest.url == server.base + "/docs/"
    assert {rel: f.url for rel, f in manifest.files.items()} == {
        "docs/index.html": server.base + "/docs/",
        "docs/guide.html": server.base + "/docs/guide.html",
        "docs/latin.html": server.base + "/docs/latin.html",
        "docs/manual.txt": server.base + "/docs/manual.txt",  # the #fragment dropped
    }
    reasons = {s["path"]: s["reason"] for s in report["skipped"]}  # type: ignore[attr-defined]
    assert "robots.txt" in reasons[server.base + "/private/secret.html"]
    assert "web.max_mb" in reasons[server.base + "/docs/big.html"]
    assert "no answer within 0.5 s" in reasons[server.base + "/docs/slow"]
    paths = server.paths()
    assert "/private/secret.html" not in paths and "/robots.txt" in paths
    assert "/docs/logo.gif" not in paths  # not a page or document: never requested
    assert not any("elsewhere" in p for p in paths)

    result = cli.invoke(app, ["search", "vault keys", "--json", "--mode", "keyword"])
    hit = json.loads(result.stdout)["hits"][0]
    assert hit["citation"] == server.base + "/docs/guide.html"
    result = cli.invoke(app, ["search", "Grüße Köln", "--json", "--mode", "keyword"])
    assert json.loads(result.stdout)["hits"][0]["citation"] == server.base + "/docs/latin.html"
    with Shelf(load_settings()) as shelf:  # the same env: data dir and model
        docs = {d.path: d for d in shelf.list_documents()}
    assert docs["docs/guide.html"].metadata["source_url"] == server.base + "/docs/guide.html"
    assert docs["docs/guide.html"].metadata["source"] == "web" and docs["docs/guide.html"].title == "Guide"


def test_forget_a_page_then_the_whole_mirror_by_url(cli: CliRunner, server: Server, tmp_path: Path) -> None:
    index(cli, server.base + "/docs/")
    # a page's citation is its URL, and `read` takes a citation as search prints it (it collapsed //)
    read = cli.invoke(app, ["read", server.base + "/docs/guide.html"])
    assert read.exit_code == 0 and "Rotate the vault keys" in read.stdout, read.output
    missing = cli.invoke(app, ["read", server.base + "/docs/nothing.html"])
    assert missing.exit_code == 7 and "no document fetched from" in missing.stderr
    page = cli.invoke(app, ["forget", server.base + "/docs/guide.html"])
    assert page.exit_code == 0 and "removed 1 document" in page.stderr
    status = json.loads(cli.invoke(app, ["status", "--json"]).stdout)
    assert status["documents"] == 3
    unknown = cli.invoke(app, ["forget", server.base + "/never/indexed.html"])
    assert unknown.exit_code == 7 and "was not indexed" in unknown.stderr
    whole = cli.invoke(app, ["forget", server.base + "/docs/"])
    assert whole.exit_code == 0 and "removed 3 document" in whole.stderr
    assert not list((tmp_path / "data" / "sources").glob("web-*"))  # docshelf's own copy is gone too
    server.seen.clear()
    after = cli.invoke(app, ["index", "--json"])  # the mirror is no longer a root: nothing re-fetched
    assert not server.seen and json.loads(cli.invoke(app, ["status", "--json"]).stdout)["documents"] == 0
    assert after.exit_code == 3 and "has no folders yet" in after.stderr


def test_reindex_sends_validators_and_picks_up_changes(cli: CliRunner, server: Server, site: Site) -> None:
    index(cli, server.base + "/docs/")
    server.seen.clear()
    again = index(cli)  # no arguments: re-sync known roots, which re-fetches the mirror
    guide = [s for s in server.seen if s.path == "/docs/guide.html"]
    manual = [s for s in server.seen if s.path == "/docs/manual.txt"]
    assert guide[0].headers["if-none-match"] == '"v1"'
    assert manual[0].headers["if-modified-since"] == "Wed, 01 Jan 2025 00:00:00 GMT"
    assert again["added"] == 0 and again["updated"] == 0 and again["removed"] == 0

    site.version = 2
    site.gone.add("/docs/manual.txt")
    third = index(cli)
    assert third["updated"] == 1 and third["removed"] == 1
    found = cli.invoke(app, ["search", "vault keys 45", "--json", "--mode", "keyword"])
    hit = json.loads(found.stdout)["hits"][0]
    assert "45 days" in hit["snippet"].replace("**", "")


def test_crawl_keeps_the_old_copy_when_a_refetch_fails(tmp_path: Path) -> None:
    settings = WebSettings(depth=1, timeout_s=0.5)
    html = {"Content-Type": "text/html"}
    routes: dict[str, Any] = {
        "/top": lambda r: Reply(200, b'<h1>Top</h1><a href="/child.html">child</a>', html),
        "/child.html": lambda r: Reply(200, b"<p>Child page about cranes.</p>", html),
    }
    mirror = tmp_path / "m"
    with serve(routes) as srv:
        first = crawl(srv.base + "/top", mirror, settings)
        assert sorted(first.fetched) == [srv.base + "/child.html", srv.base + "/top"]
        routes["/top"] = lambda r: Reply(503, b"down")
        srv.seen.clear()
        second = crawl(srv.base + "/top", mirror, settings)
        # the child is still reached through the copy of the failed page, not dropped
        assert "/child.html" in srv.paths()
        routes["/robots.txt"] = lambda r: Reply(-1)  # robots.txt unreachable: nothing is fetched
        third = crawl(srv.base + "/top", mirror, settings)
    assert "HTTP 503" in second.skipped[0].reason and "stays indexed" in second.skipped[0].reason
    assert not second.removed and second.unchanged == [srv.base + "/child.html"]
    assert "robots.txt could not be read" in third.skipped[0].reason and not third.removed
    manifest = read_manifest(mirror)
    assert manifest is not None and sorted(manifest.files) == ["child.html", "top.html"]
    assert (mirror / "top.html").read_bytes().startswith(b"<h1>Top")


def test_unreachable_robots_means_nothing_is_fetched(tmp_path: Path) -> None:
    with serve({"/robots.txt": lambda r: Reply(500), "/a": lambda r: Reply(200, b"<p>a</p>")}) as srv:
        result = crawl(srv.base + "/a", tmp_path / "m", WebSettings())
        assert "/a" not in srv.paths()
    assert "robots.txt" in result.skipped[0].reason and not result.fetched


def test_fetcher_refuses_oversized_answers_by_header(tmp_path: Path) -> None:
    big = {"/big": lambda r: Reply(200, b"x" * 3000)}
    with serve(big) as srv, pytest.raises(FetchError, match="larger than"):  # type: ignore[arg-type]
        Fetcher(WebSettings()).get(srv.base + "/big", max_bytes=1000)


def test_redirects_stay_on_the_site_and_obey_its_robots(tmp_path: Path) -> None:
    """A redirect to another host was followed (a public page could hand over an intranet one),
    and its target was fetched without a look at robots.txt."""
    inner = {"/secret.txt": lambda r: Reply(200, b"internal only", {"Content-Type": "text/plain"})}
    with serve(inner) as other:  # type: ignore[arg-type]
        routes: dict[str, Any] = {
            "/robots.txt": lambda r: Reply(200, b"User-agent: *\nDisallow: /private/\n"),
            "/away": lambda r: Reply(302, headers={"Location": other.base + "/secret.txt"}),
            "/moved": lambda r: Reply(301, headers={"Location": "/new.txt"}),
            "/hidden": lambda r: Reply(302, headers={"Location": "/private/x.txt"}),
            "/new.txt": lambda r: Reply(200, b"new home", {"Content-Type": "text/plain"}),
            "/private/x.txt": lambda r: Reply(200, b"private", {"Content-Type": "text/plain"}),
        }
        with serve(routes) as srv:
            site = srv.base.replace("127.0.0.1", "localhost")  # another host name, the same machine
            fetcher = Fetcher(WebSettings())
            with pytest.raises(FetchError, match="redirects to another site"):
                fetcher.get(site + "/away")
            with pytest.raises(FetchError, match=r"robots\.txt does not allow"):
                fetcher.get(site + "/hidden")
            assert fetcher.get(site + "/moved").body == b"new home"  # same site: followed
            assert "/private/x.txt" not in srv.paths()
        assert other.paths() == []


def test_a_fetcher_for_an_agent_refuses_local_addresses(tmp_path: Path) -> None:
    with serve({"/a": lambda r: Reply(200, b"a", {"Content-Type": "text/plain"})}) as srv:
        for base in (srv.base, srv.base.replace("127.0.0.1", "localhost")):
            with pytest.raises(FetchError, match=r"local or private address \(127\.0\.0\.1\)"):
                Fetcher(WebSettings(), private_ok=False).get(base + "/a")
        assert srv.paths() == []
        assert Fetcher(WebSettings()).get(srv.base + "/a").body == b"a"  # the user's own fetch may


def test_an_agents_fetch_through_a_proxy_checks_the_target_not_the_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through a proxy (http_proxy) the address checked was the proxy's: a proxy on the office
    network refused every page, and one on a public address would have let an agent reach
    169.254.169.254. Now the target is checked, and the proxy (the user's own setting) is not."""
    import socket

    addresses = {"docs.example.com": "93.184.216.34", "metadata.example.com": "169.254.169.254"}
    real = socket.getaddrinfo

    def resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host in addresses:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (addresses[host], 80))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    with serve({"/a": lambda r: Reply(200, b"a", {"Content-Type": "text/plain"})}) as proxy:
        for name in ("http_proxy", "HTTP_PROXY"):
            monkeypatch.setenv(name, proxy.base)
        for name in ("no_proxy", "NO_PROXY"):
            monkeypatch.delenv(name, raising=False)
        fetcher = Fetcher(WebSettings(), private_ok=False)
        assert fetcher.get("http://docs.example.com/a").body == b"a"  # the proxy is on 127.0.0.1
        private = r"{} is a local or private address \(169\.254\.169\.254\)"
        with pytest.raises(FetchError, match=private.format(r"metadata\.example\.com")):
            fetcher.get("http://metadata.example.com/a")
        with pytest.raises(FetchError, match=private.format(r"169\.254\.169\.254")):
            fetcher.get("http://169.254.169.254/latest/meta-data/")
        assert proxy.paths() == ["http://docs.example.com/a"]


def test_mirror_paths() -> None:
    assert rel_path("https://x.org/", ".html") == "index.html"
    assert rel_path("https://x.org/docs/", ".html") == "docs/index.html"
    assert rel_path("https://x.org/docs/a", ".html") == "docs/a.html"
    assert rel_path("https://x.org/docs/a.htm", ".html") == "docs/a.html"
    assert rel_path("https://x.org/page.php", ".html") == "page.php.html"
    assert rel_path("https://x.org/r.pdf", ".pdf") == "r.pdf"
    with_query = rel_path("https://x.org/s?q=1", ".html")
    assert (
        with_query.startswith("s-")
        and with_query.endswith(".html")
        and with_query != rel_path("https://x.org/s?q=2", ".html")
    )
    assert rel_path("https://x.org/.hidden/../%2e%2e/x", ".html") == "_hidden/_./_./x.html"
