"""Helpers for tests and benchmarks: pytest fixtures that give a ``Shelf`` with the hash embedder
on either store (``docshelf.testing.fixtures``), the stages wired by hand for tests of their
internals (``Stages``), an in-memory store and a throwaway local PostgreSQL.

docshelf itself never imports this package; it ships so that projects embedding docshelf can
test against the same fakes.
"""

from __future__ import annotations

__all__ = ["LocalPostgres", "MemoryStore", "Stages", "hash_settings", "pgserver_available"]

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "MemoryStore":
        from docshelf.testing.memory import MemoryStore

        return MemoryStore
    if name == "Stages":
        from docshelf.testing.stages import Stages

        return Stages
    if name == "hash_settings":
        from docshelf.testing.settings import hash_settings

        return hash_settings
    if name in ("LocalPostgres", "pgserver_available"):
        from docshelf.testing import pglocal

        return getattr(pglocal, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
