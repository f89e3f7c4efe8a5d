"""The freshness check behind every search: constant work per search, exact counts when done."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from docshelf.analyze import Analyzer
from docshelf.index.stale import StaleTracker, stale_documents
from docshelf.store.base import DocState, DocumentRecord, Replacement
from docshelf.testing import MemoryStore


class CountingStore(MemoryStore):
    """Counts the document pages read, the part of the check that grows with the files."""

    pages = 0

    def document_page(self, after: str, limit: int) -> list[tuple[str, object]]:  # type: ignore[override]
        self.pages += 1
        return super().document_page(after, limit)  # type: ignore[return-value]


def _store(tmp_path: Path, files: int) -> CountingStore:
    root = tmp_path / "root"
    root.mkdir()
    store = CountingStore(tmp_path / "data", Analyzer(["english"]))
    store.set_collection_roots("c", [str(root)])
    for i in range(files):
        path = root / f"f{i}.md"
        path.write_text("x", "utf-8")
        st = path.stat()
        doc = DocumentRecord(f"{i:032x}", "c", str(root), path.name, st.st_size, st.st_mtime_ns, "h", "md")
        store.replace_documents([Replacement(doc, [], {})])
    return store


def test_searches_do_not_walk_the_files(tmp_path: Path) -> None:
    store = _store(tmp_path, 2500)  # more than the first call's two pages of 1,000
    tracker = StaleTracker(store)
    assert tracker.summary()["stale_documents"] is None  # too many to count within one search
    read = store.pages
    for _ in range(50):
        assert tracker.summary()["stale_documents"] is None
    assert store.pages == read  # no search after the first touched the document list


def test_a_count_that_cannot_finish_stats_no_file(tmp_path: Path) -> None:
    store = _store(tmp_path, 2500)
    resolved: list[str] = []

    def resolve(roots: list[str], state: DocState) -> Path:
        resolved.append(state.path)
        return Path(state.root) / state.path

    tracker = StaleTracker(store, resolver=lambda: resolve)
    assert tracker.summary()["stale_documents"] is None
    assert resolved == []  # stat'ing the first 2,000 only to report "unknown" is time thrown away
    (tmp_path / "small").mkdir()
    small = StaleTracker(_store(tmp_path / "small", 1500), resolver=lambda: resolve)
    assert small.summary()["stale_documents"] == 0 and len(resolved) == 1500


def test_small_index_is_counted_at_once_and_exactly(tmp_path: Path) -> None:
    store = _store(tmp_path, 40)
    (tmp_path / "root" / "f3.md").write_text("changed", "utf-8")
    (tmp_path / "root" / "f7.md").unlink()
    tracker = StaleTracker(store)
    assert tracker.summary()["stale_documents"] == 2 == len(stale_documents(store))


def test_background_pass_finishes_a_large_count(tmp_path: Path) -> None:
    store = _store(tmp_path, 2500)
    (tmp_path / "root" / "f2400.md").unlink()
    done = threading.Event()
    tracker = StaleTracker(store, background=True, min_age_s=0.01)
    original = tracker._run_pass

    def run_pass(**kwargs: object) -> None:
        original(**kwargs)  # type: ignore[arg-type]
        if tracker._count is not None:
            done.set()

    tracker._run_pass = run_pass  # type: ignore[method-assign]
    try:
        tracker.summary()
        assert done.wait(30)
        assert tracker.summary()["stale_documents"] == 1
    finally:
        tracker.close()


def test_a_long_pass_stretches_the_wait_before_the_next(tmp_path: Path) -> None:
    """Re-counting a large corpus every few seconds kept the thread busy and searches slower
    (MCP p50 41.6 ms at 20,000 files vs 23.3 ms at 1,000): the wait grows with the pass."""
    store = _store(tmp_path, 40)
    tracker = StaleTracker(store, max_age_s=5.0, min_age_s=1.0, idle_ratio=10.0)
    tracker.summary()  # one complete pass
    generation = store.generation()
    tracker._pass_s = 2.0  # as if that pass had taken 2 s
    tracker._checked -= 6.0
    assert not tracker._due(generation)  # past max_age_s, but not 10 x 2 s
    assert not tracker._due(generation + 1)  # a sync since: still not before 20 s
    tracker._checked -= 15.0
    assert tracker._due(generation)


def test_new_files_are_counted_on_background_passes_never_in_a_search(tmp_path: Path) -> None:
    """A server's status takes the new files (a walk of the folders) from the tracker's last pass."""
    store = _store(tmp_path, 40)
    walks: list[int] = []
    done = threading.Event()

    def news() -> list[dict[str, str]]:
        walks.append(1)
        done.set()
        return [{"collection": "c", "path": f"n{i}.md", "reason": "new"} for i in range(3)]

    tracker = StaleTracker(store, background=True, max_age_s=0.05, min_age_s=0.01, keep=2, news=news)
    tracker._ensure_thread = lambda generation: None  # type: ignore[method-assign]
    assert tracker.summary()["stale_documents"] == 0  # the search's own pass walks no folder
    assert walks == [] and tracker.new_report() is None
    del tracker._ensure_thread
    try:
        tracker.summary()
        assert done.wait(30)
        deadline = time.monotonic() + 30
        while tracker.new_report() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert tracker.new_report() == (3, news()[:2])
    finally:
        tracker.close()
