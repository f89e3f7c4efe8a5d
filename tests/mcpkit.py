"""Helpers for tests that call tools through an MCP client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_types import CallToolResult


def data(result: CallToolResult) -> dict[str, Any]:
    """structuredContent, checked to equal the JSON text block."""
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    assert json.loads(text) == result.structured_content
    assert "\\u" not in text  # UTF-8, not escapes
    out: dict[str, Any] | None = result.structured_content
    assert out is not None
    return out


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    return str(result.content[0].text)  # type: ignore[union-attr]


def writer_free(data_dir: Path) -> bool:
    """True when another writer could start now: the index lock and tantivy's writer lock are free."""
    from docshelf.errors import StoreError
    from docshelf.index.lock import WriterLock

    try:
        with WriterLock(data_dir, 0):
            pass
    except StoreError:
        return False
    keyword = data_dir / "keyword"
    if not keyword.is_dir():
        return True  # PostgreSQL: the keyword postings are rows, no file lock
    import tantivy

    from docshelf.store.embedded.keyword import _schema

    try:
        writer = tantivy.Index(_schema(), path=str(keyword), reuse=True).writer(15_000_000, 1)
    except ValueError:
        return False
    writer.wait_merging_threads()
    return True
