"""`index` and `forget`: targets to collections and roots, fetched URLs, recorded settings, one sync."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from docshelf.config import check_collection
from docshelf.embed.base import SaysSlow
from docshelf.errors import DocshelfError, NotFoundError, SourceError
from docshelf.shelf.types import ForgetReport, IndexReport
from docshelf.shelf.writing import collection_of, file_collection, plan_collection, split_targets
from docshelf.types import SkippedFile

if TYPE_CHECKING:
    from docshelf.config import Settings
    from docshelf.index.report import SyncReport
    from docshelf.index.sync import Confirm, Progress
    from docshelf.shelf.parts import Parts
    from docshelf.store.base import Store

__all__ = ["forget", "index", "ingest"]


def index(
    parts: Parts, targets: Sequence[str | Path], collection: str | None, reconfigure: bool,
    progress: Progress | None, refetch: bool, agent: bool = False, confirm: Confirm | None = None,
    keyword_only: bool = False,
) -> IndexReport:  # fmt: skip
    """Sync exactly ``targets`` (folders, files, URLs) into their collection; none: every root.
    An ``agent``'s URLs may not reach local or private addresses (``web.agent_private_hosts``).

    The shelf lock is held only while the collection and its settings are decided; fetching and
    the sync run without it (the sync holds the store per document), so reads go on meanwhile.
    """
    from docshelf.sources.names import is_within
    from docshelf.sources.remote import gather

    named = split_targets(targets)
    with parts.lock:
        store = parts.store
        if collection is None:
            if named.files:
                collection = file_collection(store, named.files[0], None)
            elif named.folders:
                collection = collection_of(store, named.folders[0], _named_in(named.folders[0], parts))
            else:
                collection = _resync_target(store, parts.settings.collection, bool(named.urls))
        check_collection(collection)  # before anything is recorded under the name
        for f in named.files:
            file_collection(store, f, collection)  # every file must lie under this collection's roots
        known = store.collection_roots(collection)
        # a folder inside a known root is a part of it to sync, not a new root
        inner = [p for p in named.folders if any(is_within(p, Path(r)) for r in known)]
        new = [p for p in named.folders if p not in inner]
        plan = plan_collection(
            store, collection, parts.settings, parts.config_path, parts.config_explicit, new, reconfigure
        )
        if plan.analyze_changed:
            parts.use_analyze(plan.settings.analyze)
        if plan.changes:
            parts.changed()
    # URLs become mirror folders under the data dir; a full re-sync re-fetches the known mirrors
    # (conditional GET), a targeted one only the URLs it names
    refresh = known if refetch and not targets else ()
    registry = parts.registry(collection)
    fetched = gather(
        plan.settings, [*named.urls, *map(str, new)], refresh, agent,
        supported=lambda rel: registry.for_path(rel) is not None,
    )  # fmt: skip
    if agent and fetched.empty:
        # an agent's refused or failed URL is an error, as a refused path is, not "0 added"
        url = fetched.empty[0]
        why = "; ".join(s.reason for s in fetched.skipped if s.path == url) or "; ".join(
            f"{s.path}: {s.reason}" for s in fetched.skipped
        )
        raise SourceError(f"nothing was fetched from {url}: {why or 'it has no page or file to index'}")
    scope = None if not targets or plan.force else [*fetched.roots, *inner, *named.files]
    indexer = parts.indexer(collection, progress, plan.settings, confirm)
    from docshelf.index.mounts import named_roots

    named_before = named_roots(parts.store, collection)
    report = indexer.sync(
        collection, fetched.roots, fetched.skipped, force=plan.force, scope=scope, keyword_only=keyword_only
    )
    _left_out(parts, collection, named.files, report)
    notes = list(plan.notes)
    for joined in sorted(named_roots(parts.store, collection) - named_before):
        notes.append(
            f"{joined} joined collection {collection!r}, which has another folder: its files are cited "
            f"as {Path(joined).name}/... (`-c NAME` gives a folder a collection of its own)"
        )
    model = parts.model()
    if report.chunks_embedded and isinstance(model, SaysSlow) and (slow := model.slow_note()):
        notes.append(slow)
    return IndexReport(report, fetched.fetched, fetched.unchanged, plan.origin, plan.changes, notes)


def _left_out(parts: Parts, collection: str, files: Sequence[Path], report: SyncReport) -> None:
    """A file named on its own that the walk passed over in silence (a hidden name, .gitignore,
    sources.include/exclude) is reported, not answered with "0 added" and nothing else."""
    if not files:
        return
    states = parts.store.document_states(collection)
    said = {s.path for s in report.skipped} | set(report.excluded)
    from docshelf.index.mounts import locate, mounts

    found = mounts(parts.store, collection)
    for f in files:
        rel = hit[1] if (hit := locate(found, f)) is not None else None
        if rel is not None and rel not in states and rel not in said:
            report.skipped.append(
                SkippedFile(rel, "left out by the corpus rules: a hidden name, .gitignore or "
                            "sources.include/exclude")
            )  # fmt: skip


def _resync_target(store: Store, configured: str, urls: bool) -> str:
    """The collection a bare `index` re-syncs: the configured one when it has folders, else the
    only one that has (`docshelf index` after `docshelf index samples/corpus`, whose docshelf.toml
    names "samples", said that "default" has no folders)."""
    if urls or store.collection_roots(configured):
        return configured
    rooted = [name for name in store.collections() if store.collection_roots(name)]
    if len(rooted) == 1:
        return rooted[0]
    if rooted:
        raise SourceError(
            f"collection {configured!r} has no folders; the index has {', '.join(map(repr, rooted))}: "
            "pass -c NAME to re-sync one"
        )
    return configured


def _named_in(folder: Path, parts: Parts) -> str:
    """The collection a new folder goes to: the one its own docshelf.toml names, else the default."""
    return _config_collection(folder, parts) or parts.settings.collection


def _config_collection(folder: Path, parts: Parts) -> str | None:
    from docshelf.shelf.settings import config_in, settings_from

    found = config_in(folder)
    if found is not None and found != parts.config_path:
        return settings_from(found).collection
    return None


def ingest(
    parts: Parts, target: str, collection: str | None, allowed: Sequence[Path], progress: Progress | None,
    confirm: Confirm | None = None,
) -> IndexReport:  # fmt: skip
    """One folder, file, URL or Drive link, for an agent: a local path only inside ``allowed`` (none
    given: inside a root already indexed); a new folder joins its own collection, not the default."""
    from docshelf.shelf.allowed import check_allowed
    from docshelf.shelf.writing import folder_collection
    from docshelf.sources.remote import is_url

    if not is_url(target):
        scheme = re.match(r"([a-zA-Z][a-zA-Z0-9+.-]+):", target)
        if scheme and scheme.group(1).lower() == "file":
            local = unquote(urlsplit(target).path) or "/"
            raise SourceError(
                f"{target!r}: file: URLs are not fetched; pass the absolute path ({local}) instead"
            )
        if scheme and "/" in target[scheme.end() : scheme.end() + 2]:  # ftp://, s3://, ...
            raise SourceError(
                f"{target!r}: only http(s) URLs are fetched; pass one, or the absolute path of a "
                "folder or file"
            )
        path = Path(target).expanduser()
        if not path.is_absolute():
            raise DocshelfError(
                f"{target!r} is relative: pass the absolute path of a folder or file, or a URL"
            )
        check_allowed(path, allowed, parts.store)
        owner = collection_of(parts.store, path.resolve(), "")
        if owner and collection is not None and collection != owner:
            # an agent indexing a folder a second time under another name would have the same
            # files twice, and the user's next `docshelf index FOLDER` go to the agent's collection
            raise DocshelfError(
                f"{target} is already indexed in collection {owner!r}; ingest it there (leave out "
                "collection), or ask the user to move it"
            )
        if collection is None and path.is_dir():
            resolved = path.resolve()
            collection = folder_collection(parts.store, resolved, _config_collection(resolved, parts))
    return index(parts, [target], collection, False, progress, True, agent=True, confirm=confirm)


def forget(parts: Parts, target: str, collection: str | None, confirm: Confirm | None = None) -> ForgetReport:
    """A URL (its mirror, or the one document fetched from it), a root folder, or one document."""
    from docshelf.shelf import reading
    from docshelf.sources.remote import drop_mirror, is_url

    with parts.lock:
        store = parts.store
        names = [collection] if collection else store.collections()
        if is_url(target):
            for name in names:
                settings = parts.settings.model_copy(update={"collection": name})
                try:
                    path = _url_target(store, settings, target)
                except NotFoundError:
                    continue
                removed = parts.indexer(name, confirm=confirm).forget(name, path)
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
                    return ForgetReport(name, parts.indexer(name, confirm=confirm).forget(name, root), root)
        doc = reading.find_document(store, target, collection)
        indexer = parts.indexer(doc.collection, confirm=confirm)
        return ForgetReport(doc.collection, indexer.forget(doc.collection, doc.path))


def _url_target(store: Store, settings: Settings, url: str) -> str:
    """What `forget URL` removes: the whole mirror of a URL given to `index`, or the one document
    fetched from ``url``. A forgotten mirror's folder is deleted too (it is docshelf's own copy)."""
    from docshelf.sources.remote import mirror_of

    root = mirror_of(settings, url)
    if str(root) in store.collection_roots(settings.collection):
        return str(root)
    wanted = url.split("#", 1)[0]
    for doc in store.iter_documents(settings.collection):
        if doc.metadata.get("source_url") in (url, wanted):
            return doc.path
    raise NotFoundError(
        f"{url} was not indexed in collection {settings.collection!r}: no mirror or fetched document has "
        "that URL; see `docshelf status`"
    )
