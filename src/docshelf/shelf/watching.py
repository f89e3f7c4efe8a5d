"""Live indexing: one collection (`docshelf watch`), or every collection of an index, those added
while it runs too (`docshelf serve --watch`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.errors import DocshelfError

if TYPE_CHECKING:
    from docshelf.index.watch import Watcher
    from docshelf.shelf.parts import Parts

__all__ = ["watch_collections", "watcher"]

log = logging.getLogger("docshelf.watch")
NEW_COLLECTIONS_S = 2.0  # how often the index is asked for collections nobody watches yet


def watcher(
    parts: Parts, collection: str, roots: Sequence[Path], on_sync: Callable[[Any], None] | None
) -> Watcher:
    """A live indexer for one collection, with its recorded settings."""
    from docshelf.errors import NotFoundError
    from docshelf.index.watch import Watcher

    names = parts.store.collections()
    if not roots and collection not in names:
        known = ", ".join(names) or "none"
        raise NotFoundError(f"no collection {collection!r} to watch (known: {known}); pass its folders")
    return Watcher(parts.indexer(collection), collection, parts.settings.watch, roots, on_sync=on_sync)


def watch_collections(
    parts: Parts, say: Callable[[str], None], every_s: float = NEW_COLLECTIONS_S
) -> Callable[[], None]:
    """Watch every collection on a background thread, sharing ``parts``' model; returns a stopper.

    A collection that appears later (an `ingest`, a `docshelf index DIR -c NEW`, the first index of
    a server started without one) is watched within ``every_s``; it used to wait for a restart.
    The watchers have their own parts (their own store connection); writes go through the index's
    writer lock, so other servers and CLI runs on the same index keep working. ``say`` gets the
    one line that tells why watching is off.
    """
    from docshelf.shelf.parts import Parts
    from docshelf.store import index_exists

    stop = threading.Event()
    watchers: list[Watcher] = []
    opened: list[Parts] = []

    def run() -> None:
        embedder, why = parts.embedder(None)
        if stop.is_set():
            return
        if embedder is None:
            say(f"watch is off: {why}")
            return
        mine = Parts(parts.settings, embedder=embedder, config_path=parts.config_path)
        opened.append(mine)
        watching: set[str] = set()
        while not stop.is_set():
            try:
                names = mine.store.collections() if index_exists(mine.settings) else []
                fresh = [n for n in names if n not in watching and mine.store.collection_roots(n)]
            except DocshelfError as exc:  # the index is being replaced, or unreachable: ask again later
                log.debug("watch: cannot list the collections: %s", exc)
                fresh = []
            for name in fresh:
                started = watcher(mine, name, (), None)
                watchers.append(started)
                watching.add(name)
                started.start()
            stop.wait(every_s)

    thread = threading.Thread(target=run, name="docshelf-watch-start", daemon=True)
    thread.start()

    def stopper() -> None:
        stop.set()
        thread.join(5)
        for started in list(watchers):
            started.stop()
        for own in opened:
            own.close()

    return stopper
