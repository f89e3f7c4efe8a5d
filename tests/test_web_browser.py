"""The web page in a real browser (Debian's headless chromium, driven by Playwright): search as you
type, open the cited lines, a PDF hit's page, the keyboard alone, the filters, the token prompt and
the layouts of a phone and a wide monitor. Timings are printed, never asserted."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docshelf.config import Settings
from docshelf.shelf import Shelf
from test_formats import make_pdf
from webkit import TOKEN, Page, launch_browser, login, save_screenshot, serve_page, shown_query

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "corpus"
QUESTION = "how do we page someone for a sev-1"  # the README's
HANDBOOK = [
    ["On-call handbook", "", "This handbook explains how the on-call rotation works.",
     "Each engineer is on call for one week at a time."],
    ["Escalation policy", "", "If the primary does not acknowledge a page within five minutes,",
     "the pager escalates to the secondary on-call engineer.",
     "After fifteen minutes it reaches the engineering manager."],
    ["Compensation", "", "Every on-call week is paid as two extra days of leave."],
]  # fmt: skip


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_browser()


@pytest.fixture
def served(shelf: Shelf, settings: Settings, tmp_path: Path) -> Iterator[Page]:
    """The sample corpus and a three-page PDF handbook, served by `docshelf ui`'s app."""
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLES, corpus)
    (corpus / "handbook").mkdir()
    (corpus / "handbook" / "oncall-handbook.pdf").write_bytes(make_pdf(HANDBOOK, title="On-call handbook"))
    shelf.index([corpus])
    with serve_page(shelf, settings) as page:
        yield page


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == [], errors


def _type_and_time(page: Any, query: str) -> float:
    """Type ``query`` key by key; milliseconds from the last key to the first hits painted."""
    page.evaluate(
        """() => { window.__keys = [];
                   document.addEventListener('input', e => window.__keys.push(e.timeStamp), true); }"""
    )
    page.keyboard.type(query, delay=40)
    shown_query(page, query)
    page.wait_for_timeout(100)  # the mark comes two frames after the hits
    return float(
        page.evaluate(
            """q => { const last = Math.max(...window.__keys);
                      const m = performance.getEntriesByName('docshelf:results')
                                .find(e => e.detail === q && e.startTime >= last);
                      return m ? m.startTime - last : -1; }""",
            query,
        )
    )


def test_typing_the_readme_question_shows_the_runbook_first_and_opens_its_cited_lines(
    served: Page, tab: Any, shelf: Shelf
) -> None:
    login(tab, served)
    tab.click("#main")
    tab.keyboard.press("/")
    painted = _type_and_time(tab, QUESTION)
    load = os.getloadavg()
    print(f"\nfirst result painted {painted:.0f} ms after the last key (hash embedder; load {load[0]:.2f})")
    assert painted >= 0
    first = tab.locator("#hits a.hit-link").first
    assert first.locator(".path").inner_text() == "runbooks/incident-response.md"
    assert "q=how+do+we+page" in tab.url  # the URL holds the query
    marked = {m.lower() for m in tab.locator("#hits li:first-child .snippet mark").all_inner_texts()}
    assert {"page", "someone"} <= marked
    save_screenshot(tab, "web-search.png")
    first.click()
    tab.wait_for_selector("#doc-text .line.cited")
    citation = tab.inner_text("#doc-cite")
    assert citation.startswith("runbooks/incident-response.md:") and "open=" in tab.url
    start, end = (int(n) for n in citation.rsplit(":", 1)[1].split("-"))
    cited = [
        int(n)
        for n in tab.locator("#doc-text .line.cited").evaluate_all("rows => rows.map(r => r.dataset.line)")
    ]
    assert cited == list(range(start, end + 1))
    passage = "".join(tab.locator("#doc-text mark.passage").all_text_contents())
    assert "To page someone for a SEV-1" in passage
    assert tab.locator("#doc-text mark.hit").count() > 0  # the matched words inside the passage
    box = tab.locator("#doc-text .line.cited").first.bounding_box()
    assert box is not None and 0 <= box["y"] <= 800  # scrolled into view
    save_screenshot(tab, "web-reader.png")

    def first_line() -> int:
        return int(tab.locator("#doc-text .line").first.get_attribute("data-line") or 0)

    shown_from = first_line()
    tab.click("#more-before")  # the passage before, on demand
    tab.wait_for_selector("#more-before", state="hidden")  # the document's first passage is in
    assert first_line() < shown_from and "open=" in tab.url
    tab.context.grant_permissions(["clipboard-read", "clipboard-write"])
    tab.click("#copy")
    tab.wait_for_selector("#copy[data-copied]")
    # the string MCP's search and read_passage give this hit
    mcp = shelf.read_passage(str(first.get_attribute("data-chunk"))).passages[0].citation
    assert tab.evaluate("navigator.clipboard.readText()") == citation == mcp


