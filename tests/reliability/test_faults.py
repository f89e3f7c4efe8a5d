"""Faults: disk full, read-only data dir, a dying embedder, a damaged keyword index, SQLite busy.

Each must end in a one-line error (or a warning and a rebuild), with every document that was
indexed before still whole and searchable, and the next run converging.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from crashkit import _read_docs, cli_env, file_text

from docshelf.config import Settings, load_settings
from docshelf.embed import HashEmbedder
from docshelf.embed.base import Vectors
from docshelf.errors import StoreError
from docshelf.shelf import Shelf
from docshelf.testing import Stages


def write_corpus(folder: Path, docs: Sequence[int], version: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for d in docs:
        (folder / f"f{d:03d}.txt").write_text(file_text(d, version), "utf-8")


def cli(
    data: Path, *args: str, preexec: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docshelf", *args, "--data-dir", str(data)],
        env=cli_env(data.parent), capture_output=True, text=True, timeout=120, preexec_fn=preexec,
    )  # fmt: skip


def assert_one_line_error(proc: subprocess.CompletedProcess[str], exit_code: int, *words: str) -> None:
    assert proc.returncode == exit_code, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    for word in words:
        assert word in errors[0], errors[0]


def versions(data: Path) -> dict[int, int]:
    """{doc: version} of a store whose every document is whole (raises otherwise)."""
    return dict(_read_docs(data / "docshelf.db").values())


@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A small tmpfs at ``where`` (root only; skips elsewhere)."""
    where.mkdir(parents=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, text=True)  # fmt: skip
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fsize_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:  # in the child: EFBIG instead of death by SIGXFSZ past the limit
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.parametrize("how", ["tmpfs", "fsize"])
def test_disk_full_is_a_clear_error_and_keeps_the_index(tmp_path: Path, how: str) -> None:
    corpus, data = tmp_path / "corpus", tmp_path / "data"
    write_corpus(corpus, range(8), 1)
    with contextlib.ExitStack() as stack:
        preexec = None
        if how == "tmpfs":
            stack.enter_context(tmpfs(data, "1m"))
        assert cli(data, "index", str(corpus)).returncode == 0
        write_corpus(corpus, range(3), 2)  # edits, and far more new text than fits
        write_corpus(corpus, range(8, 200), 2)
        if how == "fsize":
            preexec = _fsize_limit((data / "docshelf.db").stat().st_size + 200_000)
        full = cli(data, "index", preexec=preexec)
        assert_one_line_error(full, 5, "could not be written")
        kept = versions(data)
        assert set(range(8)) <= set(kept)  # nothing indexed before is lost, each doc whole
        if how == "tmpfs":
            subprocess.run(["mount", "-o", "remount,size=64m", str(data)], check=True)
        again = cli(data, "index")
        assert again.returncode == 0, again.stderr
        assert versions(data) == {d: 2 if d < 3 or d >= 8 else 1 for d in range(200)}


def test_read_only_data_dir_is_a_clear_error_and_keeps_the_index(tmp_path: Path) -> None:
    corpus, data = tmp_path / "corpus", tmp_path / "data"
    write_corpus(corpus, range(6), 1)
    with contextlib.ExitStack() as stack:
        if os.geteuid() == 0:  # root ignores permission bits: make the file system read-only
            stack.enter_context(tmpfs(data, "16m"))
        assert cli(data, "index", str(corpus)).returncode == 0
        write_corpus(corpus, range(3), 2)
        if os.geteuid() == 0:
            subprocess.run(["mount", "-o", "remount,ro", str(data)], check=True)
        else:
            for path in (data, *data.rglob("*")):
                path.chmod(path.stat().st_mode & ~0o222)
        for args in (("index",), ("forget", "f001.txt")):
            assert_one_line_error(cli(data, *args), 5, str(data))
        if os.geteuid() == 0:
            subprocess.run(["mount", "-o", "remount,rw", str(data)], check=True)
        else:
            for path in (data, *data.rglob("*")):
                path.chmod(path.stat().st_mode | 0o200)
        assert versions(data) == dict.fromkeys(range(6), 1)
        assert cli(data, "index").returncode == 0
        assert versions(data) == {d: 2 if d < 3 else 1 for d in range(6)}


class DyingEmbedder(HashEmbedder):
    """Embeds ``budget`` texts, then fails on every call, as a model crashing mid-batch would."""

    def __init__(self, budget: int) -> None:
        super().__init__()
        self.budget = budget

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.budget -= len(texts)
        if self.budget < 0:
            raise RuntimeError("CUDA error: device lost")
        return super().embed_documents(texts)


