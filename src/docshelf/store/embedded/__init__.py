"""The embedded store: SQLite (the truth) with a tantivy keyword index and a vector matrix.

``SQLiteStore`` loads numpy and tantivy, so it is imported on first use; ``peek`` reads counts
with the standard library alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docshelf.store.embedded.store import SQLiteStore

__all__ = ["SQLiteStore"]


def __getattr__(name: str) -> Any:
    if name == "SQLiteStore":
        from docshelf.store.embedded.store import SQLiteStore

        return SQLiteStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
