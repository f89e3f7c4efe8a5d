"""Opening an index and loading its embedding model: on first use, or on a background thread.

A server cannot wait for either at start-up (an MCP client waits on initialize); the CLI wants
both at once and their errors raised. ``Loading`` does the one or the other.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from docshelf.errors import DocshelfError, StoreError

if TYPE_CHECKING:
    from docshelf.config import Settings
    from docshelf.embed.base import Embedder
    from docshelf.runtime import Runtime

__all__ = ["Loading", "apply_index_settings", "repair_keywords"]

log = logging.getLogger("docshelf.shelf")
# how often a keyword rebuild at open says how far it got
PROGRESS_SECONDS = 10.0


def repair_keywords(runtime: Runtime, every_s: float = PROGRESS_SECONDS) -> None:
    """Rebuild a missing or damaged keyword index from the store at open (it is derived data).

    Skipped, with a warning, while another process holds the writer lock: its sync rebuilds it.
    It says so when it starts and every ``every_s`` seconds: a new analyzer version re-analyses
    every passage, 12 minutes at a million chunks, and the open waits for it.
    """
    from docshelf.index.lock import WriterLock

    store = runtime.store
    if getattr(store, "read_only", False) or not store.needs_keyword_rebuild():
        return  # a read-only open writes nothing; the store warned and said how to rebuild
    last = time.monotonic()

    def progress(done: int, total: int) -> None:
        nonlocal last
        if time.monotonic() - last >= every_s:
            last = time.monotonic()
            log.warning("rebuilding the keyword index: %d of %d passages (%d%%)", done, total,
                        100 * done // max(1, total))  # fmt: skip

    try:
        with WriterLock(store.data_dir, 0, store.writer_guard):
            log.warning(
                "the keyword index at %s is missing, damaged or built with other analyzer settings: "
                "rebuilding it from the database (no re-embedding); the index opens when it is done",
                store.data_dir,
            )
            failed = True
            try:
                count = store.rebuild_keyword_index(progress)
                failed = False
            finally:
                store.end_write(failed)
    except DocshelfError as exc:
        log.warning("the keyword index is behind the database and could not be rebuilt now: %s", exc)
        return
    log.warning("the keyword index at %s was rebuilt from the database (%d passages)", store.data_dir, count)


def apply_index_settings(settings: Settings, runtime: Runtime) -> None:
    """Open the store and analyse with the settings recorded with the index, not this process's."""
    from docshelf.shelf.settings import apply, read_index

    rec = read_index(runtime.store)
    if rec is not None:
        runtime.use_analyze(apply(settings, rec).analyze)


class Loading:
    """The runtime (store, analyzer) and the embedder of one shelf, and how far they got."""

    def __init__(
        self, settings: Settings, lock: threading.RLock, embedder: Embedder | None, runtime: Runtime | None
    ) -> None:
        self.settings = settings
        self.lock = lock
        self._runtime = runtime
        self.owns_runtime = runtime is None
        self._given_embedder = embedder
        self._open_error: str | None = None
        self._opened = threading.Event()
        self._model_ready = threading.Event()
        self._closing = threading.Event()
        self._embedder: Embedder | None = None
        self.model_error: str | None = None
        self._thread: threading.Thread | None = None
        self.background = False
        if runtime is not None:
            apply_index_settings(settings, runtime)
            repair_keywords(runtime)
            self._opened.set()

    @property
    def is_open(self) -> bool:
        return self._runtime is not None

    def runtime(self) -> Runtime:
        if self._thread is not None:
            self._opened.wait()
        elif self._runtime is None and self._open_error is None:
            with self.lock:
                if self._runtime is None:
                    self._open()
        if self._runtime is None:
            raise StoreError(self._open_error or "the index could not be opened")
        return self._runtime

    def _open(self) -> None:
        from docshelf.runtime import Runtime

        runtime = Runtime(self.settings, embedder=self._given_embedder)
        try:
            apply_index_settings(self.settings, runtime)
            repair_keywords(runtime)
        except DocshelfError as exc:
            runtime.close()
            self._open_error = str(exc)
            raise
        except BaseException:
            runtime.close()
            raise
        self._runtime = runtime
        self._opened.set()

    def start(self) -> None:
        self.background = True
        if self._thread is None and not self._model_ready.is_set():
            # not a daemon, and joined by close(): a process that exits while the thread is inside
            # onnxruntime dies of SIGABRT ("terminate called without an active exception")
            self._thread = threading.Thread(target=self._load, name="docshelf-model")
            self._thread.start()

    def _load(self) -> None:
        try:
            if self._runtime is None:
                try:
                    self._open()
                except DocshelfError:
                    pass
                except Exception as exc:
                    log.exception("the index failed to open")
                    self._open_error = f"the index failed to open: {type(exc).__name__}: {exc}"
            if self._runtime is None:
                self.model_error = self._open_error
                return
            try:
                embedder = self._runtime.embedder
                embedder.embed_query("warm up")  # weights load on first use; pay that here
                with self.lock:
                    if self._closing.is_set():  # closed while the model warmed up: its store is gone
                        return
                    self._runtime.store.check_model(embedder.name, embedder.dim)
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
        if self._runtime is not None and not self._closing.is_set():
            _warm_analyzer(self._runtime)

    async def opened(self) -> None:
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
        if self._thread is None:
            if self._embedder is None:
                runtime = self.runtime()
                embedder = runtime.embedder
                with self.lock:
                    runtime.store.check_model(embedder.name, embedder.dim)
                self._embedder = embedder
            return self._embedder, None
        if not self._model_ready.wait(wait):
            return None, "the embedding model is still loading, so these are keyword-only results"
        if self._embedder is None:
            return None, f"semantic search is off ({self.model_error}); keyword-only results"
        return self._embedder, None

    def close(self) -> None:
        """Close the index once the loading thread is done: the model's warm-up is not cut short
        (a few seconds at most, the first time the model is prepared)."""
        self._closing.set()
        if self._thread is not None:
            self._thread.join(_JOIN_S)
            self._opened.wait()
        if self.owns_runtime and self._runtime is not None:
            with self.lock:
                self._runtime.close()


_JOIN_S = 300.0  # the longest close() waits for a warm-up (preparing e5 the first time: ~5 s)

# a sentence each: the vote decides per text, and German words load the compound splitter's list
_WARM_TEXTS = (
    "Die Aufwärmphase des Servers ist kurz, und die erste Suche ist schnell.",
    "Le serveur démarre vite et la première recherche est rapide.",
    "The server starts quickly and the first search is fast.",
)


def _warm_analyzer(runtime: Runtime) -> None:
    """Load what a server's first search would otherwise load on its own time (~0.1 s there): the
    search modules, the language vote's word lists, stemmers and the compound splitter's words."""
    try:
        import docshelf.search.searcher  # noqa: F401

        for text in _WARM_TEXTS:
            runtime.analyzer.tokens(text, passage=True)
    except Exception as exc:  # only a warm-up: the first search loads whatever is missing
        log.debug("analyzer warm-up: %s", exc)
