"""Finding documents by id, path or URI; their text (from disk, guarded, or from chunks); status."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from docshelf.errors import AccessError, DocshelfError, NotFoundError
from docshelf.index.stale import stale_documents
from docshelf.server.paths import check_relative, guarded_path

if TYPE_CHECKING:
    from docshelf.parse import ParserRegistry
    from docshelf.store.base import DocumentRecord, Store

__all__ = [
    "DocumentText",
    "document_row",
    "document_uri",
    "find_document",
    "iso",
    "load_text",
    "parse_uri",
    "status_payload",
    "uri_for",
]

SCHEME = "docshelf://"
_DOC_ID = re.compile(r"^[0-9a-f]{32}$")


def iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")


def uri_for(collection: str, path: str) -> str:
    return f"{SCHEME}{quote(collection, safe='')}/{quote(path, safe='/')}"


def document_uri(doc: DocumentRecord) -> str:
    return uri_for(doc.collection, doc.path)


def parse_uri(uri: str) -> tuple[str, str]:
    """(collection, path) of a ``docshelf://collection/path`` URI, percent-decoded once."""
    collection, _, path = uri[len(SCHEME) :].partition("/")
    if not collection or not path:
        raise NotFoundError(f"{uri!r} is not a document URI; expected docshelf://COLLECTION/PATH")
    return unquote(collection), unquote(path)


def document_row(doc: DocumentRecord) -> dict[str, Any]:
    return {
        "doc_id": doc.id,
        "collection": doc.collection,
        "path": doc.path,
        "uri": document_uri(doc),
        "title": doc.title,
        "file_type": doc.file_type,
        "size": doc.size,
        "modified": iso(doc.mtime_ns / 1e9),
        "tags": list(doc.tags),
        "lifecycle": doc.lifecycle,
    }


def find_document(store: Store, ref: str, collection: str | None) -> DocumentRecord:
    """A document by id, ``docshelf://`` URI, or path relative to its root."""
    ref = ref.strip()
    if _DOC_ID.match(ref) and (doc := store.get_document_by_id(ref)) is not None:
        return doc
    if ref.startswith(SCHEME):
        collection, ref = parse_uri(ref)
    names = [collection] if collection else store.collections()
    if ref.startswith("/"):
        ref = _relative_to_roots(store, names, ref)
    path = check_relative(ref)
    found = [d for d in (store.get_document(name, path) for name in names) if d is not None]
    if len(found) > 1:
        raise DocshelfError(
            f"{path!r} is in several collections ({', '.join(d.collection for d in found)}); "
            "pass collection= or the docshelf:// URI"
        )
    if not found:
        where = f"collection {collection!r}" if collection else "the index"
        raise NotFoundError(f"no document {path!r} in {where}; use list_documents or search to find paths")
    return found[0]


def _relative_to_roots(store: Store, names: list[str], ref: str) -> str:
    """An absolute path (as search hits give) made relative to the root holding it; lexical only,
    so the guard still sees any '..' or symlink."""
    for name in names:
        for root in store.collection_roots(name):
            try:
                return Path(ref).relative_to(root).as_posix()
            except ValueError:
                continue
    raise AccessError(f"refused {ref!r}: it is outside every corpus root; see index_status for the roots")


@dataclass
class DocumentText:
    """A document's text, as the indexer saw it, and where it came from."""

    text: str
    source: str  # "file" | "index"
    note: str | None = None


def _from_chunks(store: Store, doc: DocumentRecord) -> str:
    """Rebuild the text from stored chunks at their offsets (gaps, e.g. frontmatter, stay blank)."""
    chunks = store.document_chunks(doc.id)
    end = max((c.char_end for c in chunks), default=0)
    buf = [" "] * end
    for c in chunks:
        buf[c.char_start : c.char_start + len(c.text)] = c.text
    return "".join(buf)


def load_text(store: Store, registry: ParserRegistry, doc: DocumentRecord) -> DocumentText:
    """The parsed text of ``doc`` from disk, through the path guard; from chunks when the file is gone.

    Parsing again (not just decoding) keeps offsets and line numbers equal to the citations.
    """
    path = guarded_path(store.collection_roots(doc.collection), doc.root, doc.path)
    try:
        st = path.stat()
        data = path.read_bytes()
        text = registry.parse(data, doc.path).text
    except (OSError, DocshelfError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        gone = f"the file cannot be read now ({reason}); text rebuilt from the index"
        return DocumentText(_from_chunks(store, doc), "index", gone)
    note = None
    if st.st_size != doc.size or st.st_mtime_ns != doc.mtime_ns:
        note = "the file changed since it was indexed: line numbers may differ from search citations"
    return DocumentText(text, "file", note)


def _guarded(store: Store, doc: DocumentRecord) -> Path:
    return guarded_path(store.collection_roots(doc.collection), doc.root, doc.path)


def status_payload(store: Store, extra: dict[str, Any]) -> dict[str, Any]:
    """Counts, model, builds, skipped and stale files: what index_status and docshelf://status show."""
    stats = store.stats()
    collections = []
    for name, counts in stats.collections.items():
        build = store.last_build(name)
        collections.append(
            {
                "name": name,
                "documents": counts["documents"],
                "chunks": counts["chunks"],
                "roots": store.collection_roots(name),
                "last_build": None
                if build is None
                else {
                    "finished_at": iso(build.finished_at or build.started_at),
                    "git_commit": build.git_commit,
                    "git_dirty": build.git_dirty,
                    "added": build.added,
                    "updated": build.updated,
                    "removed": build.removed,
                    "skipped": build.skipped,
                },
            }
        )
    return {
        "data_dir": str(Path(store.data_dir)),
        "model": stats.model,
        "dim": stats.dim,
        "documents": stats.documents,
        "chunks": stats.chunks,
        "size_bytes": stats.size_bytes,
        "keyword_index_in_sync": stats.keyword_generation == stats.generation,
        "collections": collections,
        "skipped": [{"collection": c, "path": s.path, "reason": s.reason} for c, s in store.skipped()],
        "stale": stale_documents(store, limit=200, resolve=_guarded),
        **extra,
    }
