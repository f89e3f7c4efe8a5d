"""Live indexing: one writer across processes, readers that see new builds, the watcher, compact."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from docshelf.cli import app
from docshelf.config import Settings, load_settings
from docshelf.errors import StoreError
from docshelf.index.lock import WriterLock, lock_owner
from docshelf.index.sync import SyncReport
from docshelf.index.watch import Watcher
from docshelf.shelf import Shelf
from docshelf.testing import Stages

CTX = mp.get_context("spawn")  # no inherited locks or descriptors from the pytest process


def _settings(data_dir: Path, **watch: Any) -> Settings:
    s = load_settings(collection="live")
    s.store.data_dir = data_dir
    s.embed.model = "hash"
    s.chunk.max_tokens = 64
    s.chunk.overlap_tokens = 8
    for key, value in watch.items():
        setattr(s.watch, key, value)
    return s


def _hits(shelf: Shelf, query: str, mode: str = "keyword") -> list[str]:
    return [h.path for h in shelf.search(query, k=5, mode=mode).hits]  # type: ignore[arg-type]


def _wait_for(check: Callable[[], bool], timeout: float = 60.0) -> float:
    """Poll until ``check()`` holds; return the seconds it took (fail at the deadline, generous: a
    loaded CI machine once needed over 15 s for a watcher restart plus its catch-up sync)."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout:
            pytest.fail(f"condition not met within {timeout}s")
        time.sleep(0.02)
    return time.monotonic() - started


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "alpha.md").write_text("# Alpha\n\nThe alpha runbook restarts the ingest queue.\n")
    (folder / "beta.md").write_text("# Beta\n\nBeta notes about certificate rotation.\n")
    return folder


# ----- child processes (module level so spawn can import them) -----
def _hold_lock(data_dir: str, held: Any, release: Any) -> None:
    with WriterLock(Path(data_dir), timeout=5):
        held.set()
        release.wait(30)


def _write_doc(data_dir: str, folder: str, name: str, text: str) -> None:
    (Path(folder) / name).write_text(text)
    with Shelf(_settings(Path(data_dir))) as shelf:
        shelf.index([Path(folder)], "live")


# ----- single writer -----
def test_second_writer_waits_with_a_clear_message_then_succeeds(tmp_path: Path, docs: Path) -> None:
    data = tmp_path / "data"
    held, release = CTX.Event(), CTX.Event()
    holder = CTX.Process(target=_hold_lock, args=(str(data), held, release))
    holder.start()
    try:
        assert held.wait(30)
        with Shelf(_settings(data, lock_timeout_s=0.3)) as shelf:
            started = time.monotonic()
            busy = rf"another docshelf process \(pid {holder.pid}\) is indexing; wait or retry"
            with pytest.raises(StoreError, match=busy):
                shelf.index([docs], "live")
            assert time.monotonic() - started >= 0.3  # it waited before giving up
        release.set()
        holder.join(30)
        assert holder.exitcode == 0
        with Shelf(_settings(data, lock_timeout_s=5)) as shelf:
            report = shelf.index([docs], "live").sync
            assert len(report.added) == 2
            assert _hits(shelf, "certificate") == ["beta.md"]
        assert lock_owner(data)["pid"] == os.getpid()  # type: ignore[index]
    finally:
        release.set()
        holder.join(10)


def test_a_waiting_writer_gets_the_lock_when_the_holder_finishes(tmp_path: Path, docs: Path) -> None:
    data = tmp_path / "data"
    held, release = CTX.Event(), CTX.Event()
    holder = CTX.Process(target=_hold_lock, args=(str(data), held, release))
    holder.start()
    assert held.wait(30)
    timer = threading.Timer(0.5, release.set)
    timer.start()
    with Shelf(_settings(data, lock_timeout_s=20)) as shelf:
        started = time.monotonic()
        assert len(shelf.index([docs], "live").sync.added) == 2
        assert time.monotonic() - started >= 0.4
    holder.join(10)