def test_a_pdf_hit_shows_its_page_with_the_passage_boxed(served: Page, tab: Any) -> None:
    login(tab, served)
    tab.select_option("#f-types", "pdf")
    tab.fill("#q", "who gets paged when the primary does not answer")
    shown_query(tab, "who gets paged when the primary does not answer")
    assert tab.locator("#hits .path").all_inner_texts()[0] == "handbook/oncall-handbook.pdf"
    tab.locator("#hits a.hit-link").first.click()
    tab.wait_for_selector('#page-img[src^="blob:"]', state="attached")
    width = tab.eval_on_selector("#page-img", "img => img.complete ? img.naturalWidth : 0")
    assert width >= 400
    assert tab.get_attribute("#pdf", "data-page") == "2" and tab.inner_text("#page-label") == "page 2 of 3"
    boxes = tab.locator("#page-boxes .box")
    assert boxes.count() >= 2  # the passage's printed lines
    frame, first = tab.locator(".page-frame").bounding_box(), boxes.first.bounding_box()
    assert frame and first and frame["y"] < first["y"] < frame["y"] + frame["height"] / 2
    assert "the pager escalates" in tab.inner_text("#doc-text")  # the page's text beside it
    save_screenshot(tab, "web-pdf.png")
    tab.click("#page-next")
    tab.wait_for_selector('#pdf[data-page="3"]', state="attached")
    assert tab.locator("#page-boxes .box").count() == 0 and tab.inner_text("#page-label") == "page 3 of 3"


def test_the_keyboard_alone_searches_walks_the_hits_opens_and_goes_back(served: Page, tab: Any) -> None:
    login(tab, served)
    tab.click("#main")
    tab.keyboard.press("/")
    assert tab.evaluate("document.activeElement.id") == "q"
    tab.keyboard.type("rolling back a deploy", delay=20)
    shown_query(tab, "rolling back a deploy")
    focused = "() => document.activeElement.dataset.index ?? document.activeElement.id"
    tab.keyboard.press("ArrowDown")
    assert tab.evaluate(focused) == "0"
    tab.keyboard.press("ArrowDown")
    tab.keyboard.press("ArrowDown")
    tab.keyboard.press("ArrowUp")
    assert tab.evaluate(focused) == "1"
    assert tab.locator("#hits a.selected").get_attribute("data-index") == "1"
    tab.keyboard.press("ArrowUp")
    tab.keyboard.press("ArrowUp")
    assert tab.evaluate(focused) == "q"
    tab.keyboard.press("ArrowDown")
    tab.keyboard.press("Enter")
    tab.wait_for_selector("#doc-text .line.cited")
    opened = tab.inner_text("#doc-cite")
    assert tab.locator("#hits a.hit-link").first.get_attribute("data-chunk") in tab.url
    tab.keyboard.press("Escape")
    tab.wait_for_selector("#reader", state="hidden")
    assert tab.evaluate(focused) == "0" and "open=" not in tab.url
    tab.go_back()  # the history holds the opened passage
    tab.wait_for_selector("#doc-text .line.cited")
    assert tab.inner_text("#doc-cite") == opened


