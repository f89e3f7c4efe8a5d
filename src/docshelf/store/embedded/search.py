"""Search over the embedded store: tantivy for keywords, exact rows and HNSW for vectors."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from docshelf.embed.base import Vectors
from docshelf.store.base import Alternatives, PendingVector, SearchFilter, ready_vector
from docshelf.store.embedded.dense import DenseIndex
from docshelf.store.embedded.keyword import KeywordIndex
from docshelf.store.embedded.sql import matching_doc_ids

if TYPE_CHECKING:
    import numpy as np
else:
    from docshelf.lazy import numpy as np

__all__ = ["SQLiteSearch"]

_PIECES = 3  # the longest pieces of a pattern looked up (more rarely narrow the documents further)
_GRAMS = 16  # trigrams of a piece looked up at most (all of an ordinary word's)


def _grams(piece: str) -> list[str]:
    """The piece's trigrams (all of them: fewer, spread over it, let several times as many documents
    through to be read for a two-word phrase), the first ``_GRAMS`` and its last for a long one."""
    grams = list(dict.fromkeys(piece[i : i + 3] for i in range(len(piece) - 2)))
    return grams if len(grams) <= _GRAMS else [*grams[: _GRAMS - 1], grams[-1]]


class SQLiteSearch:
    """Mixed into the SQLite store; needs its connection, keyword index and model metadata."""

    @property
    def _db(self) -> sqlite3.Connection:
        raise NotImplementedError

    dense: DenseIndex
    keyword: KeywordIndex
    data_dir: Path

    def generation(self) -> int:
        raise NotImplementedError

    def model(self) -> tuple[str | None, int | None]:
        raise NotImplementedError

    def filter_doc_ids(self, flt: SearchFilter) -> list[str] | None:
        """Document ids passing the filter, or None when the filter needs no id list."""
        return matching_doc_ids(self._db, flt)

    def grep_documents(self, pieces: Sequence[str], flt: SearchFilter) -> list[tuple[str, str, str]] | None:
        """Documents whose chunks hold every piece, through the trigram table (a chunk holding all of
        a piece's trigrams may not hold the piece: the caller checks the text). One statement, so
        the many rows of a common piece never reach Python."""
        conds, args = ["TRUE"], list[str]()
        if pieces:
            try:
                self._db.execute("SELECT 1 FROM chunk_grams LIMIT 0")
            except sqlite3.OperationalError:
                return None  # no trigram table: an index opened read-only before it, or no FTS5 here
            for piece in pieces[:_PIECES]:
                conds.append(
                    "id IN (SELECT doc_id FROM chunks WHERE seq IN "
                    "(SELECT rowid FROM chunk_grams WHERE chunk_grams MATCH ?))"
                )
                args.append(" AND ".join('"' + g.replace('"', '""') + '"' for g in _grams(piece)))
        if flt.collections:
            conds.append(f"collection IN ({','.join('?' * len(flt.collections))})")
            args.extend(flt.collections)
        if not flt.include_superseded:
            conds.append("lifecycle IS NOT 'superseded'")
        where = " AND ".join(conds)
        sql = f"SELECT id, collection, path FROM documents WHERE {where} ORDER BY collection, path"
        rows = [(r[0], r[1], r[2]) for r in self._db.execute(sql, args)]
        allowed = self.filter_doc_ids(flt)
        if allowed is not None:
            keep = set(allowed)
            rows = [r for r in rows if r[0] in keep]
        return rows

    def keyword_coverage(self, terms: Sequence[str]) -> float:
        return self.keyword.coverage(terms)

    def known_terms(self, terms: Sequence[str]) -> set[str]:
        return self.keyword.known(terms)

    def keyword_search(
        self, terms: Sequence[str], k: int, flt: SearchFilter, alternatives: Alternatives | None = None
    ) -> list[tuple[str, float]]:
        return self.keyword.search(
            terms, k, flt.collections, self.filter_doc_ids(flt), flt.include_superseded, alternatives
        )

    @property
    def ann_threshold(self) -> int:
        return self.dense.opts.threshold

    @ann_threshold.setter
    def ann_threshold(self, value: int) -> None:
        self.dense.opts = replace(self.dense.opts, threshold=value)
        self.dense.versions = (-1, "", 0)

    def _versions(self) -> tuple[int, str]:
        """(generation, vectors epoch) in one read: the epoch changes when vectors of existing
        chunks do (a re-embed), which key differences cannot see."""
        sql = "SELECT key, value FROM meta WHERE key IN ('generation', 'vectors_epoch')"
        rows = dict(self._db.execute(sql).fetchall())
        return int(rows.get("generation") or 0), str(rows.get("vectors_epoch") or "0")

    def _dense(self) -> DenseIndex:
        """The dense side, brought up to the store's current generation."""
        generation, epoch = self._versions()
        _, dim = self.model()
        self.dense.refresh(generation, epoch, dim or 0)
        return self.dense

    def publish_vectors(self) -> None:
        """Writer, at commit: build or update the saved HNSW index when the store needs one."""
        generation, epoch = self._versions()
        _, dim = self.model()
        self.dense.publish(generation, epoch, dim or 0)

    def vector_search(self, query: Vectors, k: int, flt: SearchFilter) -> list[tuple[str, float]]:
        ids = self.filter_doc_ids(flt)
        return self._dense().search(
            query, k, flt.collections, None if ids is None else set(ids), flt.include_superseded
        )

    def candidates(
        self, terms: Sequence[str], query: Vectors | PendingVector | None, k: int, flt: SearchFilter,
        keyword: bool = True, coverage: bool = False, alternatives: Alternatives | None = None,
    ) -> tuple[dict[str, list[tuple[str, float]]], float]:  # fmt: skip
        """Both retrievers' top-k and the terms' coverage (in-process, so no round trips to save)."""
        lists: dict[str, list[tuple[str, float]]] = {}
        if keyword:
            lists["keyword"] = self.keyword_search(terms, k, flt, alternatives)
        vec = ready_vector(query, lists.get("keyword", ()))  # the keyword side ran meanwhile
        if vec is not None:  # a zero vector has no direction, so no neighbours (as on PostgreSQL)
            lists["semantic"] = self.vector_search(vec, k, flt) if np.any(vec) else []
        return lists, self.keyword_coverage(terms) if coverage else 0.0
