"""The status report: one shape for `docshelf status`, `index_status` and `docshelf://status`."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.config import redact_dsn
from docshelf.index.mounts import named_roots
from docshelf.index.stale import index_age, stale_report
from docshelf.shelf import settings as recorded
from docshelf.shelf.paths import PathGuard
from docshelf.shelf.types import CollectionStatus, Status

if TYPE_CHECKING:
    from docshelf.config import Settings
    from docshelf.index.stale import StaleTracker
    from docshelf.shelf.parts import Parts
    from docshelf.store.base import Store
    from docshelf.types import Summary

__all__ = ["kept_passes", "status", "status_of", "summary"]

Found = tuple[int, list[dict[str, str]]]  # (how many, the first of them)


def status(parts: Parts, stale_limit: int | None) -> Status:
    """Counts, model, recorded settings, builds, skipped and stale files."""
    # a server's tracker walks the files in the background: its last pass, not a walk per call
    checked, new = kept_passes(parts.kept_tracker(), stale_limit)
    if new is None:
        found = parts.new_entries()
        new = (len(found), found)
    return status_of(parts.store, parts.settings, contextlib.nullcontext(), stale_limit, checked, new)


def summary(parts: Parts) -> Summary:
    """Documents, chunks and roots per collection; before the index is open, without opening it
    (an embedded index is read with plain SQLite), so a server starts fast. StoreError when
    there is no index yet."""
    from docshelf.errors import StoreError
    from docshelf.store import index_exists, quick_summary
    from docshelf.types import Summary

    if not parts.is_open:
        if not index_exists(parts.settings):
            raise StoreError(
                f"no docshelf index at {parts.settings.store.data_dir}: run `docshelf index PATH` first "
                "(or pass --data-dir / set DOCSHELF_STORE__DATA_DIR to the index folder)"
            )
        if (quick := quick_summary(parts.settings)) is not None:
            return quick
    store = parts.store
    stats = store.stats()
    rows = [(n, c["documents"], store.collection_roots(n)) for n, c in stats.collections.items()]
    return Summary(stats.documents, stats.chunks, rows)


def kept_passes(tracker: StaleTracker | None, limit: int | None) -> tuple[Found | None, Found | None]:
    """A background tracker's last (stale, new) findings; None for one it has not or kept too few of."""
    if tracker is None:
        return None, None

    def enough(found: Found | None) -> Found | None:
        if found is not None and limit is not None and len(found[1]) < min(found[0], limit):
            return None  # it kept fewer than asked for
        return found

    return enough(tracker.report()), enough(tracker.new_report())


def status_of(
    store: Store, settings: Settings, lock: contextlib.AbstractContextManager[Any], stale_limit: int | None,
    checked: Found | None = None, new: Found = (0, []),
) -> Status:  # fmt: skip
    """Counts, model, settings, builds, skipped and stale files of ``store``; ``checked`` is a
    recent stale pass (a server's background tracker) to report instead of stat'ing every file now,
    ``new`` the files a sync would add (listed after the stale ones, within ``stale_limit``)."""
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
                    None if rec is None else rec.origin, counts.get("embedded"),
                    {r: f"{Path(r).name}/" for r in sorted(named_roots(store, name))},
                )
            )  # fmt: skip
        skipped = [{"collection": c, "path": s.path, "reason": s.reason} for c, s in store.skipped()]
        last_build = store.last_build()
        age = index_age(store)
        watch = read_health(store.get_meta)
    if checked is not None:
        count, stale = checked[0], checked[1][:stale_limit]
    else:
        count, stale = stale_report(store, stale_limit, PathGuard(), lock)
    stale = [*stale, *new[1]][:stale_limit]
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
        new_files=new[0],
        index_age=None if age is None else round(age, 1),
        watch=watch,
        index_settings=None if index_rec is None else {**index_rec.values, "origin": index_rec.origin},
        reembed=stats.reembed,
    )
