"""What a targeted sync covers, and the per-index records a sync keeps up to date besides documents."""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from docshelf.analyze.language import count_language
from docshelf.analyze.scripts import decode_scripts, encode_scripts, script_words

if TYPE_CHECKING:
    from docshelf.analyze import Analyzer
    from docshelf.index.mounts import Mount
    from docshelf.index.report import SyncReport
    from docshelf.store.base import Store
    from docshelf.types import SkippedFile, SourceFile

__all__ = [
    "Scope",
    "read_excluded",
    "record_excluded",
    "record_languages",
    "record_scripts",
    "skip_records",
    "skips_left",
]

_BACKFILL_CHUNKS = 2000  # an index from before the language counts: a sample of its passages
_EXCLUDED_KEY = "excluded/"


class Scope:
    """The paths a scoped sync covers: roots, folders inside roots, or single files."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.paths = [Path(p).expanduser().resolve() for p in paths]
        # string prefixes: holds() runs once per file and per stored document of a sync
        self._exact = frozenset(str(p) for p in self.paths)
        self._prefixes = tuple(str(p).rstrip(os.sep) + os.sep for p in self.paths)

    def touches(self, root: Path) -> bool:
        """True if the root holds (or is) one of the paths: it must be walked."""
        return any(_within(str(p), str(root)) for p in self.paths)

    def holds(self, path: Path | str) -> bool:
        """True if ``path`` (resolved) is one of the paths or lies below one."""
        text = str(path)
        return text in self._exact or text.startswith(self._prefixes)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def skip_records(
    store: Store, collection: str, report: SyncReport, files: dict[str, SourceFile], within: Scope | None
) -> list[SkippedFile]:
    """This sync's skipped files; a scoped sync also keeps the records of files it did not see."""
    if within is None:
        return report.skipped
    seen = {*files, *(s.path for s in report.skipped), *report.removed}
    old = [s for _, s in store.skipped(collection) if s.path not in seen]
    return [*old, *report.skipped]


def skips_left(
    store: Store, collection: str, root: Mount, left: Sequence[Mount], held: Collection[str]
) -> list[SkippedFile]:
    """The skip records that outlive forgetting ``root``: a record is kept when a root left has a
    file of its name that no document holds (a record names a path, not its root: a file the
    forgotten root had alone, or its copy of a path an earlier root holds, goes with it)."""
    kept = []
    for _, skip in store.skipped(collection):
        if skip.path == str(root.root):  # "the folder now points elsewhere": it is no root any more
            continue
        theirs = any(m.owns(skip.path) and os.path.lexists(os.path.join(m.base, skip.path)) for m in left)
        mine = os.path.lexists(os.path.join(root.base, skip.path))
        if theirs and not (mine and skip.path in held):
            kept.append(skip)
    return kept


def read_excluded(store: Store, collection: str) -> dict[str, tuple[int, int]]:
    """Path -> (size, mtime_ns) of the files the syncs of ``collection`` left out for ``rag: false``."""
    try:
        raw = json.loads(store.get_meta(_EXCLUDED_KEY + collection) or "{}")
        return {str(rel): (int(v[0]), int(v[1])) for rel, v in raw.items()}
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return {}  # unreadable: the next full sync writes it afresh


def record_excluded(
    store: Store, collection: str, excluded: Sequence[str], files: dict[str, SourceFile],
    seen: Collection[str] | None,
) -> None:  # fmt: skip
    """Keep the files this sync left out for ``rag: false``, as they are now: `status` does not
    count them as new until they change. ``seen``: the paths a scoped sync looked at (None: all)."""
    old = read_excluded(store, collection)
    kept = {} if seen is None else {rel: v for rel, v in old.items() if rel not in seen}
    kept.update((rel, (files[rel].size, files[rel].mtime_ns)) for rel in excluded if rel in files)
    if kept != old:
        store.set_meta(_EXCLUDED_KEY + collection, json.dumps(kept, sort_keys=True))


def record_scripts(store: Store, added: dict[str, float], fresh: bool = False) -> None:
    """Add the words per writing system a sync brought in to the index's counts (the search's
    "nearest neighbours" note asks which scripts an index holds); ``added`` is emptied. ``fresh``:
    the store held no passages when the sync began, so none are there to count but ``added``."""
    if not added:
        return
    old = store.get_meta("scripts")
    counts = decode_scripts(old)
    if old is None and not fresh:  # an index from before the counts: count every stored passage once
        counts = script_words(c.text for c in store.iter_chunks())
    else:
        for script, words in added.items():
            counts[script] = counts.get(script, 0.0) + words
    store.set_meta("scripts", encode_scripts(counts))
    added.clear()


def record_languages(store: Store, analyzer: Analyzer, added: dict[str, float], fresh: bool = False) -> None:
    """Add the words per language a sync brought in to the index's counts (a query whose language
    cannot be told is also stemmed in the index's main languages); ``added`` is emptied; ``fresh``
    as for record_scripts."""
    if not added:
        return
    old = store.get_meta("languages")
    counts = decode_scripts(old)
    if old is None and not fresh:  # an index from before the counts: a sample of what it holds
        for i, chunk in enumerate(store.iter_chunks()):
            if i >= _BACKFILL_CHUNKS:
                break
            count_language(analyzer.language, [chunk.text], counts)
    for lang, words in added.items():
        counts[lang] = counts.get(lang, 0.0) + words
    store.set_meta("languages", encode_scripts(counts))
    added.clear()
