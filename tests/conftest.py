from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.testing import Stages

pytest_plugins = ["docshelf.testing.fixtures"]

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "corpus"

_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


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
def runtime(settings: Settings) -> Iterator[Stages]:
    rt = Stages(settings, embedder=HashEmbedder())
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
def indexed(runtime: Stages, corpus: Path) -> Stages:
    """The runtime with the sample corpus indexed as collection "test"."""
    runtime.indexer().sync("test", [corpus])
    return runtime