def test_embedder_dying_mid_batch_keeps_old_versions(settings: Settings, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, range(12), 1)
    settings.chunk.max_tokens, settings.embed.batch_size = 16, 2
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([corpus], "test")
    write_corpus(corpus, range(12), 2)
    with Shelf(settings, embedder=DyingEmbedder(budget=30)) as shelf:
        report = shelf.index([corpus], "test").sync
    failed = {s.path for s in report.skipped if "embedding failed, old version kept" in s.reason}
    assert report.updated and failed and len(report.updated) + len(failed) == 12
    got = versions(settings.store.data_dir)
    assert got == {d: 1 if f"f{d:03d}.txt" in failed else 2 for d in range(12)}
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([corpus], "test")
        assert versions(settings.store.data_dir) == dict.fromkeys(range(12), 2)
        hits = shelf.search("m005v2p08", mode="keyword").hits
        assert hits and hits[0].path == "f005.txt"


def _damage_segments(kw: Path) -> None:
    for f in kw.iterdir():
        if f.suffix in (".idx", ".term", ".store", ".pos", ".fast", ".fieldnorm"):
            f.write_bytes(b"\xff" * f.stat().st_size)


DAMAGE: dict[str, Callable[[Path], object]] = {
    "deleted": shutil.rmtree,
    "meta-garbage": lambda kw: (kw / "meta.json").write_text("{not json"),
    "segments-garbage": _damage_segments,
    "segments-gone": lambda kw: [f.rename(f.with_suffix(".gone")) for f in kw.glob("*.idx")],
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_keyword_index_is_rebuilt_from_sqlite_with_a_warning(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    corpus, data = tmp_path / "corpus", tmp_path / "data"
    write_corpus(corpus, range(6), 1)
    assert cli(data, "index", str(corpus)).returncode == 0
    DAMAGE[damage](data / "keyword")
    search = cli(data, "search", "m004v1p00", "--mode", "keyword", "--json")
    assert "Traceback" not in search.stderr and "keyword index" in search.stderr  # warned, not silent
    assert "`docshelf index`" in search.stderr  # a read command writes nothing: it says how to rebuild
    settings = load_settings()
    settings.store.data_dir = data
    with caplog.at_level("WARNING"), Shelf(settings, embedder=HashEmbedder()) as shelf:
        # a writable open (the server's) rebuilds derived data at once
        hits = shelf.search("m004v1p00", mode="keyword").hits
    assert "rebuilt from the database" in caplog.text and hits and hits[0].path == "f004.txt"
    DAMAGE[damage](data / "keyword")
    rebuilt = cli(data, "index", "--json")
    assert rebuilt.returncode == 0
    assert '"chunks_embedded": 0' in rebuilt.stdout  # rebuilt from SQLite, nothing re-embedded
    assert versions(data) == dict.fromkeys(range(6), 1)
    settings = load_settings()
    settings.store.data_dir = data
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        for d in range(6):
            hits = shelf.search(f"m{d:03d}v1p03", k=1, mode="keyword").hits
            assert hits and hits[0].path == f"f{d:03d}.txt"


def test_sqlite_busy_is_a_clear_error_and_releases_the_store(settings: Settings, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, range(5), 1)
    with Stages(settings, embedder=HashEmbedder()) as rt:
        rt.indexer().sync("test", [corpus])
        write_corpus(corpus, range(5), 2)
        other = sqlite3.connect(settings.store.data_dir / "docshelf.db", isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")  # another program holding the write lock
        rt.store._conn.execute("PRAGMA busy_timeout=200")  # type: ignore[attr-defined]  # not 30 s
        with pytest.raises(StoreError, match="locked"):
            rt.indexer().sync("test", [corpus])
        other.execute("ROLLBACK")
        other.close()
        assert versions(settings.store.data_dir) == dict.fromkeys(range(5), 1)
        # another thread must get the store: a failed BEGIN may not leave its lock held
        done = threading.Event()

        def resync() -> None:
            rt.indexer().sync("test", [corpus])
            done.set()

        worker = threading.Thread(target=resync)
        worker.start()
        worker.join(timeout=60)
        assert done.is_set(), "the store lock was left held by the failed transaction"
    assert versions(settings.store.data_dir) == dict.fromkeys(range(5), 2)


def test_a_file_another_writer_removes_meanwhile_fails_no_search_or_status(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search that found nothing (its note reads the index's size) and `status` summed the sizes
    of the data dir's files: a temporary file of another process's keyword commit, listed and then
    gone before its size was read, failed them with FileNotFoundError (seen once in a watcher
    test under load)."""
    corpus = tmp_path / "corpus"
    write_corpus(corpus, range(3), 1)
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([corpus], "test")
        size = shelf.status().size_bytes
        vanishing = settings.store.data_dir / "keyword" / ".tmpVANISH"
        vanishing.write_bytes(b"x" * 100)
        real_is_file = Path.is_file

        def is_file(path: Path) -> bool:
            found = real_is_file(path)
            if path.name == ".tmpVANISH":
                path.unlink(missing_ok=True)  # the other writer's commit renames it away now
            return found

        monkeypatch.setattr(Path, "is_file", is_file)
        assert shelf.search("nothing-like-this-anywhere", mode="keyword").hits == []
        vanishing.write_bytes(b"x" * 100)
        assert shelf.status().size_bytes in (size, size + 100)
