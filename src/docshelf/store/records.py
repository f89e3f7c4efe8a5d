"""Skipped files and build records: the history `status` reports."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager

from docshelf.store.base import BuildRecord
from docshelf.types import SkippedFile

__all__ = ["BuildLog"]


class BuildLog:
    """Mixed into the SQLite store; needs its connection and transaction helper."""

    _conn: sqlite3.Connection

    def _tx(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def set_skipped(self, collection: str, skipped: Sequence[SkippedFile]) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM skipped WHERE collection=?", (collection,))
            now = time.time()
            conn.executemany(
                "INSERT OR REPLACE INTO skipped(collection, path, reason, at) VALUES(?,?,?,?)",
                [(collection, s.path, s.reason, now) for s in skipped],
            )

    def skipped(self, collection: str | None = None) -> list[tuple[str, SkippedFile]]:
        sql = "SELECT collection, path, reason FROM skipped"
        args: tuple[str, ...] = ()
        if collection:
            sql, args = sql + " WHERE collection=?", (collection,)
        return [(r[0], SkippedFile(r[1], r[2])) for r in self._conn.execute(sql + " ORDER BY path", args)]

    def record_build(self, build: BuildRecord) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO builds(collection, started_at, finished_at, git_commit, git_dirty, added,"
                " updated, removed, unchanged, skipped, status) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                (build.collection, build.started_at, build.finished_at, build.git_commit,
                 None if build.git_dirty is None else int(build.git_dirty), build.added,
                 build.updated, build.removed, build.unchanged, build.skipped, build.status),
            )  # fmt: skip

    def last_build(self, collection: str | None = None) -> BuildRecord | None:
        sql = (
            "SELECT collection, started_at, finished_at, git_commit, git_dirty, added, updated,"
            " removed, unchanged, skipped, status FROM builds"
        )
        args: tuple[str, ...] = ()
        if collection:
            sql, args = sql + " WHERE collection=?", (collection,)
        row = self._conn.execute(sql + " ORDER BY id DESC LIMIT 1", args).fetchone()
        if row is None:
            return None
        dirty = None if row[4] is None else bool(row[4])
        return BuildRecord(row[0], row[1], row[2], row[3], dirty, *row[5:])
