"""Dense retrieval of the embedded store: a saved HNSW file (memory-mapped) for the bulk of a large
store, an exact scan of the rows in memory for the rest (all rows of a small store).

HNSW candidates are resolved in SQLite: that drops chunks deleted since the file was saved, applies
the filters and re-scores with the stored float32 vectors, so the int8 index only has to rank.
Nothing here is loaded per query: a new generation reads what changed, a new file is re-mapped.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.embed.base import Vectors
from docshelf.store.embedded import ann as ann_file
from docshelf.store.embedded.ann import Ann, AnnMeta, AnnOptions, ann_available
from docshelf.store.embedded.vectors import ExactRows, Hit, read_filled, snapshot

if TYPE_CHECKING:
    import numpy as np
else:
    from docshelf.lazy import numpy as np

__all__ = ["DenseIndex"]

log = logging.getLogger("docshelf.store")

_RESOLVE_SQL = (
    "SELECT c.seq, c.id, c.doc_id, d.collection, d.lifecycle, v.vector FROM chunks c "
    "JOIN documents d ON d.id = c.doc_id JOIN vectors v ON v.key = c.embed_key WHERE c.seq IN ({})"
)
# nothing to filter by: the documents join is a third of the resolve (100k chunks, 240 keys)
_RESOLVE_PLAIN_SQL = (
    "SELECT c.seq, c.id, v.vector FROM chunks c JOIN vectors v ON v.key = c.embed_key WHERE c.seq IN ({})"
)
_SUPERSEDED_SQL = "SELECT EXISTS(SELECT 1 FROM documents WHERE lifecycle = 'superseded')"
_SCAN_BATCH = 4096
_RESCORE_EXTRA = 40
_DEEPEST = 50_000  # keys a filtered search asks the graph for before it scans the rows


class DenseIndex:
    """One store's dense side; ``refresh`` before each search, ``publish`` from the writer's commit."""

    def __init__(
        self, reader: Callable[[], sqlite3.Connection], writer: sqlite3.Connection,
        lock: AbstractContextManager[Any], data_dir: Path, opts: AnnOptions,
    ) -> None:  # fmt: skip
        """``reader`` gives the calling thread's read connection (searches never wait for a write);
        ``writer`` and ``lock`` are the writer's, used at publish only."""
        self._read = reader
        self._conn = writer
        self._lock = lock
        self.data_dir = data_dir
        self.opts = opts
        self._refresh_lock = threading.Lock()
        self.versions: tuple[int, str, int] = (-1, "", 0)  # generation, vectors epoch, dim
        self.ann: Ann | None = None
        self._exact: ExactRows | None = None  # made when first read (numpy): keyword searches never are
        self.superseded = True  # whether any document is, as of ``versions``

    # ----- keeping in step -----
    def refresh(self, generation: int, epoch: str, dim: int) -> None:
        """Bring the in-memory rows and the mapped file up to ``generation`` (cheap when unchanged)."""
        if self.versions == (generation, epoch, dim):
            return
        with self._refresh_lock:
            if self.versions == (generation, epoch, dim):
                return
            if self.versions[1:] != (epoch, dim):
                self.ann, self._exact = None, ExactRows.empty(0, dim)
            meta = ann_file.read_meta(self.data_dir)
            if meta is not None and (meta.dim, meta.epoch) != (dim, epoch):
                meta = None  # another model, or vectors re-embedded since: the writer rebuilds it
            if meta is None:
                self.ann = self.ann if self.ann is not None and self._built_here(self.ann) else None
            elif self.ann is None or self.ann.meta != meta:
                self.ann = Ann.open(self.data_dir, meta, self.opts) or self.ann
            conn = self._read()
            with snapshot(conn):
                wanted = self.ann is None and dim and ann_available()
                if wanted and self._with_vectors(conn, 0) >= self._limit():
                    # a large store without a usable file (removed, or a re-embed not yet published):
                    # built in memory for this process; only a writer saves one
                    log.warning("no saved HNSW index for %s; building one in memory", self.data_dir)
                    self.ann = ann_file.build_ann(
                        conn, self.data_dir, dim, epoch, generation, self.opts, save=False
                    )
                meta = self.ann.meta if self.ann is not None else None
                after, filled = (meta.max_seq, meta.max_filled) if meta is not None else (0, 0)
                self._exact = self.exact.refreshed(conn, after, filled)
                self.superseded = bool(conn.execute(_SUPERSEDED_SQL).fetchone()[0])
            self.versions = (generation, epoch, dim)

    @property
    def exact(self) -> ExactRows:
        """The rows the HNSW file does not hold, scanned exactly."""
        if self._exact is None:
            self._exact = ExactRows.empty(0, 0)
        return self._exact

    def _built_here(self, ann: Ann) -> bool:
        return not (self.data_dir / ann.meta.file).exists()

    def _limit(self) -> int:
        return max(1, self.opts.threshold) + self.opts.rebuild_rows

    @staticmethod
    def _outside(conn: sqlite3.Connection, after: int) -> int:
        return int(conn.execute("SELECT count(*) FROM chunks WHERE seq > ?", (after,)).fetchone()[0])

    @staticmethod
    def _with_vectors(conn: sqlite3.Connection, after: int) -> int:
        """Chunks above seq ``after`` that have their vector (the others wait in ``unembedded``)."""
        chunks = DenseIndex._outside(conn, after)
        try:
            waiting = conn.execute("SELECT count(*) FROM unembedded WHERE seq > ?", (after,)).fetchone()[0]
        except sqlite3.OperationalError:  # an index from before schema 6, read-only: all have one
            return chunks
        return chunks - int(waiting)

    def publish(self, generation: int, epoch: str, dim: int) -> None:
        """Writer, at commit: build the HNSW file once the store is large, fold outside rows into it
        once there are ``rebuild_rows`` of them (or a tenth of its keys are gone), drop it when small."""
        if not dim or not ann_available():
            return
        with self._lock:
            meta = ann_file.read_meta(self.data_dir)
            want = (dim, epoch, self.opts.dtype, self.opts.connectivity)
            if meta is not None and (meta.dim, meta.epoch, meta.dtype, meta.connectivity) != want:
                meta = None  # rebuilt whole: a file is never extended in another kind or with other links
            # chunks with a vector: one swapped in keyword-first is not in any file until it has one
            total = self._with_vectors(self._conn, 0)
            if total < self.opts.threshold:
                if ann_file.read_meta(self.data_dir) is not None:
                    ann_file.remove_ann(self.data_dir)
                return
            if meta is not None:
                # given their vector since the file was saved, though their seq is within it
                sql = "SELECT count(*) FROM filled WHERE n > ? AND seq <= ?"
                late = sum(int(r[0]) for r in read_filled(self._conn, sql, (meta.max_filled, meta.max_seq)))
                outside = self._with_vectors(self._conn, meta.max_seq) + late
                gone = meta.count - (total - outside)
                if outside < self.opts.rebuild_rows and gone * 10 <= meta.count:
                    return
            try:
                ann_file.build_ann(self._conn, self.data_dir, dim, epoch, generation, self.opts, base=meta)
            except (OSError, RuntimeError) as exc:  # derived data: the rows stay searchable exactly
                log.warning("HNSW index in %s not saved (%s); the next commit retries", self.data_dir, exc)
                ann_file.remove_partial(self.data_dir)
                return
        self.versions = (-1, "", 0)  # re-map the new file at the next search

    # ----- search -----
    def search(
        self, query: Vectors, k: int, collections: Sequence[str] = (), doc_ids: set[str] | None = None,
        include_superseded: bool = False,
    ) -> list[tuple[str, float]]:  # fmt: skip
        """Top-k (chunk id, cosine) over both parts; filters applied before ranking."""
        q = np.asarray(query, dtype=np.float32)
        hits = self.exact.search(q, k, collections, doc_ids, include_superseded)
        ann = self.ann
        if ann is not None and len(ann):
            hits += self._ann_hits(ann, q, k, collections, doc_ids, include_superseded)
        best: dict[str, float] = {}
        for _, cid, score in sorted(hits, key=lambda h: -h[2]):
            best.setdefault(cid, score)
        return list(best.items())[:k]

    def _ann_hits(
        self, ann: Ann, q: Vectors, k: int, collections: Sequence[str], doc_ids: set[str] | None,
        include_superseded: bool,
    ) -> list[Hit]:  # fmt: skip
        selective = bool(collections) or doc_ids is not None
        # over-fetched: the int8 ranking is re-done with float32, so a true top-k hit ranked a
        # little lower by the index still makes it (recall@10 0.957 -> 0.998 with 40 more)
        wanted = min(len(ann), k * 8 if selective else k + _RESCORE_EXTRA)
        hits = self._graph_hits(ann, q, wanted, collections, doc_ids, include_superseded)
        if len(hits) >= k or wanted >= len(ann):
            return hits
        if hits:  # too few passed: search deeper where the filter's share says k more are to be found
            deeper = min(len(ann), _DEEPEST, math.ceil(wanted * k / len(hits) * 2))
            if deeper > wanted:
                hits = self._graph_hits(ann, q, deeper, collections, doc_ids, include_superseded)
                if len(hits) >= k:
                    return hits
        return self._scan(ann.meta, q, k, collections, doc_ids, include_superseded)

    def _graph_hits(
        self, ann: Ann, q: Vectors, count: int, collections: Sequence[str], doc_ids: set[str] | None,
        include_superseded: bool,
    ) -> list[Hit]:  # fmt: skip
        keys = ann.search(q, count)
        if len(keys) < count:
            # the graph search ended early: seen at a million rows, where it returned 64 keys for
            # any count from a region it could not leave (and fell through to the O(rows) scan,
            # 50 s); the file's own exact ranking, in C, costs ~90 ms there
            log.debug("HNSW search returned %d of %d keys; ranking the file exactly", len(keys), count)
            keys = ann.search(q, count, exact=True, threads=self.opts.threads)
        return self._resolve(keys, q, collections, doc_ids, include_superseded)

    def _resolve(
        self, keys: np.ndarray[Any, Any], q: Vectors, collections: Sequence[str], doc_ids: set[str] | None,
        include_superseded: bool,
    ) -> list[Hit]:  # fmt: skip
        """The keys still in the store that pass the filter, scored with their float32 vectors."""
        out: list[Hit] = []
        keys_list = [int(x) for x in keys]
        conn = self._read()
        plain = not collections and doc_ids is None and (include_superseded or not self.superseded)
        for i in range(0, len(keys_list), 900):  # under SQLite's default variable limit
            part = keys_list[i : i + 900]
            marks = ",".join("?" * len(part))
            if plain:
                out += _scored(conn.execute(_RESOLVE_PLAIN_SQL.format(marks), part).fetchall(), q)
            else:
                rows = conn.execute(_RESOLVE_SQL.format(marks), part).fetchall()
                out += self._passing(rows, q, collections, doc_ids, include_superseded)
        return out

    @staticmethod
    def _passing(
        rows: list[Any], q: Vectors, collections: Sequence[str], doc_ids: set[str] | None,
        include_superseded: bool,
    ) -> list[Hit]:  # fmt: skip
        kept = [
            r for r in rows
            if (not collections or r[3] in collections)
            and (include_superseded or r[4] != "superseded")
            and (doc_ids is None or r[2] in doc_ids)
        ]  # fmt: skip
        return _scored(kept, q, vector=5)

    def _scan(
        self, meta: AnnMeta, q: Vectors, k: int, collections: Sequence[str], doc_ids: set[str] | None,
        include_superseded: bool,
    ) -> list[Hit]:  # fmt: skip
        """Exact scan of the file's rows passing a narrow filter, streamed from SQLite."""
        sql = _RESOLVE_SQL.split(" WHERE ")[0] + " WHERE c.seq <= ?"
        args: list[Any] = [meta.max_seq]
        if collections:
            sql += f" AND d.collection IN ({','.join('?' * len(collections))})"
            args += list(collections)
        if doc_ids is not None and len(doc_ids) <= 900:
            sql += f" AND c.doc_id IN ({','.join('?' * len(doc_ids))})"
            args += sorted(doc_ids)
        best: list[Hit] = []
        cursor = self._read().execute(sql, args)
        while rows := cursor.fetchmany(_SCAN_BATCH):
            best = sorted(best + self._passing(rows, q, collections, doc_ids, include_superseded),
                          key=lambda h: -h[2])[:k]  # fmt: skip
        return best


def _scored(rows: list[Any], q: Vectors, vector: int = 2) -> list[Hit]:
    """(seq, chunk id, cosine) of rows starting (seq, id) with their float32 vector at ``vector``."""
    if not rows:
        return []
    # one buffer for all rows: a tenth of the time of stacking one array per row
    matrix = np.frombuffer(b"".join([r[vector] for r in rows]), dtype=np.float32).reshape(len(rows), -1)
    scores: list[float] = (matrix @ q).tolist()
    return [(int(r[0]), str(r[1]), s) for r, s in zip(rows, scores, strict=True)]
