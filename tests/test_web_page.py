"""The web page's HTTP side, without a browser: login and cookie, CSRF, Host/Origin, the CSP, the
JSON it hands the page, the path guards, write jobs with cancel, and what the package ships."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from docshelf.config import Settings
from docshelf.shelf import Shelf
from webkit import TOKEN, GatedEmbedder, Page, serve_page

STATIC = Path(__file__).resolve().parents[1] / "src" / "docshelf" / "web" / "static"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "runbooks").mkdir(parents=True)
    (root / "runbooks" / "incident.md").write_text(
        "# Incidents\n\nIntro line.\n\n## Paging\n\nTo page someone for a SEV-1, run /page oncall.\n"
        "Nobody answers? The pager escalates.\n\n## After\n\nWrite a postmortem.\n"
    )
    (root / "hostile.md").write_text(
        '# <script>window.__pwned = 1</script>\n\n<img src=x onerror="window.__pwned = 2"> quokka\n'
    )
    return root


@pytest.fixture
def page(shelf: Shelf, settings: Settings, docs: Path) -> Iterator[Page]:
    shelf.index([docs])
    with serve_page(shelf, settings) as served:
        yield served


def test_everything_but_the_login_and_assets_needs_a_session(page: Page) -> None:
    anon = page.client(login=False)
    assert anon.get("/").status_code == 303 and anon.get("/").headers["location"] == "/login"
    for path in ("/api/session", "/api/search?q=page", "/api/status", "/api/read?chunk=x"):
        reply = anon.get(path)
        assert reply.status_code == 401 and reply.json()["login"] == "/login", path
    assert anon.get("/login").status_code == 200 and anon.get("/static/app.js").status_code == 200


def test_a_login_link_works_once_and_sets_a_strict_httponly_cookie(page: Page) -> None:
    link = page.new_link()
    client = page.client(login=False)
    first = client.get(link)
    assert first.status_code == 303 and first.headers["location"] == "/"
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"docshelf-{page.port}=")
    assert {"httponly", "samesite=strict", "path=/"} <= {p.strip().lower() for p in cookie.split(";")}
    assert client.get("/api/session").status_code == 200
    again = page.client(login=False).get(link)
    assert again.status_code == 401 and "used already" in again.text


def test_the_login_leads_back_to_the_search_asked_for_and_nowhere_else(page: Page) -> None:
    client = page.client(login=False)
    asked = client.get("/", params={"q": "page someone", "mode": "keyword"})
    assert asked.status_code == 303 and asked.headers["location"].startswith("/login?next=")
    form = client.get(asked.headers["location"]).text
    assert 'name="next" type="hidden" value="/?q=page+someone&amp;mode=keyword"' in form
    entered = client.post("/login", data={"token": TOKEN, "next": "/?q=page+someone&mode=keyword"})
    assert entered.status_code == 303 and entered.headers["location"] == "/?q=page+someone&mode=keyword"
    for elsewhere in ("https://evil.example/", "//evil.example/", "/\\evil.example", "/login"):
        other = page.client(login=False).post("/login", data={"token": TOKEN, "next": elsewhere})
        assert other.headers["location"] == "/", elsewhere


def test_the_login_form_takes_the_servers_token_and_refuses_others(page: Page) -> None:
    client = page.client(login=False)
    wrong = client.post("/login", data={"token": "not-the-token-at-all"})
    assert wrong.status_code == 401 and "not this server" in wrong.text
    assert client.get("/api/session").status_code == 401
    right = client.post("/login", data={"token": TOKEN})
    assert right.status_code == 303 and client.get("/api/session").status_code == 200


def test_every_response_carries_a_csp_without_inline_script(page: Page) -> None:
    client = page.client()
    for path in ("/", "/login", "/static/app.js", "/api/search?q=page", "/api/nothing-here"):
        headers = client.get(path).headers
        csp = headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp, path
        assert "frame-ancestors 'none'" in csp and headers["x-content-type-options"] == "nosniff"
    html = client.get("/").text
    assert re.search(r'<script type="module" src="/static/app.js"></script>', html)
    assert not re.search(r"<script>|<script [^>]*>[^<]", html)
    assert not re.search(r"\son[a-z]+=", html) and " style=" not in html


def test_writes_need_the_sessions_csrf_token_and_a_local_origin(page: Page, docs: Path) -> None:
    client = page.client()
    body = {"action": "reindex"}
    assert client.post("/api/jobs", json=body).status_code == 403
    assert client.post("/api/jobs", json=body, headers={"X-Docshelf-Csrf": "guess"}).status_code == 403
    csrf = page.csrf(client)
    foreign = {"X-Docshelf-Csrf": csrf, "Origin": "http://evil.example"}
    assert client.post("/api/jobs", json=body, headers=foreign).status_code == 403
    rebound = client.get("/api/session", headers={"Host": "evil.example"})
    assert rebound.status_code == 421
    started = client.post("/api/jobs", json=body, headers={"X-Docshelf-Csrf": csrf, "Origin": page.base})
    assert started.status_code == 200 and started.json()["state"] == "running"
    # another session's token is not this one's
    other = page.client()
    assert other.post("/api/jobs", json=body, headers={"X-Docshelf-Csrf": csrf}).status_code == 403
    assert client.post("/logout").status_code == 403  # logging out is a write too
    out = client.post("/logout", headers={"X-Docshelf-Csrf": csrf})
    assert out.status_code == 303 and client.get("/api/session").status_code == 401


def test_a_read_only_server_refuses_writes_and_says_so(shelf: Shelf, settings: Settings, docs: Path) -> None:
    shelf.index([docs])
    settings.server.read_only = True
    with serve_page(shelf, settings) as page:
        client = page.client()
        session = client.get("/api/session").json()
        assert session["read_only"] is True
        reply = client.post(
            "/api/jobs", json={"action": "reindex"}, headers={"X-Docshelf-Csrf": session["csrf"]}
        )
        assert reply.status_code == 403 and "read-only" in reply.json()["error"]


def test_hits_carry_document_text_as_strings_and_marks_as_offsets(page: Page) -> None:
    data = page.client().get("/api/search", params={"q": "page someone sev-1", "mode": "keyword"}).json()
    hit = data["hits"][0]
    assert hit["path"] == "runbooks/incident.md" and hit["citation"].startswith("runbooks/incident.md:")
    assert hit["heading"] == ["Incidents", "Paging"]
    marked = [piece for piece, on in hit["snippet"]["parts"] if on]
    assert {m.lower() for m in marked} >= {"page", "someone"}
    hostile = page.client().get("/api/search", params={"q": "quokka", "mode": "keyword"}).json()["hits"][0]
    text = "".join(piece for piece, _ in hostile["snippet"]["parts"])
    assert "<img src=x onerror=" in text  # as written: the page shows it as text


def test_filters_reach_the_search(page: Page) -> None:
    client = page.client()
    only = client.get(
        "/api/search", params={"q": "page quokka", "glob": "runbooks/*", "mode": "keyword"}
    ).json()
    assert only["hits"] and {h["path"] for h in only["hits"]} == {"runbooks/incident.md"}
    none = client.get("/api/search", params={"q": "page", "types": "pdf", "mode": "keyword"}).json()
    assert none["hits"] == []
    facets = client.get("/api/facets").json()
    assert facets["collections"] == ["test"] and "markdown" in facets["file_types"]
    bad = client.get("/api/search", params={"q": "page", "mode": "fuzzy"})
    assert bad.status_code == 400 and "mode must be" in bad.json()["error"]


def test_the_reader_gives_whole_lines_around_the_passage_and_where_it_lies(page: Page, shelf: Shelf) -> None:
    hit = shelf.search("escalates", mode="keyword").hits[0]
    data = page.client().get("/api/read", params={"chunk": hit.chunk_id, "before": 0, "after": 0}).json()
    target = next(p for p in data["passages"] if p["target"])
    assert data["text"][target["start"] : target["end"]] == hit.text
    assert data["citation"] == hit.citation and data["first_line"] <= hit.line_start
    assert data["text"].startswith(data["text"].split("\n")[0])
    wider = page.client().get("/api/read", params={"chunk": hit.chunk_id, "before": 5, "after": 5}).json()
    assert wider["more_before"] is False and len(wider["text"]) >= len(data["text"])


def test_reads_stay_inside_the_roots(page: Page, tmp_path: Path) -> None:
    (tmp_path / "secret.pdf").write_bytes(b"%PDF-1.4 secret")
    client = page.client()
    for params in ({"doc": "../secret.pdf", "page": 1}, {"doc": str(tmp_path / "secret.pdf"), "page": 1}):
        reply = client.get("/api/page", params=params)
        assert reply.status_code == 403 and "refused" in reply.json()["error"], reply.text
    assert client.get("/api/read", params={"chunk": "../../etc/passwd:1-3"}).status_code in (403, 404)


def _without_vectors(shelf: Shelf) -> int:
    return sum(c.chunks - (c.embedded or 0) for c in shelf.status().collections)


def _wait(client: object, job: str, until: set[str], timeout: float = 60) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state: dict[str, object] = client.get(f"/api/jobs/{job}").json()  # type: ignore[attr-defined]
        if state["state"] in until:
            return state
        time.sleep(0.05)
    raise AssertionError(f"job {job} never reached {until}")


def test_an_index_job_reports_progress_and_stops_on_cancel(settings: Settings, tmp_path: Path) -> None:
    bulk = tmp_path / "bulk"
    bulk.mkdir()
    for i in range(120):
        (bulk / f"n{i:03}.md").write_text(f"# Note {i}\n\nStep {i}: drain the queue, restart the worker.\n")
    settings.server.allow_ingest = [tmp_path]
    settings.embed.batch_size = 1  # a batch every few files: progress moves while one is held
    embedder = GatedEmbedder()
    with Shelf(settings, embedder=embedder) as slow, serve_page(slow, settings) as page:
        client = page.client()
        headers = {"X-Docshelf-Csrf": page.csrf(client)}
        outside = client.post("/api/jobs", json={"action": "index", "target": "/etc"}, headers=headers).json()
        failed = _wait(client, outside["id"], {"failed", "done"})
        assert failed["state"] == "failed" and "refused" in str(failed["message"])
        job = client.post("/api/jobs", json={"action": "index", "target": str(bulk)}, headers=headers).json()
        deadline = time.monotonic() + 60
        while (now := client.get(f"/api/jobs/{job['id']}").json())["done"] < 5:
            assert now["state"] == "running" and time.monotonic() < deadline, now
            time.sleep(0.02)
        assert now["total"] == 120 and now["phase"] in ("index", "vectors")  # files, then their chunks
        busy = client.post("/api/jobs", json={"action": "reindex"}, headers=headers)
        assert busy.status_code == 422 and "running" in busy.json()["error"]
        assert client.post(f"/api/jobs/{job['id']}/cancel", json={}, headers=headers).status_code == 200
        embedder.gate.set()
        done = _wait(client, job["id"], {"cancelled", "done", "failed"})
        assert done["state"] == "cancelled", done
        # keyword first: the files read before the cancel stay, searchable; the vectors it stopped
        # are still missing (all of them, if it came before the second phase)
        assert len(slow.list_documents()) <= 120 and _without_vectors(slow) > 0
        again = client.post(
            "/api/jobs", json={"action": "index", "target": str(bulk)}, headers=headers
        ).json()
        finished = _wait(client, again["id"], {"done", "failed", "cancelled"})
        assert finished["state"] == "done" and len(slow.list_documents()) == 120, finished
        assert _without_vectors(slow) == 0


def test_a_server_stopping_cancels_the_pages_job_and_waits_for_it(settings: Settings, tmp_path: Path) -> None:
    """The shelf is closed after the page: a job still writing then would write to a closed store."""
    bulk = tmp_path / "bulk"
    bulk.mkdir()
    for i in range(60):
        (bulk / f"n{i:03}.md").write_text(f"# Note {i}\n\nStep {i}: drain the queue.\n")
    settings.server.allow_ingest = [tmp_path]
    settings.embed.batch_size = 1
    embedder = GatedEmbedder()
    with Shelf(settings, embedder=embedder) as shelf:
        with serve_page(shelf, settings) as page:
            client = page.client()
            headers = {"X-Docshelf-Csrf": page.csrf(client)}
            job = client.post(
                "/api/jobs", json={"action": "index", "target": str(bulk)}, headers=headers
            ).json()
            while client.get(f"/api/jobs/{job['id']}").json()["done"] < 3:
                time.sleep(0.02)
            threading.Timer(0.5, embedder.gate.set).start()  # the held batch goes on after the stop began
        # serve_page's exit closed the page: the job was cancelled and has ended
        names = [t.name for t in threading.enumerate()]
        assert not any(n.startswith("docshelf-web-") for n in names), names
        assert _without_vectors(shelf) > 0  # stopped before every chunk had its vector


def test_serve_http_serves_the_page_beside_mcp_with_the_same_token(
    shelf: Shelf, settings: Settings, docs: Path
) -> None:
    shelf.index([docs])
    with serve_page(shelf, settings, mcp=True) as page:
        client = page.client(login=False)
        assert client.get("/").status_code == 303
        assert client.post("/mcp", json={}).status_code == 401  # the bearer token, as before
        assert client.post("/login", data={"token": TOKEN}).status_code == 303
        assert client.get("/api/search", params={"q": "quokka"}).json()["hits"]
        assert client.post("/mcp", json={}).status_code == 401  # the cookie is no bearer token


def test_the_pages_assets_stay_small_and_are_package_data() -> None:
    sizes = {p.name: p.stat().st_size for p in STATIC.iterdir()}
    print(f"page assets: {sum(sizes.values())} bytes: {sizes}")
    assert sum(sizes.values()) <= 150_000
    pyproject = (STATIC.parents[3] / "pyproject.toml").read_text()
    assert '"web/static/*"' in pyproject


def test_a_built_wheel_ships_the_page(tmp_path: Path) -> None:
    """What a non-editable `pip install .` installs: the wheel holds every asset of the page."""
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip("setuptools >= 77 builds this pyproject (the dev extra installs it)")
    root = tmp_path / "tree"  # a copy: the build leaves build/ and *.egg-info where it runs
    shutil.copytree(
        STATIC.parents[2], root / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(STATIC.parents[3] / name, root / name)
    wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    proc = subprocess.run([*wheel, "-w", str(tmp_path), str(root)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (built,) = tmp_path.glob("docshelf-*.whl")
    names = set(zipfile.ZipFile(built).namelist())
    assert {f"docshelf/web/static/{p.name}" for p in STATIC.iterdir()} <= names


def test_docshelf_ui_prints_a_one_time_login_url_as_its_first_line(
    shelf: Shelf, docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shelf.index([docs])
    shelf.close()
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    data = shelf.settings.store.data_dir
    cmd = [sys.executable, "-m", "docshelf", "ui", "--no-browser", "--data-dir", str(data)]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=os.environ
    )
    try:
        url = proc.stdout.readline().strip()  # type: ignore[union-attr]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/login\?token=[\w-]{24,}", url), url
        with httpx2.Client(timeout=30) as client:
            entered = client.get(url)
            assert entered.status_code == 303 and "httponly" in entered.headers["set-cookie"].lower()
            base = url.split("/login")[0]
            hits = client.get(f"{base}/api/search", params={"q": "page someone", "mode": "keyword"}).json()
            assert hits["hits"][0]["path"] == "runbooks/incident.md"
        with httpx2.Client(timeout=30) as other:
            assert other.get(url).status_code == 401  # spent
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]


def test_a_passage_of_a_megabyte_reaches_the_page_cut_to_size(
    shelf: Shelf, settings: Settings, tmp_path: Path
) -> None:
    """One 1 MB word is one passage to the chunker: the reader sends a bounded piece from its start."""
    root = tmp_path / "blob"
    root.mkdir()
    (root / "blob.txt").write_text("Intro zebraquokka words. " + "QUJD" * 250_000 + " the tail\n")
    shelf.index([root])
    with serve_page(shelf, settings) as page:
        client = page.client()
        hit = client.get("/api/search", params={"q": "zebraquokka", "mode": "keyword"}).json()["hits"][0]
        assert len("".join(p for p, _ in hit["snippet"]["parts"])) < 1000
        data = client.get("/api/read", params={"chunk": hit["chunk_id"]}).json()
        assert len(data["text"]) <= 200_000 and data["text"].startswith("Intro zebraquokka")
        assert "long text" in data["note"] and data["first_line"] == 1


def test_a_failure_inside_the_shelf_reaches_the_page_as_one_line(
    page: Page, shelf: Shelf, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the searcher fell over")

    monkeypatch.setattr(shelf, "search", broken)
    reply = page.client().get("/api/search", params={"q": "page"})
    assert reply.status_code == 500
    assert reply.json()["error"] == (
        "unexpected RuntimeError: the searcher fell over; this is a docshelf bug, please report it"
    )


def test_a_code_hit_comes_as_whole_lines_to_show_as_laid_out(
    shelf: Shelf, settings: Settings, docs: Path
) -> None:
    """A hit in source code keeps its lines (the page shows them in a monospace block); prose flows."""
    (docs / "mailer.py").write_text(
        "class Mailer:\n    def send(self, to):\n\n        if not to:\n"
        "            raise ValueError('no recipient')\n"
        "        self.smtp.sendmail(self.sender, to, self.body)\n"
    )
    shelf.index([docs])
    with serve_page(shelf, settings) as page:
        client = page.client()

        def first(query: str) -> dict[str, Any]:
            hits = client.get("/api/search", params={"q": query, "mode": "keyword"}).json()["hits"]
            return dict(hits[0])

        code, prose = first("sendmail recipient"), first("page someone")
    assert code["path"] == "mailer.py" and code["snippet"]["lines"] is True
    text = "".join(piece for piece, _ in code["snippet"]["parts"])
    assert text.startswith("class Mailer:\n    def send(self, to):\n") and "\n        if not to:\n" in text
    assert not code["snippet"]["cut_before"] and not code["snippet"]["cut_after"]
    assert prose["path"] == "runbooks/incident.md" and prose["snippet"]["lines"] is False
