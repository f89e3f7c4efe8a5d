"""The PostgreSQL + pgvector backend (optional extra ``docshelf[postgres]``)."""

from __future__ import annotations

from docshelf.store.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
