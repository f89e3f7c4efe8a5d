"""Indexing keyword first, vectors after: every file is searchable by keyword before the model
embeds anything, and the vectors come in a second phase that resumes where one stopped."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.embed.base import Vectors
from docshelf.index.vectors import embed_lock
from docshelf.testing import Stages

pytestmark = pytest.mark.usefixtures("backend")


class _WatchingEmbedder(HashEmbedder):
    """At its first embedding call, records what a reader of the index could find by then."""

    def __init__(self, rt: Stages | None = None, word: str = "zanzibar") -> None:
        super().__init__(64)
        self.rt = rt
        self.word = word
        self.seen_first: tuple[int, list[str]] | None = None
        self.calls = 0
        self.texts = 0

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        self.texts += len(texts)
        if self.seen_first is None and self.rt is not None:
            docs = len(self.rt.store.document_states("test"))
            hits = self.rt.searcher().search(self.word, mode="keyword").hits
            self.seen_first = (docs, [h.path for h in hits])
        return super().embed_documents(texts)


def _corpus(tmp_path: Path, files: int = 8) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(files):  # batch_size 1: four chunks a batch, so two batches and more
        (corpus / f"a{i}.txt").write_text(f"first batch file {i}\n", "utf-8")
    (corpus / "b.txt").write_text("zanzibar, the last file\n", "utf-8")
    return corpus


def test_every_file_is_keyword_searchable_before_the_first_embedding(
    settings: Settings, tmp_path: Path
) -> None:
    corpus = _corpus(tmp_path)
    settings.embed.batch_size = 1
    embedder = _WatchingEmbedder()
    with Stages(settings, embedder=embedder) as rt:
        embedder.rt = rt
        report = rt.indexer().sync("test", [corpus])
        assert embedder.seen_first == (9, ["b.txt"])  # all nine in, the last file found by keyword
        assert len(report.added) == 9 and report.vectors_missing == 0
        assert rt.store.stats().collections["test"] == {"documents": 9, "chunks": 9, "embedded": 9}
        assert rt.searcher().search("zanzibar", mode="semantic").hits[0].path == "b.txt"


def test_keyword_only_stops_after_the_first_phase_and_a_later_sync_finishes(
    settings: Settings, tmp_path: Path
) -> None:
    corpus = _corpus(tmp_path)
    embedder = _WatchingEmbedder()
    with Stages(settings, embedder=embedder) as rt:
        report = rt.indexer().sync("test", [corpus], keyword_only=True)
        assert embedder.calls == 0 and report.vectors is None
        assert report.vectors_missing == rt.store.missing_vectors() == 9
        assert rt.store.stats().collections["test"]["embedded"] == 0
        assert rt.searcher().search("zanzibar", mode="keyword").hits[0].path == "b.txt"
        assert rt.searcher().search("zanzibar", mode="semantic").hits == []  # nothing to rank yet
        again = rt.indexer().sync("test", [corpus])  # nothing changed on disk: only the vectors
        assert again.unchanged == 9 and again.vectors is not None and again.vectors.filled == 9
        assert rt.store.missing_vectors() == 0
        assert rt.searcher().search("zanzibar", mode="semantic").hits[0].path == "b.txt"


def test_unchanged_text_keeps_its_vector_and_moved_text_is_not_embedded_again(
    settings: Settings, tmp_path: Path
) -> None:
    corpus = _corpus(tmp_path)
    embedder = _WatchingEmbedder()
    with Stages(settings, embedder=embedder) as rt:
        rt.indexer().sync("test", [corpus])
        calls = embedder.calls
        (corpus / "b.txt").rename(corpus / "c.txt")  # the same text under another name
        report = rt.indexer().sync("test", [corpus])
        assert report.added == ["c.txt"] and report.removed == ["b.txt"]
        assert embedder.calls == calls and report.chunks_embedded == 0 and report.vectors_missing == 0


def test_a_second_embedder_leaves_the_work_to_the_one_running(settings: Settings, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    with Stages(settings, embedder=HashEmbedder(64)) as rt:
        with embed_lock(rt.store.data_dir) as mine:  # another process (or thread) is embedding
            assert mine
            report = rt.indexer().sync("test", [corpus])
        assert report.vectors is not None and report.vectors.busy and report.vectors.filled == 0
        assert report.vectors_missing == 9
        assert rt.indexer().embed_pending().filled == 9  # once it is free, any writer takes it


def test_embedding_stops_between_batches_when_asked_and_resumes_where_it_stopped(
    settings: Settings, tmp_path: Path
) -> None:
    corpus = _corpus(tmp_path, files=23)
    settings.embed.batch_size = 1
    embedder = _WatchingEmbedder()
    stop = threading.Event()
    with Stages(settings, embedder=embedder) as rt:
        rt.indexer().sync("test", [corpus], keyword_only=True)
        progress: list[tuple[str, int, int, str | None]] = []

        def tick(phase: str, done: int, total: int, current: str | None = None) -> None:
            progress.append((phase, done, total, current))
            if done >= 4:
                stop.set()

        first = rt.indexer(progress=tick).embed_pending(stop.is_set)
        assert 0 < first.filled < 24 and first.remaining == 24 - first.filled
        assert all(p[0] == "vectors" and p[2] == 24 for p in progress)
        assert any(p[3] is not None and p[3].endswith(".txt") for p in progress)  # the file embedded
        rest = rt.indexer().embed_pending()
        assert rest.filled == 24 - first.filled and rest.remaining == 0
        assert embedder.texts == 24  # every chunk embedded once: no batch was done twice


def test_a_changed_file_keeps_its_old_version_until_the_new_one_is_keyword_searchable(
    settings: Settings, tmp_path: Path
) -> None:
    corpus = _corpus(tmp_path)
    embedder = _WatchingEmbedder(word="quokka")
    with Stages(settings, embedder=embedder) as rt:
        rt.indexer().sync("test", [corpus])
        (corpus / "b.txt").write_text("quokka, the new text of the last file\n", "utf-8")
        embedder.rt, embedder.texts = rt, 0

        def found(word: str) -> list[str]:
            return [h.path for h in rt.searcher().search(word, mode="keyword").hits]

        seen: dict[str, tuple[list[str], list[str]]] = {}

        def tick(phase: str, done: int, total: int, current: str | None = None) -> None:
            if phase == "index" and current == "b.txt":  # about to be read: the old one is all there is
                seen["before"] = (found("zanzibar"), found("quokka"))

        report = rt.indexer(progress=tick).sync("test", [corpus])
        assert seen["before"] == (["b.txt"], [])
        # at the first embedding, the new version is in, by keyword, and the old one gone
        assert embedder.seen_first == (9, ["b.txt"]) and report.updated == ["b.txt"]
        assert found("zanzibar") == [] and found("quokka") == ["b.txt"]
        assert embedder.texts == 1  # the new chunk only: the eight unchanged files kept their vectors
