"""One file to a document record, its chunks and the texts to embed (parse, then chunk)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from docshelf.analyze.analyzer import Analyzer
from docshelf.analyze.language import count_language
from docshelf.analyze.portable import PortableAnalyzer
from docshelf.analyze.scripts import script_words
from docshelf.chunk import LineIndex, chunk_document
from docshelf.config import Settings
from docshelf.embed.base import Embedder, PortableCount
from docshelf.errors import ParseError
from docshelf.index.ids import chunk_ids, document_id, embed_key
from docshelf.parse import ParserRegistry
from docshelf.parse.limits import Deadline
from docshelf.parse.worker import parse_isolated, parse_then
from docshelf.sources.mirror import source_metadata
from docshelf.store.base import DocumentRecord
from docshelf.types import Chunk, ChunkSpan, ParsedDocument, SourceFile, contextual_text

__all__ = ["Build", "Counter", "Pending", "analysed", "in_parallel", "prepare", "tags_of"]


@dataclass
class Pending:
    doc: DocumentRecord
    chunks: list[Chunk]
    texts: dict[str, str]  # embed key -> text to embed
    is_new: bool
    # made where the file was parsed (``analysed``): each chunk's keyword terms, by the analyzer of
    # this fingerprint; the words of the document's language and per writing system
    terms: list[list[str]] | None = None
    analyzer: str = ""
    languages: dict[str, float] | None = None
    scripts: dict[str, float] | None = None


def analysed(pending: Pending, analyzer: Analyzer) -> Pending:
    """``pending`` with its keyword terms and its language and script counts made."""
    texts = [c.text for c in pending.chunks]
    title = pending.doc.title
    pending.terms = [analyzer.chunk_terms(title, c.heading_path, c.text) for c in pending.chunks]
    pending.analyzer = analyzer.fingerprint
    pending.languages = {}
    count_language(analyzer.language, texts, pending.languages)
    pending.scripts = script_words(texts)
    return pending


class Counter:
    """Adapts a token count to the chunker's TokenCounter; stops a file's chunking at its deadline
    (every count passes here, so no chunker loop can outlast parse.timeout_s)."""

    def __init__(self, count: Callable[[str], int], deadline: Deadline | None = None) -> None:
        self._count = count
        self.deadline = deadline

    def count(self, text: str) -> int:
        if self.deadline is not None and self.deadline.remaining() <= 0.001:
            raise ParseError(
                f"{self.deadline.path}: chunking took over {self.deadline.seconds:g} s "
                "(parse.timeout_s); raise the limit or exclude the file"
            )
        return self._count(text)


@dataclass(frozen=True)
class Build:
    """What one parsed file becomes: its record, chunks and texts to embed (None: the file says
    ``rag: false``). Sent to the parse worker with the file when the embedder's count can go there,
    so that the indexer's own thread is left to write; chunking has the time parsing had."""

    count: Callable[[str], int]
    max_tokens: int
    overlap_tokens: int
    timeout_s: float
    model: str
    collection: str
    file: SourceFile
    digest: str
    is_new: bool
    source_meta: dict[str, Any]
    analyzer: PortableAnalyzer | None = None

    def __call__(self, parsed: ParsedDocument) -> Pending | None:
        f = self.file
        meta = {**parsed.metadata, **self.source_meta}
        if meta.get("rag") is False:
            return None
        mode: Literal["auto", "headings"] = "headings" if meta.get("rag_chunk") == "headings" else "auto"
        deadline = Deadline(f.rel_path, self.timeout_s)
        counter = Counter(self.count, deadline)
        spans = chunk_document(parsed, counter, self.max_tokens, self.overlap_tokens, mode)
        if not spans:  # an empty document would sit in the index matching nothing, unreported
            raise ParseError(
                f"{f.rel_path}: no text: the file holds nothing to index (empty, or only images, "
                "drawings or markup); add text or exclude it"
            )
        pending = _pending(parsed, spans, meta, self.collection, f, self.digest, self.model, self.is_new)
        analyzer = self.analyzer.get() if self.analyzer is not None else None
        # the analysis costs about what the chunking did: a file whose chunking took half the step's
        # time limit is analysed by the writer instead (no limit there), rather than skipped
        if analyzer is None or deadline.remaining() < self.timeout_s / 2:
            return pending
        return analysed(pending, analyzer)


def tags_of(meta: dict[str, Any]) -> tuple[str, ...]:
    raw = meta.get("tags") or ()
    if isinstance(raw, str):
        raw = raw.split(",")
    return tuple(str(t).strip() for t in raw if str(t).strip())


def in_parallel(settings: Settings, embedder: Embedder) -> int:
    """Files ``prepare`` can take at once: ``parse.workers`` when the work is in worker processes
    (parsing isolated, a count that can go there), else one (the interpreter is one core)."""
    portable = isinstance(embedder, PortableCount) and embedder.portable_counter() is not None
    return settings.parse.workers if settings.parse.isolate and portable else 1


def prepare(
    settings: Settings, registry: ParserRegistry, embedder: Embedder, max_tokens: int,
    collection: str, f: SourceFile, data: bytes, digest: str, is_new: bool,
    analyzer: PortableAnalyzer | None = None,
) -> Pending | None:  # fmt: skip
    """Parse and chunk one file into its record, chunks and texts to embed; None if ``rag: false``.
    With ``analyzer``, its keyword terms too (``analysed``), where it was parsed."""
    limits = settings.parse
    portable = embedder.portable_counter() if isinstance(embedder, PortableCount) else None
    build = Build(
        portable or embedder.count_tokens, max_tokens, settings.chunk.overlap_tokens, limits.timeout_s,
        embedder.name, collection, f, digest, is_new, source_metadata(f.root, f.rel_path),  # fetched: its URL
        analyzer,
    )  # fmt: skip
    if limits.isolate and portable is not None:
        return parse_then(
            registry, data, f.rel_path, limits.timeout_s, limits.max_memory_mb, build, limits.workers
        )
    if limits.isolate:
        parsed = parse_isolated(
            registry, data, f.rel_path, limits.timeout_s, limits.max_memory_mb, limits.workers
        )
    else:
        parsed = registry.parse(data, f.rel_path)
    return build(parsed)


def _pending(
    parsed: ParsedDocument, spans: list[ChunkSpan], meta: dict[str, Any], collection: str, f: SourceFile,
    digest: str, model: str, is_new: bool,
) -> Pending:  # fmt: skip
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
