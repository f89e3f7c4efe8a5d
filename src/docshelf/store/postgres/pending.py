"""Chunks swapped in before their vectors (PostgreSQL): their ``embedding`` is NULL until the
embedding phase gives them one; listed for it, counted for `status` and the search note."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from docshelf.embed.base import Vectors
from docshelf.store.base import Unembedded
from docshelf.store.postgres import ops
from docshelf.types import TITLE_READ

__all__ = ["PgPending"]

_PAGE_SQL = (
    f"SELECT c.seq, c.id, c.doc_id, d.collection, d.path, c.embed_key, left(d.title, {TITLE_READ}), "
    "c.heading_path, c.text "
    "FROM chunks c JOIN documents d ON d.id = c.doc_id "
    "WHERE c.embedding IS NULL AND c.seq > %s ORDER BY c.seq LIMIT %s"
)


class PgPending:
    """Mixed into the PostgreSQL store; needs its readers and transactions."""

    def _q(self, sql: str, params: Any = None, binary: bool = False) -> list[Any]:
        raise NotImplementedError

    def _one(self, sql: str, params: Any = None) -> Any:
        raise NotImplementedError

    def _tx(self) -> Any:
        raise NotImplementedError

    def unembedded_chunks(self, after: int, limit: int) -> list[Unembedded]:
        rows = self._q(_PAGE_SQL, (after, limit))
        return [Unembedded(r[0], r[1], r[2], r[3], r[4], r[5], r[6], tuple(r[7]), r[8]) for r in rows]

    def missing_vectors(self, collections: Sequence[str] = ()) -> int:
        if not collections:
            return int(self._one("SELECT count(*) FROM chunks WHERE embedding IS NULL")[0])
        sql = "SELECT count(*) FROM chunks WHERE embedding IS NULL AND collection = ANY(%s)"
        return int(self._one(sql, (list(collections),))[0])

    def chunk_count(self, collections: Sequence[str] = ()) -> int:
        if not collections:
            return int(self._one("SELECT count(*) FROM chunks")[0])
        sql = "SELECT count(*) FROM chunks WHERE collection = ANY(%s)"
        return int(self._one(sql, (list(collections),))[0])

    def without_vectors(self, chunk_ids: Sequence[str]) -> set[str]:
        if not chunk_ids:
            return set()
        rows = self._q("SELECT id FROM chunks WHERE id = ANY(%s) AND embedding IS NULL", (list(chunk_ids),))
        return {r[0] for r in rows}

    def add_vectors(self, vectors: Mapping[str, Vectors]) -> int:
        if not vectors:
            return 0
        keys = sorted(vectors)
        with self._tx() as conn:
            updated = conn.execute(
                "UPDATE chunks c SET embedding = v.e::vector FROM unnest(%s::text[], %s::text[]) AS v(k, e) "
                "WHERE c.embed_key = v.k AND c.embedding IS NULL",
                (keys, [ops.vector_text(vectors[k]) for k in keys]),
            ).rowcount
            if updated:
                ops.bump(conn)
        return int(updated)
