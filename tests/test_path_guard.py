"""The path guard of a freshness pass: guarded_path's answers, each folder resolved once.

Every one-shot `docshelf search` checks up to 2,000 indexed files for changes; resolving every
part of every path (one lstat each) took ~90 us a file, 0.18 s a search at 2,000 files.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from docshelf.embed import HashEmbedder
from docshelf.errors import AccessError
from docshelf.shelf import Shelf
from docshelf.shelf.paths import PathGuard, guarded_path
from docshelf.store.base import DocState


def _state(root: Path | str, path: str) -> DocState:
    return DocState(id="0" * 32, root=str(root), path=path, size=1, mtime_ns=1, content_hash="h")


def _answer(resolve: Callable[[], Path]) -> str:
    try:
        return str(resolve())
    except AccessError as e:
        return f"refused: {e}"


def test_the_guard_answers_as_guarded_path_does(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "deep.md").write_text("x")
    (root / "plain.md").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("x")
    (root / "inner-link.md").symlink_to(root / "a" / "b" / "deep.md")
    (root / "escape.md").symlink_to(outside / "secret.md")
    (root / "dir-in").symlink_to(root / "a")
    (root / "dir-out").symlink_to(outside)
    nfd = unicodedata.normalize("NFD", "Häuser.md")
    (root / nfd).write_text("x")
    work = tmp_path / "work"  # a second folder of the collection, keyed under its name
    work.mkdir()
    (work / "notes.md").write_text("x")
    swapped = tmp_path / "swapped"  # a root that is a link now
    swapped.symlink_to(root)
    roots = [str(root), str(work), str(swapped)]
    cases = [
        (root, "plain.md"), (root, "a/b/deep.md"), (root, "inner-link.md"), (root, "escape.md"),
        (root, "dir-in/b/deep.md"), (root, "dir-out/secret.md"), (root, "missing.md"),
        (root, "a/missing/x.md"), (root, "plain.md/x"), (root, "Häuser.md"), (root, "../outside/secret.md"),
        (tmp_path, "work/notes.md"), (tmp_path, "work/../root/plain.md"), (swapped, "plain.md"),
        (tmp_path / "gone", "plain.md"),
    ]  # fmt: skip
    guard = PathGuard()
    for _ in range(2):  # the second time from what the guard remembers
        for base, path in cases:
            want = _answer(partial(guarded_path, roots, str(base), path))
            assert _answer(partial(guard, roots, _state(base, path))) == want, (base, path)
    assert "resolves outside" in _answer(lambda: guard(roots, _state(root, "escape.md")))
    assert "now points to" in _answer(lambda: guard(roots, _state(swapped, "plain.md")))


@pytest.fixture
def lstats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths lstat'ed from now on (every part a realpath resolves is one)."""
    seen: list[str] = []
    real = os.lstat

    def counted(path: str | os.PathLike[str], *args: object, **kwargs: object) -> os.stat_result:
        seen.append(os.fspath(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", counted)
    return seen


def test_a_search_checks_each_file_in_a_few_stats(shelf: Shelf, tmp_path: Path, lstats: list[str]) -> None:
    deep = tmp_path / "docs" / "one" / "two" / "three" / "four"
    deep.mkdir(parents=True)
    files = 40
    for i in range(files):
        (deep / f"note{i}.md").write_text(f"# Note {i}\n\nThe wombat count {i}.\n")
    with shelf:
        shelf.index([tmp_path / "docs"], "test")
    with Shelf(shelf.settings, embedder=HashEmbedder()) as fresh:  # a one-shot search's shelf
        lstats.clear()
        result = fresh.search("wombat", mode="keyword")
        assert result.hits and result.stale_documents == 0
        assert len(lstats) <= 3 * files + 40  # on_disk, the root, the file; folders once
    (deep / "note3.md").write_text("# Note 3\n\nThe wombat count changed.\n")
    (deep / "note5.md").unlink()
    with Shelf(shelf.settings, embedder=HashEmbedder()) as fresh:
        assert fresh.search("wombat", mode="keyword").stale_documents == 2