def test_filters_narrow_the_hits_and_live_in_the_url(served: Page, tab: Any) -> None:
    login(tab, served)
    tab.fill("#q", "style")
    shown_query(tab, "style")
    assert len(set(tab.locator("#hits .path").all_inner_texts())) > 1
    tab.fill("#f-glob", "archive/*")
    tab.wait_for_selector("body:not(.busy)", state="attached")
    tab.wait_for_url("**glob=archive%2F*")
    paths = set(tab.locator("#hits .path").all_inner_texts())
    assert paths == {"archive/style-guide.rst"}
    assert tab.inner_text("#filter-count") == "(1 set)"
    tab.select_option("#f-mode", "keyword")
    tab.wait_for_url("**mode=keyword**")
    tab.reload()
    tab.wait_for_selector("body[data-ready=true]", state="attached")
    shown_query(tab, "style")
    assert tab.input_value("#f-glob") == "archive/*" and tab.input_value("#f-mode") == "keyword"
    assert set(tab.locator("#hits .path").all_inner_texts()) == {"archive/style-guide.rst"}
    assert "keyword" in tab.inner_text("#summary")
    tab.select_option("#f-types", "pdf")
    tab.wait_for_url("**types=pdf**")
    tab.wait_for_selector("#hits li", state="detached")
    assert "No hits" in tab.inner_text("#summary")
    tab.select_option("#f-types", "")
    tab.select_option("#f-mode", "")
    tab.fill("#f-glob", "")
    tab.fill("#q", "xylophone tarantula")  # no document has these words: only nearest neighbours
    shown_query(tab, "xylophone tarantula")
    assert tab.locator("#hits li").count() > 0 and "nearest neighbours" in tab.inner_text("#note")
    assert tab.locator("#hits .matched").first.inner_text() == "found by meaning only"


def test_the_token_is_asked_once_and_the_cookie_is_out_of_scripts_reach(served: Page, tab: Any) -> None:
    tab.goto(served.base + "/?q=deploy")
    assert "/login?next=" in tab.url
    save_screenshot(tab, "web-login.png")
    tab.fill("#token", "not the token, not even close")
    tab.click("button[type=submit]")
    assert "not this server's token" in tab.inner_text("main")
    tab.fill("#token", TOKEN)
    tab.click("button[type=submit]")
    shown_query(tab, "deploy")  # back at the search asked for
    assert tab.url == served.base + "/?q=deploy"
    assert tab.evaluate("document.cookie") == ""  # HttpOnly: no script of the page reads it
    tab.goto(served.base + "/?q=rollback")
    shown_query(tab, "rollback")  # no second prompt
    tab.click("#logout button")
    tab.wait_for_url("**/login")
    tab.goto(served.base + "/")
    assert tab.url.endswith("/login")


