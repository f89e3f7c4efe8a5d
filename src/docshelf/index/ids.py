"""Stable ids: documents by (collection, path), chunks by (document, content)."""

from __future__ import annotations

import hashlib

__all__ = ["chunk_ids", "content_hash", "document_id", "embed_key"]


def _h(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:32]


def document_id(collection: str, rel_path: str) -> str:
    return _h("doc", collection, rel_path)


def chunk_ids(doc_id: str, texts: list[str]) -> list[str]:
    """One id per chunk; a text repeated in one document gets its occurrence number mixed in."""
    seen: dict[str, int] = {}
    out = []
    for text in texts:
        n = seen.get(text, 0)
        seen[text] = n + 1
        out.append(_h("chunk", doc_id, text, str(n)))
    return out


def embed_key(model: str, text: str) -> str:
    return _h("vec", model, text)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
