"""A sync of the files a watcher saw change: same result as a full sync, without walking the rest."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.index import plan as plan_module
from docshelf.index.watch import Watcher
from docshelf.testing import Stages
from docshelf.types import SkippedFile


def _state(rt: Stages) -> dict[str, list[str]]:
    return {d.path: [c.id for c in rt.store.document_chunks(d.id)] for d in rt.store.iter_documents("test")}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "notes").mkdir(parents=True)
    (root / "build").mkdir()
    (root / ".gitignore").write_text("build/\n*.tmp\n")
    for i in range(6):
        (root / "notes" / f"n{i}.md").write_text(f"# Note {i}\n\nalpha beta {i}\n")
    return root


def test_a_changed_files_sync_equals_a_full_sync_and_walks_nothing_else(
    settings: Settings, tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.sources.exclude = ["notes/private-*"]
    with Stages(settings, embedder=HashEmbedder()) as rt:
        rt.indexer().sync("test", [tree], skipped=[SkippedFile("https://x.invalid/", "fetch failed")])
        (tree / "notes" / "n1.md").write_text("# Note 1\n\nedited gammaword\n")
        (tree / "notes" / "n2.md").unlink()
        (tree / "notes" / "new.md").write_text("# New\n\nnew deltaword\n")
        (tree / "build" / "out.md").write_text("ignored by .gitignore\n")
        (tree / "notes" / "x.tmp").write_text("ignored too\n")
        (tree / "notes" / "private-plan.md").write_text("excluded by the settings\n")
        changed = [tree / "notes" / n for n in ("n1.md", "n2.md", "new.md", "x.tmp", "private-plan.md")]
        changed.append(tree / "build" / "out.md")

        def no_walk(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("a full walk")

        monkeypatch.setattr(plan_module, "walk_sources", no_walk)
        report = rt.indexer().sync("test", changed=changed)
        assert (report.added, report.updated, report.removed) == (
            ["notes/new.md"],
            ["notes/n1.md"],
            ["notes/n2.md"],
        )
        assert report.unchanged == 0  # the untouched notes were not even looked at
        targeted = _state(rt)
        assert {s.path for _, s in rt.store.skipped("test")} == {"https://x.invalid/"}  # kept
        monkeypatch.undo()
    fresh = settings.model_copy(deep=True)
    fresh.store.data_dir = tmp_path / "fresh"
    with Stages(fresh, embedder=HashEmbedder()) as rt:
        rt.indexer().sync("test", [tree])
        assert _state(rt) == targeted


def _count_walks(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """{"n": how many full walks of the roots syncs have made since}."""
    walks = {"n": 0}
    real_walk = plan_module.walk_sources

    def counting(*args: Any, **kwargs: Any) -> Any:
        walks["n"] += 1
        return real_walk(*args, **kwargs)

    monkeypatch.setattr(plan_module, "walk_sources", counting)
    return walks


def test_the_watcher_syncs_only_what_changed(
    settings: Settings, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.watch.debounce_ms = 50
    walks = _count_walks(monkeypatch)
    with Stages(settings, embedder=HashEmbedder()) as rt:
        rt.indexer().sync("test", [tree])
        walker = Watcher(rt.indexer(), "test", settings.watch, [tree])
        walker.start()
        try:
            deadline = time.monotonic() + 60
            while walker.health["syncs"] < 1 and time.monotonic() < deadline:  # the catch-up sync
                time.sleep(0.02)
            before = walks["n"]
            searcher = rt.searcher()
            (tree / "notes" / "n3.md").write_text("# Note 3\n\nwombatword\n")
            while not searcher.search("wombatword", mode="keyword").hits and time.monotonic() < deadline:
                time.sleep(0.02)
            assert searcher.search("wombatword", mode="keyword").hits[0].path == "notes/n3.md"
            assert walks["n"] == before  # found without walking the tree again
            (tree / "more").mkdir()  # a new folder: only a full sync can see what is in it
            (tree / "more" / "m.md").write_text("# More\n\nkoalaword\n")
            while not searcher.search("koalaword", mode="keyword").hits and time.monotonic() < deadline:
                time.sleep(0.02)
            assert searcher.search("koalaword", mode="keyword").hits[0].path == "more/m.md"
        finally:
            walker.stop()


def test_a_change_between_the_catch_up_sync_and_the_os_watch_is_not_missed(
    settings: Settings, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import watchfiles

    settings.watch.debounce_ms = 50
    settings.watch.rescan_s = 0  # no periodic rescan to paper over a missed change
    real_watch = watchfiles.watch

    def change_first(*args: Any, **kwargs: Any) -> Any:
        # the file changes after the watcher has looked at the tree but before the OS watch is set up
        (tree / "notes" / "n4.md").write_text("# Note 4\n\nplatypusword\n")
        return real_watch(*args, **kwargs)

    monkeypatch.setattr(watchfiles, "watch", change_first)
    with Stages(settings, embedder=HashEmbedder()) as rt:
        rt.indexer().sync("test", [tree])
        walker = Watcher(rt.indexer(), "test", settings.watch, [tree])
        walker.start()
        try:
            deadline = time.monotonic() + 60
            searcher = rt.searcher()
            while not searcher.search("platypusword", mode="keyword").hits and time.monotonic() < deadline:
                time.sleep(0.02)
            assert [h.path for h in searcher.search("platypusword", mode="keyword").hits] == ["notes/n4.md"]
        finally:
            walker.stop()


def test_an_editors_save_syncs_only_the_saved_file(
    settings: Settings, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vim's write probe `4913`, its `file~` backup, emacs' `#file#` and a `file.tmp` renamed into
    place are gone by the time the watcher looks: each one forced a full sync of the root."""
    settings.watch.debounce_ms = 50
    settings.watch.rescan_s = 0
    walks = _count_walks(monkeypatch)
    notes = tree / "notes"
    with Stages(settings, embedder=HashEmbedder()) as rt:
        rt.indexer().sync("test", [tree])
        walker = Watcher(rt.indexer(), "test", settings.watch, [tree])
        touched: list[str] = []
        walker.on_sync = lambda report: touched.extend([*report.added, *report.updated, *report.removed])
        walker.start()
        try:
            deadline = time.monotonic() + 60
            while walker.health["state"] != "running" and time.monotonic() < deadline:  # caught up
                time.sleep(0.02)
            before = walks["n"]
            searcher = rt.searcher()

            def found(word: str) -> list[str]:
                while not searcher.search(word, mode="keyword").hits and time.monotonic() < deadline:
                    time.sleep(0.02)
                return [h.path for h in searcher.search(word, mode="keyword").hits]

            (notes / "4913").write_text("")  # vim: can the folder be written?
            (notes / "4913").unlink()
            (notes / "n3.md").rename(notes / "n3.md~")  # vim's backup while it writes
            (notes / "n3.md").write_text("# Note 3\n\nwombatword\n")
            (notes / "n3.md~").unlink()
            (notes / "#n4.md#").write_text("emacs auto-save")
            (notes / "n4.md.tmp").write_text("# Note 4\n\nquokkaword\n")  # written aside, renamed in
            (notes / "n4.md.tmp").rename(notes / "n4.md")
            (notes / "#n4.md#").unlink()
            assert found("wombatword") == ["notes/n3.md"] and found("quokkaword") == ["notes/n4.md"]
            (notes / "real.md").write_text("# Real\n\nkoalaword\n")  # after the rest: their syncs are done
            assert found("koalaword") == ["notes/real.md"]
            while "notes/real.md" not in touched and time.monotonic() < deadline:  # told after the commit
                time.sleep(0.02)
            assert walks["n"] == before  # no full sync
            assert sorted(set(touched)) == ["notes/n3.md", "notes/n4.md", "notes/real.md"]
            assert not {s.path for _, s in rt.store.skipped("test")} & {"notes/4913", "notes/n3.md~"}
        finally:
            walker.stop()


