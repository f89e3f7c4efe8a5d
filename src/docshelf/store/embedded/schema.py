"""Numbered schema migrations for the SQLite store (PRAGMA user_version)."""

from __future__ import annotations

import sqlite3

__all__ = ["GRAMS_MIGRATION", "MIGRATIONS", "has_trigrams", "migrate"]

MIGRATIONS: list[str] = [
    # 1: initial schema
    """
    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE collections(
        name TEXT PRIMARY KEY,
        roots TEXT NOT NULL DEFAULT '[]',
        created_at REAL NOT NULL
    );
    CREATE TABLE documents(
        id TEXT PRIMARY KEY,
        collection TEXT NOT NULL REFERENCES collections(name) ON DELETE CASCADE,
        root TEXT NOT NULL,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        file_type TEXT NOT NULL,
        title TEXT,
        tags TEXT NOT NULL DEFAULT '[]',
        lifecycle TEXT,
        metadata TEXT NOT NULL DEFAULT '{}',
        indexed_at REAL NOT NULL,
        UNIQUE(collection, path)
    );
    CREATE TABLE chunks(
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        text TEXT NOT NULL,
        char_start INTEGER NOT NULL,
        char_end INTEGER NOT NULL,
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        heading_path TEXT NOT NULL DEFAULT '[]',
        page INTEGER,
        token_count INTEGER NOT NULL,
        embed_key TEXT NOT NULL
    );
    CREATE INDEX chunks_doc ON chunks(doc_id, ordinal);
    CREATE INDEX chunks_embed ON chunks(embed_key);
    CREATE TABLE vectors(key TEXT PRIMARY KEY, vector BLOB NOT NULL);
    CREATE TABLE skipped(
        collection TEXT NOT NULL,
        path TEXT NOT NULL,
        reason TEXT NOT NULL,
        at REAL NOT NULL,
        PRIMARY KEY(collection, path)
    );
    CREATE TABLE builds(
        id INTEGER PRIMARY KEY,
        collection TEXT NOT NULL,
        started_at REAL NOT NULL,
        finished_at REAL,
        git_commit TEXT,
        git_dirty INTEGER,
        added INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        removed INTEGER NOT NULL,
        unchanged INTEGER NOT NULL,
        skipped INTEGER NOT NULL,
        status TEXT NOT NULL
    );
    """,
    # 2: chunk seqs are never reused. They key the HNSW index, which is kept in step by key
    # difference: a plain rowid handed the deleted highest seq to the next chunk written, and the
    # index kept the old chunk's vector under it. (Saved HNSW files from before are rebuilt.)
    """
    CREATE TABLE chunks_v2(
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        text TEXT NOT NULL,
        char_start INTEGER NOT NULL,
        char_end INTEGER NOT NULL,
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        heading_path TEXT NOT NULL DEFAULT '[]',
        page INTEGER,
        token_count INTEGER NOT NULL,
        embed_key TEXT NOT NULL
    );
    INSERT INTO chunks_v2 SELECT seq, id, doc_id, ordinal, text, char_start, char_end, line_start,
        line_end, heading_path, page, token_count, embed_key FROM chunks;
    DROP TABLE chunks;
    ALTER TABLE chunks_v2 RENAME TO chunks;
    CREATE INDEX chunks_doc ON chunks(doc_id, ordinal);
    CREATE INDEX chunks_embed ON chunks(embed_key);
    """,
    # 3: a re-embed keeps its new vectors here, per chunk, until all are in (then one swap), so
    # a killed re-embed leaves the old vectors in place and is continued where it stopped
    """
    CREATE TABLE reembed(chunk_id TEXT PRIMARY KEY, key TEXT NOT NULL, vector BLOB NOT NULL);
    """,
    # 4: whether any document is superseded, read by the dense side at each new generation (without
    # one, its hits skip the documents join), answered without reading every document
    """
    CREATE INDEX IF NOT EXISTS documents_superseded ON documents(lifecycle) WHERE lifecycle = 'superseded';
    """,
    # 5: grep's substring index: the trigrams of every chunk (case folded), kept by triggers, with no
    # positions (detail=none: about half the chunk text's size, where positions cost 2.2 times it) since
    # grep checks each candidate on the text anyway. Skipped where SQLite lacks FTS5's trigrams
    # (grep then scans).
    """
    CREATE VIRTUAL TABLE IF NOT EXISTS chunk_grams USING fts5(
        text, content='chunks', content_rowid='seq', tokenize='trigram', detail='none');
    INSERT INTO chunk_grams(chunk_grams) VALUES('rebuild');
    CREATE TRIGGER IF NOT EXISTS chunk_grams_add AFTER INSERT ON chunks BEGIN
        INSERT INTO chunk_grams(rowid, text) VALUES (new.seq, new.text);
    END;
    CREATE TRIGGER IF NOT EXISTS chunk_grams_drop AFTER DELETE ON chunks BEGIN
        INSERT INTO chunk_grams(chunk_grams, rowid, text) VALUES ('delete', old.seq, old.text);
    END;
    """,
    # 6: the chunks whose vector is still to be computed: a sync swaps documents in keyword-first
    # and embeds after; a killed one resumes from here. Gone with their chunk (or its re-seq). Safe
    # to run again, as the others are (an index whose user_version was wound back reruns them).
    """
    CREATE TABLE IF NOT EXISTS unembedded(seq INTEGER PRIMARY KEY REFERENCES chunks(seq) ON DELETE CASCADE);
    INSERT OR IGNORE INTO unembedded(seq) SELECT c.seq FROM chunks c
        WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.key = c.embed_key);
    """,
    # 7: the chunks given their vector after they were swapped in, numbered in the order they got it.
    # The chunk keeps its row and seq (moving it to a new seq wrote it, its grep trigrams and its
    # indexes twice); the dense side, which follows chunks by seq, reads these after the last
    # number it saw. Gone with their chunk; n is never reused (a reader's mark stays valid).
    """
    CREATE TABLE IF NOT EXISTS filled(
        n INTEGER PRIMARY KEY AUTOINCREMENT,
        seq INTEGER NOT NULL UNIQUE REFERENCES chunks(seq) ON DELETE CASCADE
    );
    """,
]
GRAMS_MIGRATION = 5


def has_trigrams(conn: sqlite3.Connection) -> bool:
    """Whether this SQLite has FTS5 with the trigram tokenizer (3.34 and later, when built with FTS5)."""
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.docshelf_probe USING fts5(x, tokenize='trigram')")
    except sqlite3.Error:
        return False
    conn.execute("DROP TABLE temp.docshelf_probe")
    return True


def _statements(script: str) -> list[str]:
    """The statements of ``script`` (a trigger's body holds semicolons of its own)."""
    out: list[str] = []
    pending = ""
    for part in script.split(";"):
        pending += part + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                out.append(pending)
            pending = ""
    return out


def migrate(conn: sqlite3.Connection) -> int:
    """Apply pending migrations, each in its own transaction; return the schema version."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # re-check under the write lock: another process may have migrated meanwhile
            if int(conn.execute("PRAGMA user_version").fetchone()[0]) >= number:
                conn.execute("ROLLBACK")
                continue
            if number != GRAMS_MIGRATION or has_trigrams(conn):
                for statement in _statements(script):
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return len(MIGRATIONS)
