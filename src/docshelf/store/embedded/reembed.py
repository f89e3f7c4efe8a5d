"""Re-embedding the SQLite store: new vectors kept aside per chunk, swapped in all at once."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from docshelf.embed.base import Vectors
from docshelf.errors import StoreError
from docshelf.store.embedded.ops import SQLiteTx

if TYPE_CHECKING:
    import numpy as np
else:
    from docshelf.lazy import numpy as np

__all__ = ["PENDING_KEY", "SQLiteReembed"]

PENDING_KEY = "reembed_pending"  # meta: {"model", "dim"} of a re-embed not finished yet


class SQLiteReembed:
    """Mixed into the SQLite store; needs its connection, lock, meta and transaction helpers."""

    _conn: sqlite3.Connection
    _lock: threading.RLock

    def _meta(self, key: str) -> str | None:
        raise NotImplementedError

    def _set_meta(self, key: str, value: str) -> None:
        raise NotImplementedError

    def _bump_vectors(self) -> None:
        raise NotImplementedError

    def _tx(self) -> SQLiteTx:
        raise NotImplementedError

    def reembed_pending(self) -> dict[str, Any] | None:
        raw = self._meta(PENDING_KEY)
        if raw is None:  # (always so in a read-only store from before schema 3: no reembed table)
            return None
        with self._lock:
            staged, chunks = self._conn.execute(
                "SELECT (SELECT COUNT(*) FROM reembed r JOIN chunks c ON c.id = r.chunk_id), "
                "(SELECT COUNT(*) FROM chunks)"
            ).fetchone()
        return {**json.loads(raw), "staged": int(staged), "chunks": int(chunks)}

    def begin_reembed(self, name: str, dim: int) -> None:
        """Record the re-embed; vectors kept aside for another model are dropped."""
        target = json.dumps({"model": name, "dim": dim})
        with self._tx() as conn:
            if self._meta(PENDING_KEY) != target:
                conn.execute("DELETE FROM reembed")
                self._set_meta(PENDING_KEY, target)

    def staged_keys(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for i in range(0, len(chunk_ids), 500):
            part = list(chunk_ids[i : i + 500])
            marks = ",".join("?" * len(part))
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT chunk_id, key FROM reembed WHERE chunk_id IN ({marks})", part
                ).fetchall()
            out.update(rows)
        return out

    def stage_vectors(self, rows: Sequence[tuple[str, str, Vectors]]) -> None:
        with self._tx() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO reembed(chunk_id, key, vector) VALUES(?, ?, ?)",
                [(cid, key, np.asarray(v, dtype=np.float32).tobytes()) for cid, key, v in rows],
            )

    def finish_reembed(self, name: str, dim: int) -> int:
        """Swap every chunk to its new vector and record the new model, in one transaction."""
        with self._tx() as conn:
            missing = conn.execute(
                "SELECT COUNT(*) FROM chunks WHERE id NOT IN (SELECT chunk_id FROM reembed)"
            ).fetchone()[0]
            if missing:
                raise StoreError(
                    f"{missing} chunks have no new vector yet; run `docshelf index --reembed` again"
                )
            swapped = conn.execute(
                "UPDATE chunks SET embed_key = (SELECT key FROM reembed WHERE chunk_id = chunks.id)"
            ).rowcount
            conn.execute("DELETE FROM vectors")
            conn.execute(
                "INSERT OR IGNORE INTO vectors(key, vector) "
                "SELECT r.key, r.vector FROM reembed r JOIN chunks c ON c.id = r.chunk_id"
            )
            conn.execute("DELETE FROM reembed")
            conn.execute("DELETE FROM unembedded")  # every chunk has its new vector now
            conn.execute("DELETE FROM filled")  # the new epoch has the dense side read every row again
            conn.execute("DELETE FROM meta WHERE key = ?", (PENDING_KEY,))
            self._set_meta("embed_model", name)
            self._set_meta("embed_dim", str(dim))
            # the chunks keep their seqs but not their vectors: a saved HNSW index is rebuilt
            self._set_meta("vectors_epoch", str(int(self._meta("vectors_epoch") or 0) + 1))
            self._bump_vectors()
        return int(swapped)
