"""Write-side SQL helpers of the PostgreSQL store: transactions, meta, postings, vector text."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from docshelf.config import redact_dsn
from docshelf.embed.base import Vectors
from docshelf.errors import StoreError

if TYPE_CHECKING:
    import numpy as np
else:
    from docshelf.lazy import numpy as np

__all__ = [
    "HNSW_SQL",
    "Tx",
    "as_array",
    "bump",
    "count_terms",
    "delete_docs",
    "ensure_vector_column",
    "jsonable",
    "replica_error",
    "set_meta",
    "vector_text",
    "write_postings",
]


class Tx:
    """A pooled connection inside one transaction (committed on success, rolled back on error);
    driver errors leave it as one-line StoreErrors made by ``translate``."""

    def __init__(self, pool: Any, translate: Callable[[Exception], Exception | None]) -> None:
        self._pool = pool
        self._translate = translate

    def __enter__(self) -> Any:
        try:
            self._cm = self._pool.connection()
            conn = self._cm.__enter__()
            self._tx = conn.transaction()
            self._tx.__enter__()
        except Exception as exc:
            raise (self._translate(exc) or exc) from exc
        return conn

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        try:
            try:
                self._tx.__exit__(kind, exc, tb)
            finally:
                self._cm.__exit__(kind, exc, tb)
        except Exception as failed:  # the COMMIT itself failed
            raise (self._translate(failed) or failed) from failed
        if isinstance(exc, Exception) and (mine := self._translate(exc)) is not None:
            raise mine from exc


def replica_error(url: str) -> StoreError:
    """The one line a write on a read-only replica becomes."""
    return StoreError(
        f"the PostgreSQL store at {redact_dsn(url)} is a read-only replica (hot standby): it answers "
        "searches, but indexing, ingest, forget and reindex must run against the primary's DSN"
    )


def set_meta(conn: Any, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES(%s, %s) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
        (key, value),
    )


def bump(conn: Any) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES('generation', '1') "
        "ON CONFLICT(key) DO UPDATE SET value = (meta.value::bigint + 1)::text"
    )


def delete_docs(conn: Any, doc_ids: list[str]) -> int:
    # the statistics row first: every write transaction updates it and term_stats, and taking it
    # before any term row orders the locks (otherwise two writers deadlock over the two)
    conn.execute("SELECT 1 FROM corpus_stats FOR UPDATE")
    gone = conn.execute("SELECT n_terms, terms FROM chunks WHERE doc_id = ANY(%s)", (doc_ids,)).fetchall()
    df: Counter[str] = Counter(t for _, terms in gone for t in terms)
    count_terms(conn, {term: -n for term, n in df.items()})
    # the chunks' tail postings go with them (cascade); packed ones stay until a repack (postings.py)
    removed = conn.execute("DELETE FROM documents WHERE id = ANY(%s)", (doc_ids,)).rowcount
    conn.execute(
        "UPDATE corpus_stats SET chunks = chunks - %s, terms = terms - %s, postings = postings - %s",
        (len(gone), sum(n for n, _ in gone), sum(df.values())),
    )
    return int(removed)


def ensure_vector_column(conn: Any, dim: int) -> None:
    """Give the embedding column its dimension and an HNSW index (needed once per model)."""
    row = conn.execute(
        "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'"
    ).fetchone()
    if row is not None and int(row[0]) == dim:
        return
    conn.execute(f"ALTER TABLE chunks ALTER COLUMN embedding TYPE vector({int(dim)})")
    conn.execute(HNSW_SQL)


HNSW_SQL = "CREATE INDEX IF NOT EXISTS chunks_hnsw ON chunks USING hnsw (embedding vector_cosine_ops)"


def write_postings(
    cur: Any, collection: str, superseded: bool, chunks: Iterable[tuple[int, Counter[str]]]
) -> Counter[str]:
    """One COPY into the unpacked tail for the term counts of several chunks; returns each term's
    number of chunks."""
    df: Counter[str] = Counter()
    with cur.copy("COPY posting_tail(term, chunk, tf, dl, collection, superseded) FROM STDIN") as copy:
        for seq, counts in chunks:
            length = sum(counts.values())
            df.update(counts.keys())
            for term, tf in counts.items():
                copy.write_row((term, seq, tf, length, collection, superseded))
    return df


def count_terms(conn: Any, delta: dict[str, int]) -> None:
    """Add to the document frequencies in ``term_stats`` (after ``delete_docs`` took the
    statistics row in the same transaction)."""
    if not delta:
        return
    terms = sorted(delta)
    conn.execute(
        "INSERT INTO term_stats(term, df) SELECT t, n FROM unnest(%s::text[], %s::bigint[]) AS x(t, n) "
        "ORDER BY t ON CONFLICT (term) DO UPDATE SET df = term_stats.df + excluded.df",
        (terms, [delta[t] for t in terms]),
    )


def vector_text(vec: Vectors) -> str:
    """pgvector's text form; COPY in text mode takes it without an adapter.

    Each float32 printed as its exact float64 repr, so it parses back to the same bits."""
    return "[" + ",".join(map(repr, np.asarray(vec, dtype=np.float32).tolist())) + "]"


def as_array(value: Any) -> Vectors:
    """A pgvector value as float32 numpy (the adapter hands back its own Vector type)."""
    raw = value.to_numpy() if hasattr(value, "to_numpy") else value
    return np.asarray(raw, dtype=np.float32)


def jsonable(value: dict[str, Any]) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))
