"""Wires settings into the pipeline objects (store, analyzer, embedder, indexer, searcher)."""

from __future__ import annotations

from functools import cached_property

from docshelf.analyze import Analyzer
from docshelf.config import Settings
from docshelf.embed import Embedder, create_embedder
from docshelf.index.sync import Indexer, Progress
from docshelf.search.searcher import Searcher
from docshelf.store import Store, open_store

__all__ = ["Runtime"]


class Runtime:
    """One configured docshelf; parts are built on first use and closed together."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self._embedder = embedder

    @cached_property
    def analyzer(self) -> Analyzer:
        a = self.settings.analyze
        return Analyzer(a.languages, a.stopwords, a.extra_stopwords)

    @cached_property
    def store(self) -> Store:
        return open_store(self.settings, self.analyzer)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            cache = self.settings.embed.cache_dir.expanduser() / "models"
            self._embedder = create_embedder(self.settings.embed, cache)
        return self._embedder

    def indexer(self, progress: Progress | None = None) -> Indexer:
        return Indexer(self.store, self.embedder, self.settings, progress=progress)

    def searcher(self) -> Searcher:
        self.store.check_model(self.embedder.name, self.embedder.dim)
        return Searcher(self.store, self.embedder, self.analyzer, self.settings.search)

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if "store" in self.__dict__:
            self.store.close()
