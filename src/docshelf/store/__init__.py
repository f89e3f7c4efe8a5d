"""Store: documents, chunks and vectors, behind the Store protocol."""

from __future__ import annotations

from docshelf.config import Settings
from docshelf.store.base import BuildRecord, DocState, DocumentRecord, SearchFilter, Store, StoreStats
from docshelf.store.sqlite import SQLiteStore, TermAnalyzer

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


def open_store(settings: Settings, analyzer: TermAnalyzer) -> SQLiteStore:
    """Open (creating if needed) the configured store."""
    return SQLiteStore(settings.store.data_dir, analyzer, settings.search.ann_threshold)
