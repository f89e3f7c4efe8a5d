"""Read-side search of the PostgreSQL store: both retrievers and term coverage in one statement."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from docshelf.embed.base import Vectors
from docshelf.store.base import Alternatives, PendingVector, SearchFilter, own_alternatives, ready_vector
from docshelf.store.postgres import postings
from docshelf.store.postgres.sql import coverage_sql, doc_filter, vector_sql

if TYPE_CHECKING:
    import numpy as np
else:
    from docshelf.lazy import numpy as np

__all__ = ["PgSearch"]

_FEW = 50  # documents left after which grep looks up no more pieces


def _like_char(ch: str, unicode_lower: bool) -> str:
    if ch in "\\%_":
        return "\\" + ch
    return "_" if not ch.isascii() and ch.lower() != ch.upper() and not unicode_lower else ch


class PgSearch:
    """Mixed into the PostgreSQL store; needs its query helpers."""

    ann_threshold: int
    _lower_unicode: bool | None = None

    def _q(self, sql: str, params: Any = None, binary: bool = False) -> list[Any]:
        raise NotImplementedError

    def _one(self, sql: str, params: Any = None) -> Any:
        raise NotImplementedError

    def filter_doc_ids(self, flt: SearchFilter) -> list[str] | None:
        if not flt.needs_doc_ids():
            return None
        params: dict[str, Any] = {}
        where = doc_filter(SearchFilter(**{**flt.__dict__, "include_superseded": True}), params)
        return [r[0] for r in self._q(f"SELECT d.id FROM documents d WHERE {where}", params)]

    def grep_documents(self, pieces: Sequence[str], flt: SearchFilter) -> list[tuple[str, str, str]] | None:
        """Documents whose chunks hold every piece (ILIKE, through pg_trgm's index where it is)."""
        fold = self._unicode_lower() if pieces else False
        found: list[str] | None = None
        for piece in pieces:
            # a server whose lower() knows only ASCII (the C locale) gets any character for the others
            like = "".join(_like_char(ch, fold) for ch in piece)
            sql = "SELECT DISTINCT doc_id FROM chunks WHERE text ILIKE %(p)s"
            params: dict[str, Any] = {"p": f"%{like}%"}
            if found is not None:
                sql += " AND doc_id = ANY(%(ids)s)"
                params["ids"] = found
            found = [str(r[0]) for r in self._q(sql, params)]
            if len(found) <= _FEW:
                break
        params = {}
        where = doc_filter(flt, params)
        if found is not None:
            params["ids"] = found
            where += " AND d.id = ANY(%(ids)s)"
        sql = (
            f"SELECT d.id, d.collection, d.path FROM documents d WHERE {where} ORDER BY d.collection, d.path"
        )
        return [(str(r[0]), str(r[1]), str(r[2])) for r in self._q(sql, params)]

    def _unicode_lower(self) -> bool:
        if self._lower_unicode is None:
            self._lower_unicode = bool(self._one("SELECT lower('ÀÉΣЖ') = 'àéσж'")[0])
        return self._lower_unicode

    def keyword_coverage(self, terms: Sequence[str]) -> float:
        unique = list(dict.fromkeys(terms))
        return float(self._one(coverage_sql(), {"uterms": unique})[0]) if unique else 0.0

    def known_terms(self, terms: Sequence[str]) -> set[str]:
        unique = list(dict.fromkeys(terms))
        if not unique:
            return set()
        sql = "SELECT term FROM term_stats WHERE term = ANY(%(uterms)s::text[]) AND df > 0"
        return {str(r[0]) for r in self._q(sql, {"uterms": unique})}

    def keyword_search(
        self, terms: Sequence[str], k: int, flt: SearchFilter, alternatives: Alternatives | None = None
    ) -> list[tuple[str, float]]:
        return self.candidates(terms, None, k, flt, keyword=True, alternatives=alternatives)[0].get(
            "keyword", []
        )

    def vector_search(self, query: Vectors, k: int, flt: SearchFilter) -> list[tuple[str, float]]:
        return self.candidates((), query, k, flt, keyword=False)[0].get("semantic", [])

    def candidates(
        self, terms: Sequence[str], query: Vectors | PendingVector | None, k: int, flt: SearchFilter,
        keyword: bool = True, coverage: bool = False, alternatives: Alternatives | None = None,
    ) -> tuple[dict[str, list[tuple[str, float]]], float]:  # fmt: skip
        """Both retrievers in one SQL round trip: the vector top-k, and each query term's packed
        postings, scored here (postings.py); one more resolves the keyword top-k to chunk ids."""
        query = ready_vector(query)  # both sides go in one round trip: the vector first
        zero = query is not None and not np.any(query)
        if zero:  # no direction: pgvector's cosine distance to it is NaN (scored as confidence 1.00)
            query = None
        alternatives = own_alternatives(terms, alternatives)
        own = set(terms)
        extra = list(dict.fromkeys(a for alts in alternatives.values() for a in alts))  # none in own
        params: dict[str, Any] = {"k": k, "terms": [*terms, *extra]}
        parts = []
        if (keyword or coverage) and terms:
            parts.append(f"SELECT * FROM ({postings.lists_sql(flt, params)}) kw")
        if query is not None:
            params["vec"] = np.asarray(query, dtype=np.float32)
            params["ann_from"] = self.ann_threshold
            # exact below the threshold, HNSW above: both branches are sent and the server runs the
            # one whose one-time filter holds (the chunk count cost a round trip of its own)
            for exact, side in ((True, "<"), (False, ">=")):
                vec = vector_sql(flt, params, exact)
                parts.append(f"SELECT 'semantic', id, score, NULL, NULL, NULL, NULL, NULL FROM ({vec}) v "
                             f"WHERE (SELECT chunks FROM corpus_stats) {side} %(ann_from)s")  # fmt: skip
        lists: dict[str, list[tuple[str, float]]] = {}
        # binary results: packed postings arrive as raw bytes, not hex text twice their size
        rows = self._q(" UNION ALL ".join(f"({p})" for p in parts), params, binary=True) if parts else []
        kw = [r for r in rows if r[0] == "kw"]
        if query is not None:  # UNION ALL and relaxed HNSW order promise no order
            hits = [(r[1], float(r[2])) for r in rows if r[0] == "semantic"]
            lists["semantic"] = sorted(hits, key=lambda h: -h[1])
        elif zero:
            lists["semantic"] = []
        if keyword:
            lists["keyword"] = self._keyword_top(kw, k, flt, alternatives, terms) if kw else []
        mine = [r for r in kw if r[1] in own]  # the coverage is the query's own terms'
        cover = sum(1 for r in mine if r[4] > 0) / len(mine) if coverage and mine else 0.0
        return lists, cover

    def _keyword_top(
        self, rows: list[Any], k: int, flt: SearchFilter, alternatives: Alternatives, terms: Sequence[str]
    ) -> list[tuple[str, float]]:
        allowed = None
        if flt.needs_doc_ids():
            params: dict[str, Any] = {}
            rows_ok = self._q(postings.allowed_sql(flt, params), params)
            allowed = np.array([r[0] for r in rows_ok], dtype=np.int64)
        seqs, scores = postings.score(rows, allowed, alternatives, Counter(terms))
        want = k + 16
        while True:  # packed postings of deleted chunks drop out here: then look further down
            top, values = postings.best(seqs, scores, want)
            part = [int(x) for x in top]
            ids = dict(self._q("SELECT seq, id FROM chunks WHERE seq = ANY(%s)", (part,)))
            out = [(ids[q], float(v)) for q, v in zip(part, values, strict=True) if q in ids]
            if len(out) >= k or len(top) == len(seqs):
                return out[:k]
            want *= 4
