"""A link re-pointed after indexing is not followed: reads refuse it until it is re-indexed.

Reported: `mv corpus corpus.real; ln -s evil corpus` made read_document serve the new target's
files under the indexed names; re-pointing ``b.md`` from ``x.md`` to ``c.md`` served c's text as
b's, with only a "changed since indexed" note.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.errors import AccessError
from docshelf.shelf import Shelf

SECRET = "EVIL-SECRET-0xBADC0DE"


def test_a_root_swapped_for_a_link_elsewhere_is_refused(settings: Settings, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("# Alpha\n\nThe alpha runbook.\n", "utf-8")
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "a.md").write_text(f"# Alpha\n\n{SECRET}\n", "utf-8")
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([corpus], "test")
        corpus.rename(tmp_path / "corpus.real")
        os.symlink(evil, corpus)
        with pytest.raises(AccessError, match="docshelf index") as caught:
            shelf.read_range("a.md", collection="test")
        assert SECRET not in str(caught.value)
        report = shelf.index([], "test").sync  # a sync does not follow it either
        assert any(str(corpus) in s.path and "points to" in s.reason for s in report.skipped), report.skipped
        assert not report.removed  # what was indexed from it is kept
        hits = shelf.search(SECRET, k=3, mode="keyword").hits
        assert all(SECRET not in h.text for h in hits)


def test_a_link_inside_the_root_re_pointed_is_refused_until_re_indexed(
    settings: Settings, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "x.md").write_text("# X\n\nThe x file, linked as b.\n", "utf-8")
    (corpus / "c.md").write_text(f"# C\n\nThe c file: {SECRET}.\n", "utf-8")
    os.symlink("x.md", corpus / "b.md")
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([corpus], "test")
        assert "linked as b" in shelf.read_range("b.md", collection="test").text
        (corpus / "b.md").unlink()
        os.symlink("c.md", corpus / "b.md")
        with pytest.raises(AccessError, match="docshelf index") as caught:
            shelf.read_range("b.md", collection="test")
        assert SECRET not in str(caught.value)
        assert "linked as b" in shelf.read_range("x.md", collection="test").text  # others still read
        shelf.index([corpus], "test")  # re-indexed: b.md is now what it points to
        assert SECRET in shelf.read_range("b.md", collection="test").text
