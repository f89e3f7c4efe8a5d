"""Parse limits are settings (parse.max_pages, parse.timeout_s, parse.max_unzipped_mb): a file over
one is skipped with the reason, and the rest of the batch is indexed."""

from __future__ import annotations

from pathlib import Path

import pytest

from docshelf.config import ParseSettings, Settings, load_settings
from docshelf.errors import ConfigError, ParseError
from docshelf.parse import default_registry
from docshelf.shelf import Shelf
from test_formats import make_docx, make_pdf


def test_page_and_time_limits_come_from_settings() -> None:
    pdf = make_pdf([["one"], ["two"], ["three"]])
    assert default_registry().parse(pdf, "a.pdf").metadata["pages"] == 3
    with pytest.raises(ParseError, match=r"has 3 pages \(over parse\.max_pages = 2\)"):
        default_registry(ParseSettings(max_pages=2)).parse(pdf, "a.pdf")
    html = b"<p>" + b"word " * 300_000 + b"</p>"  # several pieces for the HTML parser
    assert default_registry().parse(html, "big.html").text.startswith("word word")
    with pytest.raises(ParseError, match=r"parsing took over 1e-09 s \(parse\.timeout_s\)"):
        default_registry(ParseSettings(timeout_s=1e-9)).parse(html, "big.html")
    with pytest.raises(ParseError, match="zip bomb"):
        default_registry(ParseSettings(max_unzipped_mb=0.001)).parse(make_docx(), "a.docx")


def test_sync_skips_a_file_over_a_limit_and_goes_on(settings: Settings, tmp_path: Path) -> None:
    settings.parse.max_pages = 1
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "long.pdf").write_bytes(make_pdf([["alpha"], ["beta"]]))
    (corpus / "short.pdf").write_bytes(make_pdf([["gamma ray burst"]]))
    from docshelf.embed import HashEmbedder

    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        report = shelf.index([corpus], "test").sync
        assert report.added == ["short.pdf"]
        assert [s.path for s in report.skipped] == ["long.pdf"]
        assert "parse.max_pages" in report.skipped[0].reason
        hit = shelf.search("gamma ray", mode="keyword").hits[0]
        assert hit.citation == "short.pdf#page=1"


def test_limits_are_validated_and_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCSHELF_PARSE__MAX_PAGES", "7")
    monkeypatch.setenv("DOCSHELF_WEB__DEPTH", "2")
    s = load_settings()
    assert s.parse.max_pages == 7 and s.web.depth == 2 and s.parse.ocr is True
    monkeypatch.setenv("DOCSHELF_PARSE__TIMEOUT_S", "0")
    with pytest.raises(ConfigError, match=r"parse\.timeout_s"):
        load_settings()
