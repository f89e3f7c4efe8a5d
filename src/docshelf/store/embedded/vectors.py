"""Exact vector search over the rows kept in memory: every row of a small store, or the rows of a
large one written since its HNSW file was saved. Kept in step incrementally (a new generation
reads the new rows' vectors and drops the gone ones), so an edit costs its own rows, not a reload."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from docshelf.embed.base import Vectors

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from docshelf.lazy import numpy as np

__all__ = ["ExactRows", "Hit", "top_k"]

Hit = tuple[int, str, float]  # (chunk seq, chunk id, cosine)

_ROWS_SQL = (
    "SELECT c.seq, c.id, c.doc_id, d.collection, d.lifecycle, v.vector FROM chunks c "
    "JOIN documents d ON d.id = c.doc_id JOIN vectors v ON v.key = c.embed_key "
    "WHERE c.seq > ? ORDER BY c.seq"
)


def top_k(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Indices of the k largest scores, best first (argpartition, then sort the few)."""
    if k <= 0 or scores.size == 0:
        return np.zeros(0, dtype=np.intp)
    part = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
    return part[np.argsort(-scores[part], kind="stable")]


@dataclass(frozen=True)
class ExactRows:
    """Rows with a seq above ``after``; immutable, so a search never sees a half-done refresh."""

    after: int
    dim: int
    scanned: int  # the highest seq read so far (seqs are never reused, so newer rows are above)
    seqs: npt.NDArray[np.int64]
    chunk_ids: npt.NDArray[np.object_]
    doc_ids: npt.NDArray[np.object_]
    collections: npt.NDArray[np.object_]
    superseded: npt.NDArray[np.bool_]
    matrix: Vectors

    @classmethod
    def empty(cls, after: int, dim: int) -> ExactRows:
        obj = np.zeros(0, dtype=object)
        return cls(after, dim, after, np.zeros(0, np.int64), obj, obj, obj, np.zeros(0, bool),
                   np.zeros((0, dim), np.float32))  # fmt: skip

    def __len__(self) -> int:
        return int(self.seqs.size)

    def refreshed(self, conn: sqlite3.Connection, after: int) -> ExactRows:
        """The rows above ``after`` as the database holds them now."""
        if after < self.after:
            return ExactRows.empty(after, self.dim).refreshed(conn, after)
        live = np.fromiter(
            (r[0] for r in conn.execute("SELECT seq FROM chunks WHERE seq > ?", (after,))), dtype=np.int64
        )
        rows = self
        keep = np.isin(self.seqs, live) & (self.seqs > after)
        if not keep.all():
            rows = replace(
                self, after=after, seqs=self.seqs[keep], chunk_ids=self.chunk_ids[keep],
                doc_ids=self.doc_ids[keep], collections=self.collections[keep],
                superseded=self.superseded[keep], matrix=self.matrix[keep],
            )  # fmt: skip
        if not live.size or int(live.max()) <= self.scanned:
            return replace(rows, after=after)
        new = conn.execute(_ROWS_SQL, (max(self.scanned, after),)).fetchall()
        if not new:
            return replace(rows, after=after, scanned=int(live.max()))
        matrix = np.empty((len(new), self.dim), dtype=np.float32)
        for i, r in enumerate(new):
            matrix[i] = np.frombuffer(r[5], dtype=np.float32)
        return replace(
            rows,
            after=after,
            scanned=max(int(live.max()), int(new[-1][0])),
            seqs=np.concatenate([rows.seqs, np.fromiter((r[0] for r in new), np.int64, len(new))]),
            chunk_ids=np.concatenate([rows.chunk_ids, np.array([r[1] for r in new], dtype=object)]),
            doc_ids=np.concatenate([rows.doc_ids, np.array([r[2] for r in new], dtype=object)]),
            collections=np.concatenate([rows.collections, np.array([r[3] for r in new], dtype=object)]),
            superseded=np.concatenate([rows.superseded, np.array([r[4] == "superseded" for r in new])]),
            matrix=np.concatenate([rows.matrix, matrix]),
        )

    def search(
        self,
        query: Vectors,
        k: int,
        collections: Sequence[str] = (),
        doc_ids: set[str] | None = None,
        include_superseded: bool = False,
    ) -> list[Hit]:
        """The k best rows passing the filter, best first."""
        if not len(self) or k <= 0:
            return []
        mask = np.ones(len(self), dtype=bool)
        if collections:
            mask &= np.isin(self.collections, list(collections))
        if not include_superseded:
            mask &= ~self.superseded
        if doc_ids is not None:
            mask &= np.isin(self.doc_ids, list(doc_ids))
        if mask.all():
            rows = np.arange(len(self))
            scores = self.matrix @ query
        else:
            rows = np.flatnonzero(mask)
            scores = self.matrix[rows] @ query
        best = top_k(scores, k)
        return [(int(self.seqs[rows[i]]), str(self.chunk_ids[rows[i]]), float(scores[i])) for i in best]
