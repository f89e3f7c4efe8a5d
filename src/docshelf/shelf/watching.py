"""Watch every collection of an index, those added while it runs too (`docshelf serve --watch`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from docshelf.errors import DocshelfError

if TYPE_CHECKING:
    from docshelf.index.watch import Watcher
    from docshelf.shelf.core import Shelf

__all__ = ["watch_collections"]

log = logging.getLogger("docshelf.watch")
NEW_COLLECTIONS_S = 2.0  # how often the index is asked for collections nobody watches yet


def watch_collections(
    shelf: Shelf, say: Callable[[str], None], every_s: float = NEW_COLLECTIONS_S
) -> Callable[[], None]:
    """Watch every collection on a background thread, sharing ``shelf``'s model; returns a stopper.

    A collection that appears later (an `ingest`, a `docshelf index DIR -c NEW`, the first index of
    a server started without one) is watched within ``every_s``; it used to wait for a restart.
    The watchers have their own shelf (their own store connection); writes go through the index's
    writer lock, so other servers and CLI runs on the same index keep working. ``say`` gets the
    one line that tells why watching is off.
    """
    from docshelf.shelf.core import Shelf

    stop = threading.Event()
    watchers: list[Watcher] = []
    shelves: list[Shelf] = []

    def run() -> None:
        embedder, why = shelf.embedder(None)
        if stop.is_set():
            return
        if embedder is None:
            say(f"watch is off: {why}")
            return
        mine = Shelf(shelf.settings, embedder=embedder, config_path=shelf.config_path)
        shelves.append(mine)
        watching: set[str] = set()
        while not stop.is_set():
            try:
                names = mine.collections() if mine.exists() else []
                fresh = [n for n in names if n not in watching and mine.store.collection_roots(n)]
            except DocshelfError as exc:  # the index is being replaced, or unreachable: ask again later
                log.debug("watch: cannot list the collections: %s", exc)
                fresh = []
            for name in fresh:
                watcher = mine.watcher(name)
                watchers.append(watcher)
                watching.add(name)
                watcher.start()
            stop.wait(every_s)

    thread = threading.Thread(target=run, name="docshelf-watch-start", daemon=True)
    thread.start()

    def stopper() -> None:
        stop.set()
        thread.join(5)
        for watcher in list(watchers):
            watcher.stop()
        for opened in shelves:
            opened.close()

    return stopper
