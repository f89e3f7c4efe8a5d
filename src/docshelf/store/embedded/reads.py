"""Reading documents and chunks back from the embedded store (SQLite): what search results,
`read`, `ls` and grep are made of."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from docshelf.store.base import DocumentRecord, TextSpan
from docshelf.store.embedded.ops import CHUNK_COLS, DOC_COLS
from docshelf.types import Chunk

__all__ = ["SQLiteReads"]


@functools.lru_cache(maxsize=4096)
def _strings(value: str) -> tuple[str, ...]:
    """A stored JSON list of strings (heading paths, tags): the same few come back for every chunk
    of a document, so each is decoded once (grep reads every chunk of an index)."""
    return () if value == "[]" else tuple(json.loads(value))


def _chunk(row: sqlite3.Row | tuple[Any, ...]) -> Chunk:
    return Chunk(
        id=row[0], doc_id=row[1], ordinal=row[2], text=row[3], char_start=row[4],
        char_end=row[5], line_start=row[6], line_end=row[7],
        heading_path=_strings(row[8]), page=row[9], token_count=row[10], embed_key=row[11],
    )  # fmt: skip


def _doc(row: sqlite3.Row | tuple[Any, ...]) -> DocumentRecord:
    return DocumentRecord(
        id=row[0], collection=row[1], root=row[2], path=row[3], size=row[4], mtime_ns=row[5],
        content_hash=row[6], file_type=row[7], title=row[8], tags=_strings(row[9]),
        lifecycle=row[10], metadata={} if row[11] == "{}" else json.loads(row[11]), indexed_at=row[12],
    )  # fmt: skip


class SQLiteReads:
    """Mixed into the SQLite store; needs its (per-thread) connection."""

    @property
    def _db(self) -> sqlite3.Connection:
        raise NotImplementedError

    def iter_documents(self, collection: str | None = None) -> Iterator[DocumentRecord]:
        sql, args = f"SELECT {DOC_COLS} FROM documents", ()
        if collection:
            sql, args = sql + " WHERE collection=?", (collection,)  # type: ignore[assignment]
        for row in self._db.execute(sql + " ORDER BY collection, path", args).fetchall():
            yield _doc(row)

    def get_document(self, collection: str, path: str) -> DocumentRecord | None:
        row = self._db.execute(
            f"SELECT {DOC_COLS} FROM documents WHERE collection=? AND path=?", (collection, path)
        ).fetchone()
        return None if row is None else _doc(row)

    def get_document_by_id(self, doc_id: str) -> DocumentRecord | None:
        row = self._db.execute(f"SELECT {DOC_COLS} FROM documents WHERE id=?", (doc_id,)).fetchone()
        return None if row is None else _doc(row)

    def get_documents(self, doc_ids: Sequence[str]) -> dict[str, DocumentRecord]:
        unique, found = list(set(doc_ids)), dict[str, DocumentRecord]()
        for i in range(0, len(unique), 500):
            part = unique[i : i + 500]
            sql = f"SELECT {DOC_COLS} FROM documents WHERE id IN ({','.join('?' * len(part))})"
            found.update((r[0], _doc(r)) for r in self._db.execute(sql, part))
        return found

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        found: dict[str, Chunk] = {}
        for i in range(0, len(chunk_ids), 500):
            part = list(chunk_ids[i : i + 500])
            marks = ",".join("?" * len(part))
            for row in self._db.execute(f"SELECT {CHUNK_COLS} FROM chunks WHERE id IN ({marks})", part):
                found[row[0]] = _chunk(row)
        return [found[c] for c in chunk_ids if c in found]

    def document_chunks(self, doc_id: str) -> list[Chunk]:
        rows = self._db.execute(f"SELECT {CHUNK_COLS} FROM chunks WHERE doc_id=? ORDER BY ordinal", (doc_id,))
        return [_chunk(r) for r in rows]

    def chunks_of(self, doc_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        out: dict[str, list[Chunk]] = {d: [] for d in doc_ids}
        unique = list(out)
        for i in range(0, len(unique), 500):
            part = unique[i : i + 500]
            sql = f"SELECT {CHUNK_COLS} FROM chunks WHERE doc_id IN ({','.join('?' * len(part))})"
            for row in self._db.execute(sql + " ORDER BY doc_id, ordinal", part):
                out[row[1]].append(_chunk(row))
        return out

    def chunk_texts(self, doc_ids: Sequence[str]) -> dict[str, list[TextSpan]]:
        out: dict[str, list[TextSpan]] = {d: [] for d in doc_ids}
        unique = list(out)
        for i in range(0, len(unique), 500):
            part = unique[i : i + 500]
            sql = (
                "SELECT doc_id, char_start, char_end, line_start, line_end, text FROM chunks "
                f"WHERE doc_id IN ({','.join('?' * len(part))}) ORDER BY doc_id, ordinal"
            )
            for row in self._db.execute(sql, part):
                out[row[0]].append(TextSpan(row[1], row[2], row[3], row[4], row[5]))
        return out

    def iter_chunks(self) -> Iterator[Chunk]:
        cursor = self._db.execute(f"SELECT {CHUNK_COLS} FROM chunks ORDER BY seq")
        while rows := cursor.fetchmany(2000):
            yield from (_chunk(r) for r in rows)
