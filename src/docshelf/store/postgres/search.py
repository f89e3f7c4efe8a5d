"""Read-side search of the PostgreSQL store: both retrievers and term coverage in one statement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from docshelf.embed.base import Vectors
from docshelf.store.base import SearchFilter
from docshelf.store.postgres import bm25
from docshelf.store.postgres.sql import coverage_sql, doc_filter, keyword_sql, vector_sql

__all__ = ["PgSearch"]


class PgSearch:
    """Mixed into the PostgreSQL store; needs its query helpers."""

    ann_threshold: int

    def _q(self, sql: str, params: Any = None) -> list[Any]:
        raise NotImplementedError

    def _one(self, sql: str, params: Any = None) -> Any:
        raise NotImplementedError

    def filter_doc_ids(self, flt: SearchFilter) -> list[str] | None:
        if not flt.needs_doc_ids():
            return None
        params: dict[str, Any] = {}
        where = doc_filter(SearchFilter(**{**flt.__dict__, "include_superseded": True}), params)
        return [r[0] for r in self._q(f"SELECT d.id FROM documents d WHERE {where}", params)]

    def keyword_coverage(self, terms: Sequence[str]) -> float:
        unique = list(dict.fromkeys(terms))
        return float(self._one(coverage_sql(), {"uterms": unique})[0]) if unique else 0.0

    def keyword_search(self, terms: Sequence[str], k: int, flt: SearchFilter) -> list[tuple[str, float]]:
        return self.candidates(terms, None, k, flt, keyword=True)[0].get("keyword", [])

    def vector_search(self, query: Vectors, k: int, flt: SearchFilter) -> list[tuple[str, float]]:
        return self.candidates((), query, k, flt, keyword=False)[0].get("semantic", [])

    def candidates(
        self, terms: Sequence[str], query: Vectors | None, k: int, flt: SearchFilter,
        keyword: bool = True, coverage: bool = False,
    ) -> tuple[dict[str, list[tuple[str, float]]], float]:  # fmt: skip
        """Both retrievers' top-k (and the query's term coverage) in one SQL round trip; a keyword
        top-k that pass one cannot prove exact takes one or two more (bm25.py)."""
        params: dict[str, Any] = {"k": k, "terms": list(terms), "uterms": list(dict.fromkeys(terms))}
        parts = []
        if keyword and terms:
            parts.append(f"SELECT * FROM ({bm25.pass_sql(flt, params)}) kw")
        if query is not None:
            params["vec"] = np.asarray(query, dtype=np.float32)
            exact = self._chunk_count() < self.ann_threshold
            vec = vector_sql(flt, params, exact)
            parts.append(f"SELECT 'semantic', id, score, NULL::float8, NULL::text[] FROM ({vec}) v")
        if coverage and terms:
            parts.append(f"SELECT 'coverage', NULL, ({coverage_sql()}), NULL::float8, NULL::text[]")
        lists: dict[str, list[tuple[str, float]]] = {}
        if keyword:
            lists["keyword"] = []
        if query is not None:
            lists["semantic"] = []
        cover = 0.0
        if not parts:
            return lists, cover
        first = bm25.Pass(k, int(params.get("kw_m", bm25.PER_TERM)))
        for side, cid, score, n, extra in self._q(" UNION ALL ".join(f"({p})" for p in parts), params):
            if side == "coverage":
                cover = float(score)
            elif side == "semantic":
                lists[side].append((cid, float(score)))
            else:
                first.add(side, cid, score, n, extra)
        if query is not None:  # UNION ALL and relaxed HNSW order promise no order
            lists["semantic"].sort(key=lambda h: -h[1])
        if keyword and terms:
            lists["keyword"] = self._exact_keyword(first, flt, params)
        return lists, cover

    def _exact_keyword(
        self, first: bm25.Pass, flt: SearchFilter, params: dict[str, Any]
    ) -> list[tuple[str, float]]:
        pairs = first.missing()
        extra: dict[int, float] = {}
        if pairs:
            k1 = bm25.K1 * bm25.B / first.avgdl
            fix = {"k1": k1, "fc": [p[0] for p in pairs], "ft": [p[1] for p in pairs]}
            fix["fw"] = [p[2] for p in pairs]
            extra = {int(seq): float(x) for seq, x in self._q(bm25.fixup_sql(), fix)}
        found = bm25.resolve(first, extra, {p[0] for p in pairs})
        if found is not None:
            return found
        full = {"k": params["k"], "terms": params["terms"]}
        rows = [(cid, float(score)) for cid, score in self._q(keyword_sql(flt, full), full)]
        return sorted(rows, key=lambda h: -h[1])  # the join with chunks keeps no order

    def _chunk_count(self) -> int:
        return int(self._one("SELECT chunks FROM corpus_stats")[0])
