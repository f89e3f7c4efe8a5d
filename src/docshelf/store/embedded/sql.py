"""Filters that need per-document checks (path glob, tags, type, dates), resolved in SQLite."""

from __future__ import annotations

import fnmatch
import json
import sqlite3

from docshelf.store.base import SearchFilter

__all__ = ["matching_doc_ids"]


def matching_doc_ids(conn: sqlite3.Connection, flt: SearchFilter) -> list[str] | None:
    """Ids of documents passing ``flt``; None when collection and lifecycle say it all."""
    if not flt.needs_doc_ids():
        return None
    sql = "SELECT id, path, tags, file_type, mtime_ns, collection FROM documents"
    out: list[str] = []
    for doc_id, path, tags, file_type, mtime_ns, collection in conn.execute(sql):
        if flt.collections and collection not in flt.collections:
            continue
        if flt.path_glob and not fnmatch.fnmatchcase(path, flt.path_glob):
            continue
        if flt.tags and not set(flt.tags) & set(json.loads(tags)):
            continue
        if flt.file_types and file_type not in flt.file_types:
            continue
        if flt.modified_after is not None and mtime_ns < flt.modified_after * 1e9:
            continue
        if flt.modified_before is not None and mtime_ns > flt.modified_before * 1e9:
            continue
        out.append(doc_id)
    return out
