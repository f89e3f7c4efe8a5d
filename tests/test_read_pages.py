"""A page that is not there says what is: "has no page 999 in the index" left the reader to find
out how many pages the document has, or that it has none."""

from __future__ import annotations

from pathlib import Path

import pytest

from docshelf.errors import ConfigError, NotFoundError
from docshelf.shelf import Shelf
from test_formats import make_pdf


def test_a_page_past_the_end_or_without_text_or_of_a_text_file_says_which(
    shelf: Shelf, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    pages: list[list[str] | None] = [[f"Page {n}: the quokka report."] for n in range(1, 6)]
    pages[2] = None  # a scanned page: no text layer (no OCR here)
    (docs / "report.pdf").write_bytes(make_pdf(pages))
    (docs / "notes.md").write_text("# Notes\n\nNo pages here.\n")
    with shelf:
        shelf.index([docs])
        assert "Page 4" in shelf.read_range("report.pdf", page=4).text
        with pytest.raises(ConfigError, match=r"report\.pdf has 5 pages; page 9 is past the end"):
            shelf.read_range("report.pdf", page=9)
        with pytest.raises(NotFoundError, match=r"page 3 of report\.pdf has no text in the index"):
            shelf.read_range("report.pdf", page=3)
        with pytest.raises(ConfigError, match="pages are numbered from 1"):
            shelf.read_range("report.pdf", page=0)
        with pytest.raises(ConfigError, match=r"notes\.md has no pages.*lines"):
            shelf.read_range("notes.md", page=1)
