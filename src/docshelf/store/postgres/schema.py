"""Numbered schema migrations for the PostgreSQL store (table ``docshelf_schema``)."""

from __future__ import annotations

from typing import Any

__all__ = ["MIGRATIONS", "TRGM_MIGRATION", "migrate"]

# One advisory-lock key for all docshelf migrations, so servers starting together migrate once.
_MIGRATION_LOCK = 0x646F6373  # "docs"

MIGRATIONS: list[str] = [
    # 1: initial schema. Chunks carry their collection, lifecycle flag and vector so that
    # filters and both retrievers read one table; postings hold our analyzer's terms for BM25, with
    # what scoring and the common filters need, so a keyword query is an index-only scan.
    """
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE meta(key text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE collections(
        name text PRIMARY KEY,
        roots jsonb NOT NULL DEFAULT '[]',
        created_at double precision NOT NULL
    );
    CREATE TABLE documents(
        id text PRIMARY KEY,
        collection text NOT NULL REFERENCES collections(name) ON DELETE CASCADE,
        root text NOT NULL,
        path text NOT NULL,
        size bigint NOT NULL,
        mtime_ns bigint NOT NULL,
        content_hash text NOT NULL,
        file_type text NOT NULL,
        title text,
        tags jsonb NOT NULL DEFAULT '[]',
        lifecycle text,
        metadata jsonb NOT NULL DEFAULT '{}',
        indexed_at double precision NOT NULL,
        UNIQUE(collection, path)
    );
    CREATE TABLE chunks(
        seq bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        doc_id text NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        collection text NOT NULL,
        superseded boolean NOT NULL DEFAULT false,
        ordinal integer NOT NULL,
        text text NOT NULL,
        char_start integer NOT NULL,
        char_end integer NOT NULL,
        line_start integer NOT NULL,
        line_end integer NOT NULL,
        heading_path jsonb NOT NULL DEFAULT '[]',
        page integer,
        token_count integer NOT NULL,
        embed_key text NOT NULL,
        n_terms integer NOT NULL,
        embedding vector
    );
    CREATE INDEX chunks_doc ON chunks(doc_id, ordinal);
    CREATE INDEX chunks_embed ON chunks(embed_key);
    CREATE INDEX chunks_collection ON chunks(collection);
    CREATE TABLE postings(
        term text NOT NULL,
        chunk bigint NOT NULL REFERENCES chunks(seq) ON DELETE CASCADE,
        tf integer NOT NULL,
        dl integer NOT NULL,
        collection text NOT NULL,
        superseded boolean NOT NULL,
        PRIMARY KEY(term, chunk) INCLUDE (tf, dl, collection, superseded)
    );
    CREATE INDEX postings_chunk ON postings(chunk);
    CREATE TABLE corpus_stats(
        id integer PRIMARY KEY CHECK (id = 1),
        chunks bigint NOT NULL,
        terms bigint NOT NULL
    );
    INSERT INTO corpus_stats VALUES (1, 0, 0);
    CREATE TABLE skipped(
        collection text NOT NULL,
        path text NOT NULL,
        reason text NOT NULL,
        at double precision NOT NULL,
        PRIMARY KEY(collection, path)
    );
    CREATE TABLE builds(
        id bigserial PRIMARY KEY,
        collection text NOT NULL,
        started_at double precision NOT NULL,
        finished_at double precision,
        git_commit text,
        git_dirty boolean,
        added integer NOT NULL,
        updated integer NOT NULL,
        removed integer NOT NULL,
        unchanged integer NOT NULL,
        skipped integer NOT NULL,
        status text NOT NULL
    );
    """,
    # 2: a re-embed keeps its new vectors here, per chunk, until all are in (then one swap), so
    # a killed re-embed leaves the old vectors in place and is continued where it stopped
    """
    CREATE TABLE reembed(chunk_id text PRIMARY KEY, key text NOT NULL, embedding vector NOT NULL);
    """,
    # 3: postings packed per term (store/postgres/postings.py): BM25 summed in the client over a
    # few rows per term instead of one row per posting in the executor. Chunks keep their distinct
    # terms (a delete keeps document frequencies exact without reading postings); new postings
    # wait in posting_tail until a commit packs them.
    """
    ALTER TABLE chunks ADD COLUMN terms text[] NOT NULL DEFAULT '{}';
    UPDATE chunks c SET terms = x.terms
        FROM (SELECT chunk, array_agg(term ORDER BY term) AS terms FROM postings GROUP BY chunk) x
        WHERE c.seq = x.chunk;
    ALTER TABLE corpus_stats ADD COLUMN postings bigint NOT NULL DEFAULT 0,
        ADD COLUMN packed bigint NOT NULL DEFAULT 0;
    CREATE TABLE term_stats(term text PRIMARY KEY, df bigint NOT NULL);
    INSERT INTO term_stats SELECT term, count(*) FROM postings GROUP BY term;
    CREATE TABLE posting_tail(
        term text NOT NULL,
        chunk bigint NOT NULL REFERENCES chunks(seq) ON DELETE CASCADE,
        tf integer NOT NULL,
        dl integer NOT NULL,
        collection text NOT NULL,
        superseded boolean NOT NULL,
        PRIMARY KEY(term, chunk)
    );
    CREATE INDEX posting_tail_chunk ON posting_tail(chunk);
    CREATE TABLE posting_blocks(
        id bigserial PRIMARY KEY,
        term text NOT NULL,
        collection text NOT NULL,
        superseded boolean NOT NULL,
        n integer NOT NULL,
        chunks bytea NOT NULL,
        tfs bytea NOT NULL,
        dls bytea NOT NULL
    );
    INSERT INTO posting_blocks(term, collection, superseded, n, chunks, tfs, dls) {PACK_POSTINGS};
    CREATE INDEX posting_blocks_term ON posting_blocks(term, collection, superseded);
    UPDATE corpus_stats SET postings = (SELECT count(*) FROM postings),
        packed = (SELECT coalesce(sum(n), 0) FROM posting_blocks);
    DROP TABLE postings;
    """,
    # 4: grep's substring index: pg_trgm's trigrams of each chunk's text, so `text ILIKE '%piece%'`
    # reads a few index pages instead of every chunk. Skipped where pg_trgm is not installed or
    # this role may not create it (grep's ILIKE then reads the table).
    """
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
    CREATE INDEX IF NOT EXISTS chunks_text_trgm ON chunks USING gin (text gin_trgm_ops);
    """,
]
TRGM_MIGRATION = 4


