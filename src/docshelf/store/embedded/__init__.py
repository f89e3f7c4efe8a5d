"""The embedded store: SQLite (the truth) with a tantivy keyword index and a vector matrix."""

from __future__ import annotations

from docshelf.store.embedded.store import SQLiteStore

__all__ = ["SQLiteStore"]
