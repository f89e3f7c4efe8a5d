"""A sync's plan: what is under a collection's roots now, against what the store holds.

Planning walks the roots and reads the stored document states; it writes nothing. The indexer
then applies the plan: reads, parses, embeds and swaps in each new or changed file, removes what
is gone and records the skips and the build.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from docshelf.config import SourceSettings
from docshelf.errors import SourceError
from docshelf.index import changes
from docshelf.index.corpus import parseable, unchanged, walk_sources
from docshelf.index.gitinfo import git_state
from docshelf.index.mounts import Mount, folder_of, named_roots, with_new
from docshelf.index.report import SyncReport
from docshelf.index.scope import Scope
from docshelf.parse import ParserRegistry
from docshelf.sources.walk import WalkResult
from docshelf.store.base import DocState, Store
from docshelf.types import SkippedFile, SourceFile

__all__ = ["SyncPlan", "held_reason", "plan_sync"]


def held_reason(holder: str | Path, root: str | Path) -> str:
    """Why a file of ``root`` is skipped when an earlier root of its collection has a file of the
    same stored path (a collection keys its documents by that path), and how to keep both."""
    name = shlex.quote(Path(root).name or "docs")
    where = shlex.quote(str(root))
    return (
        f"same path already indexed from {holder}; to keep both, give this folder a collection of its "
        f"own: `docshelf forget {where}`, then `docshelf index {where} -c {name}`"
    )


@dataclass
class SyncPlan:
    """What one sync of one collection will compare and write."""

    collection: str
    all_roots: list[Path]  # the roots in order (the first root holding a path wins)
    roots_now: list[str] | None  # the collection's roots to record (None: a watcher's sync keeps them)
    kept_roots: list[str]  # roots that point elsewhere now: their documents are kept as indexed
    walked: list[tuple[Path, WalkResult]]
    within: Scope | None  # a scoped sync: only what lies here is compared (and may be removed)
    states: dict[str, DocState]  # the stored documents compared, by path
    holders: dict[str, DocState]  # who holds each path now, in every root
    files: dict[str, SourceFile]  # what is on disk now, by path
    report: SyncReport  # seeded with the skips found while planning
    changed: Sequence[Path] | None  # a watcher's events: only these files were looked at
    mounts: list[Mount]  # all_roots with how each keys its files
    named: set[str]  # the folders keyed under their name, with those joining now

    @cached_property
    def order(self) -> dict[str, int]:
        return {str(r): i for i, r in enumerate(self.all_roots)}

    @cached_property
    def _folders(self) -> set[str]:
        return {*self.order, *self.kept_roots}

    def folder(self, root: str | Path, path: str) -> str:
        """The collection folder of a file or document stored with ``root`` and ``path``."""
        return folder_of(self._folders, str(root), path)

    def held_elsewhere(self, f: SourceFile) -> bool:
        """Whether an earlier root of the collection still has the file that holds this path: the
        first root wins, as in a full sync, even when only a later root is synced."""
        holder, order = self.holders.get(f.rel_path), self.order
        if holder is None:
            return False
        theirs, mine = self.folder(holder.root, holder.path), self.folder(f.root, f.rel_path)
        if theirs == mine or theirs not in order or order[theirs] > order.get(mine, len(order)):
            return False
        return os.path.isfile(os.path.join(holder.root, holder.path))


def plan_sync(
    store: Store, registry: ParserRegistry, sources: SourceSettings, collection: str, roots: Sequence[Path],
    skipped: Sequence[SkippedFile], scope: Sequence[Path] | None, changed: Sequence[Path] | None,
) -> SyncPlan:  # fmt: skip
    """Walk the collection's roots (its known ones, then ``roots``) as the sync's arguments say."""
    known = [Path(r) for r in store.collection_roots(collection)]
    # a root stored resolved that resolves elsewhere now was swapped for a link: not followed
    moved = [r for r in known if r.resolve() != r]
    given = [Path(r).expanduser().resolve() for r in roots]
    all_roots = list(dict.fromkeys([*(r for r in known if r not in moved), *given]))
    if not all_roots and not moved:
        raise SourceError(f"collection {collection!r} has no folders yet; run `docshelf index PATH`")
    within = None if scope is None else Scope(scope)
    roots_now: list[str] | None = None
    named = named_roots(store, collection)
    if changed is None:  # folders join a collection in a full or scoped sync only
        named = with_new(named, known, given)
    found = [Mount(r, str(r) in named) for r in all_roots]
    if changed is not None:
        binary, sniffer = registry.binary_extensions, registry.sniffer
        walked = changes.walk_changed(found, changed, sources, binary, parseable(registry), sniffer)
        kept_roots = [str(r) for r in moved]
        states = changes.changed_states(store, collection, found, changed)
    else:
        states = store.document_states(collection)
        walk_list = all_roots if within is None else [r for r in all_roots if within.touches(r)]
        walked = _walk(found, walk_list, sources, registry, states)
        # a scoped sync keeps the roots it did not walk; walked roots take their resolved form
        resolved = dict(zip(walk_list, (r for r, _ in walked), strict=True))
        kept_roots = [str(r) for r in moved if r not in {w for w, _ in walked}]
        roots_now = [str(resolved.get(r, r)) for r in all_roots] + kept_roots
    report = SyncReport(collection, skipped=list(skipped))
    report.skipped += [
        SkippedFile(r, f"the folder now points to {Path(r).resolve()}, not to the folder indexed; its "
                    f"documents are kept as indexed. To index what is there now: `docshelf forget {r}`, "
                    f"then `docshelf index {Path(r).resolve()}`")
        for r in kept_roots
    ]  # fmt: skip
    report.git_commit, report.git_dirty = git_state(walked[0][0]) if walked else (None, None)
    files: dict[str, SourceFile] = {}
    order = {str(r): i for i, r in enumerate(all_roots)}
    for walked_root, result in walked:
        base = Mount(walked_root, str(walked_root) in named).base  # what keys start from
        # a scoped sync reports what it was asked about, not the rest of the root it walked
        report.skipped.extend(s for s in result.skipped if within is None or within.holds(base / s.path))
        for f in result.files:
            # (files without a parser were skipped by the walk, unopened)
            if within is not None and not within.holds(f.root / f.rel_path):
                continue
            if f.rel_path in files:
                first = files[f.rel_path]
                holder = folder_of(order, str(first.root), first.rel_path)
                mine = folder_of(order, str(f.root), f.rel_path)
                report.skipped.append(SkippedFile(f.rel_path, held_reason(holder, mine)))
            else:
                files[f.rel_path] = f
    holders = states
    if within is not None:  # only what lies in the scope is compared (and may be removed)
        states = {rel: st for rel, st in states.items() if within.holds(os.path.join(st.root, st.path))}
    return SyncPlan(
        collection, all_roots, roots_now, kept_roots, walked, within, states, holders, files, report, changed,
        found, named,
    )  # fmt: skip


def _walk(
    found: Sequence[Mount], walk_list: Sequence[Path], sources: SourceSettings, registry: ParserRegistry,
    states: dict[str, DocState],
) -> list[tuple[Path, WalkResult]]:  # fmt: skip
    """Each root of ``walk_list`` walked, its files and skips keyed as stored."""
    known = unchanged(states)
    out = []
    for mount in (m for m in found if m.root in walk_list):
        ((walked_root, result),) = walk_sources([mount.root], sources, registry, mount.known(known))
        out.append((walked_root, mount.keyed(result)))
    return out
