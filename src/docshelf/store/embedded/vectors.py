"""Exact vector search over the rows kept in memory: every row of a small store, or the rows of a
large one its HNSW file does not hold (written, or given their vector, since it was saved). Kept in
step incrementally (a new generation reads the new rows' vectors and drops the gone ones), so an
edit costs its own rows, not a reload."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from docshelf.embed.base import Vectors

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from docshelf.lazy import numpy as np

__all__ = ["ExactRows", "Hit", "last_filled", "read_filled", "snapshot", "top_k"]

Hit = tuple[int, str, float]  # (chunk seq, chunk id, cosine)

_ROWS_SQL = (
    "SELECT c.seq, c.id, c.doc_id, d.collection, d.lifecycle, v.vector FROM chunks c "
    "JOIN documents d ON d.id = c.doc_id JOIN vectors v ON v.key = c.embed_key "
    "WHERE c.seq > ? ORDER BY c.seq"
)
# chunks given their vector (numbered n) after a reader passed their seq
_FILLED_SQL = (
    "SELECT c.seq, c.id, c.doc_id, d.collection, d.lifecycle, v.vector, f.n FROM filled f "
    "JOIN chunks c ON c.seq = f.seq JOIN documents d ON d.id = c.doc_id "
    "JOIN vectors v ON v.key = c.embed_key WHERE f.n > ? AND f.seq <= ? ORDER BY f.n"
)


@contextlib.contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """One read snapshot for several statements (each is its own otherwise): a chunk given its vector
    between reading the rows by seq and reading ``filled`` would be missed by both."""
    conn.execute("SAVEPOINT docshelf_dense")
    try:
        yield
    finally:
        conn.execute("RELEASE docshelf_dense")


def read_filled(conn: sqlite3.Connection, sql: str, args: Sequence[object] = ()) -> list[Any]:
    """``sql`` on the ``filled`` table; none on an index from before schema 7 opened read-only."""
    try:
        return conn.execute(sql, args).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise


def last_filled(conn: sqlite3.Connection) -> int:
    """The highest number in ``filled`` (0 when none)."""
    rows = read_filled(conn, "SELECT coalesce(max(n), 0) FROM filled")
    return int(rows[0][0]) if rows else 0


def top_k(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Indices of the k largest scores, best first (argpartition, then sort the few)."""
    if k <= 0 or scores.size == 0:
        return np.zeros(0, dtype=np.intp)
    part = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
    return part[np.argsort(-scores[part], kind="stable")]


@dataclass(frozen=True)
class ExactRows:
    """Rows with a seq above ``after``, and those up to it given their vector after the HNSW file was
    saved (numbered above ``filled_after``); immutable, so a search never sees a half-done refresh."""

    after: int
    dim: int
    scanned: int  # the highest seq read so far (seqs are never reused, so newer rows are above)
    seqs: npt.NDArray[np.int64]
    chunk_ids: npt.NDArray[np.object_]
    doc_ids: npt.NDArray[np.object_]
    collections: npt.NDArray[np.object_]
    superseded: npt.NDArray[np.bool_]
    matrix: Vectors
    fills: npt.NDArray[np.int64]  # a row's number in ``filled`` when read from there, else 0
    filled_after: int = 0  # the HNSW file holds the chunks (up to ``after``) filled up to this number
    filled_seen: int = 0  # the highest number in ``filled`` read so far

    @classmethod
    def empty(cls, after: int, dim: int, filled_after: int = 0) -> ExactRows:
        obj = np.zeros(0, dtype=object)
        none = np.zeros(0, np.int64)
        return cls(after, dim, after, none, obj, obj, obj, np.zeros(0, bool), np.zeros((0, dim), np.float32),
                   none, filled_after, filled_after)  # fmt: skip

    def __len__(self) -> int:
        return int(self.seqs.size)

    def refreshed(self, conn: sqlite3.Connection, after: int, filled_after: int = 0) -> ExactRows:
        """The rows outside a file holding seqs up to ``after`` and fills up to ``filled_after``, as
        the database holds them now (read in one snapshot: see ``snapshot``)."""
        if after < self.after or filled_after < self.filled_after:
            return ExactRows.empty(after, self.dim, filled_after).refreshed(conn, after, filled_after)
        live = np.fromiter(
            (r[0] for r in conn.execute("SELECT seq FROM chunks WHERE seq > ?", (after,))), dtype=np.int64
        )
        # rows held from below the file: alive while their chunk (and so its ``filled`` row) is
        sql = "SELECT seq FROM filled WHERE n > ? AND seq <= ?"
        below = read_filled(conn, sql, (filled_after, after)) if after else []
        filled = last_filled(conn)
        rows = self
        keep = np.isin(self.seqs, np.concatenate([live, np.fromiter((r[0] for r in below), np.int64)]))
        keep &= (self.seqs > after) | (self.fills > filled_after)  # the others are in the file now
        if not keep.all():
            rows = rows._only(keep)
        rows = replace(rows, after=after, filled_after=filled_after)
        start = max(self.scanned, after)
        if live.size and int(live.max()) > self.scanned:
            new = conn.execute(_ROWS_SQL, (start,)).fetchall()
            scanned = max(int(live.max()), int(new[-1][0]) if new else 0)
            rows = replace(rows._with([(*r, 0) for r in new]), scanned=scanned)
        seen = max(self.filled_seen, filled_after)  # (those up to ``filled_after`` are in the file)
        if filled > seen:
            # rows whose seq the reads by seq had passed (those above ``start`` came with them just now)
            late = conn.execute(_FILLED_SQL, (seen, start)).fetchall()
            held = np.isin(np.fromiter((r[0] for r in late), np.int64, len(late)), rows.seqs)
            rows = replace(rows._with([r for r, h in zip(late, held, strict=True) if not h]),
                           filled_seen=filled)  # fmt: skip
        return rows

    def _only(self, keep: npt.NDArray[np.bool_]) -> ExactRows:
        return replace(
            self, seqs=self.seqs[keep], chunk_ids=self.chunk_ids[keep], doc_ids=self.doc_ids[keep],
            collections=self.collections[keep], superseded=self.superseded[keep], matrix=self.matrix[keep],
            fills=self.fills[keep],
        )  # fmt: skip

    def _with(self, new: list[tuple[object, ...]]) -> ExactRows:
        """These rows added: (seq, chunk id, doc id, collection, lifecycle, float32 vector, fill)."""
        if not new:
            return self
        matrix = np.empty((len(new), self.dim), dtype=np.float32)
        for i, r in enumerate(new):
            matrix[i] = np.frombuffer(r[5], dtype=np.float32)  # type: ignore[call-overload]
        return replace(
            self,
            seqs=np.concatenate([self.seqs, np.fromiter((r[0] for r in new), np.int64, len(new))]),
            chunk_ids=np.concatenate([self.chunk_ids, np.array([r[1] for r in new], dtype=object)]),
            doc_ids=np.concatenate([self.doc_ids, np.array([r[2] for r in new], dtype=object)]),
            collections=np.concatenate([self.collections, np.array([r[3] for r in new], dtype=object)]),
            superseded=np.concatenate([self.superseded, np.array([r[4] == "superseded" for r in new])]),
            matrix=np.concatenate([self.matrix, matrix]),
            fills=np.concatenate([self.fills, np.fromiter((r[6] for r in new), np.int64, len(new))]),
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
