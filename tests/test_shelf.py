"""The Shelf: the public Python API and the one use-case layer under the CLI and the MCP server."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

import docshelf
from docshelf.config import Settings
from docshelf.embed import HashEmbedder, Vectors
from docshelf.errors import AccessError, ConfigError, DocshelfError, NotFoundError, SourceError
from docshelf.shelf import SearchRequest, Shelf
from docshelf.testing import MemoryStore


def test_public_api() -> None:
    import docshelf.shelf as shelf_pkg

    assert {"Shelf", "SearchRequest", "DocshelfError", "load_settings"} <= set(docshelf.__all__)
    assert docshelf.Shelf is Shelf and docshelf.SearchRequest is SearchRequest
    for name in shelf_pkg.__all__:
        assert getattr(shelf_pkg, name) is not None
    for name in docshelf.__all__:
        assert getattr(docshelf, name) is not None


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def shelf(request: pytest.FixtureRequest, settings: Settings, tmp_path: Path) -> Shelf:
    """A shelf over the in-memory fake and over the real stores (SQLite and PostgreSQL)."""
    if request.param == "memory":
        from docshelf.analyze import Analyzer

        store = MemoryStore(tmp_path / "mem", Analyzer(settings.analyze.languages))
        return Shelf(settings, embedder=HashEmbedder(), store=store)
    if request.param == "postgres":
        settings.store.url = request.getfixturevalue("pg_database")
        settings.store.backend = "postgres"
    return Shelf(settings, embedder=HashEmbedder())


def test_index_search_read_forget(shelf: Shelf, corpus: Path) -> None:
    with shelf:
        done = shelf.index([corpus], "test")
        assert done.sync.collection == "test" and len(done.sync.added) == 8
        assert done.settings_origin == str(corpus / "docshelf.toml")  # the corpus's own file

        result = shelf.search("page someone for a sev-1", k=3)
        top = result.hits[0]
        assert top.path == "runbooks/incident-response.md" and top.citation.startswith(top.path + ":")

        window = shelf.read_passage(top.chunk_id, before=1, after=1)
        assert any(p.is_target and p.chunk.id == top.chunk_id for p in window.passages)
        text = shelf.read_range(top.path, lines=(top.line_start, top.line_end))
        target = next(p for p in window.passages if p.is_target)
        assert target.chunk.text.split()[0] in text.text
        assert text.line_start == top.line_start and text.source == "file"

        cut = shelf.read_range(top.path, max_tokens=20)
        assert cut.rest is not None and cut.rest[0] == cut.char_end
        # ranges that name nothing: a bare ValueError, the whole document, empty text, no passage
        whole = shelf.read_range(top.path)
        for bad in ({"lines": (-1, 3)}, {"lines": (0, 0)}, {"lines": (5, 2)}, {"chars": (-4, 2)},
                    {"chars": (9, 3)}, {"chars": (whole.total_chars, whole.total_chars)},
                    {"max_tokens": 0}):  # fmt: skip
            with pytest.raises(DocshelfError):
                shelf.read_range(top.path, **bad)  # type: ignore[arg-type]
        with pytest.raises(ConfigError):
            shelf.read_passage(top.chunk_id, before=-1)

        names = [d.path for d in shelf.list_documents("test", "notes/*")]
        assert "notes/glossary.txt" in names and all(n.startswith("notes/") for n in names)
        status = shelf.status()
        assert status.documents == 8
        assert status.collections[0].settings_origin == str(corpus / "docshelf.toml")

        gone = shelf.forget("notes/glossary.txt")
        assert gone.removed == ["notes/glossary.txt"] and gone.collection == "test"
        with pytest.raises(NotFoundError):
            shelf.forget("notes/glossary.txt")
        root = shelf.forget(str(corpus))
        assert root.root == str(corpus.resolve()) and len(root.removed) == 7
        assert shelf.status().documents == 0


def test_search_request_filters(shelf: Shelf, corpus: Path) -> None:
    with shelf:
        shelf.index([corpus], "test")
        req = SearchRequest("service reliability", k=5, mode="keyword", path_glob="notes/*")
        hits = shelf.search(req).hits
        assert hits and all(h.path.startswith("notes/") for h in hits)
        assert not shelf.search(SearchRequest("service", path_glob="nowhere/*")).hits
        # k=0 gave the default 10, k=-1 one hit, k=10**20 an OverflowError, "fuzzy" 0 hits and a
        # note to try semantic, and collections="test" searched the collections t, e, s
        for bad in ({"k": 0}, {"k": -1}, {"k": 10**20}, {"mode": "fuzzy"}, {"min_confidence": 2}):
            with pytest.raises(ConfigError):
                shelf.search("service", **bad)
        one = shelf.search("service", collections="test", mode="keyword")
        assert one.hits and {h.collection for h in one.hits} == {"test"}


def test_bad_targets_are_clear_errors(shelf: Shelf, corpus: Path, tmp_path: Path) -> None:
    with shelf:
        with pytest.raises(SourceError, match="does not exist"):
            shelf.index([tmp_path / "missing"])
        shelf.index([corpus], "test")
        outside = tmp_path / "elsewhere.md"
        outside.write_text("# x\n", "utf-8")
        with pytest.raises(Exception, match="not under an indexed folder"):
            shelf.index([outside])
        with pytest.raises(AccessError):
            shelf.read_range("../etc/passwd")


def test_a_file_target_resyncs_its_own_collection(shelf: Shelf, corpus: Path) -> None:
    with shelf:
        shelf.index([corpus], "test")
        page = corpus / "notes" / "glossary.txt"
        page.write_text(page.read_text("utf-8") + "\nZebra crossing: a marked path.\n", "utf-8")
        done = shelf.index([page])
        assert done.sync.collection == "test" and done.sync.updated == ["notes/glossary.txt"]


def test_the_documented_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The example of docs/api.md, as it stands there, through the public API (hash embedder)."""
    root = Path(__file__).resolve().parents[1]
    doc = (root / "docs" / "api.md").read_text("utf-8")
    block = doc.split("```python\n", 1)[1].split("```", 1)[0]
    assert 'Path("/tmp/my-index")' in block
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.chdir(root)
    exec(compile(block.replace('"/tmp/my-index"', repr(str(tmp_path / "data"))), "api.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "samples 8 added"
    assert printed[1].split()[1].startswith("runbooks/")


class _GatedEmbedder(HashEmbedder):
    """Hash vectors; the first query (the loader's warm-up) waits until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.release = threading.Event(), threading.Event()

    def embed_query(self, text: str) -> Vectors:
        if not self.entered.is_set():
            self.entered.set()
            self.release.wait(30)
        return super().embed_query(text)


def test_closing_while_the_model_loads_logs_no_failure(
    settings: Settings, corpus: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A started shelf closed while its model warmed up logged "semantic search is off: the index
    at ... was closed" once the warm-up ended: the loader went on to check the model against the
    store that close() had just shut. close() now waits for the warm-up to end."""
    first = Shelf(settings, embedder=HashEmbedder())
    first.index([corpus])
    first.close()
    gated = _GatedEmbedder()
    shelf = Shelf(settings, embedder=gated)
    shelf.start()
    assert gated.entered.wait(30)
    closer = threading.Thread(target=shelf.close)
    closer.start()
    assert shelf._parts._closing.wait(30)  # close() has begun; the warm-up is still running
    gated.release.set()
    closer.join(30)
    assert not closer.is_alive() and shelf._parts._model_ready.is_set()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


_EXIT_DURING_WARM_UP = """
import sys, threading
from pathlib import Path
import onnxruntime
from docshelf.config import load_settings
from docshelf.shelf import Shelf

inside = threading.Event()
real_init = onnxruntime.InferenceSession.__init__

def init(self, *args, **kwargs):
    inside.set()  # the loader's warm-up is inside onnxruntime now (a session takes ~0.2 s)
    real_init(self, *args, **kwargs)

onnxruntime.InferenceSession.__init__ = init
settings = load_settings()
settings.store.data_dir = Path(sys.argv[1])
settings.embed.model = "e5"
settings.embed.cache_dir = Path(sys.argv[2])
shelf = Shelf(settings)
shelf.start()
assert inside.wait(300)
shelf.close()
"""


@pytest.mark.slow  # the real e5 model in onnxruntime
def test_a_process_that_closes_while_the_model_loads_exits_cleanly(
    settings: Settings, tmp_path: Path
) -> None:
    """`docshelf serve` whose client hung up while the e5 model warmed up died of SIGABRT
    ("terminate called without an active exception"): close() left the loader thread inside
    onnxruntime, and the interpreter exited under it. Real e5 in onnxruntime; the process closes
    its shelf while the session is being built, then exits."""
    import subprocess
    import sys

    script = tmp_path / "exit_during_warm_up.py"
    script.write_text(_EXIT_DURING_WARM_UP, encoding="utf-8")
    cache = settings.embed.cache_dir.expanduser()  # the e5 graph is built there once, then reused
    for n in range(3):
        run = subprocess.run(
            [sys.executable, str(script), str(tmp_path / f"data{n}"), str(cache)],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert run.returncode == 0 and "terminate called" not in run.stderr, (run.returncode, run.stderr)


def test_a_started_shelf_loads_what_a_first_search_needs(settings: Settings, corpus: Path) -> None:
    """A server's first keyword search loaded the language vote's lists, the stemmers and the
    compound splitter on its own time (134 -> 37 ms through MCP after an idle start); the loading
    thread now does that after the model, so semantic searches do not wait for it."""
    first = Shelf(settings, embedder=HashEmbedder())
    first.index([corpus])
    first.close()
    shelf = Shelf(settings, embedder=HashEmbedder())
    try:
        shelf.start()
        assert shelf._parts._thread is not None
        shelf._parts._thread.join(60)
        stemmers = shelf._parts.analyzer._stemmers
        assert {"english", "german", "french"} <= set(stemmers), set(stemmers)
    finally:
        shelf.close()


@pytest.mark.parametrize("started", [True, False], ids=["server", "one-shot"])
def test_an_index_that_failed_to_open_is_opened_again_later(
    settings: Settings, corpus: Path, monkeypatch: pytest.MonkeyPatch, started: bool
) -> None:
    """A server that met its index unreachable once (PostgreSQL still starting, the file locked by
    a process creating it) kept that error for every later call until it was restarted."""
    import docshelf.shelf.parts as parts_module
    import docshelf.store as stores

    with Shelf(settings, embedder=HashEmbedder()) as first:
        first.index([corpus])
    real, fails = stores.open_store, [1]

    def unreachable_once(*args: object, **kwargs: object) -> object:
        if fails:
            fails.pop()
            raise docshelf.StoreError("cannot open the index at x: the server is starting; retry")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(stores, "open_store", unreachable_once)
    monkeypatch.setattr(parts_module, "_REOPEN_S", 0.0)  # not seconds later: at once, for the test
    shelf = Shelf(settings, embedder=HashEmbedder())
    try:
        if started:  # the loading thread meets the failure
            shelf.start()
            assert "starting" in (shelf.wait_for_model(30) or "")  # no model either
        else:  # the first call does
            with pytest.raises(docshelf.StoreError, match="starting"):
                shelf.search("page someone", mode="keyword")
        assert shelf.search("page someone", mode="keyword").hits  # opened on the next call
        if started:  # and the model follows, as after a start that went well
            assert shelf.wait_for_model(30) is None
        assert "semantic" in shelf.search("page someone", mode="hybrid").hits[0].ranks
    finally:
        shelf.close()