def test_the_shelf_tab_shows_collections_and_a_read_only_server_no_write_controls(
    shelf: Shelf, settings: Settings, tmp_path: Path, browser: Any
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nSome text.\n")
    (notes / "b.md").write_text("# B\n\nMore text.\n")
    (notes / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    git = ["git", "-C", str(notes), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "notes"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout
    shelf.index([notes])
    (notes / "a.md").write_text("# A\n\nSome text, changed since.\n")
    (notes / "b.md").unlink()
    settings.server.read_only = True
    with serve_page(shelf, settings) as page:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        tab = context.new_page()
        login(tab, page)
        tab.click("#nav-shelf")
        tab.wait_for_selector("#collections tbody tr")
        row = tab.locator("#collections tbody tr").first.inner_text()
        assert "test" in row and str(notes) in row and head[:10] in row  # the corpus commit of the build
        assert tab.locator("#writes").is_hidden() and tab.locator("#collections button").count() == 0
        tab.click("#skipped summary")
        assert "broken.pdf" in tab.inner_text("#skipped") and "(1)" in tab.inner_text("#skipped-count")
        stale = tab.inner_text("#stale")
        assert "a.md" in stale and "b.md" in stale and "(2 changed or gone" in tab.inner_text("#stale-count")
        assert "view=shelf" in tab.url
        context.close()


@pytest.mark.parametrize("width", [360, 1920])
def test_the_page_fits_a_phone_and_uses_a_wide_monitor(served: Page, browser: Any, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 780}, device_scale_factor=1)
    tab = context.new_page()
    login(tab, served)
    tab.fill("#q", QUESTION)
    shown_query(tab, QUESTION)
    tab.locator("#hits a.hit-link").first.click()
    tab.wait_for_selector("#doc-text .line.cited")
    assert tab.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
    hits, reader = tab.locator("#results").bounding_box(), tab.locator("#reader").bounding_box()
    if width == 360:
        assert hits is None and reader is not None  # the document takes the hits' place
        save_screenshot(tab, "web-phone.png")
    else:
        assert hits is not None and reader is not None and hits["x"] + hits["width"] <= reader["x"]
    context.close()


def test_office_mail_and_notebook_files_show_their_text_with_headings(
    shelf: Shelf, settings: Settings, tmp_path: Path, tab: Any
) -> None:
    import json

    import docx

    root = tmp_path / "office"
    root.mkdir()
    report = docx.Document()
    report.add_heading("Quarterly results", 1)
    report.add_paragraph("Revenue grew thanks to the quokka programme.")
    report.add_heading("Outlook", 2)
    report.add_paragraph("Next year brings more growth.")
    report.save(str(root / "report.docx"))
    (root / "mail.eml").write_text(
        "From: a@example.com\nTo: b@example.com\nSubject: Quokka sighting\n\nWe saw a quokka today.\n"
    )
    cells = [
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": ["# Counting quokkas\n", "Some intro about quokka."],
        },
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": 1,
            "outputs": [],
            "source": ["print('quokka')"],
        },
    ]
    (root / "count.ipynb").write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    shelf.index([root])
    headings = {
        "report.docx": "Quarterly results",
        "mail.eml": "Quokka sighting",
        "count.ipynb": "Counting quokkas",
    }
    with serve_page(shelf, settings) as page:
        login(tab, page)
        tab.fill("#q", "quokka")
        shown_query(tab, "quokka")
        for path, heading in headings.items():
            link = tab.locator("#hits a.hit-link", has_text=path).first
            link.click()  # its name shows at once, its text once read
            tab.wait_for_selector(
                f'#doc-text[data-chunk="{link.get_attribute("data-chunk")}"]', state="attached"
            )
            assert tab.get_attribute("#doc-title", "title") == path
            tab.wait_for_selector("#doc-text .line.cited")
            assert heading in tab.locator("#doc-text .line.h").all_inner_texts()[0], path


def test_a_copied_file_is_one_hit_that_says_where_else_it_is(
    shelf: Shelf, settings: Settings, tmp_path: Path, tab: Any
) -> None:
    root = tmp_path / "docs"
    (root / "backup").mkdir(parents=True)
    text = "# Rota\n\nThe wallabyrota desk answers pages at night.\n"
    (root / "rota.md").write_text(text)
    (root / "backup" / "rota.md").write_text(text)
    shelf.index([root])
    with serve_page(shelf, settings) as page:
        login(tab, page)
        tab.fill("#q", "wallabyrota")
        shown_query(tab, "wallabyrota")
        assert tab.locator("#hits li").count() == 1
        shown = tab.locator("#hits .path").inner_text()
        other = "backup/rota.md" if shown == "rota.md" else "rota.md"
        assert tab.locator("#hits .also").inner_text() == f"also in {other}:1-3"


