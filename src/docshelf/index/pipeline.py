"""Embedding one batch in the background while the last is written and the next is read.

The embedding models release the GIL while they compute, so the second phase of a sync
(index/vectors.py) writes batch n-1 and reads the chunks of batch n+1 while batch n embeds, and
the model never waits for the store. Store reads and writes stay on the caller's thread; only
``embed_documents`` runs on the other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

from docshelf.embed.base import Embedder, Vectors

__all__ = ["EmbedPipeline"]

Write = Callable[[dict[str, Vectors]], None]  # the batch's vectors by embed key ({} if it failed)


class _Cache(Protocol):
    def cached_vectors(self, keys: Sequence[str]) -> dict[str, Vectors]: ...


class EmbedPipeline:
    """At most one batch in flight; ``drain`` writes it (after waiting for its vectors)."""

    def __init__(self, store: _Cache, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._pool: ThreadPoolExecutor | None = None
        self._inflight: tuple[Write, dict[str, Vectors], list[str], Future[Vectors]] | None = None

    def submit(self, texts: dict[str, str], write: Write) -> None:
        """Start embedding the texts not cached yet, then write the batch submitted before."""
        cached = self.store.cached_vectors(list(texts))
        missing = [k for k in texts if k not in cached]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="docshelf-embed")
        job = self._pool.submit(self.embedder.embed_documents, [texts[k] for k in missing])
        self.drain()
        self._inflight = (write, cached, missing, job)

    def drain(self) -> None:
        if self._inflight is None:
            return
        write, cached, missing, job = self._inflight
        self._inflight = None
        try:
            vectors = {**cached, **dict(zip(missing, job.result(), strict=True))}
        except Exception:  # the writer embeds each document alone, to isolate the failure
            vectors = {}
        write(vectors)

    def reset(self) -> None:
        """Forget a batch left in flight by a failed run (it is not written)."""
        self._inflight = None

    def close(self) -> None:
        """Let the embedding thread go once it is idle (a batch in flight is left to finish)."""
        self._inflight = None
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
