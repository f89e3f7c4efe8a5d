"""Chunks swapped in before their vectors (SQLite): listed for the embedding phase, given their
vectors afterwards, counted for `status` and the search note.

A chunk without a vector has a row in ``unembedded`` (schema 6). Giving it its vector leaves the
chunk's row, seq and grep trigrams as they are: the vector goes into ``vectors``, the chunk leaves
``unembedded`` and is numbered in ``filled`` (schema 7). The dense side keeps in step by seq (the
rows above the last one it read, and the HNSW file's rows up to its own highest), which cannot see a
chunk it already passed get its vector; it reads ``filled`` after the last number it saw for those
(store/embedded/vectors.py, ann.py).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from docshelf.embed.base import Vectors
from docshelf.store.base import Unembedded
from docshelf.store.embedded.ops import SQLiteTx
from docshelf.types import TITLE_READ

if TYPE_CHECKING:
    import numpy as np
else:
    from docshelf.lazy import numpy as np

__all__ = ["SQLitePending"]

_T = TypeVar("_T")
_PAGE_SQL = (
    "SELECT u.seq, c.id, c.doc_id, d.collection, d.path, c.embed_key, "
    f"substr(d.title, 1, {TITLE_READ}), c.heading_path, c.text "
    "FROM unembedded u JOIN chunks c ON c.seq = u.seq JOIN documents d ON d.id = c.doc_id "
    "WHERE u.seq > ? ORDER BY u.seq LIMIT ?"
)
_IN_COLLECTIONS_SQL = (
    "SELECT count(*) FROM unembedded u JOIN chunks c ON c.seq = u.seq JOIN documents d ON d.id = c.doc_id "
    "WHERE d.collection IN ({})"
)


def _absent(exc: sqlite3.OperationalError) -> bool:
    """An index from before schema 6, opened read-only (nothing migrates it): it has no table, and
    every chunk of it has its vector."""
    return "no such table" in str(exc)


class SQLitePending:
    """Mixed into the SQLite store; needs its read and write connections and its generation."""

    @property
    def _db(self) -> sqlite3.Connection:
        raise NotImplementedError

    def _tx(self) -> SQLiteTx:
        raise NotImplementedError

    def _bump_vectors(self) -> None:
        raise NotImplementedError

    def _read(self, query: Callable[[sqlite3.Connection], _T], default: _T) -> _T:
        try:
            return query(self._db)
        except sqlite3.OperationalError as exc:
            if _absent(exc):
                return default
            raise

    def unembedded_chunks(self, after: int, limit: int) -> list[Unembedded]:
        rows: list[Any] = self._read(lambda db: db.execute(_PAGE_SQL, (after, limit)).fetchall(), [])
        return [
            Unembedded(r[0], r[1], r[2], r[3], r[4], r[5], r[6], tuple(json.loads(r[7])), r[8]) for r in rows
        ]

    def missing_vectors(self, collections: Sequence[str] = ()) -> int:
        if not collections:
            return int(self._read(lambda db: db.execute("SELECT count(*) FROM unembedded").fetchone()[0], 0))
        sql = _IN_COLLECTIONS_SQL.format(",".join("?" * len(collections)))
        return int(self._read(lambda db: db.execute(sql, list(collections)).fetchone()[0], 0))

    def chunk_count(self, collections: Sequence[str] = ()) -> int:
        if not collections:
            return int(self._db.execute("SELECT count(*) FROM chunks").fetchone()[0])
        sql = (
            "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.doc_id "
            f"WHERE d.collection IN ({','.join('?' * len(collections))})"
        )
        return int(self._db.execute(sql, list(collections)).fetchone()[0])

    def missing_by_collection(self) -> dict[str, int]:
        """Chunks still without a vector, per collection (those with none missing left out)."""
        sql = (
            "SELECT d.collection, count(*) FROM unembedded u JOIN chunks c ON c.seq = u.seq "
            "JOIN documents d ON d.id = c.doc_id GROUP BY d.collection"
        )
        return dict(self._read(lambda db: db.execute(sql).fetchall(), []))

    def without_vectors(self, chunk_ids: Sequence[str]) -> set[str]:
        # no count of the pending table first: the searcher asks only once it found some, and a
        # lookup of 200 ids by key is cheaper than counting a large index's pending rows again
        if not chunk_ids:
            return set()
        found: set[str] = set()
        for i in range(0, len(chunk_ids), 500):
            part = list(chunk_ids[i : i + 500])
            sql = (
                "SELECT c.id FROM chunks c JOIN unembedded u ON u.seq = c.seq "
                f"WHERE c.id IN ({','.join('?' * len(part))})"
            )
            rows: list[Any] = self._read(lambda db, s=sql, p=part: db.execute(s, p).fetchall(), [])  # type: ignore[misc]
            found.update(str(r[0]) for r in rows)
        return found

    def add_vectors(self, vectors: Mapping[str, Vectors]) -> int:
        keys = list(vectors)
        if not keys:
            return 0
        with self._tx() as conn:
            rows: list[tuple[int, str]] = []
            for i in range(0, len(keys), 500):
                part = keys[i : i + 500]
                rows += conn.execute(
                    "SELECT c.seq, c.embed_key FROM unembedded u JOIN chunks c ON c.seq = u.seq "
                    f"WHERE c.embed_key IN ({','.join('?' * len(part))})",
                    part,
                ).fetchall()
            if not rows:
                return 0
            rows.sort()
            conn.executemany(
                "INSERT OR IGNORE INTO vectors(key, vector) VALUES(?, ?)",
                [(k, np.asarray(vectors[k], dtype=np.float32).tobytes()) for k in {key for _, key in rows}],
            )
            seqs = [(seq,) for seq, _ in rows]
            conn.executemany("DELETE FROM unembedded WHERE seq = ?", seqs)
            conn.executemany("INSERT OR REPLACE INTO filled(seq) VALUES(?)", seqs)  # a new n: a newer fill
            self._bump_vectors()
        return len(rows)
