"""Embedding while a sync's first phase still reads files, on the core that phase leaves free.

The first phase (read, parse, chunk, swap in) runs about one core busy; the model used to wait
for the second. Meanwhile an ``EarlyEmbedder`` embeds texts of the chunks already swapped in, on
its own thread, a few texts at a time and one run at once (``workers=1`` where the embedder takes
it), so the first phase keeps its own core and ends as soon as before. The sync thread, which
holds the writer lock, writes the vectors done so far with each batch it swaps in. Texts it is
offered beyond ``cap`` and those it has not reached when the first phase ends stay listed as
without a vector, for the second phase: nothing is lost, and nothing is embedded twice (the
second phase reads only what still lacks a vector, after this one has stopped and been written).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator

from docshelf.embed.base import Embedder, Vectors
from docshelf.index.vectors import embed_lock
from docshelf.store.base import Store

__all__ = ["EarlyEmbedder", "EarlyPhase", "one_core"]

log = logging.getLogger("docshelf.index")

Embed = Callable[[list[str]], Vectors]


def one_core(embedder: Embedder) -> Embed:
    """The embedder's ``embed_documents``, held to one run at a time where it takes ``workers``."""
    embed: Callable[..., Vectors] = embedder.embed_documents
    try:
        inspect.signature(embed).bind([], workers=1)
    except (TypeError, ValueError):
        return embed
    return functools.partial(embed, workers=1)


class EarlyEmbedder:
    """Embeds offered texts on one background thread until ``stop``; ``take`` hands the vectors over."""

    def __init__(self, embed: Embed, group: int = 16, cap: int = 1024) -> None:
        self._embed = embed
        self.group = group  # texts a call: the most ``stop`` waits for
        self.cap = cap  # texts waiting at most (the rest wait in the store, not in memory)
        self._queue: deque[tuple[str, str]] = deque()
        self._offered: set[str] = set()  # a text in several files is embedded once
        self._done: dict[str, Vectors] = {}
        self._cond = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.embedded = 0  # texts embedded (handed over or not)

    def offer(self, texts: dict[str, str]) -> None:
        """Queue texts (embed key -> text) to embed, as many as there is room for."""
        with self._cond:
            if self._stopping:
                return
            for key, text in texts.items():
                if len(self._queue) >= self.cap:
                    break
                if key not in self._offered:
                    self._offered.add(key)
                    self._queue.append((key, text))
            if self._queue and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="docshelf-early", daemon=True)
                self._thread.start()
            self._cond.notify()

    def take(self) -> dict[str, Vectors]:
        """The vectors embedded since the last take."""
        with self._cond:
            done, self._done = self._done, {}
        return done

    def stop(self, wait: bool = True) -> dict[str, Vectors]:
        """Take no more texts; ``wait``: for the call in progress too. The vectors not taken yet."""
        with self._cond:
            self._stopping = True
            self._queue.clear()
            self._cond.notify()
        if wait and self._thread is not None:
            self._thread.join()
            self._thread = None
        return self.take()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                items = [self._queue.popleft() for _ in range(min(self.group, len(self._queue)))]
            try:
                vectors = self._embed([text for _, text in items])
            except Exception as exc:  # the second phase embeds them again, and reports a failure
                log.debug("early embedding failed (%s); left to the second phase", exc)
                continue
            with self._cond:
                self._done.update(zip((key for key, _ in items), vectors, strict=True))
                self.embedded += len(items)


class EarlyPhase:
    """A sync's early embedding: started with its first phase, written by the sync's thread."""

    def __init__(self, store: Store, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._early: EarlyEmbedder | None = None
        self.embedded = 0  # texts embedded and written in the last first phase
        self.filled = 0  # chunks given their vector then

    @contextlib.contextmanager
    def running(self, wanted: bool) -> Iterator[None]:
        """Embed early while the block runs, when this process is the index's embedder (its
        ``embed.lock``: another process that holds it embeds the index itself). The lock is let go
        afterwards; the second phase takes it again. After a failure the model's call in progress
        is not waited for (its vectors are the next run's to compute)."""
        self.embedded = self.filled = 0
        if not wanted:
            yield
            return
        with embed_lock(self.store.data_dir) as mine:
            if mine:
                self._early = EarlyEmbedder(one_core(self.embedder))
            try:
                yield
            finally:
                early, self._early = self._early, None
                if early is not None:
                    early.stop(wait=False)

    def write(self, offer: dict[str, str] | None = None) -> None:
        """Offer texts just swapped in (embed key -> text); write the vectors done so far. The
        caller holds the writer lock."""
        if self._early is not None:
            if offer:
                self._early.offer(offer)
            self._add(self._early.take())

    def finish(self) -> None:
        """The first phase is done: take no more texts; write what is done, never waiting for the
        model (the first phase ends as soon as it would without it)."""
        if self._early is not None:
            self._add(self._early.stop(wait=False))

    def drain(self, locked: Callable[[Callable[[], None]], object]) -> None:
        """After the first phase: wait for the call still in progress and write its vectors under
        the writer lock (``locked``), so the second phase finds them there, not embeds them again."""
        if self._early is not None:
            last = self._early.stop()
            if last:
                locked(lambda: self._add(last))

    def _add(self, vectors: dict[str, Vectors]) -> None:
        if vectors:
            self.filled += self.store.add_vectors(vectors)
            self.embedded += len(vectors)
