"""Opening an index while another process creates it.

`docshelf index` on a new index failed with "cannot open the index ...: database is locked" when a
`serve --watch` (which polls for the index to appear) opened it at the same moment, and the server
kept that error: SQLite's switch to WAL mode does not wait for a lock the way statements do.
"""

from __future__ import annotations

import threading
from pathlib import Path

from docshelf.analyze import Analyzer
from docshelf.config import Settings, load_settings
from docshelf.embed import HashEmbedder
from docshelf.errors import DocshelfError
from docshelf.shelf import Shelf
from docshelf.store import open_store


def _settings(data_dir: Path) -> Settings:
    s = load_settings(collection="race")
    s.store.data_dir = data_dir
    s.embed.model = "hash"
    return s


def test_a_new_index_opened_while_it_is_created_opens_on_both_sides(tmp_path: Path) -> None:
    failures: list[str] = []
    for trial in range(100):
        docs = tmp_path / f"docs{trial}"
        docs.mkdir()
        (docs / "a.md").write_text("# A\n\nThe numbat page.\n")
        settings = _settings(tmp_path / f"data{trial}")
        done = threading.Event()

        def create(settings: Settings = settings, docs: Path = docs, done: threading.Event = done) -> None:
            try:
                with Shelf(settings, embedder=HashEmbedder()) as shelf:
                    shelf.index([docs])
            except DocshelfError as exc:
                failures.append(f"index: {exc}")
            finally:
                done.set()

        creator = threading.Thread(target=create)
        creator.start()
        while not done.is_set():  # what a server polling for the index does
            if (settings.store.data_dir / "docshelf.db").exists():
                try:
                    open_store(settings, Analyzer(["english"])).close()
                except DocshelfError as exc:
                    failures.append(f"open: {exc}")
        creator.join()
    assert failures == []