# ----- readers -----
def test_reader_process_sees_documents_a_writer_process_committed(tmp_path: Path, docs: Path) -> None:
    data = tmp_path / "data"
    with Shelf(_settings(data)) as writer:
        writer.index([docs], "live")
    with Shelf(_settings(data)) as reader:
        assert _hits(reader, "zebraquux") == []
        assert _hits(reader, "zebraquux", "semantic")[0] != "gamma.md"
        child = CTX.Process(
            target=_write_doc,
            args=(str(data), str(docs), "gamma.md", "# Gamma\n\nThe zebraquux procedure for failover.\n"),
        )
        child.start()
        child.join(60)
        assert child.exitcode == 0
        # the same open reader: tantivy reloads, the vector matrix reloads by generation
        assert _hits(reader, "zebraquux") == ["gamma.md"]
        assert _hits(reader, "zebraquux", "semantic")[0] == "gamma.md"
        assert _hits(reader, "zebraquux failover", "hybrid")[0] == "gamma.md"
        assert reader.status().documents == 3


# ----- watcher -----
@pytest.fixture
def watched(tmp_path: Path, docs: Path) -> Iterator[tuple[Watcher, Shelf]]:
    """A watcher of collection "live" (on a writer Shelf) and a reader Shelf with a store of its own."""
    data = tmp_path / "data"
    writer = Shelf(_settings(data, debounce_ms=100, rescan_s=0))
    writer.index([docs], "live")
    watcher = writer.watcher("live", [docs])
    reader = Shelf(_settings(data))
    watcher.start()
    try:
        _wait_for(lambda: watcher.health["state"] == "running")
        yield watcher, reader
    finally:
        watcher.stop()
        reader.close()
        writer.close()


def test_watcher_indexes_creates_edits_and_deletes(watched: tuple[Watcher, Shelf], docs: Path) -> None:
    _, reader = watched
    (docs / "new.md").write_text("# New\n\nA quokkafield checklist.\n")
    _wait_for(lambda: _hits(reader, "quokkafield") == ["new.md"])

    (docs / "new.md").write_text("# New\n\nA wombatrail checklist.\n")
    took = _wait_for(lambda: _hits(reader, "wombatrail") == ["new.md"])
    assert _hits(reader, "quokkafield") == []
    print(f"edit-to-searchable latency (hash embedder): {took * 1000:.0f} ms")

    (docs / "new.md").unlink()
    _wait_for(lambda: _hits(reader, "wombatrail") == [])
    assert "new.md" not in {d.path for d in reader.list_documents("live")}
    _wait_for(lambda: reader.status().watch["live"]["syncs"] >= 4)  # written after the sync
    health = reader.status().watch["live"]
    assert health["events"] >= 3 and health["last_event_at"] and health["last_sync"]["removed"] == 1
    assert health["restarts"] == 0 and health["alive"] is True


def test_watcher_embeds_after_its_keyword_syncs_and_resumes_what_a_run_left(
    tmp_path: Path, docs: Path
) -> None:
    data = tmp_path / "data"
    writer = Shelf(_settings(data, debounce_ms=100, rescan_s=0))
    reader = Shelf(_settings(data))

    def missing() -> int:
        return sum(c.chunks - (c.embedded or 0) for c in reader.status().collections)

    try:
        writer.index([docs], "live", keyword_only=True)  # as an interrupted `index` leaves it
        assert missing() > 0
        watcher = writer.watcher("live", [docs])
        watcher.start()
        try:
            _wait_for(lambda: missing() == 0)  # resumed at start
            (docs / "late.md").write_text("# Late\n\nThe bandicootbay roster.\n")
            _wait_for(lambda: _hits(reader, "bandicootbay") == ["late.md"])
            _wait_for(lambda: missing() == 0)
            assert _hits(reader, "bandicootbay", "semantic")[0] == "late.md"
            _wait_for(lambda: bool((reader.status().watch["live"].get("vectors") or {}).get("filled")))
        finally:
            watcher.stop()
    finally:
        reader.close()
        writer.close()


def test_watcher_sees_node_modules_and_a_dotted_folder_moved_away(
    watched: tuple[Watcher, Shelf], docs: Path, tmp_path: Path
) -> None:
    """watchfiles' default filter dropped node_modules/ and __pycache__/ (which `index` reads),
    and a folder named like a file (`v1.2/`) moved out of the root stayed indexed."""
    _, reader = watched
    (docs / "node_modules" / "pkg").mkdir(parents=True)
    (docs / "node_modules" / "pkg" / "README.md").write_text("# Pkg\n\nThe numbatcove module.\n")
    _wait_for(lambda: _hits(reader, "numbatcove") == ["node_modules/pkg/README.md"])
    (docs / "v1.2").mkdir()
    (docs / "v1.2" / "notes.md").write_text("# Notes\n\nRelease bilbyharbour notes.\n")
    _wait_for(lambda: _hits(reader, "bilbyharbour") == ["v1.2/notes.md"])
    (docs / "v1.2").rename(tmp_path / "trash-v1.2")
    _wait_for(lambda: _hits(reader, "bilbyharbour") == [])
    (docs / ".hidden.md").write_text("# Hidden\n\nno dunnartbay here\n")  # never a document
    (docs / "after.md").write_text("# After\n\nThe potoroopark page.\n")
    _wait_for(lambda: _hits(reader, "potoroopark") == ["after.md"])
    assert _hits(reader, "dunnartbay") == []


