"""The PostgreSQL + pgvector store: the same protocol as the embedded one, for shared indexes."""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from docshelf.config import hide_secrets, redact_dsn
from docshelf.embed.base import Vectors
from docshelf.errors import StoreError
from docshelf.store.base import (
    DocState,
    DocumentRecord,
    Replacement,
    StoreStats,
    TermAnalyzer,
    TextSpan,
    last_versions,
)
from docshelf.store.history import BuildLog, check_model
from docshelf.store.postgres import ops
from docshelf.store.postgres.maintenance import PgMaintenance
from docshelf.store.postgres.pending import PgPending
from docshelf.store.postgres.reembed import PgReembed
from docshelf.store.postgres.schema import migrate
from docshelf.store.postgres.search import PgSearch
from docshelf.store.postgres.writelock import database_writer
from docshelf.types import Chunk

__all__ = ["PostgresStore"]

_CHUNK_COLS = (
    "id, doc_id, ordinal, text, char_start, char_end, line_start, line_end, "
    "heading_path, page, token_count, embed_key"
)
_DOC_COLS = (
    "id, collection, root, path, size, mtime_ns, content_hash, file_type, title, tags, "
    "lifecycle, metadata, indexed_at"
)


def _chunk(row: Sequence[Any]) -> Chunk:
    return Chunk(
        id=row[0], doc_id=row[1], ordinal=row[2], text=row[3], char_start=row[4],
        char_end=row[5], line_start=row[6], line_end=row[7], heading_path=tuple(row[8]),
        page=row[9], token_count=row[10], embed_key=row[11],
    )  # fmt: skip


def _doc(row: Sequence[Any]) -> DocumentRecord:
    return DocumentRecord(
        id=row[0], collection=row[1], root=row[2], path=row[3], size=row[4], mtime_ns=row[5],
        content_hash=row[6], file_type=row[7], title=row[8], tags=tuple(row[9]),
        lifecycle=row[10], metadata=row[11], indexed_at=row[12],
    )  # fmt: skip


def _driver() -> tuple[Any, Any, Any, Any]:
    try:
        import psycopg
        from pgvector.psycopg import register_vector
        from psycopg.types.json import Jsonb
        from psycopg_pool import ConnectionPool
    except ImportError as exc:
        raise StoreError(
            f"the PostgreSQL store needs extra packages ({exc.name} is missing): "
            "`pip install 'docshelf[postgres]'`"
        ) from exc
    return psycopg, register_vector, Jsonb, ConnectionPool


