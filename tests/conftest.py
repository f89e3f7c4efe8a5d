from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.shelf import Shelf
from docshelf.testing import Stages

pytest_plugins = ["docshelf.testing.fixtures"]

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "corpus"

_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")

# The slow tier (`pytest -m "not slow"` leaves it out; `pytest -q` runs it): whole modules that run
# long processes (the soak, SIGKILL trials, MCP clients over Node, real embedding models,
# PostgreSQL replicas). Tests elsewhere are marked by rule below or by an explicit mark.
_SLOW_MODULES = {
    "test_soak.py",  # two servers and a watcher under churn
    "reliability/test_crash.py",  # SIGKILL trials of `docshelf index`
    "test_server_e2e.py",  # the MCP Inspector CLI and the SDK client over real processes
    "test_server_clients_next.py",  # Inspector 2.x and the conformance suite on Node 22
    "test_e5.py",  # the real multilingual-e5 model (conversion, C engine, ONNX)
    "test_models.py",  # the real USE model
    "test_replication.py",  # a PostgreSQL primary and replicas
    "test_search_helper.py",  # the CLI and its search helper as processes, started and timed out
    "reliability/test_cli_exit_codes.py",  # the CLI as a process for each exit code
    "reliability/test_faults.py",  # a full disk (RLIMIT_FSIZE, a tmpfs) and damaged files, in processes
    "test_cli_session.py",  # docs/cli.md's session replayed in a pseudo-terminal, command by command
    "reliability/test_read_only.py",  # the CLI and the server as processes of another user (setpriv)
}
_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark slow: the modules above, every PostgreSQL twin (``backend`` = "postgres") and every
    test on a PostgreSQL server, the web page's tests in a browser (Chromium, ``browser``) and
    the OCR tests that run Tesseract."""
    slow = pytest.mark.slow
    for item in items:
        module = item.path.relative_to(_TESTS).as_posix() if item.path.is_relative_to(_TESTS) else ""
        callspec = getattr(item, "callspec", None)
        params = callspec.params if callspec is not None else {}
        fixtures = getattr(item, "fixturenames", ())
        if (
            module in _SLOW_MODULES
            or params.get("backend") == "postgres"
            or "pg_server" in fixtures
            or "browser" in fixtures
            or any("Tesseract" in str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif"))
        ):
            item.add_marker(slow)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never read the developer's own settings or data dir, nor go through their proxy."""
    import os

    for key in list(os.environ):
        if key.startswith("DOCSHELF_") or key.lower() in _PROXY_VARS:
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


@pytest.fixture
def settings(shelf_settings: Settings) -> Settings:
    """This test's settings: hash embedder, small chunks, PostgreSQL when ``backend`` says so."""
    return shelf_settings


@pytest.fixture
def stages(settings: Settings) -> Iterator[Stages]:
    """The stages wired by hand, for tests of a stage's own internals (user-visible behaviour is
    tested through the ``shelf`` fixture)."""
    with Stages(settings, embedder=HashEmbedder()) as wired:
        yield wired


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A private copy of the sample corpus."""
    dest = tmp_path / "corpus"
    shutil.copytree(SAMPLES, dest)
    return dest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def indexed_stages(stages: Stages, corpus: Path) -> Stages:
    """The stages with the sample corpus synced into collection "test" by the indexer itself."""
    stages.indexer().sync("test", [corpus])
    return stages


@pytest.fixture
def plain_corpus(corpus: Path) -> Path:
    """The ``corpus`` copy without its own docshelf.toml (200-token chunks, collection "samples"):
    ``Shelf.index`` records the test's settings for it, as for a user's folder that has none."""
    (corpus / "docshelf.toml").unlink()
    return corpus


@pytest.fixture
def indexed_shelf(shelf: Shelf, plain_corpus: Path) -> Shelf:
    """The ``shelf`` with the sample corpus (``plain_corpus``: the test's settings, 64-token
    chunks, are the ones recorded) indexed as collection "test" through ``Shelf.index``."""
    shelf.index([plain_corpus], "test")
    return shelf
