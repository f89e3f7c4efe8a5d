"""What changed on disk since the last build: a cheap stat of every indexed file (no reads).

``stale_documents`` walks everything at once (for `status`). ``StaleTracker`` answers every
search in constant time: it pages through the documents in the background (or, in a one-shot
process, within a small time box) and reports the count of its last complete pass.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.errors import DocshelfError
from docshelf.index.mounts import folder_of

if TYPE_CHECKING:
    from docshelf.store.base import DocState, Store

__all__ = ["Resolve", "StaleTracker", "index_age", "stale_documents", "stale_report", "stale_summary"]

# (roots of the document's collection, its state) -> the file to stat; raises if refused
Resolve = Callable[[list[str], "DocState"], Path]
_PAGE = 1000


def _plain_path(roots: list[str], state: DocState) -> Path:
    from docshelf.sources.names import on_disk

    return on_disk(Path(state.root), state.path)


class _Pass:
    """One walk over every document, page by page, counting what differs on disk."""

    def __init__(self, store: Store, resolve: Resolve, limit: int | None) -> None:
        self.store = store
        self.resolve = resolve
        self.limit = limit
        self.after = ""
        self.done = False
        self.found: list[dict[str, str]] = []
        self.count = 0
        self._roots: dict[str, list[str]] = {}
        self._present: dict[str, bool] = {}

    def step(self, lock: contextlib.AbstractContextManager[Any]) -> None:
        """Check the next page of documents (the page is read under ``lock``, files stat'ed outside)."""
        self.check(self.read(lock))

    def read(self, lock: contextlib.AbstractContextManager[Any]) -> list[tuple[str, DocState]]:
        """The next page of documents, read under ``lock``."""
        with lock:
            page = self.store.document_page(self.after, _PAGE)
            for collection, _ in page:
                if collection not in self._roots:
                    self._roots[collection] = self.store.collection_roots(collection)
        if len(page) < _PAGE:
            self.done = True
        if page:
            self.after = page[-1][1].id
        return page

    def check(self, page: list[tuple[str, DocState]]) -> None:
        for collection, state in page:
            self._check(collection, state)

    def _check(self, collection: str, state: DocState) -> None:
        # a document of a folder keyed under its name is stored with the folder's parent
        folder = folder_of(self._roots.get(collection, ()), state.root, state.path)
        if folder not in self._present:
            self._present[folder] = os.path.isdir(folder)
            if not self._present[folder]:
                # one line for the folder, not one per file: on a server that shares a PostgreSQL
                # index but not the corpus, this is normal (text is then read from the index)
                self._add(collection, folder, "folder not on this machine")
        if not self._present[folder]:
            return
        try:
            st = os.stat(self.resolve(self._roots.get(collection, []), state))
        except (OSError, DocshelfError):
            self._add(collection, state.path, "missing or unreadable")
        else:
            if st.st_size != state.size or st.st_mtime_ns != state.mtime_ns:
                self._add(collection, state.path, "modified")

    def _add(self, collection: str, path: str, reason: str) -> None:
        self.count += 1
        if self.limit is None or len(self.found) < self.limit:
            self.found.append({"collection": collection, "path": path, "reason": reason})


def stale_report(
    store: Store,
    limit: int | None = None,
    resolve: Resolve = _plain_path,
    lock: contextlib.AbstractContextManager[Any] | None = None,
) -> tuple[int, list[dict[str, str]]]:
    """How many indexed files differ on disk or are gone, and the first ``limit`` of them.

    ``resolve`` maps a document to the file to stat (readers pass their path guard); an
    OSError or DocshelfError from it counts as missing or unreadable. Pages of documents are
    read under ``lock``, files are stat'ed outside it.
    """
    walk = _Pass(store, resolve, limit)
    while not walk.done:
        walk.step(lock or contextlib.nullcontext())
    return walk.count, walk.found


def stale_documents(
    store: Store, limit: int | None = None, resolve: Resolve = _plain_path
) -> list[dict[str, str]]:
    """Indexed files whose size or mtime differ on disk, or that are gone (up to ``limit``)."""
    return stale_report(store, limit, resolve)[1]


def index_age(store: Store, now: float | None = None) -> float | None:
    """Seconds since the last build finished (any collection); None before the first."""
    build = store.last_build()
    if build is None:
        return None
    return max(0.0, (now or time.time()) - (build.finished_at or build.started_at))


def stale_summary(store: Store) -> dict[str, Any]:
    """``stale_documents`` (count) and ``index_age`` (seconds) for status."""
    age = index_age(store)
    return {
        "stale_documents": len(stale_documents(store)),
        "index_age": None if age is None else round(age, 1),
    }


class StaleTracker:
    """``index_age`` and the stale count for every search, at a cost that does not grow with the files.

    With ``background`` a daemon thread walks the documents every ``max_age_s`` (sooner, after
    ``min_age_s``, when a sync changed the index), pausing between pages so searches keep the
    interpreter; both waits stretch to ``idle_ratio`` times the last pass's length, so a large
    corpus is re-counted less often instead of keeping the thread busy (and searches slower).
    The first call itself counts an index of up to ``first_pages`` pages of 1,000 documents (all a
    one-shot CLI search gets); a larger one's count is None, never guessed, and no file is stat'ed
    for it (the pages are read first: stat'ing 2,000 files only to give up cost a search ~0.1 s).
    """

    def __init__(
        self,
        store: Store,
        lock: contextlib.AbstractContextManager[Any] | None = None,
        resolver: Callable[[], Resolve] = lambda: _plain_path,
        background: bool = False,
        max_age_s: float = 5.0,
        min_age_s: float = 1.0,
        first_pages: int = 2,
        keep: int = 200,
        idle_ratio: float = 10.0,
        news: Callable[[], list[dict[str, str]]] | None = None,
    ) -> None:
        self.store = store
        self.lock = lock or contextlib.nullcontext()
        self.resolver = resolver  # a pass's ``resolve`` (each pass may keep what it learns)
        self.background = background
        self.max_age_s = max_age_s
        self.min_age_s = min_age_s
        self.first_pages = first_pages
        self.keep = keep
        self.idle_ratio = idle_ratio
        self.news = news  # the files a sync would add: a walk of the folders, on background passes only
        self._pass_s = 0.0  # how long the last complete pass took
        self._state = threading.Lock()
        self._count: int | None = None
        self._found: list[dict[str, str]] = []
        self._new: tuple[int, list[dict[str, str]]] | None = None
        self._tried = False
        self._checked = -1e9
        self._generation: int | None = None  # the generation the last pass started at
        self._built: tuple[int, float | None] | None = None  # (generation, last build's time)
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()

    def summary(self) -> dict[str, Any]:
        """{"index_age": seconds or None, "stale_documents": count or None}; constant time."""
        with self.lock:
            generation = self.store.generation()
            if self._built is None or self._built[0] != generation:
                build = self.store.last_build()
                self._built = (generation, None if build is None else (build.finished_at or build.started_at))
        built_at = self._built[1]
        age = None if built_at is None else round(max(0.0, time.time() - built_at), 1)
        if self._count is None and not self._tried:
            # a small index is counted at once; a large one finishes on the thread (or stays unknown)
            self._tried = True
            self._run_pass(max_pages=self.first_pages)
        if self.background:
            self._ensure_thread(generation)
        return {"index_age": age, "stale_documents": self._count}

    def report(self) -> tuple[int, list[dict[str, str]]] | None:
        """The last complete pass: (stale count, the first ``keep`` of them); None before one ended."""
        count, found = self._count, self._found
        return None if count is None else (count, list(found))

    def new_report(self) -> tuple[int, list[dict[str, str]]] | None:
        """The new files of the last background pass: (count, the first ``keep``); None before one
        ended, or without ``news``."""
        new = self._new
        return None if new is None else (new[0], list(new[1]))

    def _due(self, generation: int) -> bool:
        since = time.monotonic() - self._checked
        rest = self.idle_ratio * self._pass_s
        return since >= max(self.max_age_s, rest) or (
            generation != self._generation and since >= max(self.min_age_s, rest)
        )

    def _ensure_thread(self, generation: int) -> None:
        with self._state:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="docshelf-stale", daemon=True)
                self._thread.start()
            elif generation != self._generation:
                self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                generation = self._generation_now()
                if self._due(generation):
                    self._run_pass(pause=True)
            except Exception:  # a closed store at shutdown, a vanished folder: try again later
                if self._stop.is_set():
                    return
            self._wake.wait(self.min_age_s)
            self._wake.clear()

    def _generation_now(self) -> int:
        with self.lock:
            return self.store.generation()

    def _run_pass(self, max_pages: int | None = None, pause: bool = False) -> None:
        generation = self._generation_now()
        started = time.monotonic()
        walk = _Pass(self.store, self.resolver(), self.keep)
        if max_pages is not None:
            pages = [walk.read(self.lock) for _ in range(max_pages) if not walk.done]
            if not walk.done:
                return  # too many files to count here: the count stays unknown, no file stat'ed for it
            for page in pages:
                walk.check(page)
        for _ in self._steps(walk, pause):
            if self._stop.is_set():
                return
        # the walk is never on a search's time (the first, time-boxed pass runs in the search)
        new = self.news() if pause and self.news is not None else None
        if self._stop.is_set():
            return
        if new is not None:
            self._new = (len(new), new[: self.keep])
        self._found = walk.found
        self._count, self._checked, self._generation = walk.count, time.monotonic(), generation
        self._pass_s = self._checked - started

    def _steps(self, walk: _Pass, pause: bool) -> Iterator[None]:
        while not walk.done:
            started = time.monotonic()
            walk.step(self.lock)
            yield
            if pause:  # as long again idle: a pass never takes more than half the interpreter
                time.sleep(min(0.05, time.monotonic() - started))

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(2)
