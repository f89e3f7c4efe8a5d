"""Settings for a throwaway test index."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docshelf.config import Settings

__all__ = ["hash_settings"]


def hash_settings(data_dir: Path, url: str | None = None, collection: str = "test") -> Settings:
    """Settings for a test index: the hash embedder and small chunks (a few lines of text already
    make several), in ``data_dir``, or in the PostgreSQL database at ``url``."""
    from docshelf.config import load_settings

    s = load_settings(collection=collection)
    s.store.data_dir = data_dir
    if url:
        s.store.url, s.store.backend = url, "postgres"
    s.embed.model = "hash"
    s.chunk.max_tokens = 64
    s.chunk.overlap_tokens = 8
    return s
