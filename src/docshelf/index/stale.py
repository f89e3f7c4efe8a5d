"""What changed on disk since the last build: a cheap stat of every indexed file (no reads)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.errors import DocshelfError
from docshelf.store.base import Store

if TYPE_CHECKING:
    from docshelf.store.base import DocumentRecord

__all__ = ["StaleCache", "index_age", "stale_documents", "stale_summary"]


def _plain_path(store: Store, doc: DocumentRecord) -> Path:
    return Path(doc.root) / doc.path


def stale_documents(
    store: Store,
    limit: int | None = None,
    resolve: Callable[[Store, DocumentRecord], Path] = _plain_path,
) -> list[dict[str, str]]:
    """Indexed files whose size or mtime differ on disk, or that are gone (up to ``limit``).

    ``resolve`` maps a document to the file to stat (the server passes its path guard); an
    OSError or DocshelfError from it counts as missing or unreadable.
    """
    out: list[dict[str, str]] = []
    present: dict[str, bool] = {}
    for doc in store.iter_documents():
        if doc.root not in present:
            present[doc.root] = os.path.isdir(doc.root)
            if not present[doc.root]:
                # one line for the folder, not one per file: on a server that shares a PostgreSQL
                # index but not the corpus, this is normal (text is then read from the index)
                reason = "folder not on this machine"
                out.append({"collection": doc.collection, "path": doc.root, "reason": reason})
        if not present[doc.root]:
            continue
        try:
            st = os.stat(resolve(store, doc))
        except (OSError, DocshelfError):
            out.append({"collection": doc.collection, "path": doc.path, "reason": "missing or unreadable"})
        else:
            if st.st_size != doc.size or st.st_mtime_ns != doc.mtime_ns:
                out.append({"collection": doc.collection, "path": doc.path, "reason": "modified"})
        if limit is not None and len(out) >= limit:
            break
    return out


def index_age(store: Store, now: float | None = None) -> float | None:
    """Seconds since the last build finished (any collection); None before the first."""
    build = store.last_build()
    if build is None:
        return None
    return max(0.0, (now or time.time()) - (build.finished_at or build.started_at))


def stale_summary(store: Store) -> dict[str, Any]:
    """``stale_documents`` (count) and ``index_age`` (seconds) for status and search metadata."""
    age = index_age(store)
    return {
        "stale_documents": len(stale_documents(store)),
        "index_age": None if age is None else round(age, 1),
    }


class StaleCache:
    """``stale_summary`` for every search without a stat walk per search.

    The stale count is recomputed after ``max_age_s``, or after ``min_age_s`` when the index
    generation changed (a sync landed), so a stream of syncs costs at most one stat walk per
    ``min_age_s``; the last build's time is read with it, and ``index_age`` is computed from it.
    """

    def __init__(self, store: Store, max_age_s: float = 5.0, min_age_s: float = 1.0) -> None:
        self.store = store
        self.max_age_s = max_age_s
        self.min_age_s = min_age_s
        self._lock = threading.Lock()
        self._generation: int | None = None
        self._checked = -1e9
        self._count = 0
        self._built_at: float | None = None

    def summary(self) -> dict[str, Any]:
        with self._lock:
            generation = self.store.generation()
            now = time.monotonic()
            since = now - self._checked
            if since >= self.max_age_s or (generation != self._generation and since >= self.min_age_s):
                build = self.store.last_build()
                self._built_at = None if build is None else (build.finished_at or build.started_at)
                self._count = len(stale_documents(self.store))
                self._generation, self._checked = generation, now
            age = None if self._built_at is None else round(max(0.0, time.time() - self._built_at), 1)
            return {"index_age": age, "stale_documents": self._count}
