"""Search over the embedded store: tantivy for keywords, the vector matrix (or HNSW) for vectors."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from docshelf.embed.base import Vectors
from docshelf.store.base import SearchFilter
from docshelf.store.embedded.ann import AnnIndex, ann_available
from docshelf.store.embedded.keyword import KeywordIndex
from docshelf.store.embedded.sql import matching_doc_ids
from docshelf.store.embedded.vectors import VectorMatrix, load_matrix

__all__ = ["SQLiteSearch"]

_STALE_OK_S = 1.0


class SQLiteSearch:
    """Mixed into the SQLite store; needs its connection, keyword index and model metadata."""

    @property
    def _db(self) -> sqlite3.Connection:
        raise NotImplementedError

    _ann: AnnIndex | None
    _matrix: VectorMatrix | None
    _published: int  # the generation of the last commit()
    keyword: KeywordIndex
    data_dir: Path
    ann_threshold: int

    def generation(self) -> int:
        raise NotImplementedError

    def model(self) -> tuple[str | None, int | None]:
        raise NotImplementedError

    def filter_doc_ids(self, flt: SearchFilter) -> list[str] | None:
        """Document ids passing the filter, or None when the filter needs no id list."""
        return matching_doc_ids(self._db, flt)

    def keyword_coverage(self, terms: Sequence[str]) -> float:
        return self.keyword.coverage(terms)

    def keyword_search(self, terms: Sequence[str], k: int, flt: SearchFilter) -> list[tuple[str, float]]:
        return self.keyword.search(
            terms, k, flt.collections, self.filter_doc_ids(flt), flt.include_superseded
        )

    def _versions(self) -> tuple[int, str]:
        """(generation, vectors epoch) in one read: the epoch changes when vectors of existing
        chunks do (a re-embed), which key differences cannot see."""
        sql = "SELECT key, value FROM meta WHERE key IN ('generation', 'vectors_epoch')"
        rows = dict(self._db.execute(sql).fetchall())
        return int(rows.get("generation") or 0), str(rows.get("vectors_epoch") or "0")

    def _vector_matrix(self) -> VectorMatrix:
        generation, epoch = self._versions()
        matrix = self._matrix
        if matrix is not None and matrix.generation == generation:
            return matrix
        if (
            matrix is not None and self.keyword.writing and matrix.generation >= self._published
            and time.monotonic() - matrix.loaded_at < _STALE_OK_S
        ):  # fmt: skip
            # a sync of this process bumps the generation per document: reload at most this often
            # meanwhile (a hit deleted since is dropped when hydrated; a new one shows a moment later),
            # but never serve a matrix older than the last commit (it brings the ANN index up to date)
            return matrix
        _, dim = self.model()
        while True:
            matrix = load_matrix(self._db, dim or 0, generation)
            # one statement reads one snapshot; unchanged versions after it: nothing landed between
            if (again := self._versions()) == (generation, epoch):
                break
            (generation, epoch), (_, dim) = again, self.model()
        if dim and len(matrix.chunk_ids) >= self.ann_threshold and ann_available():
            if self._ann is None or self._ann.dim != dim or self._ann.epoch != epoch:
                self._ann = AnnIndex(self.data_dir / "vectors.usearch", dim, epoch)
            self._ann.sync(matrix.seqs, matrix.matrix, np.arange(len(matrix.seqs)), generation)
            matrix.ann = self._ann
        self._matrix = matrix
        return matrix

    def vector_search(self, query: Vectors, k: int, flt: SearchFilter) -> list[tuple[str, float]]:
        ids = self.filter_doc_ids(flt)
        return self._vector_matrix().search(
            query, k, flt.collections, None if ids is None else set(ids), flt.include_superseded
        )

    def candidates(
        self, terms: Sequence[str], query: Vectors | None, k: int, flt: SearchFilter,
        keyword: bool = True, coverage: bool = False,
    ) -> tuple[dict[str, list[tuple[str, float]]], float]:  # fmt: skip
        """Both retrievers' top-k and the terms' coverage (in-process, so no round trips to save)."""
        lists: dict[str, list[tuple[str, float]]] = {}
        if keyword:
            lists["keyword"] = self.keyword_search(terms, k, flt)
        if query is not None:
            lists["semantic"] = self.vector_search(query, k, flt)
        return lists, self.keyword_coverage(terms) if coverage else 0.0
