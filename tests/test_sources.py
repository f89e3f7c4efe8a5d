from __future__ import annotations

import os
from pathlib import Path

import pytest

from docshelf.errors import SourceError
from docshelf.sources import walk_roots
from docshelf.sources.walk import walk_paths


def walk(root: Path, **kw: object) -> tuple[set[str], dict[str, str]]:
    [(_, result)] = list(walk_roots([root], **kw))  # type: ignore[arg-type]
    return {f.rel_path for f in result.files}, {s.path: s.reason for s in result.skipped}


def test_gitignore_hidden_globs_binary_and_size(tmp_path: Path) -> None:
    (tmp_path / "docs" / "build").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("x")
    (tmp_path / ".hidden.md").write_text("x")
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "docs" / ".gitignore").write_text("secret.md\n")
    (tmp_path / "docs" / "a.md").write_text("a")
    (tmp_path / "docs" / "secret.md").write_text("s")
    (tmp_path / "docs" / "build" / "out.md").write_text("o")
    (tmp_path / "run.log").write_text("l")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "big.md").write_text("x" * 3000)
    files, skipped = walk(tmp_path, max_file_mb=0.001)
    assert files == {"docs/a.md"}
    assert skipped["blob.bin"].startswith("binary file")
    assert "too large" in skipped["big.md"]
    files, _ = walk(tmp_path, respect_gitignore=False, max_file_mb=1)
    assert {"docs/secret.md", "docs/build/out.md", "run.log"} <= files
    files, _ = walk(tmp_path, include=["docs/**"], exclude=["a.md"], max_file_mb=1)
    assert files == set()


def test_symlinks_inside_followed_outside_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "real").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    (root / "real" / "a.md").write_text("a")
    os.symlink(outside / "secret.md", root / "leak.md")
    os.symlink(outside, root / "leakdir")
    os.symlink(root / "real", root / "alias")  # same folder twice: indexed once
    os.symlink(root, root / "real" / "loop")  # a loop must terminate
    os.symlink(root / "real", root / "zz")  # after both: said, as the loop is
    files, skipped = walk(root)
    assert files == {"alias/a.md"} or files == {"real/a.md"}
    assert "outside" in skipped["leak.md"] and "outside" in skipped["leakdir"]
    loop = next(path for path in skipped if path.endswith("/loop"))
    assert skipped[loop] == "symlink loop: leads back to the corpus root, which holds it", skipped
    assert skipped["zz"] == f"symlink to a folder already indexed as {files.pop().split('/')[0]}"


def test_a_link_to_itself_is_skipped_and_the_rest_indexed(tmp_path: Path) -> None:
    """A link loop (self, or two links at each other) made resolve() raise: nothing was indexed."""
    (tmp_path / "a.md").write_text("a")
    os.symlink("self", tmp_path / "self")
    os.symlink("pong", tmp_path / "ping")
    os.symlink("ping", tmp_path / "pong")
    files, skipped = walk(tmp_path)
    assert files == {"a.md"}
    assert all("symlink loop" in skipped[name] for name in ("self", "ping", "pong"))


def test_missing_root_raises(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        list(walk_roots([tmp_path / "missing"]))
    (tmp_path / "file.md").write_text("x")
    with pytest.raises(SourceError, match="not a folder"):
        list(walk_roots([tmp_path / "file.md"]))


def test_a_fifo_and_a_folder_loop_are_listed_as_skipped(tmp_path: Path) -> None:
    """A FIFO and a link back up the tree were neither indexed nor said; the FIFO is never opened
    (an open would wait for a writer forever)."""
    (tmp_path / "a.md").write_text("a")
    os.mkfifo(tmp_path / "pipe.md")
    os.mkfifo(tmp_path / "queue")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.md").write_text("b")
    os.symlink("..", tmp_path / "sub" / "up")
    files, skipped = walk(tmp_path)
    assert files == {"a.md", "sub/b.md"}
    for fifo in ("pipe.md", "queue"):
        assert skipped[fifo] == "not a regular file (a FIFO): never read", skipped
    assert skipped["sub/up"].startswith("symlink loop: leads back to the corpus root"), skipped
    # a watcher's walk of just these names says the same
    os.symlink("self", tmp_path / "self")
    names = [tmp_path / "pipe.md", tmp_path / "sub" / "up", tmp_path / "self", tmp_path / "a.md"]
    result = walk_paths(tmp_path, names)
    said = {s.path: s.reason for s in result.skipped}
    assert [f.rel_path for f in result.files] == ["a.md"]
    assert said["pipe.md"] == skipped["pipe.md"] and "symlink loop" in said["self"], said


def test_python_build_leftovers_are_ignored_like_vcs_folders(tmp_path: Path) -> None:
    """__pycache__/*.pyc and py.typed were listed as skipped ("no parser for .pyc") on every sync."""
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\x00\x01pyc")
    (tmp_path / "pkg" / "py.typed").write_text("")
    (tmp_path / "pkg" / "old.pyc").write_bytes(b"\x00pyc")
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    files, skipped = walk(tmp_path, parseable=lambda rel: rel.endswith(".py"))
    assert files == {"pkg/mod.py"} and skipped == {}
    names = [tmp_path / "pkg" / "__pycache__" / "mod.cpython-311.pyc", tmp_path / "pkg" / "py.typed"]
    result = walk_paths(tmp_path, names, parseable=lambda rel: rel.endswith(".py"))
    assert result.files == [] and result.skipped == []
