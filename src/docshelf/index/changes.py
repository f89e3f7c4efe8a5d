"""A sync of just the files a watcher saw change: the same rules as a full sync, but nothing is
walked or read that did not change, so an edit costs the same with 100 files or 100,000."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from docshelf.config import SourceSettings
from docshelf.index.mounts import Mount, locate
from docshelf.sources.walk import Sniffer, WalkResult, walk_paths
from docshelf.store.base import DocState, Store
from docshelf.types import SkippedFile

__all__ = ["changed_paths", "changed_states", "indexed_as", "merged_skips", "walk_changed"]


def walk_changed(
    found: Sequence[Mount], changed: Sequence[Path], sources: SourceSettings, binary: Sequence[str],
    parseable: Callable[[str], bool] | None = None, sniffer: Sniffer | None = None,
) -> list[tuple[Path, WalkResult]]:  # fmt: skip
    """(root, files and skips keyed as stored) of the changed files that still exist and are indexed."""
    out = []
    for mount in found:
        mine = [p for p in changed if (hit := locate(found, p)) is not None and hit[0] is mount]
        if mine:
            result = walk_paths(mount.root, mine, sources.include, sources.exclude, sources.respect_gitignore,
                                sources.max_file_mb, binary, parseable, sniffer)  # fmt: skip
            out.append((mount.root, mount.keyed(result)))
    return out or [(m.root, WalkResult()) for m in found[:1]]


def changed_states(
    store: Store, collection: str, found: Sequence[Mount], changed: Sequence[Path]
) -> dict[str, DocState]:
    """The stored state of each changed path that is a document of ``collection``."""
    states = {}
    for path in changed:
        hit = locate(found, path)
        doc = store.get_document(collection, hit[1]) if hit else None
        if doc is not None:
            states[doc.path] = DocState(doc.id, doc.path, doc.root, doc.size, doc.mtime_ns, doc.content_hash)
    return states


def merged_skips(
    store: Store, collection: str, found: Sequence[Mount], changed: Sequence[Path], new: Sequence[SkippedFile]
) -> list[SkippedFile]:
    """The collection's skip records with those of the changed paths replaced by this sync's."""
    rels = changed_paths(found, changed)
    kept = [s for _, s in store.skipped(collection) if s.path not in rels]
    return [*kept, *new]


def changed_paths(found: Sequence[Mount], changed: Sequence[Path]) -> set[str]:
    """The changed paths as stored (keyed by the folder that holds them, NFC)."""
    return {hit[1] for p in changed if (hit := locate(found, p)) is not None}


def indexed_as(
    store: Store, collection: str, found: Sequence[Mount], path: Path
) -> Literal["folder", "file"] | None:
    """What the index holds under the name of a path gone from disk: documents inside it
    ("folder"), a document or skip record of that name ("file"), or nothing."""
    hit = locate(found, path)
    if hit is None:
        return None
    rel = hit[1]
    if store.documents_below(collection, rel):
        return "folder"
    if store.get_document(collection, rel) is not None or any(
        s.path == rel for _, s in store.skipped(collection)
    ):
        return "file"
    return None
