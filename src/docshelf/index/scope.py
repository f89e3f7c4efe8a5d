"""What a targeted sync covers, and the per-index records a sync keeps up to date besides documents."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from docshelf.search.confidence import decode_scripts, encode_scripts, script_words

if TYPE_CHECKING:
    from docshelf.index.sync import SyncReport
    from docshelf.store.base import Store
    from docshelf.types import SkippedFile, SourceFile

__all__ = ["Scope", "record_scripts", "skip_records"]


class Scope:
    """The paths a scoped sync covers: roots, folders inside roots, or single files."""

    def __init__(self, paths: Sequence[Path]) -> None:
        from docshelf.sources.walk import is_within

        self._within = is_within
        self.paths = [Path(p).expanduser().resolve() for p in paths]

    def touches(self, root: Path) -> bool:
        """True if the root holds (or is) one of the paths: it must be walked."""
        return any(self._within(p, root) for p in self.paths)

    def holds(self, path: Path) -> bool:
        return any(self._within(path, p) for p in self.paths)


def skip_records(
    store: Store, collection: str, report: SyncReport, files: dict[str, SourceFile], within: Scope | None
) -> list[SkippedFile]:
    """This sync's skipped files; a scoped sync also keeps the records of files it did not see."""
    if within is None:
        return report.skipped
    seen = {*files, *(s.path for s in report.skipped), *report.removed}
    old = [s for _, s in store.skipped(collection) if s.path not in seen]
    return [*old, *report.skipped]


def record_scripts(store: Store, added: dict[str, float]) -> None:
    """Add the words per writing system a sync brought in to the index's counts (the search's
    "nearest neighbours" note asks which scripts an index holds); ``added`` is emptied."""
    if not added:
        return
    old = store.get_meta("scripts")
    counts = decode_scripts(old)
    if old is None:  # an index from before the counts: count every stored passage once
        counts = script_words(c.text for c in store.iter_chunks())
    else:
        for script, words in added.items():
            counts[script] = counts.get(script, 0.0) + words
    store.set_meta("scripts", encode_scripts(counts))
    added.clear()
