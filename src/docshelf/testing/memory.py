"""MemoryStore: the Store protocol in Python dicts, for unit tests of the layers above the store.

It keeps the contract the real stores keep (one document swapped per call, the generation bumped
by every write, BM25 over the analyzer's terms, cosine over stored vectors, filters before
ranking) without SQLite, tantivy or a data dir on disk beyond the path it is given.
"""

from __future__ import annotations

import contextlib
import fnmatch
import math
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from docshelf.embed.base import Vectors
from docshelf.errors import StoreError
from docshelf.store.base import (
    Alternatives,
    BuildRecord,
    DocState,
    DocumentRecord,
    PendingVector,
    Progress,
    Replacement,
    SearchFilter,
    StoreStats,
    TermAnalyzer,
    TextSpan,
    own_alternatives,
    ready_vector,
    report_progress,
)
from docshelf.store.history import check_model
from docshelf.types import Chunk, SkippedFile

__all__ = ["MemoryStore"]

_K1, _B = 1.2, 0.75


class MemoryStore:
    """An index held in memory; ``data_dir`` only holds the writer lock, as with PostgreSQL."""

    def __init__(self, data_dir: Path, analyzer: TermAnalyzer) -> None:
        self.data_dir = data_dir
        self.analyzer = analyzer
        self._lock = threading.RLock()
        self._meta: dict[str, str] = {}
        self._roots: dict[str, list[str]] = {}
        self._docs: dict[str, DocumentRecord] = {}
        self._chunks: dict[str, list[Chunk]] = {}  # doc id -> chunks in order
        self._vectors: dict[str, Vectors] = {}
        self._terms: dict[str, Counter[str]] = {}  # chunk id -> term frequencies
        self._skipped: dict[str, list[SkippedFile]] = {}
        self._builds: list[BuildRecord] = []
        self._generation = 0
        self._staged: dict[str, tuple[str, Vectors]] = {}  # chunk id -> new key and vector
        self._reembed_model: tuple[str, int] | None = None
        self.closed = False

    # ----- model and bookkeeping -----
    def model(self) -> tuple[str | None, int | None]:
        dim = self._meta.get("embed_dim")
        return self._meta.get("embed_model"), int(dim) if dim else None

    def check_model(self, name: str, dim: int) -> None:
        check_model(self.model(), name, dim, "memory")

    def set_model(self, name: str, dim: int) -> None:
        self._meta.update(embed_model=name, embed_dim=str(dim))

    def reembed_pending(self) -> dict[str, Any] | None:
        if self._reembed_model is None:
            return None
        ids = {c.id for chunks in self._chunks.values() for c in chunks}
        name, dim = self._reembed_model
        return {"model": name, "dim": dim, "staged": len(ids & set(self._staged)), "chunks": len(ids)}

    def begin_reembed(self, name: str, dim: int) -> None:
        if self._reembed_model != (name, dim):
            self._staged.clear()
            self._reembed_model = (name, dim)

    def staged_keys(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        return {c: self._staged[c][0] for c in chunk_ids if c in self._staged}

    def stage_vectors(self, rows: Sequence[tuple[str, str, Vectors]]) -> None:
        self._staged.update({cid: (key, np.asarray(v, dtype=np.float32)) for cid, key, v in rows})

    def finish_reembed(self, name: str, dim: int) -> int:
        with self._lock:
            chunks = [c for doc in self._chunks.values() for c in doc]
            if missing := [c.id for c in chunks if c.id not in self._staged]:
                raise StoreError(f"{len(missing)} chunks have no new vector yet; run the re-embed again")
            for doc_id, doc_chunks in self._chunks.items():
                self._chunks[doc_id] = [
                    Chunk(**{**c.__dict__, "embed_key": self._staged[c.id][0]}) for c in doc_chunks
                ]
            self._vectors = {key: vector for key, vector in self._staged.values()}
            self._staged.clear()
            self._reembed_model = None
            self.set_model(name, dim)
            self._generation += 1
            return len(chunks)

    def generation(self) -> int:
        return self._generation

    def get_meta(self, key: str) -> str | None:
        return self._meta.get(key)

    def set_meta(self, key: str, value: str) -> None:
        self._meta[key] = value

    # ----- collections and documents -----
    def collections(self) -> list[str]:
        return sorted(self._roots)

    def collection_roots(self, collection: str) -> list[str]:
        return list(self._roots.get(collection, []))

    def set_collection_roots(self, collection: str, roots: Sequence[str]) -> None:
        self._roots[collection] = list(roots)

    def document_states(self, collection: str) -> dict[str, DocState]:
        return {
            d.path: DocState(d.id, d.path, d.root, d.size, d.mtime_ns, d.content_hash)
            for d in self._docs.values()
            if d.collection == collection
        }

    def document_page(self, after: str, limit: int) -> list[tuple[str, DocState]]:
        docs = sorted((d for d in self._docs.values() if d.id > after), key=lambda d: d.id)[:limit]
        return [
            (d.collection, DocState(d.id, d.path, d.root, d.size, d.mtime_ns, d.content_hash)) for d in docs
        ]

    def documents_below(self, collection: str, folder: str) -> bool:
        prefix = folder + "/"
        return any(d.collection == collection and d.path.startswith(prefix) for d in self._docs.values())

    def touch_document(self, doc_id: str, size: int, mtime_ns: int) -> None:
        doc = self._docs[doc_id]
        self._docs[doc_id] = DocumentRecord(**{**doc.__dict__, "size": size, "mtime_ns": mtime_ns})

    def cached_vectors(self, keys: Sequence[str]) -> dict[str, Vectors]:
        return {k: self._vectors[k] for k in keys if k in self._vectors}

    def replace_documents(self, batch: Sequence[Replacement]) -> None:
        for r in batch:
            self._replace(r.doc, r.chunks, r.vectors)

    def _replace(self, doc: DocumentRecord, chunks: Sequence[Chunk], vectors: dict[str, Vectors]) -> None:
        with self._lock:
            self._drop(doc.id)
            self._docs[doc.id] = doc
            self._chunks[doc.id] = sorted(chunks, key=lambda c: c.ordinal)
            for key, vector in vectors.items():
                self._vectors.setdefault(key, np.asarray(vector, dtype=np.float32))
            for c in chunks:
                self._terms[c.id] = Counter(self.analyzer.chunk_terms(doc.title, c.heading_path, c.text))
            self._generation += 1

    def _drop(self, doc_id: str) -> bool:
        for c in self._chunks.pop(doc_id, []):
            self._terms.pop(c.id, None)
        return self._docs.pop(doc_id, None) is not None

    def delete_documents(self, doc_ids: Sequence[str]) -> int:
        with self._lock:
            removed = sum(self._drop(d) for d in doc_ids)
            if removed:
                self._generation += 1
            self.gc_vectors()
            return removed

    def gc_vectors(self) -> None:
        used = {c.embed_key for chunks in self._chunks.values() for c in chunks}
        for key in [k for k in self._vectors if k not in used]:
            del self._vectors[key]

    # ----- publishing writes (in memory every write is visible at once) -----
    def commit(self) -> None:
        self._meta["analyzer"] = self.analyzer.fingerprint

    def writer_guard(
        self, timeout_s: float, collection: str | None = None
    ) -> contextlib.AbstractContextManager[None]:
        """Nothing beyond the writer lock file: the index lives in the data dir it guards."""
        return contextlib.nullcontext()

    def end_write(self, failed: bool) -> None:
        return None

    def needs_keyword_rebuild(self) -> bool:
        return self._generation > 0 and self._meta.get("analyzer") != self.analyzer.fingerprint

    def rebuild_keyword_index(self, progress: Progress | None = None) -> int:
        total = sum(len(chunks) for chunks in self._chunks.values())
        done = 0
        for doc_id, chunks in self._chunks.items():
            doc = self._docs[doc_id]
            for c in chunks:
                self._terms[c.id] = Counter(self.analyzer.chunk_terms(doc.title, c.heading_path, c.text))
                done += 1
                report_progress(progress, done, total)
        self.commit()
        return len(self._terms)

    def compact(self) -> tuple[int, int]:
        return 0, 0

    # ----- history -----
    def set_skipped(self, collection: str, skipped: Sequence[SkippedFile]) -> None:
        self._skipped[collection] = list({s.path: s for s in skipped}.values())

    def skipped(self, collection: str | None = None) -> list[tuple[str, SkippedFile]]:
        rows = [(c, s) for c, items in self._skipped.items() for s in items if collection in (None, c)]
        return sorted(rows, key=lambda r: r[1].path)

    def record_build(self, build: BuildRecord) -> None:
        self._builds.append(build)

    def last_build(self, collection: str | None = None) -> BuildRecord | None:
        return next((b for b in reversed(self._builds) if collection in (None, b.collection)), None)

    # ----- reads -----
    def iter_documents(self, collection: str | None = None) -> Iterator[DocumentRecord]:
        docs = sorted(self._docs.values(), key=lambda d: (d.collection, d.path))
        yield from (d for d in docs if collection in (None, d.collection))

    def get_document(self, collection: str, path: str) -> DocumentRecord | None:
        return next((d for d in self._docs.values() if d.collection == collection and d.path == path), None)

    def get_document_by_id(self, doc_id: str) -> DocumentRecord | None:
        return self._docs.get(doc_id)

    def get_documents(self, doc_ids: Sequence[str]) -> dict[str, DocumentRecord]:
        return {d: self._docs[d] for d in doc_ids if d in self._docs}

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        by_id = {c.id: c for chunks in self._chunks.values() for c in chunks}
        return [by_id[c] for c in chunk_ids if c in by_id]

    def document_chunks(self, doc_id: str) -> list[Chunk]:
        return list(self._chunks.get(doc_id, []))

    def chunks_of(self, doc_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        return {d: list(self._chunks.get(d, [])) for d in doc_ids}

    def grep_documents(self, pieces: Sequence[str], flt: SearchFilter) -> list[tuple[str, str, str]] | None:
        if pieces:
            return None  # no substring index: grep reads every document, as on a store made before one
        docs = [d for d in self._docs.values() if self._passes(d, flt)]
        return sorted(((d.id, d.collection, d.path) for d in docs), key=lambda r: (r[1], r[2]))

    def chunk_texts(self, doc_ids: Sequence[str]) -> dict[str, list[TextSpan]]:
        return {
            d: [
                TextSpan(c.char_start, c.char_end, c.line_start, c.line_end, c.text)
                for c in self._chunks.get(d, [])
            ]
            for d in doc_ids
        }

    def iter_chunks(self) -> Iterator[Chunk]:
        for chunks in list(self._chunks.values()):
            yield from chunks

    # ----- search -----
    def _passes(self, doc: DocumentRecord, flt: SearchFilter) -> bool:
        checks = (
            not flt.collections or doc.collection in flt.collections,
            flt.include_superseded or doc.lifecycle != "superseded",
            not flt.path_glob or fnmatch.fnmatchcase(doc.path, flt.path_glob),
            not flt.tags or bool(set(flt.tags) & set(doc.tags)),
            not flt.file_types or doc.file_type in flt.file_types,
            flt.modified_after is None or doc.mtime_ns >= flt.modified_after * 1e9,
            flt.modified_before is None or doc.mtime_ns <= flt.modified_before * 1e9,
        )
        return all(checks)

    def filter_doc_ids(self, flt: SearchFilter) -> list[str] | None:
        if not flt.needs_doc_ids():
            return None
        return [d.id for d in self._docs.values() if self._passes(d, flt)]

    def keyword_coverage(self, terms: Sequence[str]) -> float:
        unique = set(terms)
        return len(self.known_terms(terms)) / len(unique) if unique else 0.0

    def known_terms(self, terms: Sequence[str]) -> set[str]:
        seen: set[str] = set().union(*self._terms.values()) if self._terms else set()
        return set(terms) & seen

    def keyword_search(
        self, terms: Sequence[str], k: int, flt: SearchFilter, alternatives: Alternatives | None = None
    ) -> list[tuple[str, float]]:
        if not terms or not self._terms:
            return []
        n = len(self._terms)
        avg = sum(sum(tf.values()) for tf in self._terms.values()) / n
        df = Counter(t for tf in self._terms.values() for t in set(tf))
        alternatives = own_alternatives(terms, alternatives)
        scored: list[tuple[str, float]] = []
        for doc in self._docs.values():
            if not self._passes(doc, flt):
                continue
            for c in self._chunks[doc.id]:
                tf, length = self._terms[c.id], sum(self._terms[c.id].values())
                norm = _K1 * (1 - _B + _B * length / avg)
                bm25 = {
                    t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * tf[t] * (_K1 + 1) / (tf[t] + norm)
                    for t in {*terms, *(a for alts in alternatives.values() for a in alts)} if tf[t]
                }  # fmt: skip
                # a repeated query term adds weight, as in Lucene; alternatives give their best
                score = sum(max(bm25.get(a, 0.0) for a in (t, *alternatives.get(t, ()))) for t in terms)
                if score > 0:
                    scored.append((c.id, score))
        return sorted(scored, key=lambda s: -s[1])[:k]

    def vector_search(self, query: Vectors, k: int, flt: SearchFilter) -> list[tuple[str, float]]:
        scored = [
            (c.id, float(np.dot(self._vectors[c.embed_key], query)))
            for doc in self._docs.values()
            if self._passes(doc, flt)
            for c in self._chunks[doc.id]
            if c.embed_key in self._vectors
        ]
        return sorted(scored, key=lambda s: -s[1])[:k]

    def candidates(
        self, terms: Sequence[str], query: Vectors | PendingVector | None, k: int, flt: SearchFilter,
        keyword: bool = True, coverage: bool = False, alternatives: Alternatives | None = None,
    ) -> tuple[dict[str, list[tuple[str, float]]], float]:  # fmt: skip
        lists: dict[str, list[tuple[str, float]]] = {}
        if keyword:
            lists["keyword"] = self.keyword_search(terms, k, flt, alternatives)
        vec = ready_vector(query, lists.get("keyword", ()))  # the keyword side ran meanwhile
        if vec is not None:
            lists["semantic"] = self.vector_search(vec, k, flt)
        return lists, self.keyword_coverage(terms) if coverage else 0.0

    # ----- status -----
    def stats(self) -> StoreStats:
        per = {name: {"documents": 0, "chunks": 0} for name in self._roots}
        for doc in self._docs.values():
            row = per.setdefault(doc.collection, {"documents": 0, "chunks": 0})
            row["documents"] += 1
            row["chunks"] += len(self._chunks[doc.id])
        model, dim = self.model()
        return StoreStats(
            collections=per,
            documents=len(self._docs),
            chunks=sum(len(c) for c in self._chunks.values()),
            vectors=len(self._vectors),
            size_bytes=0,
            model=model,
            dim=dim,
            generation=self._generation,
            keyword_generation=self._generation,
            reembed=self.reembed_pending(),
        )

    def close(self) -> None:
        self.closed = True
