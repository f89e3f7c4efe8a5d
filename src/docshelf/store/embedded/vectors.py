"""Exact vector search over all stored vectors with numpy (cosine on normalised rows)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from docshelf.embed.base import Vectors
from docshelf.store.embedded.ann import AnnIndex

__all__ = ["VectorMatrix", "load_matrix", "top_k"]


def top_k(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Indices of the k largest scores, best first (argpartition, then sort the few)."""
    if k <= 0 or scores.size == 0:
        return np.zeros(0, dtype=np.intp)
    part = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
    return part[np.argsort(-scores[part], kind="stable")]


@dataclass
class VectorMatrix:
    """All chunk vectors of a store generation, with the chunk and document each row belongs to."""

    generation: int
    chunk_ids: list[str]
    doc_ids: npt.NDArray[np.object_]
    collections: npt.NDArray[np.object_]
    superseded: npt.NDArray[np.bool_]
    matrix: Vectors
    seqs: npt.NDArray[np.int64]  # chunk seq of each row, ascending (the ANN keys)
    ann: AnnIndex | None = None
    loaded_at: float = field(default_factory=time.monotonic)

    def search(
        self,
        query: Vectors,
        k: int,
        collections: Sequence[str] = (),
        doc_ids: set[str] | None = None,
        include_superseded: bool = False,
    ) -> list[tuple[str, float]]:
        if not self.chunk_ids:
            return []
        q = query.astype(np.float32)
        mask = np.ones(len(self.chunk_ids), dtype=bool)
        if collections:
            mask &= np.isin(self.collections, list(collections))
        if not include_superseded:
            mask &= ~self.superseded
        if doc_ids is not None:
            mask &= np.isin(self.doc_ids, list(doc_ids))
        allowed = int(mask.sum())
        k = min(k, allowed)
        if k <= 0:
            return []
        if self.ann is not None:
            hits = self._ann_search(q, k, mask, allowed)
            if hits is not None:
                return hits
        # float32 on purpose: numpy has no BLAS kernel for float16 and runs ~50x slower on it.
        rows = np.arange(len(self.chunk_ids)) if allowed == mask.size else np.flatnonzero(mask)
        scores = self.matrix[rows] @ q if allowed != mask.size else self.matrix @ q
        best = top_k(scores, k)
        return [(self.chunk_ids[rows[i]], float(scores[i])) for i in best]

    def _ann_search(
        self, q: Vectors, k: int, mask: npt.NDArray[np.bool_], allowed: int
    ) -> list[tuple[str, float]] | None:
        """HNSW candidates, filtered and scored exactly; None when the filter left too few."""
        assert self.ann is not None
        selective = allowed < mask.size
        keys = self.ann.search(q, min(len(self.chunk_ids), k * 8 if selective else k))
        rows = np.searchsorted(self.seqs, keys)
        known = rows < len(self.seqs)
        known[known] = self.seqs[rows[known]] == keys[known]  # a key of a chunk deleted meanwhile
        rows = rows[known]
        rows = rows[mask[rows]]
        if rows.size < k:
            return None  # a narrow filter: the exact scan over the few allowed rows is cheap
        scores = self.matrix[rows] @ q
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.chunk_ids[rows[i]], float(scores[i])) for i in order]


def load_matrix(conn: sqlite3.Connection, dim: int, generation: int) -> VectorMatrix:
    """Every chunk vector with its chunk, document, collection and lifecycle, in chunk order."""
    rows = conn.execute(
        "SELECT c.id, c.doc_id, d.collection, d.lifecycle, v.vector, c.seq FROM chunks c "
        "JOIN documents d ON d.id = c.doc_id JOIN vectors v ON v.key = c.embed_key ORDER BY c.seq"
    ).fetchall()
    matrix = np.zeros((len(rows), dim), dtype=np.float32)
    for i, row in enumerate(rows):
        matrix[i] = np.frombuffer(row[4], dtype=np.float32)
    return VectorMatrix(
        generation=generation,
        chunk_ids=[r[0] for r in rows],
        doc_ids=np.array([r[1] for r in rows], dtype=object),
        collections=np.array([r[2] for r in rows], dtype=object),
        superseded=np.array([r[3] == "superseded" for r in rows], dtype=bool),
        matrix=matrix,
        seqs=np.array([r[5] for r in rows], dtype=np.int64),
    )
