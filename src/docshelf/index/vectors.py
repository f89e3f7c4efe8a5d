"""The second phase of a sync: vectors for the chunks swapped in without one.

A sync makes every new or changed document keyword-searchable first (parsed, chunked and swapped in
with the vectors its unchanged text already has), then embeds the rest here. The work is the
store's, not one sync's: whatever a killed or interrupted run left, whichever process swapped it in,
is what the store lists as still without a vector. One process embeds an index at a time
(``embed.lock`` in the data dir, never waited for: a second one finds it held and leaves the work
to the first); the writer lock is taken per batch, so other writers' syncs go on in between.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docshelf.embed.base import Embedder, Vectors
from docshelf.index.pipeline import EmbedPipeline
from docshelf.store.base import Store, Unembedded
from docshelf.types import contextual_text

__all__ = ["EMBED_LOCK", "EmbedRun", "embed_lock", "embed_pending"]

log = logging.getLogger("docshelf.index")

EMBED_LOCK = "embed.lock"
# Chunks given their vector between two store commits. Searches see each batch as soon as it is
# written (its SQLite transaction); a commit only publishes the dense side's HNSW file, and deciding
# whether to costs counts over the whole store: once per batch, that grew with the square of the
# index (~1,300 batches of 128 at 171,000 chunks).
PUBLISH_EVERY = 2_000
Report = Callable[[str, int, int, str | None], None]  # (phase, done, total, current document)
Locked = Callable[[Callable[[], Any]], Any]  # runs a write under the writer lock


@dataclass
class EmbedRun:
    """What one embedding phase did."""

    embedded: int = 0  # texts the model embedded
    filled: int = 0  # chunks given their vector
    failed: dict[str, str] = field(default_factory=dict)  # "collection/path" -> why a chunk has none
    remaining: int = 0  # chunks still without a vector when it ended
    busy: bool = False  # another process (or thread) embeds this index: the rest is its work
    seconds: float = 0.0


_HELD: list[int] = []  # this process's embed.lock descriptors: a forked child closes its copies


def _close_in_child() -> None:
    for fd in _HELD:
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_in_child)


@contextlib.contextmanager
def embed_lock(data_dir: Path) -> Iterator[bool]:
    """Whether this thread is the index's one embedder (never waits; flock dies with its holder,
    and a second open in the same process is refused as one in another process is)."""
    path = Path(data_dir) / EMBED_LOCK
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EROFS, errno.EPERM):
            raise
        yield True  # a data dir this user cannot write: nothing to embed into it either
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        yield False
        return
    _HELD.append(fd)
    try:
        yield True
    finally:
        _HELD.remove(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def embed_pending(
    store: Store, embedder: Embedder, locked: Locked, step: int, report: Report,
    stop: Callable[[], bool] = lambda: False,
) -> EmbedRun:  # fmt: skip
    """Embed every chunk the store lists as without a vector, ``step`` texts a batch (the next
    batch embeds while the last is written); ``stop()`` ends it between batches. Texts the model
    fails on are embedded one by one to find them; those are left without a vector (and named in
    ``failed``) for the next run to try again."""
    run = EmbedRun()
    started = time.monotonic()
    after = 0
    while True:
        with embed_lock(store.data_dir) as mine:
            if not mine:
                run.busy = True
                break
            after = _embed_all(store, embedder, locked, step, report, stop, run, after)
        # a sync that swapped chunks in while this one held the lock left them to it: look again
        # now it is free (one that tries from here on takes the lock itself)
        if stop() or not store.unembedded_chunks(after, 1):
            break
    run.remaining = store.missing_vectors()
    run.seconds = time.monotonic() - started
    return run


def _label(u: Unembedded) -> str:
    return f"{u.collection}/{u.path}"


def _embed_all(
    store: Store, embedder: Embedder, locked: Locked, step: int, report: Report, stop: Callable[[], bool],
    run: EmbedRun, after: int,
) -> int:  # fmt: skip
    """Embed the chunks listed after seq ``after`` in pages; returns the last seq read."""
    pipeline = EmbedPipeline(store, embedder)
    total = run.filled + store.missing_vectors()
    if not total:
        return after
    failed_keys: set[str] = set()
    unpublished = [0]  # chunks given their vector since the last commit

    def write(page: list[Unembedded], texts: dict[str, str], vectors: dict[str, Vectors]) -> None:
        if not vectors and texts:  # the batch failed: one by one, to find the texts that fail
            vectors = {}
            for key, text in texts.items():
                try:
                    vectors[key] = embedder.embed_documents([text])[0]
                except Exception as exc:
                    log.warning("embedding failed for a chunk of %s: %s", _owner(page, key), exc)
                    failed_keys.add(key)
                    run.failed.setdefault(_owner(page, key), f"embedding failed: {exc}")
        run.embedded += len(vectors)
        run.filled += locked(lambda: _add(store, vectors, unpublished))

    try:
        while not stop():
            page = store.unembedded_chunks(after, step)  # (the failed ones lie behind ``after``)
            if not page:
                break
            after = page[-1].seq
            texts = {u.embed_key: contextual_text(u.title, u.heading_path, u.text) for u in page}
            report("vectors", run.filled, max(total, run.filled + len(page)), page[-1].path)
            pipeline.submit(texts, functools.partial(write, page, texts))
        pipeline.drain()
        if unpublished[0]:
            locked(store.commit)
    finally:
        pipeline.close()
    report("vectors", run.filled, max(total, run.filled), None)
    return after


def _owner(page: list[Unembedded], key: str) -> str:
    return next((_label(u) for u in page if u.embed_key == key), key)


def _add(store: Store, vectors: dict[str, Vectors], unpublished: list[int]) -> int:
    filled = store.add_vectors(vectors)  # searches see them now
    unpublished[0] += filled
    if unpublished[0] >= PUBLISH_EVERY:  # and the HNSW file, once the store is large
        store.commit()
        unpublished[0] = 0
    return filled
