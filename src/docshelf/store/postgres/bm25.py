"""BM25 top-k in PostgreSQL that reads a bounded share of each posting list, and stays exact.

Each posting carries an ``impact``: its term-frequency factor computed at a fixed reference
document length, and ``postings_impact`` orders each term's postings by it. Pass one reads at most
``m`` postings per query term, best impact first, and sums what it read per chunk: a lower bound
of each chunk's score, exact for every term whose list it read to the end. For a term cut short,
no unread posting can add more than the last impact read (scaled for the current average
length), so the chunks outside the top of pass one, and the terms a top chunk was not seen with,
are bounded. A second statement adds the missing terms of the few top chunks whose bound still
reaches the k-th score; when the bound of everything else does too, the full scan runs instead.
Document frequencies come from ``term_stats`` (kept in the write transactions), not a count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docshelf.store.base import SearchFilter
from docshelf.store.postgres.sql import chunk_filter

__all__ = ["REF_AVGDL", "Pass", "fixup_sql", "impact", "pass_sql", "resolve"]

K1, B = 1.2, 0.75  # as tantivy/Lucene, so rankings match the embedded store
REF_AVGDL = 128.0  # the reference length of stored impacts (a full 256-token chunk has ~100-150 terms)
PER_TERM = 2000  # postings read per query term in pass one


def impact(tf: int, dl: int) -> float:
    """The stored ordering key of a posting: BM25's tf factor at the reference average length."""
    return tf / (tf + K1 * (1 - B) + K1 * B * dl / REF_AVGDL)


def _weights() -> str:
    return f"""
    q AS (SELECT t AS term, count(*)::float8 AS qtf FROM unnest(%(terms)s::text[]) t GROUP BY t),
    st AS (SELECT greatest(chunks, 1)::float8 AS n,
                  greatest(terms, 1)::float8 / greatest(chunks, 1) AS avgdl FROM corpus_stats),
    w AS (SELECT q.term, q.qtf * ln(1 + (st.n - coalesce(s.df, 0) + 0.5) / (coalesce(s.df, 0) + 0.5))
                 * {K1 + 1}::float8 AS wq, {K1 * B}::float8 / st.avgdl AS k1, st.avgdl
          FROM q CROSS JOIN st LEFT JOIN term_stats s ON s.term = q.term)"""


def pass_sql(flt: SearchFilter, params: dict[str, Any]) -> str:
    """Rows (side, id, score, n, terms): 'kw-term' per query term (its weight, postings read,
    last impact read, the average length), 'kw-hit' per top chunk (lower bound, seq, terms seen)."""
    where = chunk_filter(flt, "p", "chunk", params)
    params.setdefault("kw_m", PER_TERM)
    params.setdefault("kw_l", params["k"] + params["k"] // 2 + 20)
    return f"""
    WITH {_weights()},
    top AS MATERIALIZED (
        SELECT w.term, p.chunk, p.impact, w.wq * p.tf / (p.tf + {K1 * (1 - B)}::float8 + w.k1 * p.dl) AS part
        FROM w CROSS JOIN LATERAL (
            SELECT p.chunk, p.tf, p.dl, p.impact FROM postings p
            WHERE p.term = w.term AND {where} ORDER BY p.impact DESC LIMIT %(kw_m)s) p),
    agg AS (SELECT chunk, sum(part) AS lower, array_agg(term) AS seen FROM top
            GROUP BY chunk ORDER BY lower DESC LIMIT %(kw_l)s + 1)
    SELECT 'kw-term' AS side, w.term AS id, w.wq AS score, count(top.chunk)::float8 AS n,
           ARRAY[coalesce(min(top.impact), 0)::text, w.avgdl::text] AS terms
    FROM w LEFT JOIN top ON top.term = w.term GROUP BY w.term, w.wq, w.avgdl
    UNION ALL
    SELECT 'kw-hit', c.id, agg.lower, agg.chunk::float8, agg.seen
    FROM agg JOIN chunks c ON c.seq = agg.chunk"""


def fixup_sql() -> str:
    """Exact contributions of the (chunk, term) pairs pass one did not read: rows (seq, extra)."""
    return f"""
    SELECT x.chunk, sum(x.wq * p.tf / (p.tf + {K1 * (1 - B)}::float8 + %(k1)s * p.dl))
    FROM unnest(%(fc)s::bigint[], %(ft)s::text[], %(fw)s::float8[]) AS x(chunk, term, wq)
    JOIN postings p ON p.term = x.term AND p.chunk = x.chunk
    GROUP BY x.chunk"""


@dataclass
class Pass:
    """What pass one returned, and what is still to be done to make the top k exact."""

    k: int
    m: int
    terms: dict[str, tuple[float, int, float]] = field(default_factory=dict)  # wq, read, last impact
    hits: list[tuple[str, float, int, set[str]]] = field(default_factory=list)  # id, lower, seq, seen
    avgdl: float = REF_AVGDL

    def add(self, side: str, cid: str, score: float, n: float, terms: list[str]) -> None:
        if side == "kw-term":
            self.terms[cid] = (float(score), int(n), float(terms[0]))
            self.avgdl = float(terms[1])
        else:
            self.hits.append((cid, float(score), int(n), set(terms)))

    def bound(self, term: str) -> float:
        """The most an unread posting of ``term`` can add (0 when its list was read to the end)."""
        wq, read, last = self.terms[term]
        return 0.0 if read < self.m else wq * last * max(1.0, self.avgdl / REF_AVGDL)

    def missing(self) -> list[tuple[int, str, float]]:
        """(seq, term, weight) pairs to read so that every chunk that can reach the top is exact."""
        cut = {t for t in self.terms if self.bound(t) > 0}
        if not cut:
            return []
        self.hits.sort(key=lambda h: -h[1])
        theta = self.hits[self.k - 1][1] if len(self.hits) >= self.k else 0.0
        pairs = []
        for _, lower, seq, seen in self.hits[: self._kept()]:
            gap = [t for t in cut if t not in seen]
            if gap and lower + sum(self.bound(t) for t in gap) >= theta:
                pairs += [(seq, t, self.terms[t][0]) for t in gap]
        return pairs

    def _kept(self) -> int:
        return len(self.hits) - 1 if len(self.hits) > self.k + self.k // 2 + 20 else len(self.hits)


def resolve(p: Pass, extra: dict[int, float], fixed: set[int]) -> list[tuple[str, float]] | None:
    """The exact top k, or None when a chunk outside what pass one kept could still enter it."""
    p.hits.sort(key=lambda h: -h[1])
    kept, rest = p.hits[: p._kept()], p.hits[p._kept() :]
    cut = {t for t in p.terms if p.bound(t) > 0}
    scored = []
    for cid, lower, seq, seen in kept:
        exact = seq in fixed or not (cut - seen)
        scored.append((cid, lower + extra.get(seq, 0.0), exact, lower + sum(p.bound(t) for t in cut - seen)))
    scored.sort(key=lambda h: -h[1])
    top = [h for h in scored if h[2]][: p.k]
    theta = top[-1][1] if len(top) >= p.k else 0.0
    # every inexact kept chunk, every chunk below what was kept, every unseen chunk: bounded by theta
    if any(not exact and upper > theta for _, _, exact, upper in scored):
        return None
    outside = (rest[0][1] if rest else 0.0) + sum(p.bound(t) for t in cut)
    if cut and outside > theta:
        return None
    return [(cid, score) for cid, score, _, _ in top]
