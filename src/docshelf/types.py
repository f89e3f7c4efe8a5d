"""Plain data passed between pipeline stages (sources -> parse -> chunk -> embed -> store)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "Chunk",
    "ChunkSpan",
    "Mode",
    "ParsedDocument",
    "Section",
    "SkippedFile",
    "SourceFile",
    "Summary",
    "cite",
    "contextual_text",
]


Mode = Literal["hybrid", "keyword", "semantic"]  # which retrievers a search uses


@dataclass(frozen=True)
class SourceFile:
    """A file found under a corpus root."""

    root: Path  # resolved root directory
    path: Path  # resolved absolute path, always inside root
    rel_path: str  # POSIX-style path relative to root, NFC-normalised
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Section:
    """A structural block of a parsed document: a span of ``ParsedDocument.text``.

    ``kind`` is "heading", "paragraph", "code", "list", "table" or "text"; headings
    are sections of their own so the chunker can start chunks at them.
    """

    start: int  # character offset into ParsedDocument.text (inclusive)
    end: int  # character offset (exclusive)
    kind: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None  # 1-based physical page, for paged formats
    level: int = 0  # heading level for kind == "heading"


@dataclass
class ParsedDocument:
    """A parsed file: its full text plus the structure found in it.

    ``text`` is the decoded source text itself, so offsets and line numbers
    computed on it round-trip to the file. ``body_start`` skips frontmatter.
    """

    text: str
    sections: list[Section]
    file_type: str
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    body_start: int = 0


@dataclass(frozen=True)
class ChunkSpan:
    """A chunk as the chunker cuts it: a span of the document text."""

    start: int
    end: int
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    token_count: int = 0


@dataclass(frozen=True)
class Chunk:
    """A stored chunk with its citation data."""

    id: str
    doc_id: str
    ordinal: int
    text: str
    char_start: int
    char_end: int
    line_start: int  # 1-based, inclusive
    line_end: int  # 1-based, inclusive
    heading_path: tuple[str, ...]
    page: int | None
    token_count: int
    embed_key: str  # hash of the text that was embedded (embedding cache key)


@dataclass(frozen=True)
class Summary:
    """Documents, chunks and roots per collection: what a server's instructions say of an index."""

    documents: int
    chunks: int
    collections: list[tuple[str, int, list[str]]]  # (name, documents, roots)


@dataclass(frozen=True)
class SkippedFile:
    """A file left out of the index, with the reason a user can act on."""

    path: str
    reason: str


def contextual_text(title: str | None, heading_path: tuple[str, ...], text: str) -> str:
    """The text a chunk is embedded and keyword-indexed as: its title and headings, then itself.

    Headings already at the start of the chunk are not repeated.
    """
    context = [h for h in heading_path if h and h not in text[: len(h) + 16]]
    # Only the title's head can reach the capped header, so only it is compared: a title of
    # megabytes (an Office file's metadata) costs what a short one does, here and where the
    # embedding phase reads titles back from the store (``TITLE_READ``).
    head = (title or "")[:CONTEXT_CHARS]
    if head and head not in [h[:CONTEXT_CHARS] for h in context] and head not in text[: len(head) + 16]:
        context.insert(0, head)
    if not context:
        return text
    # Capped so the header fits the token reserve the chunker leaves for it.
    return "\n".join(context)[:CONTEXT_CHARS] + "\n" + text


CONTEXT_CHARS = 120
TITLE_READ = CONTEXT_CHARS  # the characters of a title contextual_text looks at


def cite(path: str, line_start: int, line_end: int, page: int | None, source_url: str | None = None) -> str:
    """path:lines; ``file.pdf#page=N`` for PDFs; the source URL for fetched pages and files."""
    pdf = path.lower().endswith(".pdf") and page
    if source_url:
        return f"{source_url}#page={page}" if pdf else source_url
    if pdf:
        return f"{path}#page={page}"
    where = f"{path}:{line_start}-{line_end}"
    return f"{where} (page {page})" if page else where
