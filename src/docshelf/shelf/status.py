"""The status report: one shape for `docshelf status`, `index_status` and `docshelf://status`."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.config import redact_dsn
from docshelf.index.stale import index_age, stale_report
from docshelf.shelf import settings as recorded
from docshelf.shelf.paths import guarded_path
from docshelf.shelf.types import CollectionStatus, Status

if TYPE_CHECKING:
    from docshelf.config import Settings
    from docshelf.store.base import DocState, Store

__all__ = ["guarded_state", "status_of"]


def guarded_state(roots: list[str], state: DocState) -> Path:
    """The file to stat for a document, through the same guard every read passes."""
    return guarded_path(roots, state.root, state.path)


def status_of(
    store: Store, settings: Settings, lock: contextlib.AbstractContextManager[Any], stale_limit: int | None,
    checked: tuple[int, list[dict[str, str]]] | None = None,
) -> Status:  # fmt: skip
    """Counts, model, settings, builds, skipped and stale files of ``store``; ``checked`` is a
    recent stale pass (a server's background tracker) to report instead of stat'ing every file now."""
    from docshelf.index.watch import read_health  # the watcher module loads the indexer

    with lock:
        stats = store.stats()
        index_rec = recorded.read_index(store)
        collections = []
        for name, counts in stats.collections.items():
            rec = recorded.read_collection(store, name)
            collections.append(
                CollectionStatus(
                    name, counts["documents"], counts["chunks"], store.collection_roots(name),
                    store.last_build(name), None if rec is None else rec.values,
                    None if rec is None else rec.origin,
                )
            )  # fmt: skip
        skipped = [{"collection": c, "path": s.path, "reason": s.reason} for c, s in store.skipped()]
        last_build = store.last_build()
        age = index_age(store)
        watch = read_health(store.get_meta)
    if checked is not None:
        count, stale = checked[0], checked[1][:stale_limit]
    else:
        count, stale = stale_report(store, stale_limit, guarded_state, lock)
    url = settings.store.url
    return Status(
        data_dir=str(Path(store.data_dir)),
        store=redact_dsn(url) if url else "sqlite",
        model=stats.model,
        dim=stats.dim,
        documents=stats.documents,
        chunks=stats.chunks,
        vectors=stats.vectors,
        size_bytes=stats.size_bytes,
        keyword_index_in_sync=stats.keyword_generation == stats.generation,
        collections=collections,
        last_build=last_build,
        skipped=skipped,
        stale=stale,
        stale_documents=count,
        index_age=None if age is None else round(age, 1),
        watch=watch,
        index_settings=None if index_rec is None else {**index_rec.values, "origin": index_rec.origin},
        reembed=stats.reembed,
    )
