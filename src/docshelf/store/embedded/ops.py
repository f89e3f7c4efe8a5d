"""Opening the SQLite store's database, its write transactions, and the one-line errors a failed
open or write becomes."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from urllib.parse import quote

from docshelf.errors import StoreError
from docshelf.store.embedded.schema import migrate

__all__ = ["CHUNK_COLS", "DOC_COLS", "ReadConnections", "SQLiteTx", "connect", "damaged_error", "store_error"]

CHUNK_COLS = (
    "id, doc_id, ordinal, text, char_start, char_end, line_start, line_end, "
    "heading_path, page, token_count, embed_key"
)
DOC_COLS = (
    "id, collection, root, path, size, mtime_ns, content_hash, file_type, title, tags, "
    "lifecycle, metadata, indexed_at"
)


_DAMAGED = ("malformed", "not a database", "corrupt")
_OPEN_WAIT_S = 30.0  # as the connections' busy timeout


def _wal(conn: sqlite3.Connection) -> None:
    """Put the database in WAL mode, waiting while another connection holds it: the switch does not
    wait for a lock as statements do (busy timeout), so `docshelf index` creating a new index and
    a server opening it at that moment failed with "database is locked", either of them."""
    deadline, pause = time.monotonic() + _OPEN_WAIT_S, 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc).lower() or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def damaged_error(data_dir: Path, exc: sqlite3.Error | OSError) -> StoreError | None:
    """The StoreError for a damaged (truncated, overwritten) database, or None for other errors.

    Nothing in the index is original: it is derived from the files, so rebuilding it is the fix."""
    if not any(word in str(exc).lower() for word in _DAMAGED):
        return None
    return StoreError(
        f"cannot open the index at {data_dir}: it is damaged ({exc}). It is built from your files, "
        f"so rebuild it: move {data_dir} aside (or delete it) and run `docshelf index FOLDER` for "
        "each folder again"
    )


def connect(db_path: Path, read_only: bool) -> sqlite3.Connection:
    """The store's connection: WAL, tuned and migrated; or read-only, writing nothing at all."""
    if not read_only:
        conn = sqlite3.connect(db_path, timeout=_OPEN_WAIT_S, isolation_level=None, check_same_thread=False)
        try:
            _wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            # checkpoint every ~4 MB of WAL and shrink the file back after one, so it cannot grow
            conn.execute("PRAGMA wal_autocheckpoint=1000")
            conn.execute("PRAGMA journal_size_limit=67108864")
            migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn
    uri = f"file:{quote(str(db_path))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=_OPEN_WAIT_S, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        # a WAL database in a folder we cannot write, its -shm file gone: only an immutable open
        # reads it (nobody can change it there; at worst a writer with more rights is not seen)
        conn.close()
        conn = sqlite3.connect(f"{uri}&immutable=1", uri=True, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA query_only=ON")
    return conn


def store_error(data_dir: Path, exc: sqlite3.Error) -> StoreError:
    """A one-line StoreError for a failed SQLite write: disk full, locked, read-only, or other."""
    if (damaged := damaged_error(data_dir, exc)) is not None:
        return damaged
    text = str(exc).lower()
    if "full" in text:
        what = "the disk holding it is full; free some space and run the command again"
    elif "locked" in text or "busy" in text:
        what = "another program holds the database locked; close it (an sqlite3 shell?) and retry"
    elif "readonly" in text or "read-only" in text:
        what = "it is read-only; check the folder's permissions or point store.data_dir elsewhere"
    else:
        what = "check free disk space and the folder's permissions, then retry"
    return StoreError(
        f"the index at {data_dir} could not be written ({exc}): {what}. Its last complete state is kept."
    )


class _Held:
    """A reader connection that closes when its thread ends (the thread-local lets go of it):
    handler threads come and go (anyio retires idle workers), their connections must not pile up."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.owner = threading.current_thread()

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    def __del__(self) -> None:
        self.close()


class ReadConnections:
    """One read-only connection per thread: in WAL mode a reader sees the last commit and neither
    waits for the writer nor holds it up, so searches run while a sync swaps documents in.

    They read the first ``mmap_mb`` MB of the file memory-mapped: a search's random B-tree reads
    (240 dense hits' chunk, document and vector rows) then skip a read() and a copy per page. The
    mapped pages are the OS's file cache, shared and given back under pressure, but they count in
    the process's resident size. The writer reads through read() as before."""

    def __init__(self, db_path: Path, mmap_mb: int = 0) -> None:
        self.db_path = db_path
        self.mmap_bytes = mmap_mb * 1024 * 1024
        self._local = threading.local()
        self._all: weakref.WeakSet[_Held] = weakref.WeakSet()
        self._guard = threading.Lock()
        self._closed = False

    def get(self) -> sqlite3.Connection:
        held: _Held | None = getattr(self._local, "held", None)
        if held is not None and self._closed:
            held.close()  # left open by close() because this thread might have been using it
            self._local.held = held = None
        if held is None:
            with self._guard:
                if self._closed:
                    raise StoreError(f"the index at {self.db_path.parent} was closed")
                conn = connect(self.db_path, read_only=True)
                conn.execute(f"PRAGMA mmap_size={int(self.mmap_bytes)}")
                held = _Held(conn)
                self._all.add(held)
            self._local.held = held
        return held.conn

    def __len__(self) -> int:
        return len(self._all)

    def close(self) -> None:
        """Close this thread's connection and those of ended threads. Another live thread's one is
        closed by that thread on its next read: closing a connection another thread is reading on
        crashes the process (seen: a freshness thread mid-query while a test closed the store)."""
        me = threading.current_thread()
        with self._guard:
            self._closed = True
            for held in list(self._all):
                if held.owner is me or not held.owner.is_alive():
                    held.close()


class SQLiteTx:
    """``with store._tx() as conn:`` one IMMEDIATE transaction under the store's thread lock.

    ``marker`` (a thread-local) counts this thread's open transactions, so the store's reads on
    the same thread use the writer connection and see what the transaction wrote.
    """

    def __init__(
        self, conn: sqlite3.Connection, lock: threading.RLock, data_dir: Path, marker: threading.local
    ) -> None:
        self.conn, self.lock, self.data_dir, self.marker = conn, lock, data_dir, marker

    def __enter__(self) -> sqlite3.Connection:
        self.lock.acquire()
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as failed:  # busy or read-only: release the lock, say what to do
            self.lock.release()
            raise store_error(self.data_dir, failed) from failed
        self.marker.depth = getattr(self.marker, "depth", 0) + 1
        return self.conn

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.marker.depth -= 1
        try:
            try:
                self.conn.execute("COMMIT" if kind is None else "ROLLBACK")
            except sqlite3.Error as failed:
                # a failed COMMIT (disk full) may leave the transaction open: undo it
                with contextlib.suppress(sqlite3.Error):
                    self.conn.execute("ROLLBACK")
                if kind is None:
                    raise store_error(self.data_dir, failed) from failed
            if isinstance(exc, sqlite3.Error):
                raise store_error(self.data_dir, exc) from exc
        finally:
            self.lock.release()
