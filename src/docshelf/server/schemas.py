"""Output schemas of the tools (published as outputSchema; structuredContent is checked against them)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DocumentList",
    "DocumentRange",
    "IndexStatus",
    "Passages",
    "SearchHits",
    "WriteReport",
]


class _Out(BaseModel):
    # New fields may be added without breaking clients that validate against an old schema.
    model_config = ConfigDict(extra="allow")


class Hit(_Out):
    chunk_id: str = Field(description="pass to read_passage")
    doc_id: str
    collection: str
    path: str = Field(description="relative to the collection root")
    uri: str = Field(description="docshelf:// resource of the whole document")
    abs_path: str
    title: str | None
    heading_path: list[str]
    line_start: int
    line_end: int
    page: int | None = Field(description="physical page, 1-based (PDF pages, slides, sheets)")
    page_label: str | None = Field(None, description="the page number printed on the page, if different")
    score: float
    citation: str = Field(
        description="cite as given: path:lines, file.pdf#page=N for PDFs, the source URL for web pages"
    )
    snippet: str = Field(description="best window, query terms in **bold**")
    text: str | None = Field(None, description="full chunk text when with_text=true")


class SearchHits(_Out):
    query: str
    mode: str = Field(description="the mode actually used (keyword when the model is not ready)")
    took_ms: float
    hits: list[Hit]
    note: str | None = Field(None, description="why results are empty, degraded or truncated")
    untrusted_content: str
    next_cursor: str | None = Field(None, description="pass back as cursor for the following hits")


class Passage(_Out):
    chunk_id: str
    ordinal: int
    is_target: bool
    heading_path: list[str]
    line_start: int
    line_end: int
    char_start: int
    char_end: int
    page: int | None
    citation: str
    text: str


class Passages(_Out):
    doc_id: str
    collection: str
    path: str
    uri: str
    title: str | None
    passages: list[Passage]
    note: str | None = None
    untrusted_content: str


class DocumentRange(_Out):
    doc_id: str
    collection: str
    path: str
    uri: str
    title: str | None
    source: str = Field(description="file: read from disk now; index: rebuilt from stored chunks")
    text: str
    char_start: int
    char_end: int
    line_start: int
    line_end: int
    total_chars: int
    total_lines: int
    citation: str
    note: str | None = None
    next_cursor: str | None = Field(None, description="pass back as cursor to continue reading")
    untrusted_content: str


class DocumentList(_Out):
    documents: list[dict[str, Any]] = Field(description="one row per file")
    total: int = Field(description="files matching the filters")
    next_cursor: str | None = None
    note: str | None = None


class IndexStatus(_Out):
    data_dir: str
    model: str | None
    documents: int
    chunks: int
    collections: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    stale: list[dict[str, Any]] = Field(description="indexed files changed or gone on disk; run reindex")
    server: dict[str, Any]
    note: str | None = None


class WriteReport(_Out):
    action: str
    collection: str | None = None
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: list[dict[str, Any]] = Field(default_factory=list)
    removed_paths: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    note: str | None = None
