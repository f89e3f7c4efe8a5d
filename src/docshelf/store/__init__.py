"""Store: documents, chunks and vectors, behind the Store protocol.

Backends load on first use (numpy, tantivy and psycopg are not imported with this package, nor
is the protocol's module): ``open_store`` picks one from the settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docshelf.config import Settings
    from docshelf.store.base import (
        BuildRecord,
        Catalog,
        DocState,
        DocumentRecord,
        History,
        Replacement,
        Retriever,
        SearchFilter,
        Store,
        StoreStats,
        TermAnalyzer,
        Writer,
    )
    from docshelf.store.embedded import SQLiteStore
    from docshelf.types import Summary

__all__ = [
    "BuildRecord",
    "Catalog",
    "DocState",
    "DocumentRecord",
    "History",
    "Replacement",
    "Retriever",
    "SQLiteStore",
    "SearchFilter",
    "Store",
    "StoreStats",
    "TermAnalyzer",
    "Writer",
    "index_exists",
    "open_store",
    "quick_summary",
]

EMBEDDED_DB = "docshelf.db"  # the embedded store's database, inside the data dir


def __getattr__(name: str) -> Any:
    # the protocol's module loads numpy (vectors): a server's start reads the index without it
    if name == "SQLiteStore":
        from docshelf.store.embedded import SQLiteStore

        return SQLiteStore
    if name in __all__:
        from docshelf.store import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_store(settings: Settings, analyzer: TermAnalyzer) -> Store:
    """Open (creating or migrating if needed) the configured store: embedded or PostgreSQL."""
    s = settings.store
    if s.url:
        from docshelf.store.postgres import PostgresStore  # psycopg only when asked for

        return PostgresStore(
            s.url, s.data_dir, analyzer, settings.search.ann_threshold, s.pool_size, s.ef_search
        )
    from docshelf.store.embedded import SQLiteStore
    from docshelf.store.embedded.ann import AnnOptions

    q = settings.search
    ann = AnnOptions(
        q.ann_threshold, q.ann_dtype, q.ann_ef_search, q.ann_rebuild_rows, q.ann_threads, q.ann_connectivity
    )
    return SQLiteStore(s.data_dir, analyzer, read_only=s.read_only, ann=ann, mmap_mb=s.mmap_mb)


def index_exists(settings: Settings) -> bool:
    """True if there is an index to open (a PostgreSQL store always counts: its errors come on open)."""
    return bool(settings.store.url) or (settings.store.data_dir / EMBEDDED_DB).is_file()


def quick_summary(settings: Settings) -> Summary | None:
    """Counts per collection read without opening the store (no numpy, tantivy or analyzer), so a
    server starts fast; None where that cannot be done (PostgreSQL, no index, an unreadable file)."""
    from docshelf.store.embedded.peek import peek

    db = settings.store.data_dir / EMBEDDED_DB
    return None if settings.store.url or not db.is_file() else peek(db)
