"""Reads of the same file parse it once: a 500-page PDF took ~0.8 s per read, for every passage
the page's reader opened and every page an agent read; a changed file is parsed again."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from docshelf.parse import ParserRegistry
from docshelf.shelf import Shelf
from docshelf.shelf import parsed as kept
from test_formats import make_pdf


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths parsed from now on."""
    seen: list[str] = []
    real = ParserRegistry.parse

    def counted(self: ParserRegistry, data: bytes, path: str) -> Any:
        seen.append(path)
        return real(self, data, path)

    monkeypatch.setattr(ParserRegistry, "parse", counted)
    return seen


def test_a_file_read_again_is_parsed_once_and_again_when_it_changes(
    shelf: Shelf, tmp_path: Path, parses: list[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    pages = [[f"Page {n} line {k}: the quokka report." for k in range(5)] for n in range(1, 6)]
    (docs / "report.pdf").write_bytes(make_pdf(pages))
    notes = docs / "notes.md"
    notes.write_text("# Notes\n\nThe first version.\n")
    shelf.index([docs])
    parses.clear()
    first = shelf.read_range("report.pdf", page=2)
    again = shelf.read_range("report.pdf", page=4)
    assert "Page 2 line 0" in first.text and "Page 4 line 0" in again.text
    hit = shelf.search("quokka", mode="keyword").hits[0]
    shelf.read_range(hit.path, lines=(hit.line_start, hit.line_end))
    assert parses == ["report.pdf"]
    assert "first version" in shelf.read_range("notes.md").text
    notes.write_text("# Notes\n\nThe second version, longer.\n")
    os.utime(notes, ns=(notes.stat().st_mtime_ns + 10**9,) * 2)
    changed = shelf.read_range("notes.md")
    assert (
        "second version" in changed.text and changed.note and "changed since it was indexed" in changed.note
    )
    assert parses == ["report.pdf", "notes.md", "notes.md"]


def test_what_is_kept_stays_within_its_bounds(
    shelf: Shelf, tmp_path: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kept, "MAX_DOCUMENTS", 3)
    monkeypatch.setattr(kept, "MAX_CHARS", 400)
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(5):
        (docs / f"n{n}.md").write_text(f"# Note {n}\n\nShort note number {n}.\n")
    (docs / "big.md").write_text("# Big\n\n" + "word " * 200 + "\n")  # over half the bound: never kept
    shelf.index([docs])
    parses.clear()
    for name in ["n0.md", "n1.md", "n2.md", "n3.md", "n3.md", "n0.md", "big.md", "big.md"]:
        shelf.read_range(name)
    # n0 was pushed out by n3 (three kept at most), and the big one is parsed each time
    assert parses == ["n0.md", "n1.md", "n2.md", "n3.md", "n0.md", "big.md", "big.md"]
    assert len(kept._kept) <= 3 and sum(len(t) for t in kept._kept.values()) <= 400
