"""The composition root: the one object that wires settings into the pipeline's parts.

Store, analyzer, embedder, searcher, indexer, freshness tracker, parser registries and the
reranker are built here, on first use, and closed together. The use-case modules of this package
take a ``Parts`` and return values; ``Shelf`` is their public face. Private: nothing outside
``docshelf.shelf`` builds one.

Opening the index and loading the model happen on first use (the CLI: errors raised at once), or
on a background thread after ``start()`` (a server: an MCP client waits on initialize, so neither
may hold it up; searches go keyword-only until the model is ready).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from docshelf.errors import DocshelfError, StoreError
from docshelf.shelf.opening import apply_index_settings, repair_keywords, warm_analyzer

if TYPE_CHECKING:
    from pathlib import Path

    from docshelf.analyze import Analyzer
    from docshelf.config import AnalyzeSettings, Settings
    from docshelf.embed.base import Embedder
    from docshelf.index.stale import StaleTracker
    from docshelf.index.sync import Confirm, Indexer, Progress
    from docshelf.parse import ParserRegistry
    from docshelf.search.rerank import Reranker
    from docshelf.search.searcher import Searcher
    from docshelf.store.base import Store

__all__ = ["Parts"]

log = logging.getLogger("docshelf.shelf")

_JOIN_S = 300.0  # the longest close() waits for a warm-up (preparing e5 the first time: ~5 s)
# after an open that failed, the first call this much later tries again (a server lives on while
# PostgreSQL starts, or a locked file is let go), rather than every call paying a slow failure
_REOPEN_S = 5.0


class Parts:
    """One configured docshelf: its parts, built on first use, and how far the loading got.

    ``embedder`` and ``store`` may be given (tests pass a hash embedder or an in-memory store; a
    watcher shares a server's loaded model). A given store is the caller's to close.
    """

    def __init__(
        self, settings: Settings, *, embedder: Embedder | None = None, store: Store | None = None,
        config_path: Path | None = None, config_explicit: bool = False,
    ) -> None:  # fmt: skip
        self.settings = settings  # this process's; the index's recorded ones apply per use
        self._analyze = settings.analyze
        self.config_path = config_path
        self.config_explicit = config_explicit
        # held briefly by writers while they decide (collection, recorded settings); reads never take it
        self.lock = threading.RLock()
        self._given_embedder = embedder
        self._model: Embedder | None = None  # built (not yet checked against the index)
        self._embedder: Embedder | None = None  # checked against the index: searches may use it
        self.model_error: str | None = None
        self._analyzer: Analyzer | None = None
        self._store: Store | None = store
        self._owns_store = store is None
        self._opened_ok = False
        self._open_error: str | None = None
        self._failed_at = 0.0  # monotonic time of the last failed open
        self._opened = threading.Event()
        self._model_ready = threading.Event()
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None
        self.background = False
        self._searchers: dict[bool, Searcher] = {}
        self._tracker: StaleTracker | None = None
        self._registries: dict[str, ParserRegistry] = {}
        self._rerankers: list[Reranker] = []
        if store is not None:
            self._settle(store)
            self._opened_ok = True
            self._opened.set()

    # ----- the analyzer and the store -----
    @property
    def analyzer(self) -> Analyzer:
        if self._analyzer is None:
            from docshelf.analyze import Analyzer

            self._analyzer = Analyzer.from_settings(self._analyze)
        return self._analyzer

    def use_analyze(self, analyze: AnalyzeSettings) -> None:
        """Analyse with other settings (those recorded with the index), the store included.

        ``settings`` stay this process's: what a writer compares with the recorded ones."""
        if analyze == self._analyze and self._analyzer is not None:
            return
        self._analyze = analyze
        self._analyzer = None
        self._searchers.clear()  # they hold the old analyzer
        if self._store is not None:
            self._store.analyzer = self.analyzer  # type: ignore[attr-defined]

    @property
    def is_open(self) -> bool:
        return self._opened_ok

    @property
    def store(self) -> Store:
        """The open store; opened here on first use (or waited for, after ``start()``)."""
        if self._thread is not None:
            self._opened.wait()
        due = self._open_error is None or time.monotonic() - self._failed_at >= _REOPEN_S
        if not self._opened_ok and due:
            with self.lock:
                if not self._opened_ok:
                    self._open()
                    if self._thread is not None:
                        self._load_model_again()
        if not self._opened_ok or self._store is None:
            raise StoreError(self._open_error or "the index could not be opened")
        return self._store

    def _open(self) -> None:
        from docshelf.store import open_store

        store: Store | None = None
        try:
            store = open_store(self.settings, self.analyzer)
            self._settle(store)
        except BaseException as exc:
            self._store = None
            self._failed_at = time.monotonic()
            if store is not None:
                store.close()
            if isinstance(exc, DocshelfError):
                self._open_error = str(exc)
            raise
        self._open_error = None
        self._store = store
        self._opened_ok = True
        self._opened.set()

    def _settle(self, store: Store) -> None:
        """Analyse with the settings recorded with the index; rebuild a damaged keyword index."""
        self._store = store
        analyze = apply_index_settings(self.settings, store)
        if analyze is not None:
            self.use_analyze(analyze)
        repair_keywords(store)

    # ----- the model -----
    def model(self) -> Embedder:
        """The configured embedder, built on first use (weights load on its first call)."""
        if self._model is None:
            if self._given_embedder is not None:
                self._model = self._given_embedder
            else:
                from docshelf.embed import create_embedder

                cache = self.settings.embed.cache_dir.expanduser() / "models"
                self._model = create_embedder(self.settings.embed, cache)
        return self._model

    def start(self) -> None:
        """Open the index and load the model on a background thread."""
        self.background = True
        if self._thread is None and not self._model_ready.is_set():
            # not a daemon, and joined by close(): a process that exits while the thread is inside
            # onnxruntime dies of SIGABRT ("terminate called without an active exception")
            self._thread = threading.Thread(target=self._load, name="docshelf-model")
            self._thread.start()

    def _load_model_again(self) -> None:
        """After the index opened on a later try: load the model as ``start()`` does (the first
        loading thread gave up with the open)."""
        assert self._thread is not None
        self._thread.join()  # it is past the failed open: only its last lines are left
        self.model_error = None
        self._model_ready.clear()
        self._thread = threading.Thread(target=self._load, name="docshelf-model")
        self._thread.start()

    def _load(self) -> None:
        try:
            if not self._opened_ok:
                try:
                    self._open()
                except DocshelfError:
                    pass
                except Exception as exc:
                    log.exception("the index failed to open")
                    self._open_error = f"the index failed to open: {type(exc).__name__}: {exc}"
            if not self._opened_ok or self._store is None:
                self.model_error = self._open_error
                return
            try:
                embedder = self.model()
                embedder.embed_query("warm up")  # weights load on first use; pay that here
                with self.lock:
                    if self._closing.is_set():  # closed while the model warmed up: its store is gone
                        return
                    self._store.check_model(embedder.name, embedder.dim)
                self._embedder = embedder
            except DocshelfError as exc:
                self.model_error = str(exc)
                log.warning("semantic search is off: %s", exc)
            except Exception as exc:  # a broken model must not take the keyword side down with it
                log.exception("embedding model failed to load")
                self.model_error = f"the embedding model failed to load: {type(exc).__name__}: {exc}"
        finally:
            self._opened.set()
            self._model_ready.set()
        # after the model, which semantic and hybrid searches wait for; keyword ones may run meanwhile
        if not self._closing.is_set():
            warm_analyzer(self.analyzer)

    async def opened(self) -> None:
        """Wait, off the event loop, until the index is open (or failed to open)."""
        if self._thread is not None and not self._opened.is_set():
            import anyio.to_thread

            await anyio.to_thread.run_sync(self._opened.wait)

    @property
    def model_state(self) -> str:
        if self._thread is None:
            return "ready" if self._embedder is not None else "not loaded"
        if not self._model_ready.is_set():
            return "loading"
        return "ready" if self._embedder is not None else "failed"

    def embedder(self, wait: float | None) -> tuple[Embedder | None, str | None]:
        """The model once ready (within ``wait`` seconds on a server), else None and the reason.

        Without a background loader the model is loaded here and its errors are raised.
        """
        if self._thread is None:
            if self._embedder is None:
                store = self.store
                embedder = self.model()
                with self.lock:
                    store.check_model(embedder.name, embedder.dim)
                self._embedder = embedder
            return self._embedder, None
        if not self._model_ready.wait(wait):
            return None, "the embedding model is still loading, so these are keyword-only results"
        if self._embedder is None:
            return None, f"semantic search is off ({self.model_error}); keyword-only results"
        return self._embedder, None

    # ----- what the use cases are built from -----
    def searcher(self, embedder: Embedder | None) -> Searcher:
        """The process's searcher with (or without) the model: one each, shared by every search."""
        key = embedder is not None
        if key not in self._searchers:
            from docshelf.search.searcher import Searcher

            store = self.store
            self._searchers[key] = Searcher(store, embedder, self.analyzer, self.settings.search)
        return self._searchers[key]

    def indexer(
        self,
        collection: str | None = None,
        progress: Progress | None = None,
        settings: Settings | None = None,
        confirm: Confirm | None = None,
    ) -> Indexer:
        """An indexer with the collection's recorded settings (``settings`` in their place when
        given; none and no collection: this process's, as a re-embed of every collection uses)."""
        from docshelf.index.sync import Indexer

        if settings is None and collection is not None:
            settings = self.collection_settings(collection)
        registry = self.registry(collection) if collection is not None else None
        if settings is None:
            settings = self.settings.model_copy(update={"analyze": self._analyze})
        return Indexer(
            self.store, self.model(), settings, registry, progress=progress, analyzer=self.analyzer,
            confirm=confirm,
        )  # fmt: skip

    def tracker(self) -> StaleTracker:
        """The process's freshness tracker (a background thread on servers)."""
        if self._tracker is None:
            from docshelf.index.stale import StaleTracker
            from docshelf.shelf.paths import PathGuard

            news = self.new_entries if self.background else None
            self._tracker = StaleTracker(self.store, None, PathGuard, background=self.background, news=news)
        return self._tracker

    def new_entries(self) -> list[dict[str, str]]:
        """Stale entries for the files a sync would add, each collection walked by its own rules."""
        from docshelf.index.corpus import new_files

        store = self.store
        return [
            {"collection": name, "path": rel, "reason": "new"}
            for name in store.collections()
            for rel in new_files(store, name, self.collection_settings(name).sources, self.registry(name))
        ]

    def drop_tracker(self) -> None:
        """Forget a one-shot tracker's count (a server's background one is kept)."""
        if self._tracker is not None and not self.background:
            self._tracker.close()
            self._tracker = None

    def kept_tracker(self) -> StaleTracker | None:
        """A server's background tracker, if one runs (its last pass answers `status`)."""
        return self._tracker if self.background else None

    def registry(self, collection: str) -> ParserRegistry:
        """The parsers with the collection's recorded parse settings (so offsets match the index)."""
        if collection not in self._registries:
            from docshelf.parse import default_registry

            # whole settings: their sources.extensions map more extensions to the parsers
            self._registries[collection] = default_registry(self.collection_settings(collection))
        return self._registries[collection]

    def collection_settings(self, collection: str) -> Settings:
        """This process's settings with the collection's (and the index's) recorded ones in place."""
        from docshelf.shelf.settings import apply, read_collection, read_index

        store = self.store
        return apply(self.settings, read_collection(store, collection), read_index(store))

    def reranker(self, wanted: bool | None) -> Reranker | None:
        """The cross-encoder if this call asks for reranking (``None``: ``rerank.enabled``), loaded once."""
        if not (self.settings.rerank.enabled if wanted is None else wanted):
            return None
        if not self._rerankers:
            from docshelf.search.rerank import get_reranker

            self._rerankers.append(get_reranker(self.settings.rerank))
        return self._rerankers[0]

    def changed(self) -> None:
        """Forget what depends on the index contents (recorded settings changed)."""
        self._registries.clear()

    def model_replaced(self) -> None:
        """After a re-embed: the searchers' query vectors came from the old model."""
        self._searchers.clear()

    # ----- closing -----
    def close(self) -> None:
        """Close the index once the loading thread is done: the model's warm-up is not cut short
        (a few seconds at most, the first time the model is prepared)."""
        if self._tracker is not None:
            self._tracker.close()
        self._closing.set()
        if self._thread is not None:
            self._thread.join(_JOIN_S)
            self._opened.wait()
        if self._owns_store and self._store is not None:
            with self.lock:
                self._store.close()
