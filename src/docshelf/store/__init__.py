"""Store: documents, chunks and vectors, behind the Store protocol."""

from __future__ import annotations

from docshelf.config import Settings
from docshelf.store.base import (
    BuildRecord,
    DocState,
    DocumentRecord,
    SearchFilter,
    Store,
    StoreStats,
    TermAnalyzer,
)
from docshelf.store.sqlite import SQLiteStore

__all__ = [
    "BuildRecord",
    "DocState",
    "DocumentRecord",
    "SQLiteStore",
    "SearchFilter",
    "Store",
    "StoreStats",
    "TermAnalyzer",
    "open_store",
]


def open_store(settings: Settings, analyzer: TermAnalyzer) -> Store:
    """Open (creating or migrating if needed) the configured store: embedded or PostgreSQL."""
    s = settings.store
    if s.url:
        from docshelf.store.postgres import PostgresStore  # psycopg only when asked for

        return PostgresStore(
            s.url, s.data_dir, analyzer, settings.search.ann_threshold, s.pool_size, s.ef_search
        )
    return SQLiteStore(s.data_dir, analyzer, settings.search.ann_threshold)