class PostgresStore(PgSearch, PgReembed, PgMaintenance, PgPending, BuildLog):
    """Store in a PostgreSQL database with pgvector; ``data_dir`` keeps only local state (locks)."""

    def __init__(
        self,
        url: str,
        data_dir: Path,
        analyzer: TermAnalyzer,
        ann_threshold: int = 50_000,
        pool_size: int = 4,
        ef_search: int = 200,
    ) -> None:
        psycopg, register_vector, self._jsonb, pool_cls = _driver()
        self.url = url
        self.data_dir = data_dir
        self.analyzer = analyzer
        self.ann_threshold = ann_threshold
        self._driver_error: type[Exception] = psycopg.Error
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
                migrate(conn)
                # a hot standby (streaming replica) answers searches; writes go to the primary
                self.read_only = bool(conn.execute("SELECT pg_is_in_recovery()").fetchone()[0])

            def configure(conn: Any) -> None:
                register_vector(conn)
                # iterative scans keep an HNSW search going until filters leave k rows
                conn.execute(f"SET hnsw.ef_search = {int(ef_search)}")
                conn.execute("SET hnsw.iterative_scan = relaxed_order")

            # autocommit: a read is one round trip, where an implicit transaction added a BEGIN
            # before it and the pool's ROLLBACK after it; writes open theirs (ops.Tx)
            self._pool = pool_cls(
                url, min_size=1, max_size=max(1, pool_size), configure=configure, open=True,
                kwargs={"connect_timeout": 10, "autocommit": True}, timeout=30,
            )  # fmt: skip
        except (psycopg.Error, OSError) as exc:
            raise StoreError(
                f"cannot open the PostgreSQL store at {redact_dsn(url)}: {self._why(exc)}; check "
                "that the server runs, the DSN (store.url) is right and pgvector is installed"
            ) from exc

    # ----- plumbing -----
    def _why(self, exc: Exception) -> str:
        """The driver's message on one line, without the passwords it may quote from the DSN."""
        return hide_secrets(" ".join(str(exc).split()), self.url)

    def _error(self, exc: Exception) -> StoreError | None:
        """A driver error as one line that names the server (None for anything else)."""
        if not isinstance(exc, self._driver_error):
            return None
        if getattr(exc, "sqlstate", None) == "25006":  # read_only_sql_transaction: promoted, demoted
            return ops.replica_error(self.url)
        return StoreError(
            f"the PostgreSQL store at {redact_dsn(self.url)} failed: {self._why(exc)[:300]}; "
            "check that the server is up and reachable (and the schema intact), then retry"
        )

    def _q(self, sql: str, params: Any = None, binary: bool = False) -> list[Any]:
        try:
            with self._pool.connection() as conn:
                return list(conn.execute(sql, params, binary=binary).fetchall())
        except Exception as exc:
            raise (self._error(exc) or exc) from exc

    def _one(self, sql: str, params: Any = None) -> Any:
        rows = self._q(sql, params)
        return rows[0] if rows else None

    def _tx(self) -> Any:
        if self.read_only:
            raise ops.replica_error(self.url)
        return ops.Tx(self._pool, self._error)

    _PARAM = "%s"
    _DIRTY_AS_INT = False

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        return self._q(sql, args)

    # ----- meta -----
    def get_meta(self, key: str) -> str | None:
        row = self._one("SELECT value FROM meta WHERE key=%s", (key,))
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._tx() as conn:
            ops.set_meta(conn, key, value)

    def generation(self) -> int:
        return int(self.get_meta("generation") or 0)

    def model(self) -> tuple[str | None, int | None]:
        # one snapshot: two reads could straddle another writer's set_model and see a half
        rows = dict(self._q("SELECT key, value FROM meta WHERE key IN ('embed_model', 'embed_dim')"))
        dim = rows.get("embed_dim")
        return rows.get("embed_model"), int(dim) if dim else None

    def check_model(self, name: str, dim: int) -> None:
        check_model(self.model(), name, dim, redact_dsn(self.url))

    def set_model(self, name: str, dim: int) -> None:
        with self._tx() as conn:
            ops.set_meta(conn, "embed_model", name)
            ops.set_meta(conn, "embed_dim", str(dim))
            ops.ensure_vector_column(conn, dim)

    def gc_vectors(self) -> None:
        """Vectors live on their chunks here: nothing to collect."""

    # ----- collections -----
    def collections(self) -> list[str]:
        return [r[0] for r in self._q("SELECT name FROM collections ORDER BY name")]

    def collection_roots(self, collection: str) -> list[str]:
        row = self._one("SELECT roots FROM collections WHERE name=%s", (collection,))
        return [] if row is None else list(row[0])

    def set_collection_roots(self, collection: str, roots: Sequence[str]) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO collections(name, roots, created_at) VALUES(%s, %s, %s) "
                "ON CONFLICT(name) DO UPDATE SET roots=excluded.roots",
                (collection, self._jsonb(list(roots)), time.time()),
            )

    # ----- documents -----
    def document_states(self, collection: str) -> dict[str, DocState]:
        rows = self._q(
            "SELECT id, path, root, size, mtime_ns, content_hash FROM documents WHERE collection=%s",
            (collection,),
        )
        return {r[1]: DocState(*r) for r in rows}

    def document_page(self, after: str, limit: int) -> list[tuple[str, DocState]]:
        rows = self._q(
            "SELECT collection, id, path, root, size, mtime_ns, content_hash FROM documents WHERE id > %s "
            "ORDER BY id LIMIT %s",
            (after, limit),
        )
        return [(r[0], DocState(*r[1:])) for r in rows]

    def documents_below(self, collection: str, folder: str) -> bool:
        # starts_with, not a range: the database's collation need not order text by code point
        sql = "SELECT 1 FROM documents WHERE collection=%s AND starts_with(path, %s) LIMIT 1"
        return self._one(sql, (collection, folder + "/")) is not None

    def touch_document(self, doc_id: str, size: int, mtime_ns: int) -> None:
        with self._tx() as conn:
            conn.execute("UPDATE documents SET size=%s, mtime_ns=%s WHERE id=%s", (size, mtime_ns, doc_id))

    def cached_vectors(self, keys: Sequence[str]) -> dict[str, Vectors]:
        unique = list(dict.fromkeys(keys))
        rows = self._q(
            "SELECT DISTINCT ON (embed_key) embed_key, embedding FROM chunks "
            "WHERE embed_key = ANY(%s) AND embedding IS NOT NULL",
            (unique,),
        )
        return {k: ops.as_array(v) for k, v in rows}

    def replace_documents(self, batch: Sequence[Replacement]) -> None:
        """Swap the batch in one transaction (a commit waits for the WAL to reach the disk).

        Each document's advisory lock is taken first, in id order: two writers then never hold
        each other's next lock (after them every writer queues on corpus_stats, see ops.delete_docs).
        """
        batch = last_versions(batch)
        if not batch:
            return
        terms = {r.doc.id: [Counter(t) for t in r.chunk_terms(self.analyzer)] for r in batch}
        with self._tx() as conn:
            with conn.cursor() as cur:  # in order: executemany runs them one after the other
                cur.executemany(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [(d,) for d in sorted(terms)]
                )
            for r in batch:
                self._replace(conn, r, terms[r.doc.id])
            ops.bump(conn)

    def _replace(self, conn: Any, r: Replacement, terms: list[Counter[str]]) -> None:
        """Swap one document inside the caller's transaction."""
        doc, chunks, vectors = r.doc, r.chunks, r.vectors
        superseded = doc.lifecycle == "superseded"
        ops.delete_docs(conn, [doc.id])
        conn.execute(
            f"INSERT INTO documents({_DOC_COLS}) VALUES(%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            (doc.id, doc.collection, doc.root, doc.path, doc.size, doc.mtime_ns, doc.content_hash,
             doc.file_type, doc.title, self._jsonb(list(doc.tags)), doc.lifecycle,
             self._jsonb(ops.jsonable(doc.metadata)), doc.indexed_at),
        )  # fmt: skip
        # seqs first, so chunks and all their postings go in as two COPY streams
        seqs = [
            row[0]
            for row in conn.execute(
                "SELECT nextval(pg_get_serial_sequence('chunks', 'seq')) FROM generate_series(1, %s)",
                (len(chunks),),
            )
        ]
        total_terms = sum(sum(c.values()) for c in terms)
        with conn.cursor() as cur:
            with cur.copy(f"COPY chunks(seq, {_CHUNK_COLS}, collection, superseded, n_terms, terms, "
                          "embedding) FROM STDIN") as copy:  # fmt: skip
                for seq, c, counts in zip(seqs, chunks, terms, strict=True):
                    vec = vectors.get(c.embed_key)
                    copy.write_row(
                        (seq, c.id, c.doc_id, c.ordinal, c.text, c.char_start, c.char_end, c.line_start,
                         c.line_end, json.dumps(list(c.heading_path), ensure_ascii=False), c.page,
                         c.token_count, c.embed_key, doc.collection, superseded, sum(counts.values()),
                         sorted(counts), None if vec is None else ops.vector_text(vec)),
                    )  # fmt: skip
            df = ops.write_postings(cur, doc.collection, superseded, zip(seqs, terms, strict=True))
        ops.count_terms(conn, dict(df))
        conn.execute(
            "UPDATE corpus_stats SET chunks = chunks + %s, terms = terms + %s, postings = postings + %s",
            (len(chunks), total_terms, sum(df.values())),
        )

    def delete_documents(self, doc_ids: Sequence[str]) -> int:
        if not doc_ids:
            return 0
        with self._tx() as conn:
            removed = ops.delete_docs(conn, list(doc_ids))
            ops.bump(conn)
        return removed

    def commit(self) -> None:
        """Keyword postings commit with their rows: pack the tail once it is long (and repack
        once deleted chunks hold a fifth of the packed postings); record the analyzer stamp."""
        self.pack_postings()
        if self.get_meta("analyzer") != self.analyzer.fingerprint:
            self.set_meta("analyzer", self.analyzer.fingerprint)

    def end_write(self, failed: bool) -> None:
        """Nothing is pending between transactions here."""

    def writer_guard(
        self, timeout_s: float, collection: str | None = None
    ) -> contextlib.AbstractContextManager[None]:
        """The writer lock of a collection (or the database) for writers on other machines too
        (a replica writes nothing)."""
        if self.read_only:
            return contextlib.nullcontext()
        return database_writer(self.url, timeout_s, self._why, collection)

    def needs_keyword_rebuild(self) -> bool:
        stamp = self.get_meta("analyzer")
        return stamp is not None and stamp != self.analyzer.fingerprint

    # ----- reads -----
    def iter_documents(self, collection: str | None = None) -> Iterator[DocumentRecord]:
        sql, args = f"SELECT {_DOC_COLS} FROM documents", ()
        if collection:
            sql, args = sql + " WHERE collection=%s", (collection,)  # type: ignore[assignment]
        yield from (_doc(r) for r in self._q(sql + " ORDER BY collection, path", args))

    def get_document(self, collection: str, path: str) -> DocumentRecord | None:
        row = self._one(
            f"SELECT {_DOC_COLS} FROM documents WHERE collection=%s AND path=%s", (collection, path)
        )
        return None if row is None else _doc(row)

    def get_document_by_id(self, doc_id: str) -> DocumentRecord | None:
        row = self._one(f"SELECT {_DOC_COLS} FROM documents WHERE id=%s", (doc_id,))
        return None if row is None else _doc(row)

    def get_documents(self, doc_ids: Sequence[str]) -> dict[str, DocumentRecord]:
        rows = self._q(f"SELECT {_DOC_COLS} FROM documents WHERE id = ANY(%s)", (list(set(doc_ids)),))
        return {r[0]: _doc(r) for r in rows}

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        rows = self._q(f"SELECT {_CHUNK_COLS} FROM chunks WHERE id = ANY(%s)", (list(chunk_ids),))
        found = {r[0]: _chunk(r) for r in rows}
        return [found[c] for c in chunk_ids if c in found]

    def document_chunks(self, doc_id: str) -> list[Chunk]:
        rows = self._q(f"SELECT {_CHUNK_COLS} FROM chunks WHERE doc_id=%s ORDER BY ordinal", (doc_id,))
        return [_chunk(r) for r in rows]

    def chunks_of(self, doc_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        out: dict[str, list[Chunk]] = {d: [] for d in doc_ids}
        rows = self._q(
            f"SELECT {_CHUNK_COLS} FROM chunks WHERE doc_id = ANY(%s) ORDER BY doc_id, ordinal", (list(out),)
        )
        for row in rows:
            out[row[1]].append(_chunk(row))
        return out

    def chunk_texts(self, doc_ids: Sequence[str]) -> dict[str, list[TextSpan]]:
        out: dict[str, list[TextSpan]] = {d: [] for d in doc_ids}
        sql = (
            "SELECT doc_id, char_start, char_end, line_start, line_end, text FROM chunks "
            "WHERE doc_id = ANY(%s) ORDER BY doc_id, ordinal"
        )
        for row in self._q(sql, (list(out),)):
            out[row[0]].append(TextSpan(row[1], row[2], row[3], row[4], row[5]))
        return out

    def iter_chunks(self) -> Iterator[Chunk]:
        try:
            with (
                self._pool.connection() as conn, conn.transaction(),  # a server-side cursor needs one
                conn.cursor(name="docshelf_iter_chunks") as cur,
            ):  # fmt: skip
                cur.execute(f"SELECT {_CHUNK_COLS} FROM chunks ORDER BY seq")
                while rows := cur.fetchmany(2000):
                    yield from (_chunk(r) for r in rows)
        except Exception as exc:
            raise (self._error(exc) or exc) from exc

    # ----- status -----
    def stats(self) -> StoreStats:
        empty = {"documents": 0, "chunks": 0, "embedded": 0}
        per: dict[str, dict[str, int]] = {name: dict(empty) for name in self.collections()}
        for name, docs in self._q("SELECT collection, COUNT(*) FROM documents GROUP BY collection"):
            per.setdefault(name, dict(empty))["documents"] = docs
        for name, chunks, embedded in self._q(
            "SELECT collection, COUNT(*), COUNT(embedding) FROM chunks GROUP BY collection"
        ):
            per.setdefault(name, dict(empty)).update(chunks=chunks, embedded=embedded)
        model, dim = self.model()
        generation = self.generation()
        return StoreStats(
            collections=per,
            documents=sum(c["documents"] for c in per.values()),
            chunks=sum(c["chunks"] for c in per.values()),
            vectors=int(self._one("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL")[0]),
            size_bytes=self._size(),
            model=model,
            dim=dim,
            generation=generation,
            keyword_generation=generation,  # postings commit with the rows they index
            reembed=self.reembed_pending(),
        )

    def close(self) -> None:
        self._pool.close()
