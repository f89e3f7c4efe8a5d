"""Skipped files and build records in PostgreSQL (the history `status` reports)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from docshelf.store.base import BuildRecord
from docshelf.types import SkippedFile

__all__ = ["PgBuildLog"]


class PgBuildLog:
    """Mixed into the PostgreSQL store; needs its query and transaction helpers."""

    def _q(self, sql: str, params: Any = None) -> list[Any]:
        raise NotImplementedError

    def _tx(self) -> Any:
        raise NotImplementedError

    def set_skipped(self, collection: str, skipped: Sequence[SkippedFile]) -> None:
        now = time.time()
        with self._tx() as conn:
            conn.execute("DELETE FROM skipped WHERE collection=%s", (collection,))
            rows = {s.path: s.reason for s in skipped}  # one row per path, the last reason wins
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO skipped(collection, path, reason, at) VALUES(%s,%s,%s,%s)",
                    [(collection, path, reason, now) for path, reason in rows.items()],
                )

    def skipped(self, collection: str | None = None) -> list[tuple[str, SkippedFile]]:
        sql = "SELECT collection, path, reason FROM skipped"
        args: tuple[str, ...] = ()
        if collection:
            sql, args = sql + " WHERE collection=%s", (collection,)
        return [(r[0], SkippedFile(r[1], r[2])) for r in self._q(sql + " ORDER BY path", args)]

    def record_build(self, build: BuildRecord) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO builds(collection, started_at, finished_at, git_commit, git_dirty, added,"
                " updated, removed, unchanged, skipped, status) VALUES(%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                (build.collection, build.started_at, build.finished_at, build.git_commit,
                 build.git_dirty, build.added, build.updated, build.removed, build.unchanged,
                 build.skipped, build.status),
            )  # fmt: skip

    def last_build(self, collection: str | None = None) -> BuildRecord | None:
        sql = (
            "SELECT collection, started_at, finished_at, git_commit, git_dirty, added, updated,"
            " removed, unchanged, skipped, status FROM builds"
        )
        args: tuple[str, ...] = ()
        if collection:
            sql, args = sql + " WHERE collection=%s", (collection,)
        rows = self._q(sql + " ORDER BY id DESC LIMIT 1", args)
        return BuildRecord(*rows[0]) if rows else None
