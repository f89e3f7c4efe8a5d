"""Skipped files, build records and the model check: the SQL both stores share.

The statements are written once with ``?`` placeholders; a store whose driver wants ``%s``
(psycopg) sets ``_PARAM``. Both backends store ``git_dirty`` so that ``bool(x)`` reads it back.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from docshelf.errors import ModelMismatchError
from docshelf.store.base import BuildRecord
from docshelf.types import SkippedFile

__all__ = ["BuildLog", "check_model"]

_BUILD_COLS = (
    "collection, started_at, finished_at, git_commit, git_dirty, added, updated, removed, unchanged, "
    "skipped, status"
)


def check_model(stored: tuple[str | None, int | None], name: str, dim: int, where: str) -> None:
    """Raise ModelMismatchError when the index in ``where`` was built with another model."""
    stored_name, stored_dim = stored
    if stored_name is None:
        return
    if stored_name != name or int(stored_dim or 0) != dim:
        raise ModelMismatchError(
            f"the index at {where} was built with model {stored_name} ({stored_dim}-d), "
            f"but {name} ({dim}-d) is configured. Re-embed with `docshelf index --reembed`, "
            f"or set DOCSHELF_EMBED__MODEL back to the model the index was built with."
        )


class BuildLog:
    """Mixed into a store; needs its read (``_rows``) and transaction (``_tx``) helpers."""

    _PARAM = "?"
    _DIRTY_AS_INT = True  # SQLite has no boolean column type

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        raise NotImplementedError

    def _tx(self) -> Any:
        raise NotImplementedError

    def _sql(self, sql: str) -> str:
        return sql if self._PARAM == "?" else sql.replace("?", self._PARAM)

    def set_skipped(self, collection: str, skipped: Sequence[SkippedFile]) -> None:
        now = time.time()
        rows = {s.path: s.reason for s in skipped}  # one row per path, the last reason wins
        with self._tx() as conn:
            conn.execute(self._sql("DELETE FROM skipped WHERE collection=?"), (collection,))
            insert = self._sql("INSERT INTO skipped(collection, path, reason, at) VALUES(?,?,?,?)")
            for path, reason in rows.items():
                conn.execute(insert, (collection, path, reason, now))

    def skipped(self, collection: str | None = None) -> list[tuple[str, SkippedFile]]:
        sql = "SELECT collection, path, reason FROM skipped"
        args: tuple[str, ...] = ()
        if collection:
            sql, args = sql + " WHERE collection=?", (collection,)
        return [(r[0], SkippedFile(r[1], r[2])) for r in self._rows(self._sql(sql + " ORDER BY path"), args)]

    def record_build(self, build: BuildRecord) -> None:
        dirty: Any = build.git_dirty
        if dirty is not None and self._DIRTY_AS_INT:
            dirty = int(dirty)
        with self._tx() as conn:
            conn.execute(
                self._sql(f"INSERT INTO builds({_BUILD_COLS}) VALUES(?,?,?,?,?,?,?,?,?,?,?)"),
                (build.collection, build.started_at, build.finished_at, build.git_commit, dirty,
                 build.added, build.updated, build.removed, build.unchanged, build.skipped, build.status),
            )  # fmt: skip

    def last_build(self, collection: str | None = None) -> BuildRecord | None:
        sql = f"SELECT {_BUILD_COLS} FROM builds"
        args: tuple[str, ...] = ()
        if collection:
            sql, args = sql + " WHERE collection=?", (collection,)
        rows = self._rows(self._sql(sql + " ORDER BY id DESC LIMIT 1"), args)
        if not rows:
            return None
        row = rows[0]
        dirty = None if row[4] is None else bool(row[4])
        return BuildRecord(row[0], row[1], row[2], row[3], dirty, *row[5:])
