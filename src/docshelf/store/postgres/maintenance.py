"""Maintenance of the PostgreSQL store: keyword rebuild, VACUUM, bulk loads without HNSW upkeep."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from docshelf.store.base import DocumentRecord, Progress, TermAnalyzer, report_progress
from docshelf.store.postgres import ops, postings

__all__ = ["PgMaintenance"]

_TABLES = (
    "meta", "collections", "documents", "chunks", "posting_blocks", "posting_tail", "term_stats", "skipped",
    "builds",
)  # fmt: skip


class PgMaintenance:
    """Mixed into the PostgreSQL store; needs its pool, transactions and readers."""

    analyzer: TermAnalyzer
    _pool: Any

    def _tx(self) -> Any:
        raise NotImplementedError

    def _one(self, sql: str, params: Any = None) -> Any:
        raise NotImplementedError

    def model(self) -> tuple[str | None, int | None]:
        raise NotImplementedError

    def iter_documents(self, collection: str | None = None) -> Iterator[DocumentRecord]:
        raise NotImplementedError

    @contextmanager
    def bulk_load(self, build_workers: int = 2) -> Iterator[None]:
        """Drop the HNSW index for a large load (``migrate``) and build it once afterwards."""
        with self._tx() as conn:
            conn.execute("DROP INDEX IF EXISTS chunks_hnsw")
        try:
            yield
        finally:
            if self.model()[1]:
                with self._tx() as conn:
                    conn.execute("SET LOCAL maintenance_work_mem = '512MB'")
                    conn.execute(f"SET LOCAL max_parallel_maintenance_workers = {int(build_workers)}")
                    conn.execute(ops.HNSW_SQL)

    def rebuild_keyword_index(self, progress: Progress | None = None) -> int:
        """Re-derive every posting with the configured analyzer (no re-embedding)."""
        docs = {d.id: d for d in self.iter_documents()}
        count = total = 0
        df: Counter[str] = Counter()
        with self._tx() as conn:
            conn.execute("SELECT 1 FROM corpus_stats FOR UPDATE")
            conn.execute("TRUNCATE posting_tail, posting_blocks, term_stats")
            rows = conn.execute(
                "SELECT seq, doc_id, text, heading_path, collection, superseded FROM chunks"
            ).fetchall()
            with conn.cursor() as cur:
                for seq, doc_id, text, heading, collection, superseded in rows:
                    doc = docs.get(doc_id)
                    counts = Counter(self.analyzer.chunk_terms(doc.title if doc else None, heading, text))
                    total += sum(counts.values())
                    cur.execute(
                        "UPDATE chunks SET n_terms=%s, terms=%s WHERE seq=%s",
                        (sum(counts.values()), sorted(counts), seq),
                    )
                    df += ops.write_postings(cur, collection, superseded, [(seq, counts)])
                    count += 1
                    report_progress(progress, count, len(rows))
            ops.count_terms(conn, dict(df))
            conn.execute(
                "UPDATE corpus_stats SET chunks=%s, terms=%s, postings=%s, packed=0",
                (count, total, sum(df.values())),
            )
            conn.execute(postings.compact_sql())
            ops.set_meta(conn, "analyzer", self.analyzer.fingerprint)
            ops.bump(conn)
        return count

    def pack_postings(self, force: bool = False) -> None:
        """Move the tail into blocks once it holds ``postings.TAIL_MIN`` rows; repack when the
        postings of deleted chunks are ``postings.STALE_SHARE`` of the packed ones."""
        with self._tx() as conn:
            conn.execute("SELECT 1 FROM corpus_stats FOR UPDATE")
            tail = conn.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM posting_tail LIMIT {postings.TAIL_MIN}) t"
            ).fetchone()[0]
            if force or tail >= postings.TAIL_MIN:
                conn.execute(postings.compact_sql())
            if force or postings.stale_share(conn) >= postings.STALE_SHARE:
                postings.repack(conn)

    def compact(self) -> tuple[int, int]:
        """VACUUM ANALYZE the docshelf tables; returns database bytes before and after."""
        before = self._size()
        with self._pool.connection() as conn:  # pooled connections are in autocommit mode
            for table in ("posting_blocks", "posting_tail", "term_stats", "chunks", "documents", "meta"):
                conn.execute(f"VACUUM ANALYZE {table}")
        return before, self._size()

    def _size(self) -> int:
        row = self._one(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.relkind = 'r' AND c.relname = ANY(%s)",
            (list(_TABLES),),
        )
        return int(row[0])
