"""Writing the SQLite store: documents swapped in batches, deleted, unreferenced vectors dropped."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from docshelf.store.base import DocumentRecord, Replacement, TermAnalyzer, last_versions
from docshelf.store.embedded.keyword import KeywordDoc, KeywordIndex
from docshelf.store.embedded.ops import CHUNK_COLS, DOC_COLS, SQLiteTx
from docshelf.types import Chunk

if TYPE_CHECKING:
    import numpy as np
else:
    from docshelf.lazy import numpy as np

__all__ = ["SQLiteWrites"]


class SQLiteWrites:
    """Mixed into the SQLite store; needs its transactions, generation, keyword index and analyzer."""

    keyword: KeywordIndex
    analyzer: TermAnalyzer

    def _tx(self) -> SQLiteTx:
        raise NotImplementedError

    def _bump(self) -> None:
        raise NotImplementedError

    def replace_documents(self, batch: Sequence[Replacement]) -> None:
        """Swap the batch's documents in one transaction (their vectors are already computed):
        a commit per small file cost more than the rest of its indexing."""
        batch = last_versions(batch)
        if not batch:
            return
        with self._tx() as conn:
            conn.executemany("DELETE FROM documents WHERE id=?", [(r.doc.id,) for r in batch])
            conn.executemany(
                f"INSERT INTO documents({DOC_COLS}) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (d.id, d.collection, d.root, d.path, d.size, d.mtime_ns, d.content_hash, d.file_type,
                     d.title, json.dumps(list(d.tags), ensure_ascii=False), d.lifecycle,
                     json.dumps(d.metadata, ensure_ascii=False, default=str), d.indexed_at)
                    for d in (r.doc for r in batch)
                ],
            )  # fmt: skip
            conn.executemany(
                "INSERT OR IGNORE INTO vectors(key, vector) VALUES(?, ?)",
                [(k, np.asarray(v, dtype=np.float32).tobytes()) for r in batch for k, v in r.vectors.items()],
            )
            conn.executemany(
                f"INSERT INTO chunks({CHUNK_COLS}) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (c.id, c.doc_id, c.ordinal, c.text, c.char_start, c.char_end, c.line_start,
                     c.line_end, json.dumps(list(c.heading_path), ensure_ascii=False), c.page,
                     c.token_count, c.embed_key)
                    for r in batch for c in r.chunks
                ],
            )  # fmt: skip
            # the chunks whose text has no vector yet: embedded after the swap (store/embedded/pending.py)
            conn.executemany(
                "INSERT INTO unembedded(seq) SELECT c.seq FROM chunks c WHERE c.doc_id = ? "
                "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.key = c.embed_key)",
                [(r.doc.id,) for r in batch],
            )
            self._bump()
        self.keyword.delete_docs([r.doc.id for r in batch])
        self.keyword.add(
            d for r in batch for d in self._keyword_docs(r.doc, r.chunks, r.chunk_terms(self.analyzer))
        )

    def _keyword_docs(
        self, doc: DocumentRecord, chunks: Sequence[Chunk], terms: Sequence[Sequence[str]]
    ) -> Iterator[KeywordDoc]:
        """The keyword index's entries for ``chunks`` (``terms``: theirs, ``Replacement.chunk_terms``)."""
        for c, made in zip(chunks, terms, strict=True):
            yield KeywordDoc(c.id, doc.id, doc.collection, doc.lifecycle or "", made)

    def delete_documents(self, doc_ids: Sequence[str]) -> int:
        if not doc_ids:
            return 0
        with self._tx() as conn:
            removed = conn.executemany("DELETE FROM documents WHERE id=?", [(d,) for d in doc_ids]).rowcount
            conn.execute("DELETE FROM vectors WHERE key NOT IN (SELECT embed_key FROM chunks)")
            self._bump()
        self.keyword.delete_docs(doc_ids)
        return int(removed)

    def gc_vectors(self) -> None:
        """Drop vectors no chunk refers to any more."""
        with self._tx() as conn:
            conn.execute("DELETE FROM vectors WHERE key NOT IN (SELECT embed_key FROM chunks)")
