"""The walk a full sync makes of a collection's folders, shared with `status`, which counts the
files that walk would find and the index does not have yet."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from docshelf.errors import SourceError
from docshelf.index.mounts import mounts
from docshelf.index.scope import read_excluded
from docshelf.sources.walk import WalkResult, walk_roots

if TYPE_CHECKING:
    from docshelf.config import SourceSettings
    from docshelf.parse import ParserRegistry
    from docshelf.store.base import DocState, Store

__all__ = ["Known", "new_files", "parseable", "unchanged", "walk_sources"]

# (relative path, size, mtime_ns) -> indexed like that
Known = Callable[[str, int, int], bool]


def parseable(registry: ParserRegistry) -> Callable[[str], bool]:
    """Whether a relative path has a parser: the others are skipped unopened (a FIFO, /proc/kmsg
    would block)."""
    return lambda rel: registry.for_path(rel) is not None


def unchanged(states: dict[str, DocState]) -> Known:
    """Whether a walked file is indexed with this size and mtime (a binary file never is)."""

    def known(rel: str, size: int, mtime_ns: int) -> bool:
        state = states.get(rel)
        return state is not None and state.size == size and state.mtime_ns == mtime_ns

    return known


def walk_sources(
    roots: Sequence[Path], sources: SourceSettings, registry: ParserRegistry, known: Known | None = None
) -> list[tuple[Path, WalkResult]]:
    """(resolved root, files and skips) as a full sync walks them: ``sources.include/exclude``,
    .gitignore, hidden names, the size cap, binary files and files without a parser left out (and
    files chosen by name, README or no extension, whose first bytes are no text)."""
    return list(
        walk_roots(roots, sources.include, sources.exclude, sources.respect_gitignore, sources.max_file_mb,
                   registry.binary_extensions, parseable(registry), known, registry.sniffer)
    )  # fmt: skip


def new_files(store: Store, collection: str, sources: SourceSettings, registry: ParserRegistry) -> list[str]:
    """Paths a full sync of ``collection`` would add, in walk order.

    A path already indexed from any root is not new (the first root holds it), nor is one with a
    skip record (the last sync could not index it: `status --skipped` says why) or one a sync left
    out for ``rag: false`` and unchanged since.
    """
    states = store.document_states(collection)
    skipped = {s.path for _, s in store.skipped(collection)}
    excluded = read_excluded(store, collection)
    known = unchanged(states)
    found: dict[str, None] = {}
    for mount in mounts(store, collection):
        root, key = mount.root, mount.key
        # a folder gone from this machine is one stale entry already; one swapped for a link is
        # not followed by a sync either
        if not root.is_dir() or root.resolve() != root:
            continue
        try:
            walked = walk_sources([root], sources, registry, mount.known(known))
        except SourceError:  # removed since the check
            continue
        for _, result in walked:
            found.update(
                (rel, None) for f in result.files
                if (rel := key(f.rel_path)) not in states and excluded.get(rel) != (f.size, f.mtime_ns)
            )  # fmt: skip
    return [rel for rel in found if rel not in skipped]
