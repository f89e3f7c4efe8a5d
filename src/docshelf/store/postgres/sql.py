"""SQL for PostgreSQL search: filters, BM25 term weights, vector search, coverage."""

from __future__ import annotations

from typing import Any

from docshelf.store.base import SearchFilter

__all__ = [
    "K0",
    "chunk_filter",
    "coverage_sql",
    "doc_filter",
    "glob_to_regex",
    "vector_sql",
    "weights_cte",
]

# BM25 parameters as tantivy/Lucene use them, so rankings match the embedded store.
_K1, _B = 1.2, 0.75
K0 = _K1 * (1 - _B)  # the length-independent part of BM25's tf denominator


def _esc(ch: str) -> str:
    # only punctuation is escaped: in PostgreSQL's regex dialect \d, \w, \b ... are classes
    return ch if ch.isalnum() or ch in "/_ " else "\\" + ch


def _bracket(glob: str, i: int) -> tuple[str, int] | None:
    """The regex for a ``[...]`` set starting after ``glob[i - 1]``, and where it ends; None when
    the set is unterminated (then ``[`` is literal), mirroring fnmatch's rules."""
    j = i
    if j < len(glob) and glob[j] == "!":
        j += 1
    if j < len(glob) and glob[j] == "]":  # a "]" first in the set is a member
        j += 1
    j = glob.find("]", j)
    if j < 0:
        return None
    body, negate = glob[i:j], False
    if body.startswith("!"):
        body, negate = body[1:], True
    members: list[str] = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            lo, hi = body[k], body[k + 2]
            if lo <= hi:  # fnmatch drops reversed ranges
                members.append(f"{_esc(lo)}-{_esc(hi)}")
            k += 3
        else:
            members.append(_esc(body[k]))
            k += 1
    if not members:  # "[!]"-like sets: nothing, or anything
        return (".", j + 1) if negate else ("(?!)", j + 1)
    return ("[" + ("^" if negate else "") + "".join(members) + "]", j + 1)


def glob_to_regex(glob: str) -> str:
    """An anchored PostgreSQL regex with ``fnmatch.fnmatchcase`` semantics (``*`` crosses ``/``)."""
    out, i = ["^"], 0
    while i < len(glob):
        ch = glob[i]
        i += 1
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[" and (found := _bracket(glob, i)) is not None:
            part, i = found
            out.append(part)
        else:
            out.append(_esc(ch))
    return "".join(out) + "$"


def doc_filter(flt: SearchFilter, params: dict[str, Any]) -> str:
    """WHERE conditions on ``documents d`` for the per-document parts of ``flt``."""
    conds = ["TRUE"]
    if flt.collections:
        params["f_collections"] = list(flt.collections)
        conds.append("d.collection = ANY(%(f_collections)s)")
    if flt.path_glob:
        params["f_path"] = glob_to_regex(flt.path_glob)
        conds.append("d.path ~ %(f_path)s")
    if flt.tags:
        params["f_tags"] = list(flt.tags)
        conds.append("d.tags ?| %(f_tags)s")
    if flt.file_types:
        params["f_types"] = list(flt.file_types)
        conds.append("d.file_type = ANY(%(f_types)s)")
    if flt.modified_after is not None:
        params["f_after"] = int(flt.modified_after * 1e9)
        conds.append("d.mtime_ns >= %(f_after)s")
    if flt.modified_before is not None:
        params["f_before"] = int(flt.modified_before * 1e9)
        conds.append("d.mtime_ns <= %(f_before)s")
    if not flt.include_superseded:
        conds.append("d.lifecycle IS DISTINCT FROM 'superseded'")
    return " AND ".join(conds)


def chunk_filter(flt: SearchFilter, alias: str, seq_col: str, params: dict[str, Any]) -> str:
    """Conditions on a row carrying ``collection``/``superseded`` and a chunk seq column."""
    conds = ["TRUE"]
    if flt.collections:
        params["f_collections"] = list(flt.collections)
        conds.append(f"{alias}.collection = ANY(%(f_collections)s)")
    if not flt.include_superseded:
        conds.append(f"NOT {alias}.superseded")
    if flt.needs_doc_ids():
        where = doc_filter(flt, params)
        conds.append(
            f"{alias}.{seq_col} IN (SELECT c2.seq FROM chunks c2 JOIN documents d ON d.id = c2.doc_id "
            f"WHERE {where})"
        )
    return " AND ".join(conds)


def weights_cte() -> str:
    """CTEs ``q``, ``st`` and ``w``: each distinct query term's BM25 weight (idf x query count x
    (k1 + 1)), the length factor and its document frequency (a repeated query term counts twice,
    as in the embedded store's tantivy query; filters do not change idf)."""
    return f"""
    q AS (SELECT t AS term, count(*)::float8 AS qtf FROM unnest(%(terms)s::text[]) t GROUP BY t),
    st AS (SELECT greatest(chunks, 1)::float8 AS n,
                  greatest(terms, 1)::float8 / greatest(chunks, 1) AS avgdl FROM corpus_stats),
    w AS MATERIALIZED (
        SELECT q.term, q.qtf * ln(1 + (st.n - coalesce(s.df, 0) + 0.5) / (coalesce(s.df, 0) + 0.5))
               * {_K1 + 1}::float8 AS wq, {_K1 * _B}::float8 / st.avgdl AS k1, st.avgdl,
               coalesce(s.df, 0) AS df
        FROM q CROSS JOIN st LEFT JOIN term_stats s ON s.term = q.term)"""


def vector_sql(flt: SearchFilter, params: dict[str, Any], exact: bool) -> str:
    """Cosine top ``%(k)s`` for ``%(vec)s``: rows (chunk id, score).

    ``exact`` orders by an expression the HNSW index cannot serve, so PostgreSQL scans every
    row (exact results, like the embedded store below its ANN threshold).
    """
    where = chunk_filter(flt, "c", "seq", params)
    order = "(c.embedding <=> %(vec)s) + 0" if exact else "c.embedding <=> %(vec)s"
    return f"""
    SELECT c.id, 1 - (c.embedding <=> %(vec)s) AS score FROM chunks c
    WHERE c.embedding IS NOT NULL AND {where}
    ORDER BY {order} LIMIT %(k)s"""


def coverage_sql() -> str:
    """Share of the distinct ``%(uterms)s`` that occur in the index: one row."""
    return """
    SELECT (SELECT count(*) FROM unnest(%(uterms)s::text[]) t
            WHERE EXISTS (SELECT 1 FROM term_stats s WHERE s.term = t AND s.df > 0))::float8
           / greatest(cardinality(%(uterms)s::text[]), 1)"""
