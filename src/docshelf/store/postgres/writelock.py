"""Writers of one PostgreSQL database in turn: session advisory locks on a connection of their own.

The writer lock file (index/lock.py) keeps the indexers of one machine in turn; indexers on
several machines (or with their own data dirs) share only the database, and each parsed and
embedded the same new files beside the others. A sync holds its collection's lock (writers of
other collections go on beside it) and the database's lock shared; a re-embed, a compaction or a
migration holds the database's lock alone. A lock lives as long as its session, so a writer that
dies (or loses its network) frees it with its connection.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

from docshelf.config import redact_dsn
from docshelf.errors import StoreError

__all__ = ["database_writer"]

_DATABASE = 0x64777269  # "dwri" (one bigint key); migrations take 0x646F6373 ("docs")
_POLL_S = 0.2
_HOLDER = """
SELECT a.application_name, a.client_addr::text FROM pg_locks l JOIN pg_stat_activity a USING (pid)
WHERE l.locktype = 'advisory' AND l.granted AND l.mode = 'ExclusiveLock'
  AND l.classid = %s AND l.objid = %s AND l.objsubid = %s LIMIT 1
"""


@contextlib.contextmanager
def database_writer(
    url: str, timeout_s: float, why: Callable[[Exception], str], collection: str | None = None
) -> Iterator[None]:
    """Hold the writer lock of ``collection`` (None: of the whole database); StoreError after
    ``timeout_s`` (inf: wait) while another docshelf holds it. ``why(exc)``: a driver error on one
    line without secrets."""
    import psycopg

    name = f"docshelf writer pid {os.getpid()} on {socket.gethostname()}"[:63]
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10, application_name=name)
    except (psycopg.Error, OSError) as exc:
        raise StoreError(
            f"cannot reach the PostgreSQL store at {redact_dsn(url)} to write: {why(exc)}; check that "
            "the server is up and reachable, then retry"
        ) from exc
    deadline = time.monotonic() + timeout_s
    database = (0, _DATABASE, 1)
    try:
        try:
            if collection is None:
                _wait(
                    conn, "pg_try_advisory_lock(%s)", (_DATABASE,), database, deadline, url, "this database"
                )
            else:
                _wait(
                    conn,
                    "pg_try_advisory_lock_shared(%s)",
                    (_DATABASE,),
                    database,
                    deadline,
                    url,
                    "this database",
                )
                key = (_DATABASE, _collection_key(collection))
                what = f"collection {collection!r}"
                _wait(conn, "pg_try_advisory_lock(%s, %s)", key, (*key, 2), deadline, url, what)
        except psycopg.Error as exc:
            raise StoreError(f"the PostgreSQL store at {redact_dsn(url)} failed: {why(exc)}; retry") from exc
        yield
    finally:
        conn.close()  # ends the session, and with it its locks


def _collection_key(collection: str) -> int:
    return int.from_bytes(hashlib.sha256(collection.encode()).digest()[:4], "big") & 0x7FFFFFFF


def _wait(
    conn: Any,
    call: str,
    args: tuple[int, ...],
    lock: tuple[int, int, int],
    deadline: float,
    url: str,
    what: str,
) -> None:
    while not conn.execute(f"SELECT {call}", args).fetchone()[0]:
        if time.monotonic() >= deadline:
            row = conn.execute(_HOLDER, lock).fetchone()
            holder = f"({row[0]}{f', from {row[1]}' if row[1] else ''}) " if row and row[0] else ""
            raise StoreError(
                f"another docshelf {holder}is writing to {what} in the PostgreSQL store at "
                f"{redact_dsn(url)}; wait for it to finish or retry"
            )
        time.sleep(_POLL_S)
