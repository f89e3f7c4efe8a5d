"""Keyword search of the PostgreSQL store: postings packed per term, BM25 summed in numpy.

BM25 in SQL reads one row per posting, and PostgreSQL's executor spends about a microsecond on
each: a query whose terms have 80,000 postings took 30+ ms where tantivy needs 3. Here a term's
postings live in a few packed rows (``posting_blocks``: chunk seqs, term frequencies and chunk
lengths as byte arrays, one list per collection and lifecycle); a query fetches them for its
terms in one statement and sums the scores in numpy, with the same formula as before.

New postings go to ``posting_tail`` (one row each, fetched packed by the same statement); a
writer's commit moves them into blocks once there are ``TAIL_MIN``. A deleted chunk's packed
postings are left where they are: document frequencies come from ``term_stats`` (kept exact by
the writers), scores are per chunk, and the top k is resolved against the live chunks, so they
only cost space until a commit repacks the blocks (once they are a fifth of them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from docshelf.store.base import SearchFilter
from docshelf.store.postgres.sql import K0, doc_filter, weights_cte

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from docshelf.lazy import numpy as np

__all__ = [
    "BLOCK", "TAIL_MIN", "best", "compact_sql", "lists_sql", "pack_sql", "repack", "score", "stale_share",
]  # fmt: skip

BLOCK = 128  # postings per packed row: 128 x 12 bytes stays below PostgreSQL's 2 kB TOAST threshold
TAIL_MIN = 50_000  # tail rows a commit leaves unpacked
STALE_SHARE = 0.2  # packed postings of deleted chunks that trigger a repack
Seqs: TypeAlias = "npt.NDArray[np.int64]"


def pack_sql(source: str) -> str:
    """SELECT of packed rows (term, collection, superseded, n, chunks, tfs, dls) from ``source``."""
    return f"""
    SELECT term, collection, superseded, count(*),
           string_agg(int8send(chunk), ''::bytea ORDER BY chunk),
           string_agg(int2send(least(tf, 32767)::int2), ''::bytea ORDER BY chunk),
           string_agg(int2send(least(dl, 32767)::int2), ''::bytea ORDER BY chunk)
    FROM (SELECT *, (row_number() OVER (PARTITION BY term, collection, superseded ORDER BY chunk) - 1)
                    / {BLOCK} AS blk FROM {source}) numbered
    GROUP BY term, collection, superseded, blk"""


def compact_sql() -> str:
    """Move every committed tail row into new blocks, in one statement (concurrent writers' rows
    that commit meanwhile stay in the tail for the next time)."""
    return f"""
    WITH moved AS (DELETE FROM posting_tail RETURNING term, chunk, tf, dl, collection, superseded),
    packed AS (
        INSERT INTO posting_blocks(term, collection, superseded, n, chunks, tfs, dls)
        {pack_sql("moved")}
        RETURNING n)
    UPDATE corpus_stats SET packed = packed + (SELECT coalesce(sum(n), 0) FROM packed)"""


def lists_sql(flt: SearchFilter, params: dict[str, Any]) -> str:
    """Rows ('kw', term, weight, length factor, df, chunks, tfs, dls): each distinct query term's
    packed postings (blocks and tail) in the collections and lifecycles ``flt`` allows."""
    conds = []
    if flt.collections:
        params["f_collections"] = list(flt.collections)
        conds.append("{a}.collection = ANY(%(f_collections)s)")
    if not flt.include_superseded:
        conds.append("NOT {a}.superseded")
    where = " AND ".join(conds) or "TRUE"
    return f"""
    WITH {weights_cte()}
    SELECT 'kw' AS side, w.term, w.wq, w.k1, w.df, b.chunks, b.tfs, b.dls
    FROM w LEFT JOIN LATERAL (
        SELECT string_agg(x.chunks, ''::bytea) AS chunks, string_agg(x.tfs, ''::bytea) AS tfs,
               string_agg(x.dls, ''::bytea) AS dls
        FROM (SELECT pb.chunks, pb.tfs, pb.dls FROM posting_blocks pb
              WHERE pb.term = w.term AND {where.format(a="pb")}
              UNION ALL
              SELECT int8send(pt.chunk), int2send(least(pt.tf, 32767)::int2),
                     int2send(least(pt.dl, 32767)::int2)
              FROM posting_tail pt WHERE pt.term = w.term AND {where.format(a="pt")}) x
    ) b ON true"""


def allowed_sql(flt: SearchFilter, params: dict[str, Any]) -> str:
    """Seqs of the chunks of documents passing the per-document parts of ``flt``."""
    return f"SELECT c.seq FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE {doc_filter(flt, params)}"


def score(
    rows: Sequence[Sequence[Any]], allowed: Seqs | None = None,
    alternatives: Mapping[str, Sequence[str]] | None = None, counts: Mapping[str, int] | None = None,
) -> tuple[Seqs, npt.NDArray[np.float64]]:  # fmt: skip
    """(seqs, BM25 scores) of every chunk with a query term, in no particular order. A term with
    ``alternatives`` gives, per occurrence (``counts``), the best of its and their scores."""
    parts: dict[str, tuple[Seqs, npt.NDArray[np.float64]]] = {}
    for _, term, wq, k1, _, chunks, tfs, dls in rows:
        if chunks:
            seqs = np.frombuffer(chunks, dtype=">i8").astype(np.int64)
            tf = np.frombuffer(tfs, dtype=">i2").astype(np.float64)
            dl = np.frombuffer(dls, dtype=">i2").astype(np.float64)
            parts[str(term)] = (seqs, wq * tf / (tf + K0 + k1 * dl))
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0)
    lo = min(int(s.min()) for s, _ in parts.values())
    hi = max(int(s.max()) for s, _ in parts.values())
    acc = np.zeros(hi - lo + 1)
    alternatives = alternatives or {}
    grouped = {a for t, alts in alternatives.items() for a in (t, *alts)}
    for term, (seqs, part) in parts.items():  # a chunk appears once per term: fancy-index adds are exact
        if term not in grouped:
            acc[seqs - lo] += part
    for term, alts in alternatives.items():
        times = (counts or {}).get(term, 1)  # the term's weight holds its count in the query
        best = np.zeros_like(acc)
        for member in (term, *alts):
            if member in parts:
                seqs, part = parts[member]
                best[seqs - lo] = np.maximum(best[seqs - lo], part / times if member == term else part)
        acc += times * best
    if allowed is not None:
        keep = np.zeros_like(acc, dtype=bool)
        inside = allowed[(allowed >= lo) & (allowed <= hi)]
        keep[inside - lo] = True
        acc[~keep] = 0.0
    hit = np.flatnonzero(acc)
    return (hit + lo).astype(np.int64), acc[hit]


def best(seqs: Seqs, scores: npt.NDArray[np.float64], n: int) -> tuple[Seqs, npt.NDArray[np.float64]]:
    """The ``n`` best of ``score``'s output, best first (ties: lower seq first); sorting all of
    them cost more than the scoring when common terms match most chunks."""
    if n < len(scores):
        cut = np.partition(scores, len(scores) - n)[len(scores) - n]  # the n-th best score
        inside = scores >= cut  # every tie of the n-th, so the tie order stays the seq order
        seqs, scores = seqs[inside], scores[inside]
    order = np.lexsort((seqs, -scores))
    return seqs[order][:n], scores[order][:n]


def stale_share(conn: Any) -> float:
    """Share of packed postings that belong to chunks deleted since they were packed."""
    packed, live = conn.execute("SELECT packed, postings FROM corpus_stats").fetchone()
    tail = conn.execute("SELECT count(*) FROM posting_tail").fetchone()[0]
    return max(0, int(packed) - (int(live) - int(tail))) / int(packed) if packed else 0.0


def repack(conn: Any) -> int:
    """Drop the postings of deleted chunks from the blocks; returns how many were dropped."""
    live = np.fromiter((r[0] for r in conn.execute("SELECT seq FROM chunks ORDER BY seq")), dtype=np.int64)
    dropped, updates, gone = 0, [], []
    blocks = conn.execute("SELECT id, chunks, tfs, dls FROM posting_blocks").fetchall()
    for block_id, chunks, tfs, dls in blocks:
        seqs = np.frombuffer(chunks, dtype=">i8")
        keep = np.isin(seqs.astype(np.int64), live, assume_unique=True)
        if keep.all():
            continue
        dropped += int((~keep).sum())
        if not keep.any():
            gone.append(block_id)
            continue
        t, d = np.frombuffer(tfs, dtype=">i2"), np.frombuffer(dls, dtype=">i2")
        updates.append((block_id, int(keep.sum()), *(a[keep].tobytes() for a in (seqs, t, d))))
    conn.execute("DELETE FROM posting_blocks WHERE id = ANY(%s)", (gone,))
    with conn.cursor() as cur:
        cur.executemany(
            "UPDATE posting_blocks SET n = %s, chunks = %s, tfs = %s, dls = %s WHERE id = %s",
            [(n, c, t, d, i) for i, n, c, t, d in updates],
        )
    conn.execute("UPDATE corpus_stats SET packed = packed - %s", (dropped,))
    return dropped
