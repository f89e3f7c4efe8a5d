"""Embed: turn chunk text into vectors (provider protocol + factory)."""

from __future__ import annotations

from pathlib import Path

from docshelf.config import EmbedSettings
from docshelf.embed.base import Embedder, Vectors, normalize
from docshelf.embed.hashing import HashEmbedder
from docshelf.embed.use import UseEmbedder
from docshelf.errors import ConfigError

__all__ = ["Embedder", "HashEmbedder", "UseEmbedder", "Vectors", "create_embedder", "normalize"]


def create_embedder(settings: EmbedSettings, cache_dir: Path) -> Embedder:
    """Build the configured embedder; nothing is loaded until first use where possible."""
    model = settings.model.strip()
    if model in ("use", UseEmbedder.name):
        return UseEmbedder(threads=settings.threads, batch_size=settings.batch_size)
    if model in ("e5", "multilingual-e5-small", "multilingual-e5-small-q4"):
        from docshelf.embed.e5 import E5Embedder

        return E5Embedder(
            cache_dir=cache_dir, threads=settings.threads, batch_size=settings.batch_size,
            workers=settings.workers,
        )  # fmt: skip
    if model.startswith("hash"):
        _, _, dim = model.partition("-")
        return HashEmbedder(int(dim) if dim.isdigit() else 64)
    if model.startswith("st:"):
        from docshelf.embed.remote import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(model[3:], settings.threads, settings.batch_size)
    if model.startswith("openai:"):
        from docshelf.embed.remote import OpenAIEmbedder

        return OpenAIEmbedder(model[7:], settings.endpoint, settings.api_key)
    raise ConfigError(
        f"unknown embedding model {model!r}; use one of: use, e5, hash, st:<name>, openai:<name>"
    )
