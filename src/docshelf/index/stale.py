"""What changed on disk since the last build: a cheap stat of every indexed file (no reads)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from docshelf.store.sqlite import SQLiteStore

__all__ = ["index_age", "stale_documents", "stale_summary"]


def stale_documents(store: SQLiteStore, limit: int | None = None) -> list[dict[str, str]]:
    """Indexed files whose size or mtime differ on disk, or that are gone (up to ``limit``)."""
    out: list[dict[str, str]] = []
    for doc in store.iter_documents():
        try:
            st = os.stat(Path(doc.root) / doc.path)
        except OSError:
            out.append({"collection": doc.collection, "path": doc.path, "reason": "missing or unreadable"})
        else:
            if st.st_size != doc.size or st.st_mtime_ns != doc.mtime_ns:
                out.append({"collection": doc.collection, "path": doc.path, "reason": "modified"})
        if limit is not None and len(out) >= limit:
            break
    return out


def index_age(store: SQLiteStore, now: float | None = None) -> float | None:
    """Seconds since the last build finished (any collection); None before the first."""
    build = store.last_build()
    if build is None:
        return None
    return max(0.0, (now or time.time()) - (build.finished_at or build.started_at))


def stale_summary(store: SQLiteStore) -> dict[str, Any]:
    """``stale_documents`` (count) and ``index_age`` (seconds) for status and search metadata."""
    age = index_age(store)
    return {
        "stale_documents": len(stale_documents(store)),
        "index_age": None if age is None else round(age, 1),
    }
