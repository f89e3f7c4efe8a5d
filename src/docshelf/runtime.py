"""Wires settings into the pipeline objects (store, analyzer, embedder, indexer, searcher)."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from docshelf.config import AnalyzeSettings, Settings

if TYPE_CHECKING:
    from docshelf.analyze import Analyzer
    from docshelf.embed import Embedder
    from docshelf.index.sync import Indexer, Progress
    from docshelf.parse import ParserRegistry
    from docshelf.search.searcher import Searcher
    from docshelf.store import Store

__all__ = ["Runtime"]


class Runtime:
    """One configured docshelf; parts are built on first use and closed together.

    ``embedder`` and ``store`` may be given (tests pass a hash embedder or an in-memory store).
    """

    def __init__(
        self, settings: Settings, embedder: Embedder | None = None, store: Store | None = None
    ) -> None:
        self.settings = settings
        self._embedder = embedder
        if store is not None:
            self.__dict__["store"] = store

    @cached_property
    def analyzer(self) -> Analyzer:
        from docshelf.analyze import Analyzer

        return Analyzer.from_settings(self.settings.analyze)

    def use_analyze(self, analyze: AnalyzeSettings) -> None:
        """Switch to other analysis settings (those recorded with the index), store included."""
        if analyze == self.settings.analyze and "analyzer" in self.__dict__:
            return
        self.settings = self.settings.model_copy(update={"analyze": analyze})
        self.__dict__.pop("analyzer", None)
        if "store" in self.__dict__:
            self.store.analyzer = self.analyzer  # type: ignore[attr-defined]

    @cached_property
    def store(self) -> Store:
        from docshelf.store import open_store

        return open_store(self.settings, self.analyzer)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from docshelf.embed import create_embedder

            cache = self.settings.embed.cache_dir.expanduser() / "models"
            self._embedder = create_embedder(self.settings.embed, cache)
        return self._embedder

    def indexer(
        self, progress: Progress | None = None, settings: Settings | None = None,
        registry: ParserRegistry | None = None,
    ) -> Indexer:  # fmt: skip
        from docshelf.index.sync import Indexer

        return Indexer(
            self.store, self.embedder, settings or self.settings, registry, progress=progress,
            analyzer=self.analyzer,
        )  # fmt: skip

    def searcher(self) -> Searcher:
        from docshelf.search.searcher import Searcher

        self.store.check_model(self.embedder.name, self.embedder.dim)
        return Searcher(self.store, self.embedder, self.analyzer, self.settings.search)

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if "store" in self.__dict__:
            self.store.close()
