"""One file to a document record, its chunks and the texts to embed (parse, then chunk)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal

from docshelf.chunk import LineIndex, chunk_document
from docshelf.config import Settings
from docshelf.embed.base import Embedder
from docshelf.errors import ParseError
from docshelf.index.ids import chunk_ids, document_id, embed_key
from docshelf.parse import ParserRegistry
from docshelf.parse.limits import Deadline
from docshelf.parse.worker import parse_isolated
from docshelf.sources.mirror import source_metadata
from docshelf.store.base import DocumentRecord
from docshelf.types import Chunk, SourceFile, contextual_text

__all__ = ["Counter", "Pending", "prepare", "tags_of"]


@dataclass
class Pending:
    doc: DocumentRecord
    chunks: list[Chunk]
    texts: dict[str, str]  # embed key -> text to embed
    is_new: bool


class Counter:
    """Adapts an Embedder to the chunker's TokenCounter; stops a file's chunking at its deadline
    (every count passes here, so no chunker loop can outlast parse.timeout_s)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.deadline: Deadline | None = None

    def count(self, text: str) -> int:
        if self.deadline is not None and self.deadline.remaining() <= 0.001:
            raise ParseError(
                f"{self.deadline.path}: chunking took over {self.deadline.seconds:g} s "
                "(parse.timeout_s); raise the limit or exclude the file"
            )
        return self.embedder.count_tokens(text)


def tags_of(meta: dict[str, Any]) -> tuple[str, ...]:
    raw = meta.get("tags") or ()
    if isinstance(raw, str):
        raw = raw.split(",")
    return tuple(str(t).strip() for t in raw if str(t).strip())


def prepare(
    settings: Settings, registry: ParserRegistry, counter: Counter, max_tokens: int, model: str,
    collection: str, f: SourceFile, data: bytes, digest: str, is_new: bool,
) -> Pending | None:  # fmt: skip
    """Parse and chunk one file into its record, chunks and texts to embed; None if ``rag: false``."""
    limits = settings.parse
    if limits.isolate:
        parsed = parse_isolated(registry, data, f.rel_path, limits.timeout_s, limits.max_memory_mb)
    else:
        parsed = registry.parse(data, f.rel_path)
    counter.deadline = Deadline(f.rel_path, limits.timeout_s)  # chunking has the same limit
    meta = {**parsed.metadata, **source_metadata(f.root, f.rel_path)}  # fetched: its URL
    if meta.get("rag") is False:
        return None
    mode: Literal["auto", "headings"] = "headings" if meta.get("rag_chunk") == "headings" else "auto"
    try:
        spans = chunk_document(parsed, counter, max_tokens, settings.chunk.overlap_tokens, mode)
    finally:
        counter.deadline = None
    if not spans:  # an empty document would sit in the index matching nothing, unreported
        raise ParseError(
            f"{f.rel_path}: no text: the file holds nothing to index (empty, or only images, "
            "drawings or markup); add text or exclude it"
        )
    doc_id = document_id(collection, f.rel_path)
    lifecycle = meta.get("lifecycle")
    doc = DocumentRecord(
        id=doc_id,
        collection=collection,
        root=str(f.root),
        path=f.rel_path,
        size=f.size,
        mtime_ns=f.mtime_ns,
        content_hash=digest,
        file_type=parsed.file_type,
        title=parsed.title,
        tags=tags_of(meta),
        lifecycle=str(lifecycle) if lifecycle is not None else None,
        metadata=meta,
        indexed_at=time.time(),
    )
    lines = LineIndex(parsed.text)
    texts = [parsed.text[s.start : s.end] for s in spans]
    chunks: list[Chunk] = []
    to_embed: dict[str, str] = {}
    ids = chunk_ids(doc_id, texts)
    for ordinal, (span, text, cid) in enumerate(zip(spans, texts, ids, strict=True)):
        embed_text = contextual_text(parsed.title, span.heading_path, text)
        key = embed_key(model, embed_text)
        to_embed[key] = embed_text
        chunks.append(
            Chunk(
                id=cid, doc_id=doc_id, ordinal=ordinal, text=text, char_start=span.start,
                char_end=span.end, line_start=lines.line_of(span.start),
                line_end=lines.line_of(max(span.start, span.end - 1)),
                heading_path=span.heading_path, page=span.page,
                token_count=span.token_count, embed_key=key,
            )
        )  # fmt: skip
    return Pending(doc, chunks, to_embed, is_new)
