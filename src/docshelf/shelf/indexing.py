"""`index` and `forget`: targets to collections and roots, fetched URLs, recorded settings, one sync."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from docshelf.config import check_collection
from docshelf.errors import NotFoundError
from docshelf.shelf.types import ForgetReport, IndexReport
from docshelf.shelf.writing import collection_of, file_collection, plan_collection, split_targets

if TYPE_CHECKING:
    from docshelf.config import Settings
    from docshelf.index.sync import Indexer, Progress
    from docshelf.parse import ParserRegistry
    from docshelf.runtime import Runtime
    from docshelf.store.base import Store

__all__ = ["Writable", "forget", "index"]


class Writable(Protocol):
    """What the write use cases need of a shelf."""

    settings: Settings
    config_path: Path | None
    config_explicit: bool

    @property
    def lock(self) -> threading.RLock: ...
    @property
    def store(self) -> Store: ...
    @property
    def runtime(self) -> Runtime: ...
    def registry(self, collection: str) -> ParserRegistry: ...
    def indexer(self, collection: str, progress: Progress | None = None) -> Indexer: ...
    def changed(self) -> None: ...


def index(
    shelf: Writable, targets: Sequence[str | Path], collection: str | None, reconfigure: bool,
    progress: Progress | None, refetch: bool,
) -> IndexReport:  # fmt: skip
    from docshelf.sources.remote import gather

    parts = split_targets(targets)
    with shelf.lock:
        store = shelf.store
        if collection is None:
            if parts.files:
                collection = file_collection(store, parts.files[0], None)
            elif parts.folders:
                collection = collection_of(store, parts.folders[0], _named_in(parts.folders[0], shelf))
            else:
                collection = shelf.settings.collection
        check_collection(collection)  # before anything is recorded under the name
        for f in parts.files:
            file_collection(store, f, collection)  # every file must lie under this collection's roots
        known = store.collection_roots(collection)
        plan = plan_collection(
            store, collection, shelf.settings, shelf.config_path, shelf.config_explicit,
            [p for p in parts.folders if str(p) not in known], reconfigure,
        )  # fmt: skip
        if plan.analyze_changed:
            shelf.runtime.use_analyze(plan.settings.analyze)
        if plan.changes:
            shelf.changed()
        # URLs become mirror folders under the data dir; known mirrors are re-fetched (conditional GET)
        fetched = gather(plan.settings, [*parts.urls, *map(str, parts.folders)], known if refetch else ())
        indexer = shelf.runtime.indexer(progress, plan.settings, shelf.registry(collection))
        report = indexer.sync(collection, fetched.roots, fetched.skipped, force=plan.force)
    return IndexReport(report, fetched.fetched, fetched.unchanged, plan.origin, plan.changes, plan.notes)


def _named_in(folder: Path, shelf: Writable) -> str:
    """The collection a new folder goes to: the one its own docshelf.toml names, else the default."""
    from docshelf.shelf.settings import config_in, settings_from

    found = config_in(folder)
    if found is not None and found != shelf.config_path:
        return settings_from(found).collection
    return shelf.settings.collection


def forget(shelf: Writable, target: str, collection: str | None) -> ForgetReport:
    """A URL (its mirror, or the one document fetched from it), a root folder, or one document."""
    from docshelf.shelf import reading
    from docshelf.sources.remote import drop_mirror, forget_target, is_url

    with shelf.lock:
        store = shelf.store
        names = [collection] if collection else store.collections()
        if is_url(target):
            for name in names:
                settings = shelf.settings.model_copy(update={"collection": name})
                try:
                    path = forget_target(store, settings, target)
                except NotFoundError:
                    continue
                removed = shelf.indexer(name).forget(name, path)
                root = path if path in store.collection_roots(name) or Path(path).is_absolute() else None
                drop_mirror(settings, path)
                return ForgetReport(name, removed, root)
            where = f"collection {collection!r}" if collection else "any collection"
            raise NotFoundError(
                f"{target} was not indexed in {where}: no mirror or fetched document has that URL; "
                "see `docshelf status`"
            )
        folder = Path(target).expanduser()
        if folder.is_absolute():
            resolved = str(folder.resolve())
            for name in names:
                if resolved in store.collection_roots(name) or str(folder) in store.collection_roots(name):
                    root = resolved if resolved in store.collection_roots(name) else str(folder)
                    return ForgetReport(name, shelf.indexer(name).forget(name, root), root)
        doc = reading.find_document(store, target, collection)
        return ForgetReport(doc.collection, shelf.indexer(doc.collection).forget(doc.collection, doc.path))
