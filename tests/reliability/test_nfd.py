"""File names in decomposed Unicode (NFD, as macOS writes them) are found again after indexing.

Paths are stored composed (NFC) so that a path given in either form finds the document; the file
on disk must then be looked up by that composed name, or it is "missing" on every status check
and cannot be read.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest

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


def test_many_missing_files_of_one_folder_list_it_once_while_it_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A freshness pass over many deleted files listed and normalised their folder once per file."""
    from docshelf.sources import names

    for i in range(50):
        (tmp_path / f"kept-{i}.md").write_text("x", encoding="utf-8")
    nfd = unicodedata.normalize("NFD", "café.md")
    (tmp_path / nfd).write_text("x", encoding="utf-8")
    listed: list[str] = []
    listdir = os.listdir

    def counting(path: Any) -> list[str]:
        listed.append(str(path))
        return listdir(path)

    monkeypatch.setattr(names.os, "listdir", counting)
    for i in range(200):
        assert names.on_disk(tmp_path, f"gone-{i}.md") == tmp_path / f"gone-{i}.md"
    assert names.on_disk(tmp_path, "café.md") == tmp_path / nfd
    assert listed == [str(tmp_path)]
    # a change to the folder is seen: the listing is made again
    os.rename(tmp_path / nfd, tmp_path / unicodedata.normalize("NFD", "thé.md"))
    os.utime(tmp_path, ns=(1, 1))  # (a coarse clock could leave the mtime unchanged)
    assert names.on_disk(tmp_path, "thé.md") == tmp_path / unicodedata.normalize("NFD", "thé.md")
    assert names.on_disk(tmp_path, "café.md") == tmp_path / "café.md"  # gone: reported as given
    assert len(listed) == 2
