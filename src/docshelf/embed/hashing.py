"""A tiny deterministic embedder for tests and smoke runs (no semantic quality)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from docshelf.embed.base import Vectors, normalize

if TYPE_CHECKING:
    import numpy as np
else:
    from docshelf.lazy import numpy as np

__all__ = ["HashEmbedder"]

_WORD = re.compile(r"\w+", re.UNICODE)


def _count(text: str) -> int:
    return len(_WORD.findall(text)) + sum(1 for ch in text if ord(ch) > 0x2E80)


class HashEmbedder:
    """Bag of hashed words and character bigrams; texts sharing words get close vectors."""

    name = "hash-64"
    max_tokens = 512
    fusion_weight = 0.3

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.name = f"hash-{dim}"

    def _features(self, text: str) -> list[str]:
        feats: list[str] = []
        for word in _WORD.findall(text.casefold()):
            feats.append(word)
            feats.extend(word[i : i + 2] for i in range(len(word) - 1))
        return feats

    def count_tokens(self, text: str) -> int:
        return _count(text)

    def portable_counter(self) -> Callable[[str], int]:
        return _count

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat in self._features(text):
                digest = hashlib.blake2b(feat.encode(), digest_size=8).digest()
                out[row, int.from_bytes(digest[:4], "little") % self.dim] += 1.0 if digest[4] & 1 else -1.0
        return normalize(out)

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed_documents([text])[0]
        return vector
