"""The MCP server while it writes: reads go on, cancel lets go of every lock, ingest does only its target."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import anyio
import pytest
from mcp import Client

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.embed.base import Vectors
from docshelf.server import create_server
from docshelf.shelf import Shelf
from mcpkit import data, error_text, writer_free

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("backend")]


class GatedEmbedder(HashEmbedder):
    """Hash vectors; each document batch takes ``delay`` seconds (a busy model) until set to 0."""

    def __init__(self) -> None:
        super().__init__()
        self.delay = 0.0

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        time.sleep(self.delay)
        return super().embed_documents(texts)


def _files(folder: Path, n: int, word: str = "topic") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"f{i:03}.md").write_text(f"# File {i}\n\nNotes about {word} {i}, long enough to matter.\n")
    return folder


@pytest.fixture
def gated(
    settings: Settings, plain_corpus: Path, tmp_path: Path
) -> Iterator[tuple[Settings, Shelf, GatedEmbedder]]:
    settings.embed.batch_size = 1  # a batch every few chunks: many small swaps
    settings.server.allow_ingest = [tmp_path]
    embedder = GatedEmbedder()
    with Shelf(settings, embedder=embedder) as shelf:
        shelf.index([plain_corpus], "test")
        embedder.delay = 0.2
        yield settings, shelf, embedder


async def test_reads_answer_while_an_ingest_writes(
    gated: tuple[Settings, Shelf, GatedEmbedder], tmp_path: Path
) -> None:
    """search, read_passage, list_documents, index_status and resources/read sent during an ingest
    answer before it ends (they used to wait for the whole job behind one lock)."""
    settings, shelf, embedder = gated
    folder = _files(tmp_path / "many", 40)
    started, finished = anyio.Event(), anyio.Event()

    async def progress(done: float, total: float | None, message: str | None) -> None:
        started.set()

    async with Client(create_server(settings, shelf)) as c:
        hit = data(await c.call_tool("search", {"query": "rolling back", "k": 1}))["hits"][0]

        async def ingest() -> None:
            await c.call_tool("ingest", {"path": str(folder)}, progress_callback=progress)
            finished.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(ingest)
            await started.wait()
            assert data(await c.call_tool("search", {"query": "deploy", "k": 2}))["hits"]
            assert data(await c.call_tool("read_passage", {"chunk_id": hit["chunk_id"]}))["passages"]
            assert data(await c.call_tool("list_documents", {}))["total"] >= 8
            assert data(await c.call_tool("index_status", {}))["documents"] >= 8
            assert (await c.read_resource("docshelf://test/runbooks/deploy.md")).contents
            assert not finished.is_set()  # every read came back while the job was still writing
            embedder.delay = 0.0


async def test_cancelled_ingest_releases_every_lock(
    gated: tuple[Settings, Shelf, GatedEmbedder], tmp_path: Path
) -> None:
    """A client that stops reading progress and cancels: the job stops at the next file, the writer
    and keyword locks are free, the index is consistent and the next ingest finishes the folder."""
    settings, shelf, embedder = gated
    folder = _files(tmp_path / "many", 30)
    started, release = anyio.Event(), anyio.Event()

    async def stuck(done: float, total: float | None, message: str | None) -> None:
        started.set()
        await release.wait()  # a client busy elsewhere: progress notifications back up

    async with Client(create_server(settings, shelf)) as c:
        with anyio.move_on_after(30) as scope:
            async with anyio.create_task_group() as tg:
                args = {"path": str(folder)}
                tg.start_soon(lambda: c.call_tool("ingest", args, progress_callback=stuck))
                await started.wait()
                tg.cancel_scope.cancel()
        assert not scope.cancelled_caught
        with anyio.fail_after(20):
            while not writer_free(settings.store.data_dir):
                await anyio.sleep(0.05)
        release.set()
        embedder.delay = 0.0
        status = data(await c.call_tool("index_status", {}))
        assert status["keyword_index_in_sync"] is True
        done = data(await c.call_tool("ingest", {"path": str(folder)}))
        assert done["added"] + done["unchanged"] == 30 and done["removed"] == 0


async def test_ingest_does_exactly_its_target(
    settings: Settings, indexed_shelf: Shelf, corpus: Path, tmp_path: Path
) -> None:
    """ingest(folder) neither removes documents of other roots nor counts their files; a new folder
    gets its own collection, and forget removes a whole root."""
    (corpus / "runbooks" / "deploy.md").unlink()  # changed on disk, but not what we ingest
    folder = _files(tmp_path / "handbook", 5)
    settings.server.allow_ingest = [tmp_path]
    totals: list[float | None] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        totals.append(total)

    async with Client(create_server(settings, indexed_shelf)) as c:
        out = data(await c.call_tool("ingest", {"path": str(folder)}, progress_callback=progress))
        assert out["collection"] == "handbook" and out["added"] == 5 and out["removed"] == 0
        assert totals and set(totals) == {5}
        docs = data(await c.call_tool("list_documents", {"collection": "test"}))["documents"]
        assert "runbooks/deploy.md" in {d["path"] for d in docs}  # another root's document stays
        again = data(await c.call_tool("ingest", {"path": str(folder / "f001.md")}))
        assert again["unchanged"] == 1 and again["added"] == again["removed"] == 0
        gone = data(await c.call_tool("forget", {"document": str(folder)}))
        assert gone["removed"] == 5
        status = data(await c.call_tool("index_status", {}))
        assert all(str(folder) not in col["roots"] for col in status["collections"])
        assert data(await c.call_tool("reindex", {}))["added"] == 0  # the root does not come back


async def test_ingest_only_under_allowed_folders(
    settings: Settings, indexed_shelf: Shelf, corpus: Path, tmp_path: Path
) -> None:
    """By default only inside indexed roots; `~`, /proc and other folders are refused unopened."""
    outside = _files(tmp_path / "elsewhere", 2)
    async with Client(create_server(settings, indexed_shelf)) as c:
        for target in (str(outside), str(Path.home()), "/proc/self/fd"):
            assert "refused" in error_text(await c.call_tool("ingest", {"path": target}))
        assert data(await c.call_tool("ingest", {"path": str(corpus / "notes")}))["collection"] == "test"
        roots = data(await c.call_tool("index_status", {}))["collections"][0]["roots"]
        assert roots == [str(corpus.resolve())]
    settings.server.allow_ingest = [tmp_path / "elsewhere"]
    async with Client(create_server(settings, indexed_shelf)) as c:
        assert data(await c.call_tool("ingest", {"path": str(outside)}))["added"] == 2
        assert "refused" in error_text(await c.call_tool("ingest", {"path": "/proc/self/fd"}))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
async def test_a_file_swapped_for_a_fifo_or_grown_is_not_read(
    settings: Settings, shelf: Shelf, plain_corpus: Path
) -> None:
    """read_document and the document resource answer from the index instead of blocking on a FIFO
    or reading a file that grew past sources.max_file_mb."""
    corpus = plain_corpus
    settings.sources.max_file_mb = 0.01
    shelf.index([corpus], "test")
    deploy = corpus / "runbooks" / "deploy.md"
    deploy.unlink()
    os.mkfifo(deploy)
    grown = corpus / "notes" / "glossary.txt"
    with grown.open("a") as fh:
        fh.write("padding line\n" * 2000)
    async with Client(create_server(settings, shelf)) as c:
        with anyio.fail_after(20):
            out = data(await c.call_tool("read_document", {"document": "runbooks/deploy.md"}))
            assert out["source"] == "index" and "FIFO" in out["note"] and "Rolling back" in out["text"]
            big = data(await c.call_tool("read_document", {"document": "notes/glossary.txt"}))
            assert big["source"] == "index" and "too large" in big["note"]
            assert (await c.read_resource("docshelf://test/runbooks/deploy.md")).contents
            assert data(await c.call_tool("search", {"query": "deploy"}))["hits"]


def test_files_without_a_parser_are_never_opened(
    settings: Settings, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parser is chosen by name before any read (a /proc file would block the sniff)."""
    import docshelf.sources.walk as walk

    (corpus / "notes" / "dump.unknownext").write_text("not a document")
    opened: list[str] = []
    sniff = walk._looks_binary
    monkeypatch.setattr(walk, "_looks_binary", lambda p: opened.append(p.name) or sniff(p))
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        report = shelf.index([corpus]).sync
    assert "dump.unknownext" not in opened
    assert any(s.path == "notes/dump.unknownext" and "no parser" in s.reason for s in report.skipped)


