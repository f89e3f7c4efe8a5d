"""Opening the SQLite store's database, its write transactions, and the one-line errors a failed
open or write becomes."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path
from urllib.parse import quote

from docshelf.errors import StoreError
from docshelf.store.embedded.schema import migrate

__all__ = ["SQLiteTx", "connect", "damaged_error", "store_error"]

_DAMAGED = ("malformed", "not a database", "corrupt")


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
        conn = sqlite3.connect(db_path, timeout=30.0, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        # checkpoint every ~4 MB of WAL and shrink the file back after one, so it cannot grow unbounded
        conn.execute("PRAGMA wal_autocheckpoint=1000")
        conn.execute("PRAGMA journal_size_limit=67108864")
        migrate(conn)
        return conn
    uri = f"file:{quote(str(db_path))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None, check_same_thread=False)
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


class SQLiteTx:
    """``with store._tx() as conn:`` one IMMEDIATE transaction under the store's thread lock."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock, data_dir: Path) -> None:
        self.conn, self.lock, self.data_dir = conn, lock, data_dir

    def __enter__(self) -> sqlite3.Connection:
        self.lock.acquire()
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as failed:  # busy or read-only: release the lock, say what to do
            self.lock.release()
            raise store_error(self.data_dir, failed) from failed
        return self.conn

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
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
