"""The embedded store: SQLite (WAL) is the truth; tantivy and the vector matrix derive from it."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.embed.base import Vectors
from docshelf.errors import DocshelfError, NotFoundError, StoreError
from docshelf.store import EMBEDDED_DB
from docshelf.store.base import (
    DocState,
    Progress,
    Replacement,
    StoreStats,
    TermAnalyzer,
    report_progress,
)
from docshelf.store.embedded.ann import AnnOptions
from docshelf.store.embedded.dense import DenseIndex
from docshelf.store.embedded.keyword import KeywordIndex
from docshelf.store.embedded.ops import (
    ReadConnections,
    SQLiteTx,
    connect,
    damaged_error,
    store_error,
)
from docshelf.store.embedded.pending import SQLitePending
from docshelf.store.embedded.reads import SQLiteReads
from docshelf.store.embedded.reembed import SQLiteReembed
from docshelf.store.embedded.search import SQLiteSearch
from docshelf.store.embedded.writes import SQLiteWrites
from docshelf.store.history import BuildLog, check_model

if TYPE_CHECKING:
    import numpy as np
else:
    from docshelf.lazy import numpy as np

__all__ = ["SQLiteStore", "TermAnalyzer", "store_error"]

log = logging.getLogger(__name__)


class SQLiteStore(SQLiteSearch, SQLiteReads, SQLiteReembed, SQLiteWrites, SQLitePending, BuildLog):
    """Store in ``data_dir``: ``docshelf.db`` plus the derived ``keyword/`` tantivy index."""

    def __init__(
        self, data_dir: Path, analyzer: TermAnalyzer, ann_threshold: int = 50_000, read_only: bool = False,
        ann: AnnOptions | None = None, mmap_mb: int = 2048,  # MB of it readers map (store.mmap_mb)
    ) -> None:  # fmt: skip
        """``read_only``: write nothing (no folder, journal mode, migration or lock file), for an
        index this user cannot write; a missing index is then an error, not a new empty one."""
        self.data_dir = data_dir
        self.analyzer = analyzer
        self.read_only = read_only
        ann = ann or AnnOptions(threshold=ann_threshold)
        self.db_path = data_dir / EMBEDDED_DB
        if read_only and not self.db_path.is_file():
            raise NotFoundError(
                f"there is no index at {data_dir} yet; run `docshelf index FOLDER` to build one "
                "(or point --data-dir / store.data_dir at an existing one)"
            )
        try:
            if not read_only:
                data_dir.mkdir(parents=True, exist_ok=True)
            self._conn = connect(self.db_path, read_only)
        except (sqlite3.Error, OSError) as exc:
            raise damaged_error(data_dir, exc) or StoreError(
                f"cannot open the index at {data_dir}: {exc}; check the folder's permissions "
                "or point store.data_dir elsewhere"
            ) from exc
        self._lock = threading.RLock()  # the writer connection: one transaction at a time
        self._readers = ReadConnections(self.db_path, mmap_mb)
        self._writing = threading.local()  # set on the thread inside a write transaction
        self.dense = DenseIndex(lambda: self._db, self._conn, self._lock, data_dir, ann)
        self.keyword = KeywordIndex(data_dir / "keyword", read_only)
        if self.generation() > 0 and self.keyword.generation() is None:
            # deleted, damaged and reset on open, or a first sync killed before its keyword commit:
            # keyword hits are missing until it is rebuilt
            log.warning(
                "the keyword index at %s is missing or was damaged (or a first index is still "
                "running); `docshelf index` rebuilds it from the database, no re-embedding",
                data_dir / "keyword",
            )  # fmt: skip

    @property
    def _db(self) -> sqlite3.Connection:
        """The connection a read uses: the writer's inside its own transaction (to see its changes),
        else this thread's read-only one, so reads never wait for a write (WAL snapshots)."""
        if getattr(self._writing, "depth", 0):
            return self._conn
        return self._readers.get()

    # ----- meta -----
    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self._conn.execute(
            "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )

    def get_meta(self, key: str) -> str | None:
        """A value from the meta table (for small state such as the watcher's health)."""
        return self._meta(key)

    def set_meta(self, key: str, value: str) -> None:
        """Store a meta value in its own transaction (it does not change the generation)."""
        self._set_meta_tx(key, value)

    def checkpoint(self) -> bool:
        """Copy the WAL into the database and truncate it; False if readers kept it busy."""
        self._conn.execute("PRAGMA busy_timeout=1000")  # never stall a sync on a long reader
        try:
            row = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.OperationalError:
            return False
        finally:
            self._conn.execute("PRAGMA busy_timeout=30000")
        return row is not None and int(row[0]) == 0

    def compact(self) -> tuple[int, int]:
        """VACUUM the database and clean the keyword index; returns store bytes before and after."""
        before = _tree_size(self.data_dir)
        with self._lock:
            self._conn.execute("VACUUM")
        self.checkpoint()
        self.keyword.compact()
        after = _tree_size(self.data_dir)
        return before, after

    def generation(self) -> int:
        return int(self._meta("generation") or 0)

    def _bump(self) -> None:
        """A write the keyword index follows (documents swapped in or removed): its next commit is
        stamped with this generation."""
        generation = self.generation() + 1
        self._set_meta("generation", str(generation))
        self._set_meta("keyword_at", str(generation))

    def _bump_vectors(self) -> None:
        """A write only the dense side sees (vectors given or swapped): searches re-read, while the
        keyword index, unchanged, stays stamped with the generation of its last change and is not
        committed again (a tantivy commit per batch of vectors cost more on a larger index)."""
        generation = self.generation()
        if self._meta("keyword_at") is None:  # an index from before: its stamp is the generation
            self._set_meta("keyword_at", str(generation))
        self._set_meta("generation", str(generation + 1))

    def _keyword_at(self) -> int:
        """The generation the keyword index is in step with when its marker says so."""
        value = self._meta("keyword_at")
        return self.generation() if value is None else int(value)

    def check_model(self, name: str, dim: int) -> None:
        check_model(self.model(), name, dim, str(self.data_dir))

    def set_model(self, name: str, dim: int) -> None:
        with self._tx():
            self._set_meta("embed_model", name)
            self._set_meta("embed_dim", str(dim))

    def model(self) -> tuple[str | None, int | None]:
        # one statement, one snapshot: another process may be recording a model right now
        rows = dict(self._db.execute("SELECT key, value FROM meta WHERE key IN ('embed_model', 'embed_dim')"))
        dim = rows.get("embed_dim")
        return rows.get("embed_model"), int(dim) if dim else None

    # ----- transactions -----
    def _tx(self) -> SQLiteTx:
        return SQLiteTx(self._conn, self._lock, self.data_dir, self._writing)

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        return list(self._db.execute(sql, args).fetchall())

    # ----- collections -----
    def collections(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT name FROM collections ORDER BY name")]

    def collection_roots(self, collection: str) -> list[str]:
        row = self._db.execute("SELECT roots FROM collections WHERE name=?", (collection,)).fetchone()
        return [] if row is None else list(json.loads(row[0]))

    def set_collection_roots(self, collection: str, roots: Sequence[str]) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO collections(name, roots, created_at) VALUES(?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET roots=excluded.roots",
                (collection, json.dumps(list(roots)), time.time()),
            )

    # ----- documents -----
    def document_states(self, collection: str) -> dict[str, DocState]:
        rows = self._db.execute(
            "SELECT id, path, root, size, mtime_ns, content_hash FROM documents WHERE collection=?",
            (collection,),
        )
        return {r[1]: DocState(*r) for r in rows}

    def document_page(self, after: str, limit: int) -> list[tuple[str, DocState]]:
        rows = self._db.execute(
            "SELECT collection, id, path, root, size, mtime_ns, content_hash FROM documents "
            "WHERE id > ? ORDER BY id LIMIT ?",
            (after, limit),
        ).fetchall()
        return [(r[0], DocState(*r[1:])) for r in rows]

    def documents_below(self, collection: str, folder: str) -> bool:
        # "/" + 1 is "0": a range the (collection, path) index answers, not a scan
        sql = "SELECT 1 FROM documents WHERE collection=? AND path > ? AND path < ? LIMIT 1"
        return self._db.execute(sql, (collection, folder + "/", folder + "0")).fetchone() is not None

    def touch_document(self, doc_id: str, size: int, mtime_ns: int) -> None:
        with self._tx() as conn:
            conn.execute("UPDATE documents SET size=?, mtime_ns=? WHERE id=?", (size, mtime_ns, doc_id))

    def cached_vectors(self, keys: Sequence[str]) -> dict[str, Vectors]:
        out: dict[str, Vectors] = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), 500):
            part = unique[i : i + 500]
            marks = ",".join("?" * len(part))
            for key, blob in self._db.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({marks})", part
            ):
                out[key] = np.frombuffer(blob, dtype=np.float32)
        return out

    def commit(self) -> None:
        """Make pending keyword changes visible, stamped with the generation of the last write they
        follow, and the new vectors to the dense side. With no keyword change in this process the
        keyword index is left as it is: a stale one (another writer killed before its keyword
        commit) then still reads as behind, and the next sync rebuilds it."""
        if self.keyword.changed:
            self.keyword.commit(self._keyword_at())
            self._set_meta_tx("analyzer", self.analyzer.fingerprint)
        self.publish_vectors()

    def writer_guard(
        self, timeout_s: float, collection: str | None = None
    ) -> contextlib.AbstractContextManager[None]:
        """Nothing beyond the writer lock file: the index lives in the data dir it guards."""
        return contextlib.nullcontext()

    def end_write(self, failed: bool) -> None:
        """Hand the tantivy writer back and bound the WAL, so the next writer process starts clean.

        After a failure (or a cancel) what was already swapped into SQLite is published to the
        keyword index first: dropping the writer would otherwise lose those keyword changes.
        """
        try:
            if failed and self.keyword.writing:
                try:
                    self.commit()
                except Exception as exc:  # one line, not a traceback: the sync's own error follows
                    log.warning("could not publish a partial sync (%s); the next sync rebuilds keywords", exc)
            try:
                self.keyword.release()
            except DocshelfError:
                if not failed:  # after a failure, the sync's own error is the one to report
                    raise
        finally:
            self.checkpoint()

    def _set_meta_tx(self, key: str, value: str) -> None:
        with self._tx():
            self._set_meta(key, value)

    def needs_keyword_rebuild(self) -> bool:
        generation = self.generation()
        if generation == 0:  # nothing was ever written
            return False
        stale = self.keyword.generation() != self._keyword_at()
        return stale or self._meta("analyzer") != self.analyzer.fingerprint

    def rebuild_keyword_index(self, progress: Progress | None = None) -> int:
        """Re-derive the tantivy index from SQLite (no re-embedding); returns chunks indexed."""
        self.keyword.clear()
        count = 0
        total = int(self._db.execute("SELECT count(*) FROM chunks").fetchone()[0])
        docs = {d.id: d for d in self.iter_documents()}
        for chunk in self.iter_chunks():
            doc = docs.get(chunk.doc_id)
            if doc is not None:
                made = Replacement(doc, [chunk], {}).chunk_terms(self.analyzer)
                self.keyword.add(self._keyword_docs(doc, [chunk], made))
                count += 1
                report_progress(progress, count, total)
        self.commit()
        return count

    # ----- status -----
    def stats(self) -> StoreStats:
        empty = {"documents": 0, "chunks": 0, "embedded": 0}
        per: dict[str, dict[str, int]] = {name: dict(empty) for name in self.collections()}
        for name, docs in self._db.execute("SELECT collection, COUNT(*) FROM documents GROUP BY collection"):
            per.setdefault(name, dict(empty))["documents"] = docs
        for name, chunks in self._db.execute(
            "SELECT d.collection, COUNT(*) FROM chunks c JOIN documents d ON d.id=c.doc_id "
            "GROUP BY d.collection"
        ):
            per.setdefault(name, dict(empty))["chunks"] = chunks
        missing = self.missing_by_collection()
        for name, counts in per.items():
            counts["embedded"] = counts["chunks"] - missing.get(name, 0)
        size = _tree_size(self.data_dir)
        model, dim = self.model()
        return StoreStats(
            collections=per,
            documents=sum(c["documents"] for c in per.values()),
            chunks=sum(c["chunks"] for c in per.values()),
            vectors=int(self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]),
            size_bytes=size,
            model=model,
            dim=dim,
            generation=self.generation(),
            keyword_generation=self._keyword_generation(),
            reembed=self.reembed_pending(),
        )

    def _keyword_generation(self) -> int | None:
        """The generation the keyword index is in step with: the store's own when its marker is that
        of the last write it follows (vectors given since leave it as it is)."""
        marker = self.keyword.generation()
        return self.generation() if marker is not None and marker == self._keyword_at() else marker

    def close(self) -> None:
        with self._lock:  # waits for a transaction of another thread to finish
            self.keyword.close()
            self._readers.close()
            self._conn.close()


def _tree_size(root: Path) -> int:
    """Bytes of the files under ``root``. Another process writes there meanwhile: a file it
    removes (a keyword commit's temporary file) between the listing and the read counts 0, and a
    folder it removes is skipped (os.walk ignores it), instead of failing a search or `status`."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                total += os.stat(os.path.join(folder, name)).st_size
    return total
