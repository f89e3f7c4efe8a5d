"""Shelf: the one place that opens an index and carries out what a user asks of it.

The CLI, the MCP server and Python programs all call a Shelf. It owns the runtime (store,
analyzer, embedder), one searcher and one freshness tracker per process, and the collections'
recorded settings. Stores are safe to share between threads: reads never wait for a write
(SQLite readers each have a connection of their own, PostgreSQL a pooled one), and writers hold
the store per document, so a server answers searches while an `index` job runs.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.errors import StoreError
from docshelf.shelf import reading
from docshelf.shelf.loading import Loading
from docshelf.shelf.types import ForgetReport, IndexReport, PassageWindow, SearchRequest, Status, TextRange

if TYPE_CHECKING:
    from docshelf.answer import Answer
    from docshelf.config import Settings
    from docshelf.embed.base import Embedder
    from docshelf.index.stale import StaleTracker
    from docshelf.index.sync import Indexer, Progress
    from docshelf.index.watch import Watcher
    from docshelf.parse import ParserRegistry
    from docshelf.runtime import Runtime
    from docshelf.search.rerank import Reranker
    from docshelf.search.searcher import Searcher, SearchResult
    from docshelf.store.base import DocumentRecord, Store
    from docshelf.store.copy import CopyReport
    from docshelf.store.embedded.peek import Summary

__all__ = ["Shelf", "join_notes"]


def join_notes(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


class Shelf:
    """One docshelf index and the use cases over it; thread-safe, closed with ``close()``.

    ``settings`` default to ``docshelf.toml`` in the working directory plus DOCSHELF_*
    variables. ``config_path`` is the file they came from and ``config_explicit`` whether the
    user named it (only then does `index` replace a collection's recorded settings).
    ``embedder`` or ``runtime`` may be given, e.g. to share a loaded model.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        runtime: Runtime | None = None,
        config_path: Path | None = None,
        config_explicit: bool = False,
    ) -> None:
        if settings is None:
            from docshelf.config import find_config, load_settings

            config_path = config_path or find_config()
            settings = load_settings(config_path)
        self.settings = settings
        self.config_path = config_path
        self.config_explicit = config_explicit
        self._lock = threading.RLock()
        self._loading = Loading(settings, self._lock, embedder, runtime)
        self._searchers: dict[bool, Searcher] = {}
        self._tracker: StaleTracker | None = None
        self._registries: dict[str, ParserRegistry] = {}
        self._rerankers: list[Reranker] = []

    # ----- opening (the loader's) -----
    @property
    def lock(self) -> threading.RLock:
        """Held briefly by writers while they decide (collection, recorded settings); reads never take it."""
        return self._lock

    def exists(self) -> bool:
        """True if there is an index to open (a PostgreSQL store always counts; its errors come on open)."""
        return bool(self.settings.store.url) or (self.settings.store.data_dir / "docshelf.db").is_file()

    def open(self) -> Shelf:
        """Open the index now (otherwise the first use opens it); raises StoreError."""
        _ = self.runtime
        return self

    @property
    def runtime(self) -> Runtime:
        return self._loading.runtime()

    @property
    def store(self) -> Store:
        return self.runtime.store

    def start(self) -> None:
        """Open the index and load the model on a background thread (a server's fast start)."""
        self._loading.start()

    async def opened(self) -> None:
        """Wait, off the event loop, until the index is open (or failed to open)."""
        await self._loading.opened()

    @property
    def model_state(self) -> str:
        return self._loading.model_state

    @property
    def model_error(self) -> str | None:
        return self._loading.model_error

    def embedder(self, wait: float | None = None) -> tuple[Embedder | None, str | None]:
        """The model once ready (within ``wait`` seconds on a server), else None and the reason.

        Without a background loader the model is loaded here and its errors are raised.
        """
        return self._loading.embedder(wait)

    # ----- shared parts -----
    def _searcher(self, embedder: Embedder | None) -> Searcher:
        key = embedder is not None
        if key not in self._searchers:
            from docshelf.search.searcher import Searcher

            rt = self.runtime
            self._searchers[key] = Searcher(
                rt.store, embedder, rt.analyzer, self.settings.search, self.tracker().summary
            )
        return self._searchers[key]

    def tracker(self) -> StaleTracker:
        """The process's freshness tracker (a background thread on servers)."""
        if self._tracker is None:
            from docshelf.index.stale import StaleTracker
            from docshelf.shelf.status import guarded_state

            background = self._loading.background
            news = self._new_entries if background else None
            self._tracker = StaleTracker(self.store, None, guarded_state, background=background, news=news)
        return self._tracker

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

        return apply(self.settings, read_collection(self.store, collection), read_index(self.store))

    def reranker(self, wanted: bool | None) -> Reranker | None:
        """The cross-encoder if this call asks for reranking (``None``: ``rerank.enabled``), loaded once."""
        if not (self.settings.rerank.enabled if wanted is None else wanted):
            return None
        if not self._rerankers:
            from docshelf.search.rerank import get_reranker

            self._rerankers.append(get_reranker(self.settings.rerank))
        return self._rerankers[0]

    # ----- reads -----
    def search(self, request: SearchRequest | str, /, **options: Any) -> SearchResult:
        """Hybrid (or keyword / semantic) search; ``options`` are SearchRequest fields."""
        req = request if isinstance(request, SearchRequest) else SearchRequest(request, **options)
        mode = req.mode or self.settings.search.mode
        embedder, model_note = (None, None) if mode == "keyword" else self.embedder(req.model_wait_s)
        reranker = self.reranker(req.rerank)
        searcher = self._searcher(embedder)
        k = req.k or self.settings.search.k
        if reranker is None:
            result = searcher.search(req.query, k=k, mode=mode, flt=req.filter())
        else:
            from docshelf.search.rerank import reranked_search

            top_n = self.settings.rerank.top_n
            result = reranked_search(searcher, reranker, req.query, k, top_n, mode, req.filter())
        result.note = join_notes(result.note, model_note)
        if req.min_confidence and result.hits:
            best = max(h.confidence for h in result.hits)
            result.hits = [h for h in result.hits if h.confidence >= req.min_confidence]
            if not result.hits:
                result.note = join_notes(
                    f"no hit reached min_confidence {req.min_confidence:g} (the best had {best:.2f}): "
                    "the documents may not answer this; try other words or a lower min_confidence",
                    result.note,
                )
        return result

    def read_passage(self, chunk_id: str, before: int = 0, after: int = 0) -> PassageWindow:
        """A search hit's stored passage with up to ``before``/``after`` neighbours."""
        return reading.passages(self.store, chunk_id, before, after)

    def find_document(self, ref: str, collection: str | None = None) -> DocumentRecord:
        """A document by id, ``docshelf://`` URI, path relative to its root, or absolute path."""
        return reading.find_document(self.store, ref, collection)

    def read_range(
        self, document: str | DocumentRecord, collection: str | None = None,
        lines: tuple[int | None, int | None] = (None, None),
        chars: tuple[int | None, int | None] = (None, None),
        page: int | None = None, max_tokens: int | None = None,
    ) -> TextRange:  # fmt: skip
        """A document's text, or a line, character or page range of it (cut to ``max_tokens``)."""
        doc = document if not isinstance(document, str) else self.find_document(document, collection)
        registry = self.registry(doc.collection)
        max_bytes = int(self.collection_settings(doc.collection).sources.max_file_mb * 1_048_576)
        return reading.read_range(self.store, registry, doc, lines, chars, page, max_tokens, max_bytes)

    def list_documents(
        self, collection: str | None = None, path_glob: str | None = None
    ) -> list[DocumentRecord]:
        return reading.list_documents(self.store, collection, path_glob)

    def collections(self) -> list[str]:
        return self.store.collections()

    def summary(self) -> Summary:
        """Documents, chunks and roots per collection; before the index is open, without opening it
        (an embedded index is read with plain SQLite), so a server starts fast. StoreError when
        there is no index yet."""
        from docshelf.store.embedded.peek import Summary, peek

        if not self._loading.is_open and not self.settings.store.url:
            db = self.settings.store.data_dir / "docshelf.db"
            if not db.is_file():
                raise StoreError(
                    f"no docshelf index at {self.settings.store.data_dir}: run `docshelf index PATH` first "
                    "(or pass --data-dir / set DOCSHELF_STORE__DATA_DIR to the index folder)"
                )
            if (quick := peek(db)) is not None:
                return quick
        store = self.store
        stats = store.stats()
        rows = [(n, c["documents"], store.collection_roots(n)) for n, c in stats.collections.items()]
        return Summary(stats.documents, stats.chunks, rows)

    def status(self, stale_limit: int | None = 200) -> Status:
        """Counts, model, recorded settings, builds, skipped and stale files."""
        from docshelf.shelf.status import kept_passes, status_of

        # a server's tracker walks the files in the background: its last pass, not a walk per call
        checked, new = kept_passes(self._tracker if self._loading.background else None, stale_limit)
        if new is None:
            found = self._new_entries()
            new = (len(found), found)
        return status_of(self.store, self.settings, contextlib.nullcontext(), stale_limit, checked, new)

    def _new_entries(self) -> list[dict[str, str]]:
        """The files a sync would add, as stale entries."""
        from docshelf.shelf.status import new_entries

        return new_entries(self.store, self.collection_settings, self.registry)

    def ask(
        self, question: str, *, passages: int | None = None, collections: Sequence[str] = (),
        path_glob: str | None = None, tags: Sequence[str] = (), rerank: bool | None = None,
        model_wait_s: float | None = None,
    ) -> Answer:  # fmt: skip
        """An answer from the configured LLM (``answer.*``) over the best passages, with citations."""
        from docshelf.answer import compose, create_client, retrieve

        cfg = (
            self.settings.answer.model_copy(update={"passages": passages})
            if passages
            else self.settings.answer
        )
        client = create_client(cfg)  # a missing model or key fails here, before any work
        wanted = (cfg.rerank if cfg.rerank is not None else None) if rerank is None else rerank
        reranker = self.reranker(wanted)
        embedder, model_note = self.embedder(model_wait_s)
        searcher = self._searcher(embedder)
        req = SearchRequest(question, collections=tuple(collections), path_glob=path_glob, tags=tuple(tags))
        found = retrieve(searcher, question, cfg, req.filter(), reranker, self.settings.rerank.top_n)
        result = compose(found, client, cfg)
        result.note = join_notes(result.note, model_note)
        return result

    # ----- writes -----
    def indexer(self, collection: str, progress: Progress | None = None) -> Indexer:
        """An indexer for one collection, with its recorded settings."""
        settings = self.collection_settings(collection)
        return self.runtime.indexer(progress, settings, self.registry(collection))

    def index(
        self, targets: Sequence[str | Path] = (), collection: str | None = None, *,
        reconfigure: bool = False, progress: Progress | None = None, refetch: bool = True,
    ) -> IndexReport:  # fmt: skip
        """Index folders, files under indexed folders, web pages and Drive links (none: re-sync).

        The first index of a collection records its settings; ``reconfigure`` replaces them with
        this shelf's (and re-parses every file when chunking or parsing changed).
        """
        from docshelf.shelf import indexing

        return indexing.index(self, targets, collection, reconfigure, progress, refetch)

    def ingest(
        self, target: str, collection: str | None = None, *, allowed: Sequence[Path] = (),
        progress: Progress | None = None,
    ) -> IndexReport:  # fmt: skip
        """Index exactly one folder, file, URL or Drive link on behalf of an agent (the MCP `ingest`).

        A local path must lie inside ``allowed`` (none given: inside a root already indexed); a new
        folder goes to ``collection``, else its own (named by its docshelf.toml, else by the folder).
        """
        from docshelf.shelf import indexing

        return indexing.ingest(self, target, collection, allowed, progress)

    def reindex(self, collection: str | None = None, progress: Progress | None = None) -> list[IndexReport]:
        """Re-sync every collection (or one) with the files on disk."""
        # a collection whose last root was forgotten has nothing to sync
        names = (
            [collection] if collection else [n for n in self.collections() if self.store.collection_roots(n)]
        )
        if collection and collection not in self.collections():
            from docshelf.errors import NotFoundError

            raise NotFoundError(
                f"no collection {collection!r}; known: {', '.join(self.collections()) or 'none'}"
            )
        return [self.index((), name, progress=progress, refetch=False) for name in names]

    def forget(self, target: str, collection: str | None = None) -> ForgetReport:
        """Remove a document (path, id, URI), a whole root folder, or what a URL brought in."""
        from docshelf.shelf import indexing

        return indexing.forget(self, target, collection)

    def reembed(self, progress: Progress | None = None) -> int:
        """Embed every stored chunk again with the configured model; returns chunks embedded."""
        with self._lock:
            count = self.runtime.indexer(progress).reembed()
        self._searchers.clear()
        return count

    def compact(self) -> tuple[int, int]:
        """VACUUM and clean the keyword index under the writer lock; store bytes before, after."""
        from docshelf.index.lock import WriterLock

        timeout = self.settings.watch.lock_timeout_s
        with self._lock, WriterLock(self.store.data_dir, timeout, self.store.writer_guard):
            return self.store.compact()

    def migrate_to(self, url: str, progress: Callable[[int, int], None] | None = None) -> CopyReport:
        """Copy this index into the PostgreSQL store at ``url``, without re-embedding."""
        from docshelf.index.lock import WriterLock
        from docshelf.store import open_store
        from docshelf.store.copy import copy_store

        target_settings = self.settings.model_copy(deep=True)
        target_settings.store.url, target_settings.store.backend = url, "postgres"
        timeout = self.settings.watch.lock_timeout_s
        with self._lock:
            target = open_store(target_settings, self.runtime.analyzer)
            # both may be shared: no other docshelf writes into either while the copy runs
            lock = WriterLock(self.store.data_dir, timeout, self.store.writer_guard)
            with contextlib.closing(target), target.writer_guard(timeout), lock:
                return copy_store(self.store, target, progress or (lambda done, total: None))

    def watcher(
        self, collection: str, roots: Sequence[Path] = (), on_sync: Callable[[Any], None] | None = None
    ) -> Watcher:
        """A live indexer for one collection (``start()``/``run_forever()``), with its recorded settings."""
        from docshelf.errors import NotFoundError
        from docshelf.index.watch import Watcher

        if not roots and collection not in self.collections():
            known = ", ".join(self.collections()) or "none"
            raise NotFoundError(f"no collection {collection!r} to watch (known: {known}); pass its folders")
        return Watcher(self.indexer(collection), collection, self.settings.watch, roots, on_sync=on_sync)

    def changed(self) -> None:
        """Forget what depends on the index contents (after another process wrote to it)."""
        self._registries.clear()

    # ----- closing -----
    def __enter__(self) -> Shelf:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._tracker is not None:
            self._tracker.close()
        self._loading.close()
