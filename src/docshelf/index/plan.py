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
from docshelf.index.report import SyncReport
from docshelf.index.scope import Scope
from docshelf.parse import ParserRegistry
from docshelf.sources.walk import WalkResult
from docshelf.store.base import DocState, Store
from docshelf.types import SkippedFile, SourceFile

__all__ = ["SyncPlan", "held_reason", "plan_sync"]


def held_reason(holder: str | Path, root: Path) -> str:
    """Why a file of ``root`` is skipped when an earlier root of its collection has a file of the
    same relative path (a collection keys its documents by that path), and how to keep both."""
    name = shlex.quote(root.name or "docs")
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

    @cached_property
    def order(self) -> dict[str, int]:
        return {str(r): i for i, r in enumerate(self.all_roots)}

    def held_elsewhere(self, f: SourceFile) -> bool:
        """Whether an earlier root of the collection still has the file that holds this path: the
        first root wins, as in a full sync, even when only a later root is synced."""
        holder, order = self.holders.get(f.rel_path), self.order
        if holder is None or holder.root == str(f.root) or holder.root not in order:
            return False
        if order[holder.root] > order.get(str(f.root), len(order)):
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
    if changed is not None:
        binary, sniffer = registry.binary_extensions, registry.sniffer
        walked = changes.walk_changed(all_roots, changed, sources, binary, parseable(registry), sniffer)
        kept_roots = [str(r) for r in moved]
        states = changes.changed_states(store, collection, all_roots, changed)
    else:
        states = store.document_states(collection)
        walk_list = all_roots if within is None else [r for r in all_roots if within.touches(r)]
        walked = walk_sources(walk_list, sources, registry, unchanged(states))
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
    for walked_root, result in walked:
        # a scoped sync reports what it was asked about, not the rest of the root it walked
        report.skipped.extend(
            s for s in result.skipped if within is None or within.holds(walked_root / s.path)
        )
        for f in result.files:
            # (files without a parser were skipped by the walk, unopened)
            if within is not None and not within.holds(f.root / f.rel_path):
                continue
            if f.rel_path in files:
                report.skipped.append(SkippedFile(f.rel_path, held_reason(files[f.rel_path].root, f.root)))
            else:
                files[f.rel_path] = f
    holders = states
    if within is not None:  # only what lies in the scope is compared (and may be removed)
        states = {rel: st for rel, st in states.items() if within.holds(os.path.join(st.root, st.path))}
    return SyncPlan(
        collection, all_roots, roots_now, kept_roots, walked, within, states, holders, files, report, changed
    )
