"""Chunking: ParsedDocument -> token-bounded ChunkSpans, plus line lookup for citations."""

from __future__ import annotations

from docshelf.chunk.chunker import ApproxTokenCounter, TokenCounter, chunk_document
from docshelf.chunk.lines import LineIndex
from docshelf.chunk.sentences import split_sentences

__all__ = ["ApproxTokenCounter", "LineIndex", "TokenCounter", "chunk_document", "split_sentences"]
