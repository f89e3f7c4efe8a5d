"""Output schemas of the tools (published as outputSchema; structuredContent is checked against them)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DocumentList",
    "DocumentRange",
    "GrepLines",
    "IndexStatus",
    "Passages",
    "SearchHits",
    "WriteReport",
]


class _Out(BaseModel):
    # New fields may be added without breaking clients that validate against an old schema.
    model_config = ConfigDict(extra="allow")


class Place(_Out):
    # detail="full": the copy's chunk_id, collection, path, lines and page beside its citation
    citation: str


class Hit(_Out):
    # compact by default; detail="full" adds path, lines, ranks, uri... (extra fields)
    chunk_id: str
    citation: str
    heading: str | None = None
    confidence: float = Field(description="0-1, calibrated")
    matched: list[str] = Field(description="query words found; [] = semantic only")
    snippet: str
    also_in: list[str] | list[Place] | None = Field(
        None, description="the same passage, word for word, in other places (copies): their citations"
    )
    also_in_more: int | None = Field(None, description="other places not listed in also_in")


class SearchHits(_Out):
    mode: str
    index_age: float | None = None
    stale_documents: int | None = None
    hits: list[Hit]
    note: str | None = None
    untrusted_content: str
    next_cursor: str | None = None


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
    source: str = Field(description="file | index")
    text: str
    char_start: int
    char_end: int
    line_start: int
    line_end: int
    total_chars: int
    total_lines: int
    citation: str
    note: str | None = None
    next_cursor: str | None = None
    untrusted_content: str


class GrepLine(_Out):
    citation: str = Field(description="path:LINE, or file.pdf#page=N (line is then within the page)")
    line: int
    page: int | None = None
    heading: str | None = None
    text: str = Field(description="the matching line; a very long one cut around the match (…)")
    spans: list[list[int]] = Field(description="[start, end) of each match in text")
    before: list[str] | None = None
    after: list[str] | None = None


class GrepCount(_Out):
    collection: str
    path: str
    lines: int = Field(description="matching lines in this document")


class GrepLines(_Out):
    matches: list[GrepLine] | None = Field(None, description="output=content only")
    counts: list[GrepCount] = Field(description="per document read in this call")
    total_lines: int
    documents_read: int
    scanned: bool = Field(
        description="no part of the pattern could be looked up: documents were read one by one"
    )
    note: str | None = None
    next_cursor: str | None = None
    untrusted_content: str


class DocumentList(_Out):
    documents: list[dict[str, Any]]
    total: int
    next_cursor: str | None = None
    note: str | None = None


class IndexStatus(_Out):
    data_dir: str
    model: str | None
    documents: int
    chunks: int
    collections: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    stale: list[dict[str, Any]]
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