def _script(number: int, script: str) -> str:
    if "{PACK_POSTINGS}" in script:  # the packing SELECT is shared with the commit-time packer
        from docshelf.store.postgres.postings import pack_sql

        return script.replace("{PACK_POSTINGS}", pack_sql("postings"))
    return script


def migrate(conn: Any) -> int:
    """Apply pending migrations under an advisory lock; return the schema version.

    On a hot standby (a streaming replica) nothing can be written: the schema must already be
    the one this docshelf expects, migrated on the primary and replicated."""
    if conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
        return _replica_version(conn)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS docshelf_schema(version integer NOT NULL)")
        row = conn.execute("SELECT max(version) FROM docshelf_schema").fetchone()
        version = int(row[0] or 0)
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            if number == TRGM_MIGRATION:
                _add_trigrams(conn, script)
            else:
                for statement in _script(number, script).split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute("INSERT INTO docshelf_schema(version) VALUES (%s)", (number,))
    return len(MIGRATIONS)


def _add_trigrams(conn: Any, script: str) -> None:
    """The trigram index, where pg_trgm can be had; a failure leaves the migration's transaction
    usable (a savepoint) and grep without the index."""
    import logging

    row = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'").fetchone()
    if row is None:
        logging.getLogger(__name__).warning("pg_trgm is not installed: grep reads every chunk")
        return
    try:
        with conn.transaction():
            for statement in script.split(";"):
                if statement.strip():
                    conn.execute(statement)
    except Exception as exc:  # psycopg's errors: no privilege to create the extension, most often
        logging.getLogger(__name__).warning("no trigram index for grep (%s): it reads every chunk", exc)


def _replica_version(conn: Any) -> int:
    from docshelf.errors import StoreError

    present = conn.execute("SELECT to_regclass('docshelf_schema') IS NOT NULL").fetchone()[0]
    row = conn.execute("SELECT max(version) FROM docshelf_schema").fetchone() if present else None
    version = int(row[0] or 0) if row else 0
    if version < len(MIGRATIONS):
        raise StoreError(
            f"this PostgreSQL server is a read-only replica and its docshelf schema is at version {version} "
            f"of {len(MIGRATIONS)}: run `docshelf index` (or any docshelf command) against the primary "
            "once, then retry when the replica has caught up"
        )
    return version
