"""What opening an index does besides opening the store: recorded analysis, keyword repair, warm-up."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from docshelf.errors import DocshelfError

if TYPE_CHECKING:
    from docshelf.analyze import Analyzer
    from docshelf.config import AnalyzeSettings, Settings
    from docshelf.store.base import Store

__all__ = ["apply_index_settings", "repair_keywords", "warm_analyzer"]

log = logging.getLogger("docshelf.shelf")
# how often a keyword rebuild at open says how far it got
PROGRESS_SECONDS = 10.0


def repair_keywords(store: Store, every_s: float = PROGRESS_SECONDS) -> None:
    """Rebuild a missing or damaged keyword index from the store at open (it is derived data).

    Skipped, with a warning, while another process holds the writer lock: its sync rebuilds it.
    It says so when it starts and every ``every_s`` seconds: a new analyzer version re-analyses
    every passage, 12 minutes at a million chunks, and the open waits for it.
    """
    from docshelf.index.lock import WriterLock

    if getattr(store, "read_only", False) or not store.needs_keyword_rebuild():
        return  # a read-only open writes nothing; the store warned and said how to rebuild
    last = time.monotonic()

    def progress(done: int, total: int) -> None:
        nonlocal last
        if time.monotonic() - last >= every_s:
            last = time.monotonic()
            log.warning("rebuilding the keyword index: %d of %d passages (%d%%)", done, total,
                        100 * done // max(1, total))  # fmt: skip

    try:
        with WriterLock(store.data_dir, 0, store.writer_guard):
            log.warning(
                "the keyword index at %s is missing, damaged or built with other analyzer settings: "
                "rebuilding it from the database (no re-embedding); the index opens when it is done",
                store.data_dir,
            )
            failed = True
            try:
                count = store.rebuild_keyword_index(progress)
                failed = False
            finally:
                store.end_write(failed)
    except DocshelfError as exc:
        log.warning("the keyword index is behind the database and could not be rebuilt now: %s", exc)
        return
    log.warning("the keyword index at %s was rebuilt from the database (%d passages)", store.data_dir, count)


def apply_index_settings(settings: Settings, store: Store) -> AnalyzeSettings | None:
    """The analysis settings recorded with the index (a search analyses as the index was built,
    whatever this process's settings say); None when the index records none."""
    from docshelf.shelf.settings import apply, read_index

    rec = read_index(store)
    return None if rec is None else apply(settings, rec).analyze


# a sentence each: the vote decides per text, and German words load the compound splitter's list
_WARM_TEXTS = (
    "Die Aufwärmphase des Servers ist kurz, und die erste Suche ist schnell.",
    "Le serveur démarre vite et la première recherche est rapide.",
    "The server starts quickly and the first search is fast.",
)


def warm_analyzer(analyzer: Analyzer) -> None:
    """Load what a server's first search would otherwise load on its own time (~0.1 s there): the
    search modules, the language vote's word lists, stemmers and the compound splitter's words."""
    try:
        import docshelf.search.searcher  # noqa: F401

        for text in _WARM_TEXTS:
            analyzer.tokens(text, passage=True)
    except Exception as exc:  # only a warm-up: the first search loads whatever is missing
        log.debug("analyzer warm-up: %s", exc)
