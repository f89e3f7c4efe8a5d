"""Write transactions of the SQLite store, and the one-line errors a failed write becomes."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path

from docshelf.errors import StoreError

__all__ = ["SQLiteTx", "damaged_error", "store_error"]

_DAMAGED = ("malformed", "not a database", "corrupt")


def damaged_error(data_dir: Path, exc: sqlite3.Error | OSError) -> StoreError | None:
    """The StoreError for a damaged (truncated, overwritten) database, or None for other errors.

    Nothing in the index is original: it is derived from the files, so rebuilding it is the fix."""
    if not any(word in str(exc).lower() for word in _DAMAGED):
        return None
    return StoreError(
        f"the index at {data_dir} is damaged ({exc}); it is built from your files, so rebuild it: "
        f"move {data_dir} aside (or delete it) and run `docshelf index FOLDER` for each folder again"
    )


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
