"""Counts of an embedded index read with plain SQLite: no store, numpy or tantivy (fast start)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from docshelf.types import Summary

__all__ = ["peek"]


def peek(db: Path) -> Summary | None:
    """The same counts as ``SQLiteStore.stats``; None if the file cannot be read that way."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30.0)
        try:
            per: dict[str, list[int]] = {
                r[0]: [0, 0] for r in conn.execute("SELECT name FROM collections ORDER BY name")
            }
            for name, docs in conn.execute("SELECT collection, COUNT(*) FROM documents GROUP BY collection"):
                per.setdefault(name, [0, 0])[0] = docs
            for name, chunks in conn.execute(
                "SELECT d.collection, COUNT(*) FROM chunks c JOIN documents d ON d.id=c.doc_id "
                "GROUP BY d.collection"
            ):
                per.setdefault(name, [0, 0])[1] = chunks
            roots = {
                name: list(json.loads(raw))
                for name, raw in conn.execute("SELECT name, roots FROM collections")
            }
        finally:
            conn.close()
    except (sqlite3.Error, ValueError, TypeError):
        return None
    rows = [(name, docs, roots.get(name, [])) for name, (docs, _) in per.items()]
    return Summary(sum(c[0] for c in per.values()), sum(c[1] for c in per.values()), rows)
