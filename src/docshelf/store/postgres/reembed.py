"""Re-embedding the PostgreSQL store: new vectors kept aside per chunk, swapped in all at once."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from docshelf.embed.base import Vectors
from docshelf.errors import StoreError
from docshelf.store.postgres import ops

__all__ = ["PENDING_KEY", "PgReembed"]

PENDING_KEY = "reembed_pending"  # meta: {"model", "dim"} of a re-embed not finished yet


class PgReembed:
    """Mixed into the PostgreSQL store; needs its query and transaction helpers."""

    def _q(self, sql: str, params: Any = None) -> list[Any]:
        raise NotImplementedError

    def _tx(self) -> Any:
        raise NotImplementedError

    def get_meta(self, key: str) -> str | None:
        raise NotImplementedError

    def reembed_pending(self) -> dict[str, Any] | None:
        raw = self.get_meta(PENDING_KEY)
        if raw is None:
            return None
        staged, chunks = self._q(
            "SELECT (SELECT count(*) FROM reembed r JOIN chunks c ON c.id = r.chunk_id), "
            "(SELECT count(*) FROM chunks)"
        )[0]
        return {**json.loads(raw), "staged": int(staged), "chunks": int(chunks)}

    def begin_reembed(self, name: str, dim: int) -> None:
        """Record the re-embed; vectors kept aside for another model are dropped."""
        target = json.dumps({"model": name, "dim": dim})
        with self._tx() as conn:
            sql = "SELECT value FROM meta WHERE key = %s FOR UPDATE"
            row = conn.execute(sql, (PENDING_KEY,)).fetchone()
            if row is None or row[0] != target:
                conn.execute("DELETE FROM reembed")
                ops.set_meta(conn, PENDING_KEY, target)

    def staged_keys(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        rows = self._q("SELECT chunk_id, key FROM reembed WHERE chunk_id = ANY(%s)", (list(chunk_ids),))
        return {r[0]: r[1] for r in rows}

    def stage_vectors(self, rows: Sequence[tuple[str, str, Vectors]]) -> None:
        with self._tx() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO reembed(chunk_id, key, embedding) VALUES(%s, %s, %s::vector) "
                "ON CONFLICT(chunk_id) DO UPDATE SET key = excluded.key, embedding = excluded.embedding",
                [(cid, key, ops.vector_text(v)) for cid, key, v in rows],
            )

    def finish_reembed(self, name: str, dim: int) -> int:
        """Swap every chunk to its new vector and record the new model, in one transaction."""
        with self._tx() as conn:
            missing = conn.execute(
                "SELECT count(*) FROM chunks c "
                "WHERE NOT EXISTS (SELECT 1 FROM reembed r WHERE r.chunk_id = c.id)"
            ).fetchone()[0]
            if missing:
                raise StoreError(
                    f"{missing} chunks have no new vector yet; run `docshelf index --reembed` again"
                )
            # the column loses its dimension (and its HNSW index) while vectors of both models exist
            conn.execute("DROP INDEX IF EXISTS chunks_hnsw")
            conn.execute("ALTER TABLE chunks ALTER COLUMN embedding TYPE vector")
            swapped = conn.execute(
                "UPDATE chunks c SET embed_key = r.key, embedding = r.embedding FROM reembed r "
                "WHERE r.chunk_id = c.id"
            ).rowcount
            conn.execute("DELETE FROM reembed")
            conn.execute("DELETE FROM meta WHERE key = %s", (PENDING_KEY,))
            ops.set_meta(conn, "embed_model", name)
            ops.set_meta(conn, "embed_dim", str(dim))
            ops.ensure_vector_column(conn, dim)
            ops.bump(conn)
        return int(swapped)
