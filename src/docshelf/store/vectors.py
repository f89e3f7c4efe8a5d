"""Exact vector search over all stored vectors with numpy (cosine on normalised rows)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from docshelf.embed.base import Vectors

__all__ = ["VectorMatrix", "top_k"]


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
        # float32 on purpose: numpy has no BLAS kernel for float16 and runs ~50x slower on it.
        scores = self.matrix @ query.astype(np.float32)
        mask = np.ones(len(self.chunk_ids), dtype=bool)
        if collections:
            mask &= np.isin(self.collections, list(collections))
        if not include_superseded:
            mask &= ~self.superseded
        if doc_ids is not None:
            mask &= np.isin(self.doc_ids, list(doc_ids))
        if not mask.all():
            scores = np.where(mask, scores, -np.inf).astype(np.float32)
        best = top_k(scores, min(k, int(mask.sum())))
        return [(self.chunk_ids[i], float(scores[i])) for i in best]