def test_reader_connections_end_with_their_threads(settings: Settings, corpus: Path) -> None:
    """Handler threads come and go (anyio retires idle ones): their SQLite readers are closed."""
    import gc
    import threading

    if settings.store.url:
        pytest.skip("PostgreSQL readers come from the pool")
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([corpus])
        for _ in range(20):
            thread = threading.Thread(target=lambda: shelf.search("deploy", mode="keyword"))
            thread.start()
            thread.join()
        gc.collect()
        assert len(shelf._parts.store._readers) <= 2  # type: ignore[attr-defined]  # this thread's, maybe one more


def test_closing_the_store_leaves_another_threads_reader_to_it(settings: Settings, corpus: Path) -> None:
    """A freshness thread mid-read while the store closes: its connection must not be closed under it
    (that crashed the process); its next read is refused with a StoreError instead."""
    import threading

    from docshelf.errors import StoreError

    if settings.store.url:
        pytest.skip("PostgreSQL readers come from the pool")
    shelf = Shelf(settings, embedder=HashEmbedder())
    shelf.index([corpus])
    store = shelf._parts.store
    got, closed, results = threading.Event(), threading.Event(), []

    def reader() -> None:
        conn = store._readers.get()  # type: ignore[attr-defined]
        got.set()
        closed.wait(10)
        results.append(conn.execute("SELECT count(*) FROM documents").fetchone()[0])  # still usable
        try:
            store.generation()
        except StoreError as exc:
            results.append(str(exc))

    thread = threading.Thread(target=reader)
    thread.start()
    got.wait(10)
    shelf.close()
    closed.set()
    thread.join(10)
    assert results[0] > 0 and "was closed" in results[1]
