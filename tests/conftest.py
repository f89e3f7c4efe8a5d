from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from docshelf.config import Settings, load_settings
from docshelf.embed import HashEmbedder
from docshelf.runtime import Runtime

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "corpus"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never read the developer's own settings or data dir."""
    import os

    for key in list(os.environ):
        if key.startswith("DOCSHELF_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    s = load_settings(collection="test")
    s.store.data_dir = tmp_path / "data"
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
