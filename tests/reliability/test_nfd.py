"""File names in decomposed Unicode (NFD, as macOS writes them) are found again after indexing.

Paths are stored composed (NFC) so that a path given in either form finds the document; the file
on disk must then be looked up by that composed name, or it is "missing" on every status check
and cannot be read.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.shelf import Shelf

NFD_FILE = unicodedata.normalize("NFD", "café.md")
NFD_DIR = unicodedata.normalize("NFD", "résumé")


def test_decomposed_file_names_are_not_stale_and_can_be_read(settings: Settings, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / NFD_DIR).mkdir(parents=True)
    (corpus / NFD_FILE).write_text("# Café\n\nThe espresso machine descaling schedule.\n", "utf-8")
    (corpus / NFD_DIR / "notes.md").write_text("# Notes\n\nQuarterly résumé review.\n", "utf-8")
    (corpus / "plain.md").write_text("# Plain\n\nNothing special here.\n", "utf-8")
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        assert len(shelf.index([corpus], "test").sync.added) == 3
        status = shelf.status()
        assert status.stale_documents == 0, status.stale
        for path, words in (("café.md", "descaling"), ("résumé/notes.md", "Quarterly")):
            doc = shelf.find_document(path, "test")
            assert doc.path == unicodedata.normalize("NFC", path)
            text = shelf.read_range(path, collection="test")
            assert text.source == "file" and words in text.text
        again = shelf.index([corpus], "test").sync
        assert again.unchanged == 3 and not again.updated and not again.removed
