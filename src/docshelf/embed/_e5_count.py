"""e5's token count, sent to another process: the indexer's parse worker chunks with it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docshelf.embed.e5 import E5Embedder

__all__ = ["PassageCount"]

_SHARED: dict[Path, E5Embedder] = {}
_LOCK = threading.Lock()


class PassageCount:
    """``E5Embedder.count_tokens`` as a picklable function. In the process that made it, it is that
    embedder's; unpickled elsewhere, it counts with one embedder per cache dir and process, of which
    only the tokenizer is ever loaded (the same tables, read from the same cache file)."""

    def __init__(self, embedder: E5Embedder) -> None:
        self.cache_dir = embedder.cache_dir
        self._embedder: E5Embedder | None = embedder

    def __getstate__(self) -> dict[str, Any]:
        return {"cache_dir": str(self.cache_dir)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.cache_dir = Path(state["cache_dir"])
        self._embedder = None

    def __call__(self, text: str) -> int:
        embedder = self._embedder
        if embedder is None:
            with _LOCK:
                embedder = _SHARED.get(self.cache_dir)
                if embedder is None:
                    from docshelf.embed.e5 import E5Embedder

                    embedder = _SHARED[self.cache_dir] = E5Embedder(self.cache_dir)
            self._embedder = embedder
        return embedder.count_tokens(text)
