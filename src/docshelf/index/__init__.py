"""Index: keep the store in step with the files (sync; watch comes later)."""

from docshelf.index.ids import chunk_ids, content_hash, document_id, embed_key
from docshelf.index.sync import Indexer, Progress, SyncReport

__all__ = ["Indexer", "Progress", "SyncReport", "chunk_ids", "content_hash", "document_id", "embed_key"]
