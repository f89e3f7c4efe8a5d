"""e5's token count, sent to another process: the indexer's parse worker chunks with it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

__all__ = ["PassageCount"]


class _Counting(Protocol):  # E5Embedder, which imports this module
    cache_dir: Path

    def count_tokens(self, text: str) -> int: ...


_SHARED: dict[Path, _Counting] = {}
_LOCK = threading.Lock()


class PassageCount:
    """``E5Embedder.count_tokens`` as a picklable function. In the process that made it, it is that
    embedder's; unpickled elsewhere, it counts with one embedder per cache dir and process, of which
    only the tokenizer is ever loaded (the same tables, read from the same cache file)."""

    def __init__(self, embedder: _Counting) -> None:
        self.cache_dir = embedder.cache_dir
        # the class, pickled by name: the other process imports it to count
        self._kind: Callable[[Path], _Counting] = type(embedder)
        self._embedder: _Counting | None = embedder

    def __getstate__(self) -> dict[str, Any]:
        return {"cache_dir": str(self.cache_dir), "kind": self._kind}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.cache_dir = Path(state["cache_dir"])
        self._kind = state["kind"]
        self._embedder = None

    def __call__(self, text: str) -> int:
        embedder = self._embedder
        if embedder is None:
            with _LOCK:
                embedder = _SHARED.get(self.cache_dir)
                if embedder is None:
                    embedder = _SHARED[self.cache_dir] = self._kind(self.cache_dir)
            self._embedder = embedder
        return embedder.count_tokens(text)
