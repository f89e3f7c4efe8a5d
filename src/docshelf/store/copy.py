"""Copy one store into another (embedded → PostgreSQL) with the vectors it already has."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from docshelf.errors import StoreError
from docshelf.store.base import Replacement, Store, named_roots_key

__all__ = ["COPY_BATCH_CHUNKS", "BulkLoading", "CopyReport", "copy_store"]

COPY_BATCH_CHUNKS = 128


@runtime_checkable
class BulkLoading(Protocol):
    """A target that loads faster with its vector index built once at the end (PostgreSQL)."""

    def bulk_load(self) -> AbstractContextManager[None]: ...


@dataclass
class CopyReport:
    collections: int = 0
    documents: int = 0
    chunks: int = 0
    vectors_missing: int = 0


def copy_store(
    source: Store, target: Store, progress: Callable[[int, int], None] | None = None
) -> CopyReport:
    """Copy every collection, document, chunk, vector and skip record; nothing is re-embedded.

    The target must be empty or hold the same model's vectors (documents already there are
    replaced, so a copy interrupted half-way can simply be run again).
    """
    name, dim = source.model()
    if name is None or dim is None:
        raise StoreError("the source index is empty: run `docshelf index PATH` first")
    target.check_model(name, dim)
    target.set_model(name, dim)
    report = CopyReport()
    docs = list(source.iter_documents())
    for collection in source.collections():
        target.set_collection_roots(collection, source.collection_roots(collection))
        named = source.get_meta(named_roots_key(collection))
        if named is not None:
            target.set_meta(named_roots_key(collection), named)
        target.set_skipped(collection, [s for _, s in source.skipped(collection)])
        report.collections += 1
    # HNSW kept up row by row costs several times its one build over the finished table
    with target.bulk_load() if isinstance(target, BulkLoading) else nullcontext():
        batch: list[Replacement] = []
        for done, doc in enumerate(docs, start=1):
            chunks = source.document_chunks(doc.id)
            vectors = source.cached_vectors([c.embed_key for c in chunks])
            report.vectors_missing += sum(1 for c in chunks if c.embed_key not in vectors)
            batch.append(Replacement(doc, chunks, vectors))
            report.chunks += len(chunks)
            # a transaction (a WAL flush on PostgreSQL) per batch of about a sync's size
            if done == len(docs) or sum(len(r.chunks) for r in batch) >= COPY_BATCH_CHUNKS:
                target.replace_documents(batch)
                report.documents += len(batch)
                batch = []
                if progress is not None:
                    progress(done, len(docs))
    for collection in source.collections():
        build = source.last_build(collection)
        if build is not None:
            target.record_build(build)
    target.commit()
    return report
