"""`reembed`, `compact` and `migrate_to`: whole-index jobs under the writer lock."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docshelf.index.sync import Progress
    from docshelf.shelf.parts import Parts
    from docshelf.store.copy import CopyReport

__all__ = ["compact", "migrate_to", "reembed"]


def reembed(parts: Parts, progress: Progress | None) -> int:
    """Embed every stored chunk again with the configured model; returns chunks embedded."""
    with parts.lock:
        count = parts.indexer(None, progress).reembed()
    parts.model_replaced()
    return count


def compact(parts: Parts) -> tuple[int, int]:
    """VACUUM and clean the keyword index under the writer lock; store bytes before, after."""
    from docshelf.index.lock import WriterLock

    store = parts.store
    with parts.lock, WriterLock(store.data_dir, parts.settings.watch.lock_timeout_s, store.writer_guard):
        return store.compact()


def migrate_to(parts: Parts, url: str, progress: Callable[[int, int], None] | None) -> CopyReport:
    """Copy the index into the PostgreSQL store at ``url``, without re-embedding."""
    from docshelf.index.lock import WriterLock
    from docshelf.store import open_store
    from docshelf.store.copy import copy_store

    target_settings = parts.settings.model_copy(deep=True)
    target_settings.store.url, target_settings.store.backend = url, "postgres"
    timeout = parts.settings.watch.lock_timeout_s
    with parts.lock:
        store = parts.store
        target = open_store(target_settings, parts.analyzer)
        # both may be shared: no other docshelf writes into either while the copy runs
        lock = WriterLock(store.data_dir, timeout, store.writer_guard)
        with contextlib.closing(target), target.writer_guard(timeout), lock:
            return copy_store(store, target, progress or (lambda done, total: None))
