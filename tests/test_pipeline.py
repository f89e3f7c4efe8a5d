"""Indexing: the next batch is parsed and chunked while the previous one is embedded."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.embed.base import Vectors
from docshelf.testing import Stages


class _BlockingEmbedder(HashEmbedder):
    """Its first embedding call waits until the chunker has counted the tokens of a later file."""

    def __init__(self) -> None:
        super().__init__(64)
        self.later_file_seen = threading.Event()
        self.overlapped: bool | None = None

    def count_tokens(self, text: str) -> int:
        if "later-file" in text:
            self.later_file_seen.set()
        return super().count_tokens(text)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if self.overlapped is None:
            self.overlapped = self.later_file_seen.wait(timeout=20)
        return super().embed_documents(texts)


def test_the_next_batch_is_parsed_while_one_is_embedded(settings: Settings, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(4):  # batch_size 1: a batch is 4 chunks, so these four fill the first one
        (corpus / f"a{i}.txt").write_text(f"first batch file {i}\n", "utf-8")
    (corpus / "b.txt").write_text("the later-file of the second batch\n", "utf-8")
    settings.embed.batch_size = 1
    embedder = _BlockingEmbedder()
    with Stages(settings, embedder=embedder) as rt:
        report = rt.indexer().sync("test", [corpus])
        assert embedder.overlapped is True  # embedding of batch 1 waited while b.txt was parsed
        assert sorted(report.added) == ["a0.txt", "a1.txt", "a2.txt", "a3.txt", "b.txt"]
        assert rt.searcher().search("later-file", mode="keyword").hits[0].path == "b.txt"
