"""How a collection's documents are keyed when it has several folders.

A collection keys each document by one path. The first folder of a collection keys its files by
their path inside it (``README.md``); a folder added to a collection that already has one keys its
files under the folder's name (``work/README.md``), so that two folders that each hold a README.md
both have it indexed. Such a document is stored with the folder's parent as its root, so that root
and path still name the file everywhere (citations, reads, the stale check); ``owner`` finds the
folder back for the checks that compare a document's root with the collection's folders.

Which folders are keyed under their name is recorded when they join (the store's meta
``named/<collection>``), so that keys never change afterwards: forgetting the first folder leaves
the others' citations as they were. Collections indexed before this rule keep their keys (their
later folders are not named), and a mirror of fetched pages or Drive files is never named (its
paths start with the host already).
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from docshelf.sources.mirror import MANIFEST
from docshelf.store.base import named_roots_key
from docshelf.types import SkippedFile

if TYPE_CHECKING:
    from docshelf.sources.walk import WalkResult
    from docshelf.store.base import Store

__all__ = ["Mount", "folder_of", "locate", "mounts", "named_roots", "owner", "record_named", "with_new"]


@dataclass(frozen=True)
class Mount:
    """A folder of a collection and how its files are keyed."""

    root: Path  # the folder, as stored among the collection's roots
    named: bool  # its files are keyed under its name

    @property
    def base(self) -> Path:
        """The root its documents are stored with: the folder, or its parent when named."""
        return self.root.parent if self.named else self.root

    def key(self, rel: str) -> str:
        """The stored path of ``rel`` (a path inside the folder; "" the folder itself, "sub/" a
        folder inside it, as a walk names folders it could not list)."""
        if not self.named:
            return rel
        return f"{self.root.name}/{rel}" if rel else f"{self.root.name}/"

    def known(self, by_key: Callable[[str, int, int], bool]) -> Callable[[str, int, int], bool]:
        """A walk's "is this file indexed as it is" test for this folder, from one by stored path."""
        key = self.key
        return lambda rel, size, mtime_ns: by_key(key(rel), size, mtime_ns)

    def owns(self, key: str) -> bool:
        """Whether a stored path may be one of this folder's (a named folder's start with its name)."""
        name = self.root.name
        return not self.named or key == name or key.startswith(f"{name}/")

    def keyed(self, result: WalkResult) -> WalkResult:
        """A walk of the folder with its files and skips keyed as stored."""
        from docshelf.sources.walk import WalkResult  # pathspec: not for a search's path guard

        if not self.named:
            return result
        base = self.base
        return WalkResult(
            [replace(f, root=base, rel_path=self.key(f.rel_path)) for f in result.files],
            [SkippedFile(self.key(s.path), s.reason) for s in result.skipped],
            [self.key(u) for u in result.unreadable],
        )


def named_roots(store: Store, collection: str) -> set[str]:
    """The collection's folders whose files are keyed under their name."""
    raw = store.get_meta(named_roots_key(collection))
    return set(json.loads(raw)) if raw else set()


def record_named(store: Store, collection: str, named: Collection[str]) -> None:
    if set(named) != named_roots(store, collection):
        store.set_meta(named_roots_key(collection), json.dumps(sorted(named)))


def mounts(store: Store, collection: str, roots: Sequence[Path | str] | None = None) -> list[Mount]:
    """The collection's folders (or ``roots`` of it) with how each keys its files."""
    named = named_roots(store, collection)
    listed = store.collection_roots(collection) if roots is None else roots
    return [Mount(Path(r), str(r) in named) for r in listed]


def with_new(named: Collection[str], known: Sequence[Path], new: Sequence[Path]) -> set[str]:
    """``named`` with the ``new`` folders joining a collection that are keyed under their name:
    each one after the collection's first folder that is no mirror of fetched files."""
    out = set(named)
    folders = [r for r in known if not _is_mirror(r)]
    for root in new:
        if root in known or _is_mirror(root):
            continue
        if folders and root.name:  # ("/" has no name to key its files under)
            out.add(str(root))
        folders.append(root)
    return out


def _is_mirror(root: Path) -> bool:
    return os.path.isfile(os.path.join(root, MANIFEST))


def owner(roots: Collection[str], root: str, path: str) -> str | None:
    """The collection folder a document (stored ``root`` and ``path``) comes from, or None."""
    if root in roots:
        return root
    first = path.split("/", 1)[0]
    folder = os.path.join(root, first)
    return folder if first and folder in roots else None


def folder_of(roots: Collection[str], root: str, path: str) -> str:
    """The collection folder of a document, or its stored root where no folder claims it (a
    folder no longer among ``roots``)."""
    return owner(roots, root, path) or root


def locate(found: Sequence[Mount], path: Path) -> tuple[Mount, str] | None:
    """The folder holding ``path`` (absolute, resolved) and the path's stored key (NFC), or None."""
    for mount in found:
        if path != mount.root and path.is_relative_to(mount.root):
            rel = unicodedata.normalize("NFC", path.relative_to(mount.root).as_posix())
            return mount, mount.key(rel)
    return None