def test_a_path_gone_from_disk_is_looked_up_in_the_index(
    settings: Settings, tree: Path, tmp_path: Path
) -> None:
    """Gone before the watcher looked: a folder of documents needs a full sync (its files sent no
    events, even one named like a file: `v2.md/`), a document or skip record a targeted one, and
    a name the index never had nothing."""
    from docshelf.index.watch import _files_only

    (tree / "v2.md").mkdir()
    (tree / "v2.md" / "inner.md").write_text("# Inner\n\ntext\n")
    (tree / "notes" / "notes.xyz").write_text("no parser takes it\n")
    with Stages(settings, embedder=HashEmbedder()) as rt:
        rt.indexer().sync("test", [tree])
        assert "notes/notes.xyz" in {s.path for _, s in rt.store.skipped("test")}
        watcher = Watcher(rt.indexer(), "test", settings.watch, [tree])
        seen = watcher._indexed_as([tree.resolve()])
        (tree / "v2.md").rename(tmp_path / "v2-moved")
        (tree / "notes" / "notes.xyz").unlink()
        (tree / "notes" / "n1.md").unlink()
        assert _files_only(set(), [tree / "v2.md"], seen) is None
        for gone in ("notes/notes.xyz", "notes/n1.md"):
            assert _files_only(set(), [tree / gone], seen) == {tree / gone}
        assert _files_only(set(), [tree / "notes" / "4913", tree / "notes" / "n2.md~"], seen) == set()