def test_serve_watch_picks_up_a_collection_added_while_it_runs(tmp_path: Path, docs: Path) -> None:
    """`serve --watch` chose its collections once, at start: one added later (ingest, `index DIR
    -c NEW`, the first index of a server started without one) was never watched."""
    from docshelf.shelf import Shelf, watching

    settings = _settings(tmp_path / "data", debounce_ms=100, rescan_s=0)
    said: list[str] = []
    server = Shelf(settings)  # no index yet
    stop = watching.watch_collections(server._parts, said.append, every_s=0.1)
    try:
        other = tmp_path / "other"
        other.mkdir()
        (other / "first.md").write_text("# First\n\nThe wallabyreef page.\n")
        with Shelf(settings) as cli:  # `docshelf index other -c later` from another process
            cli.index([other], "later")
        with Shelf(_settings(tmp_path / "data")) as reader:
            _wait_for(lambda: reader.status().watch.get("later", {}).get("state") == "running")
            (other / "second.md").write_text("# Second\n\nThe quollcreek page.\n")
            _wait_for(lambda: _hits(reader, "quollcreek") == ["second.md"])
    finally:
        stop()
        server.close()
    assert said == []


def test_serve_watch_is_not_blinded_by_one_failed_open(
    tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its own store kept the first error it met opening the index ("database is locked" while
    another process created it), so no collection was ever watched until a restart."""
    import docshelf.store as stores
    from docshelf.shelf import Shelf, watching

    settings = _settings(tmp_path / "data", debounce_ms=100, rescan_s=0)
    with Shelf(settings) as cli:
        cli.index([docs], "first")
    real, failed = stores.open_store, threading.Event()

    def once_locked(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == "docshelf-watch-start" and not failed.is_set():
            failed.set()
            raise StoreError("cannot open the index at x: database is locked; check ...")
        return real(*args, **kwargs)

    server = Shelf(settings)
    assert server.collections() == ["first"]  # the server's own store is open: the watcher's fails
    monkeypatch.setattr(stores, "open_store", once_locked)
    said: list[str] = []
    stop = watching.watch_collections(server._parts, said.append, every_s=0.1)
    try:
        with Shelf(_settings(tmp_path / "data")) as reader:
            _wait_for(lambda: reader.status().watch.get("first", {}).get("state") == "running")
    finally:
        stop()
        server.close()
    assert failed.is_set() and said == []


def test_dead_watcher_thread_is_restarted_and_reported(
    watched: tuple[Watcher, Shelf], docs: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    watcher, reader = watched
    real = watcher.sync_fn
    calls = {"n": 0}

    def flaky() -> SyncReport:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("boom in the sync callback")
        return real()

    watcher.sync_fn = flaky
    watcher.changed_fn = lambda paths: flaky()
    (docs / "crash.md").write_text("# Crash\n\nThe kestrelbox file.\n")
    # the first sync kills the worker; the supervisor restarts it and its catch-up sync indexes
    _wait_for(lambda: _hits(reader, "kestrelbox") == ["crash.md"])
    assert "watcher thread died" in caplog.text and "boom in the sync callback" in caplog.text
    health = reader.status().watch["live"]
    assert health["restarts"] == 1
    assert "boom in the sync callback" in health["last_error"]
    assert watcher.worker_alive

    # and `docshelf status` shows it
    cli = CliRunner()
    result = cli.invoke(app, ["status", "--json", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["watch"]["live"]["restarts"] == 1
    result = cli.invoke(app, ["status", "--data-dir", str(tmp_path / "data")])
    assert "1 restarts" in result.stdout and "boom" in result.stdout


# ----- WAL, compact, stale -----
def test_wal_is_truncated_after_sync_and_compact_keeps_the_index_answering(
    tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    with Stages(_settings(data)) as rt:
        indexer = rt.indexer()
        indexer.sync("live", [docs])
        assert (data / "docshelf.db-wal").stat().st_size == 0
        assert indexer.forget("live", "alpha.md") == ["alpha.md"]
        assert not rt.store.keyword.writing  # the tantivy writer lock is handed back
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    result = CliRunner().invoke(app, ["compact", "--json", "--data-dir", str(data)])
    assert result.exit_code == 0, result.stderr
    sizes = json.loads(result.stdout)
    assert sizes["size_bytes_after"] > 0
    with Stages(_settings(data)) as rt:
        searcher = rt.searcher()
        assert [h.path for h in searcher.search("certificate", k=5, mode="keyword").hits] == ["beta.md"]
        assert not searcher.search("ingest queue", k=5, mode="keyword").hits
        assert rt.store.stats().keyword_generation == rt.store.generation()


def test_status_reports_stale_documents_and_index_age(tmp_path: Path, docs: Path) -> None:
    data = tmp_path / "data"
    before = time.time()
    with Shelf(_settings(data)) as shelf:
        shelf.index([docs], "live")
    cli = CliRunner()
    status = json.loads(cli.invoke(app, ["status", "--json", "--data-dir", str(data)]).stdout)
    # the age of this sync, not of another (nor a fixed bound a loaded machine could pass): at
    # most the time since just before it started (status rounds to 0.1 s)
    assert status["stale_documents"] == 0 and 0 <= status["index_age"] <= time.time() - before + 0.05
    (docs / "alpha.md").write_text("# Alpha\n\nchanged on disk\n")
    (docs / "beta.md").unlink()
    status = json.loads(cli.invoke(app, ["status", "--json", "--data-dir", str(data)]).stdout)
    assert status["stale_documents"] == 2
    # the whole folder gone (or a shared index served where the corpus is not): one entry, not one per file
    docs.rename(tmp_path / "elsewhere")
    with Shelf(_settings(data)) as shelf:
        gone = shelf.status().stale
    assert gone == [
        {"collection": "live", "path": str(docs.resolve()), "reason": "folder not on this machine"}
    ]


def test_status_counts_new_files_the_index_would_pick_up(
    tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file added since the last sync was never reported: status said nothing was stale."""
    data = tmp_path / "data"
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.setenv("DOCSHELF_SOURCES__MAX_FILE_MB", "0.001")  # recorded with the collection
    (docs / ".gitignore").write_text("build/\n")
    (docs / "draft.md").write_text("---\nrag: false\n---\n# Draft\n\nnot for the index\n")
    cli = CliRunner()
    assert cli.invoke(app, ["index", str(docs), "--data-dir", str(data)]).exit_code == 0
    monkeypatch.delenv("DOCSHELF_SOURCES__MAX_FILE_MB")  # status reads the recorded cap, not this one
    (docs / "new.md").write_text("# New\n\nA new page.\n")
    (docs / "sub").mkdir()
    (docs / "sub" / "deep.txt").write_text("a new note in a new folder\n")
    (docs / "build").mkdir()
    (docs / "build" / "out.md").write_text("ignored by .gitignore\n")
    (docs / ".hidden.md").write_text("hidden: never a document\n")
    (docs / "big.md").write_text("x" * 4096)  # over the cap: the index skips it
    (docs / "photo.xyz").write_bytes(b"no parser")
    (docs / "alpha.md").write_text("# Alpha\n\nchanged on disk\n")
    (docs / "beta.md").unlink()
    (docs / "late-draft.md").write_text("---\nrag: false\n---\n# Late\n")  # new until a sync reads it

    status = json.loads(cli.invoke(app, ["status", "--json", "--data-dir", str(data)]).stdout)
    assert status["stale_documents"] == 2 and status["new_files"] == 3
    assert sorted((s["path"], s["reason"]) for s in status["stale"]) == [
        ("alpha.md", "modified"), ("beta.md", "missing or unreadable"), ("late-draft.md", "new"),
        ("new.md", "new"), ("sub/deep.txt", "new"),
    ]  # fmt: skip
    out = cli.invoke(app, ["status", "--stale", "--data-dir", str(data)]).stdout
    assert "on disk since indexed: 3 new, 1 changed, 1 missing" in " ".join(out.split())
    assert "default: sub/deep.txt: new" in out
    assert cli.invoke(app, ["index", "--data-dir", str(data)]).exit_code == 0
    status = json.loads(cli.invoke(app, ["status", "--json", "--data-dir", str(data)]).stdout)
    assert status["new_files"] == 0 and status["stale"] == []