def test_a_code_hit_shows_its_lines_as_laid_out_and_prose_flows(
    shelf: Shelf, settings: Settings, tmp_path: Path, tab: Any
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "mailer.py").write_text(
        "class Mailer:\n    def send(self, to):\n        if not to:\n"
        "            raise ValueError('no wombatmail recipient')\n"
    )
    (root / "mail.md").write_text("# Mail\n\nThe wombatmail\nrelay takes\nevery message.\n")
    shelf.index([root])
    with serve_page(shelf, settings) as page:
        login(tab, page)
        tab.fill("#q", "wombatmail")
        shown_query(tab, "wombatmail")
        snippets = {
            tab.locator(f"#hits li:nth-child({i}) .path").inner_text(): tab.locator(
                f"#hits li:nth-child({i}) .snippet"
            )
            for i in (1, 2)
        }
        code, prose = snippets["mailer.py"], snippets["mail.md"]
        assert code.evaluate("e => getComputedStyle(e).whiteSpace") == "pre-wrap"
        assert "\n        if not to:\n" in code.inner_text()
        assert prose.evaluate("e => getComputedStyle(e).whiteSpace") == "normal"
        assert "\n" not in prose.inner_text()


def test_the_passage_opened_last_is_the_one_shown_and_one_that_takes_long_says_so(
    served: Page, tab: Any, shelf: Shelf, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first read of a long PDF takes seconds: a hit opened meanwhile was overwritten by the
    slow answer when it came, and until then the reader showed the document opened before."""
    import threading

    login(tab, served)
    tab.fill("#q", QUESTION)
    shown_query(tab, QUESTION)
    links = tab.locator("#hits a.hit-link")
    slow_id, fast_id = (str(links.nth(i).get_attribute("data-chunk")) for i in (0, 1))
    fast_path = links.nth(1).locator(".path").inner_text()
    real, release = shelf.read_passage, threading.Event()

    def slow_first(chunk_id: str, before: int = 0, after: int = 0) -> Any:
        if chunk_id == slow_id:
            release.wait(10)
        return real(chunk_id, before, after)

    monkeypatch.setattr(shelf, "read_passage", slow_first)
    links.nth(0).click()
    tab.wait_for_selector('#reader[aria-busy="true"]', state="attached")  # it says it is loading
    links.nth(1).click()
    tab.wait_for_selector(f'#doc-text[data-chunk="{fast_id}"]', state="attached")
    release.set()
    tab.wait_for_timeout(1000)  # the slow answer has come by now, and is dropped
    assert tab.get_attribute("#doc-text", "data-chunk") == fast_id
    assert tab.get_attribute("#doc-title", "title") == fast_path
    assert tab.get_attribute("#reader", "aria-busy") is None
    assert f"open={fast_id}" in tab.url


def test_the_page_turned_to_last_is_the_one_shown(
    served: Page, tab: Any, shelf: Shelf, monkeypatch: pytest.MonkeyPatch
) -> None:
    """◀ then ▶ while the first page was still being drawn: its picture came last and stayed."""
    import threading

    login(tab, served)
    tab.select_option("#f-types", "pdf")
    tab.fill("#q", "who gets paged when the primary does not answer")
    shown_query(tab, "who gets paged when the primary does not answer")
    tab.locator("#hits a.hit-link").first.click()
    tab.wait_for_selector('#pdf[data-page="2"]', state="attached")
    real, release = shelf.page_image, threading.Event()

    def slow_first_page(document: Any, page: int | None = None, **kw: Any) -> Any:
        if page == 1:
            release.wait(10)
        return real(document, page, **kw)

    monkeypatch.setattr(shelf, "page_image", slow_first_page)
    tab.click("#page-prev")  # page 1: slow
    tab.click("#page-next")  # page 3, from page 2 still shown
    tab.wait_for_selector('#pdf[data-page="3"]', state="attached")
    release.set()
    tab.wait_for_timeout(1000)  # page 1's picture has come by now, and is dropped
    assert tab.get_attribute("#pdf", "data-page") == "3" and tab.inner_text("#page-label") == "page 3 of 3"
