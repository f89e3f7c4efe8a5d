"""Shelf: the one place that opens an index and carries out what a user asks of it.

The CLI, the MCP server, the web page and Python programs all call a Shelf; its methods are the
use cases and nothing else. The parts they are built from (store, analyzer, embedder, searcher,
indexer, freshness tracker) are wired in one private composition root (``parts.py``). Stores are
safe to share between threads: reads never wait for a write (SQLite readers each have a
connection of their own, PostgreSQL a pooled one), and writers hold the store per document, so a
server answers searches while an `index` job runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.shelf import reading, searching
from docshelf.shelf.parts import Parts
from docshelf.shelf.types import (
    ForgetReport,
    GrepRequest,
    GrepResult,
    IndexReport,
    PassageWindow,
    SearchRequest,
    Status,
    TextRange,
)

if TYPE_CHECKING:
    from docshelf.answer import Answer
    from docshelf.config import Settings
    from docshelf.embed.base import Embedder
    from docshelf.index.sync import Confirm, Progress
    from docshelf.index.watch import Watcher
    from docshelf.search.results import SearchResult
    from docshelf.shelf.pages import PageImage
    from docshelf.store.base import DocumentRecord, Store
    from docshelf.store.copy import CopyReport
    from docshelf.types import Summary

__all__ = ["Shelf"]


class Shelf:
    """One docshelf index and the use cases over it; thread-safe, closed with ``close()``.

    ``settings`` default to ``docshelf.toml`` in the working directory plus DOCSHELF_*
    variables. ``config_path`` is the file they came from and ``config_explicit`` whether the
    user named it (only then does `index` replace a collection's recorded settings).
    ``embedder`` may be given to share a loaded model (or, in tests, a hash embedder);
    ``store`` to serve a store opened elsewhere (tests pass ``docshelf.testing.MemoryStore``;
    the caller closes it).
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        store: Store | None = None,
        config_path: Path | None = None,
        config_explicit: bool = False,
    ) -> None:
        if settings is None:
            from docshelf.config import find_config, load_settings

            config_path = config_path or find_config()
            settings = load_settings(config_path)
        self._parts = Parts(
            settings, embedder=embedder, store=store, config_path=config_path, config_explicit=config_explicit
        )

    @property
    def settings(self) -> Settings:
        """This process's settings (each collection's recorded ones apply on top, per use)."""
        return self._parts.settings

    @property
    def config_path(self) -> Path | None:
        return self._parts.config_path

    # ----- opening and the model -----
    def exists(self) -> bool:
        """True if there is an index to open (a PostgreSQL store always counts; its errors come on open)."""
        from docshelf.store import index_exists

        return index_exists(self._parts.settings)

    @property
    def is_open(self) -> bool:
        """True once the index is open (``open()``, a first use, or a server's loader)."""
        return self._parts.is_open

    def open(self) -> Shelf:
        """Open the index now (otherwise the first use opens it); raises StoreError."""
        _ = self._parts.store
        return self

    def start(self) -> None:
        """Open the index and load the model on a background thread (a server's fast start)."""
        self._parts.start()

    async def opened(self) -> None:
        """Wait, off the event loop, until the index is open (or failed to open)."""
        await self._parts.opened()

    @property
    def model_state(self) -> str:
        """ "not loaded", "loading", "ready" or "failed" (``model_error`` says why)."""
        return self._parts.model_state

    @property
    def model_error(self) -> str | None:
        return self._parts.model_error

    @property
    def model_name(self) -> str:
        """The embedding model's name (building the embedder, not loading its weights)."""
        return self._parts.model().name

    def wait_for_model(self, wait: float | None = None) -> str | None:
        """Wait up to ``wait`` seconds (None: as long as it takes) for the embedding model; None when
        it is ready, else why not. Without ``start()`` the model loads here and its errors raise."""
        return self._parts.embedder(wait)[1]

    def generation(self) -> int:
        """A number that changes whenever the index is written (by any process)."""
        return self._parts.store.generation()

    # ----- reads -----
    def search(self, request: SearchRequest | str, /, **options: Any) -> SearchResult:
        """Hybrid (or keyword / semantic) search; ``options`` are SearchRequest fields."""
        req = request if isinstance(request, SearchRequest) else SearchRequest(request, **options)
        return searching.search(self._parts, req)

    def grep(self, request: GrepRequest | str, /, **options: Any) -> GrepResult:
        """Every line a phrase (or, with ``regex=True``, an RE2 regular expression) matches, cited as
        ``path:LINE`` or ``file.pdf#page=N``; ``options`` are GrepRequest fields."""
        from docshelf.shelf import grep as grep_use

        req = request if isinstance(request, GrepRequest) else GrepRequest(request, **options)
        return grep_use.grep(self._parts, req)

    def read_passage(self, chunk_id: str, before: int = 0, after: int = 0) -> PassageWindow:
        """A search hit's stored passage with up to ``before``/``after`` neighbours."""
        return reading.passages(self._parts.store, chunk_id, before, after)

    def find_document(self, ref: str, collection: str | None = None) -> DocumentRecord:
        """A document by id, ``docshelf://`` URI, path as cited, or absolute path."""
        return reading.find_document(self._parts.store, ref, collection)

    def read_range(
        self, document: str | DocumentRecord, collection: str | None = None,
        lines: tuple[int | None, int | None] = (None, None),
        chars: tuple[int | None, int | None] = (None, None),
        page: int | None = None, max_tokens: int | None = None,
    ) -> TextRange:  # fmt: skip
        """A document's text, or a line, character or page range of it (cut to ``max_tokens``)."""
        parts = self._parts
        doc = document if not isinstance(document, str) else self.find_document(document, collection)
        registry = parts.registry(doc.collection)
        max_bytes = int(parts.collection_settings(doc.collection).sources.max_file_mb * 1_048_576)
        return reading.read_range(parts.store, registry, doc, lines, chars, page, max_tokens, max_bytes)

    def page_image(
        self, document: str | DocumentRecord, page: int | None = None, *, chunk_id: str | None = None,
        width: int = 1000, collection: str | None = None,
    ) -> PageImage:  # fmt: skip
        """A PDF page drawn as a PNG ``width`` pixels wide (default: the page of ``chunk_id``), with
        that passage's lines boxed where the text layer places them."""
        from docshelf.shelf import pages

        parts = self._parts
        doc = document if not isinstance(document, str) else self.find_document(document, collection)
        max_bytes = int(parts.collection_settings(doc.collection).sources.max_file_mb * 1_048_576)
        return pages.page_image(parts.store, doc, page, chunk_id, width, max_bytes)

    def list_documents(
        self, collection: str | None = None, path_glob: str | None = None
    ) -> list[DocumentRecord]:
        return reading.list_documents(self._parts.store, collection, path_glob)

    def collections(self) -> list[str]:
        return self._parts.store.collections()

    def roots(self, collection: str) -> list[str]:
        """The folders (and URL mirrors) a collection indexes."""
        return self._parts.store.collection_roots(collection)

    def summary(self) -> Summary:
        """Documents, chunks and roots per collection, without opening the index where it can be
        read directly (a server's fast start); StoreError when there is no index yet."""
        from docshelf.shelf.status import summary

        return summary(self._parts)

    def recount_stale(self) -> None:
        """Count the files changed on disk again at the next search, as a new process would (a
        long-lived reader that is not a server, such as the CLI's search helper); a server's
        background tracker keeps its own count up to date."""
        self._parts.drop_tracker()

    def status(self, stale_limit: int | None = 200) -> Status:
        """Counts, model, recorded settings, builds, skipped and stale files."""
        from docshelf.shelf.status import status

        return status(self._parts, stale_limit)

    def ask(
        self, question: str, *, passages: int | None = None, collections: Sequence[str] = (),
        path_glob: str | None = None, tags: Sequence[str] = (), rerank: bool | None = None,
        model_wait_s: float | None = None,
    ) -> Answer:  # fmt: skip
        """An answer from the configured LLM (``answer.*``) over the best passages, with citations."""
        return searching.ask(
            self._parts, question, passages, collections, path_glob, tags, rerank, model_wait_s
        )

    # ----- writes -----
    def index(
        self, targets: Sequence[str | Path] = (), collection: str | None = None, *,
        reconfigure: bool = False, progress: Progress | None = None, refetch: bool = True,
        keyword_only: bool = False,
    ) -> IndexReport:  # fmt: skip
        """Index folders, files under indexed folders, web pages and Drive links (none: re-sync).

        Keyword first, vectors after: every new or changed file is searchable by keyword (and
        listable, readable, citable) once parsed; then the chunks still without a vector are
        embedded (this sync's, and any an interrupted one left), unless ``keyword_only``.
        The first index of a collection records its settings; ``reconfigure`` replaces them with
        this shelf's (and re-parses every file when chunking or parsing changed).
        """
        from docshelf.shelf import indexing

        return indexing.index(
            self._parts, targets, collection, reconfigure, progress, refetch, keyword_only=keyword_only
        )

    def ingest(
        self, target: str, collection: str | None = None, *, allowed: Sequence[Path] = (),
        progress: Progress | None = None, confirm: Confirm | None = None,
    ) -> IndexReport:  # fmt: skip
        """Index exactly one folder, file, URL or Drive link on behalf of an agent (the MCP `ingest`).

        A local path must lie inside ``allowed`` (none given: inside a root already indexed); a new
        folder goes to ``collection``, else its own (named by its docshelf.toml, else by the folder).
        ``confirm(collection, paths, None)`` is asked, before anything is written, with the documents
        the sync would remove (maybe none); False raises DeclinedError with nothing changed.
        """
        from docshelf.shelf import indexing

        return indexing.ingest(self._parts, target, collection, allowed, progress, confirm)

    def reindex(
        self, collection: str | None = None, progress: Progress | None = None, confirm: Confirm | None = None
    ) -> list[IndexReport]:
        """Re-sync every collection (or one) with the files on disk; ``confirm`` as for ``ingest``
        (a collection declined raises DeclinedError: those synced before it stay synced)."""
        names = self.collections()
        if collection and collection not in names:
            from docshelf.errors import NotFoundError

            raise NotFoundError(f"no collection {collection!r}; known: {', '.join(names) or 'none'}")
        from docshelf.shelf import indexing

        # a collection whose last root was forgotten has nothing to sync
        wanted = [collection] if collection else [n for n in names if self.roots(n)]
        # every collection keyword-searchable first; the last sync's second phase embeds for all
        last = wanted[-1] if wanted else None
        parts = self._parts
        return [
            indexing.index(
                parts, (), name, False, progress, False, confirm=confirm, keyword_only=name != last
            )
            for name in wanted
        ]

    def forget(
        self, target: str, collection: str | None = None, confirm: Confirm | None = None
    ) -> ForgetReport:
        """Remove a document (path, id, URI), a whole root folder, or what a URL brought in;
        ``confirm(collection, paths, root)`` is asked first (False: DeclinedError, nothing removed)."""
        from docshelf.shelf import indexing

        return indexing.forget(self._parts, target, collection, confirm)

    def reembed(self, progress: Progress | None = None) -> int:
        """Embed every stored chunk again with the configured model; returns chunks embedded."""
        from docshelf.shelf import maintenance

        return maintenance.reembed(self._parts, progress)

    def compact(self) -> tuple[int, int]:
        """VACUUM and clean the keyword index under the writer lock; store bytes before, after."""
        from docshelf.shelf import maintenance

        return maintenance.compact(self._parts)

    def migrate_to(self, url: str, progress: Callable[[int, int], None] | None = None) -> CopyReport:
        """Copy this index into the PostgreSQL store at ``url``, without re-embedding."""
        from docshelf.shelf import maintenance

        return maintenance.migrate_to(self._parts, url, progress)

    def watcher(
        self, collection: str, roots: Sequence[Path] = (), on_sync: Callable[[Any], None] | None = None
    ) -> Watcher:
        """A live indexer for one collection (``start()``/``run_forever()``), with its recorded settings."""
        from docshelf.shelf import watching

        return watching.watcher(self._parts, collection, roots, on_sync)

    def watch_all(self, say: Callable[[str], None]) -> Callable[[], None]:
        """Watch every collection, and those added later, on background threads sharing this shelf's
        model (`docshelf serve --watch`); returns the function that stops them. ``say`` gets the
        one line that tells why watching is off."""
        from docshelf.shelf import watching

        return watching.watch_collections(self._parts, say)

    # ----- closing -----
    def __enter__(self) -> Shelf:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._parts.close()
