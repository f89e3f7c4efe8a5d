"""The pipeline's parts wired by hand, for tests and benchmarks of a stage's own internals (an
indexer's arguments, a store's methods, the searcher's evidence).

Behaviour a user sees is tested through ``docshelf.Shelf`` (the ``shelf`` fixture of
``docshelf.testing.fixtures``); this is a workbench for the stages, not a second composition
root: docshelf itself never uses it, and it records no collection settings as ``Shelf.index``
does, opens no background loader and applies no settings recorded with the index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docshelf.config import AnalyzeSettings, Settings

if TYPE_CHECKING:
    from docshelf.analyze import Analyzer
    from docshelf.embed import Embedder
    from docshelf.index.sync import Indexer, Progress
    from docshelf.parse import ParserRegistry
    from docshelf.search.searcher import Searcher
    from docshelf.shelf import Shelf
    from docshelf.store import Store

__all__ = ["Stages"]


class Stages:
    """Store, analyzer, embedder, indexer and searcher over ``settings``; closed together."""

    def __init__(
        self, settings: Settings, embedder: Embedder | None = None, store: Store | None = None
    ) -> None:
        self.settings = settings
        self._embedder = embedder
        self._analyzer: Analyzer | None = None
        self._store = store

    @property
    def analyzer(self) -> Analyzer:
        if self._analyzer is None:
            from docshelf.analyze import Analyzer

            self._analyzer = Analyzer.from_settings(self.settings.analyze)
        return self._analyzer

    def use_analyze(self, analyze: AnalyzeSettings) -> None:
        """Analyse with other settings, the store included."""
        self.settings = self.settings.model_copy(update={"analyze": analyze})
        self._analyzer = None
        if self._store is not None:
            self._store.analyzer = self.analyzer  # type: ignore[attr-defined]

    @property
    def store(self) -> Store:
        if self._store is None:
            from docshelf.store import open_store

            self._store = open_store(self.settings, self.analyzer)
        return self._store

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

    def shelf(self) -> Shelf:
        """A Shelf over these parts (its store stays this object's to close)."""
        from docshelf.shelf import Shelf

        return Shelf(self.settings, embedder=self.embedder, store=self.store)

    def __enter__(self) -> Stages:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
