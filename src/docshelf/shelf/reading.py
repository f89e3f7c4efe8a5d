"""Reading what is indexed: documents by id, path or URI; passages; line, character or page ranges."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from docshelf.errors import AccessError, ConfigError, DocshelfError, NotFoundError
from docshelf.shelf.budget import prefix_within
from docshelf.shelf.locations import parse_location
from docshelf.shelf.paths import check_link, check_relative, guarded_path
from docshelf.shelf.types import Passage, PassageWindow, TextRange
from docshelf.types import cite

if TYPE_CHECKING:
    from docshelf.parse import ParserRegistry
    from docshelf.store.base import DocumentRecord, Store
    from docshelf.types import Chunk

__all__ = [
    "SCHEME",
    "DocumentText",
    "citation",
    "document_uri",
    "find_document",
    "guarded",
    "list_documents",
    "load_text",
    "parse_uri",
    "passages",
    "read_range",
    "uri_for",
]

SCHEME = "docshelf://"
_DOC_ID = re.compile(r"^[0-9a-f]{32}$")


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


def citation(doc: DocumentRecord, line_start: int, line_end: int, page: int | None) -> str:
    return cite(doc.path, line_start, line_end, page, doc.metadata.get("source_url"))


def find_document(store: Store, ref: str, collection: str | None) -> DocumentRecord:
    """A document by id, ``docshelf://`` URI, path as cited, or absolute path."""
    ref = ref.strip()
    if _DOC_ID.match(ref) and (doc := store.get_document_by_id(ref)) is not None:
        return doc
    if ref.startswith(SCHEME):
        collection, ref = parse_uri(ref)
    names = [collection] if collection else store.collections()
    if ref.lower().startswith(("http://", "https://")):  # a fetched page's citation is its URL
        return _by_url(store, names, ref, collection)
    if ref.startswith("/"):
        ref = _relative_to_roots(store, names, ref)
    path = check_relative(ref)
    found = [d for d in (store.get_document(name, path) for name in names) if d is not None]
    if len(found) > 1:
        raise ConfigError(
            f"{path!r} is in several collections ({', '.join(d.collection for d in found)}); "
            "pass the collection or the docshelf:// URI"
        )
    if not found:
        where = f"collection {collection!r}" if collection else "the index"
        raise NotFoundError(f"no document {path!r} in {where}; list the documents or search to find paths")
    return found[0]


def _by_url(store: Store, names: list[str], url: str, collection: str | None) -> DocumentRecord:
    """The document fetched from ``url``, found through the manifests of the mirror roots."""
    from docshelf.sources.mirror import read_manifest

    wanted = url.split("#", 1)[0]
    for name in names:
        for root in store.collection_roots(name):
            manifest = read_manifest(Path(root))
            for rel, rec in manifest.files.items() if manifest else ():
                if rec.url.split("#", 1)[0] == wanted and (doc := store.get_document(name, rel)) is not None:
                    return doc
    where = f"collection {collection!r}" if collection else "the index"
    raise NotFoundError(
        f"no document fetched from {wanted} in {where}; `docshelf status` lists the URLs indexed"
    )


def _relative_to_roots(store: Store, names: list[str], ref: str) -> str:
    """An absolute path (as search hits give) made relative to the root holding it; lexical only,
    so the guard still sees any '..' or symlink."""
    from docshelf.index.mounts import locate, mounts

    for name in names:
        hit = locate(mounts(store, name), Path(ref))
        if hit is not None:
            return hit[1]
    raise AccessError(f"refused {ref!r}: it is outside every corpus root; see the status for the roots")


def guarded(store: Store, doc: DocumentRecord) -> Path:
    """The file behind ``doc``, through the path guard."""
    return guarded_path(store.collection_roots(doc.collection), doc.root, doc.path)


@dataclass
class DocumentText:
    """A document's text, as the indexer saw it, and where it came from."""

    text: str
    source: str  # "file" | "index"
    note: str | None = None


def _from_chunks(store: Store, doc: DocumentRecord) -> str:
    """Rebuild the text from stored chunks at their offsets (blank where no chunk holds text, with
    the line breaks the chunks' line numbers say), so a cited line range reads the same lines."""
    from docshelf.search.grep import stitch

    return stitch(store.document_chunks(doc.id))


def load_text(
    store: Store, registry: ParserRegistry, doc: DocumentRecord, max_bytes: int = 50 * 1_048_576
) -> DocumentText:
    """The parsed text of ``doc`` from disk, through the path guard; from chunks when the file is gone,
    is no regular file any more (a FIFO is never opened for reading) or grew past ``max_bytes``.

    Parsing again (not just decoding) keeps offsets and line numbers equal to the citations.
    """
    from docshelf.shelf.parsed import parsed_text
    from docshelf.sources.regular import FileRefused, read_regular

    path = guarded(store, doc)
    if registry.for_path(doc.path) is None:  # the parser is chosen before any read
        return DocumentText(
            _from_chunks(store, doc), "index", "no parser for this file now; text from the index"
        )
    try:
        data = read_regular(path, max_bytes)
        st = path.stat()
        text = parsed_text(registry, data, doc.path)
    except FileRefused as exc:
        return DocumentText(
            _from_chunks(store, doc), "index", f"the file is {exc.reason}; text from the index"
        )
    except (OSError, DocshelfError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        gone = f"the file cannot be read now ({reason}); text rebuilt from the index"
        return DocumentText(_from_chunks(store, doc), "index", gone)
    check_link(doc.root, doc.path, data, doc.content_hash)  # a re-pointed link is not followed
    note = None
    if st.st_size != doc.size or st.st_mtime_ns != doc.mtime_ns:
        note = "the file changed since it was indexed: line numbers may differ from search citations"
    return DocumentText(text, "file", note)


def _no_page(doc: DocumentRecord, page: int, held: list[int]) -> DocshelfError:
    """Why ``page`` of ``doc`` cannot be read: numbered from 1, past the end, a page without text
    (a scan that was not OCR'd), or a document that has no pages."""
    if page < 1:
        return ConfigError(f"pages are numbered from 1, not {page}")
    count = doc.metadata.get("pages")
    last = count if isinstance(count, int) and count > 0 else max(held, default=0)
    if not last:  # (bad arguments, as a line past the end is)
        return ConfigError(f"{doc.path} has no pages; read it by lines instead")
    if page > last:
        pages = f"{last} page{'s' if last > 1 else ''}"
        return ConfigError(f"{doc.path} has {pages}; page {page} is past the end")
    return NotFoundError(f"page {page} of {doc.path} has no text in the index (a scan without OCR?)")


def _check_range(
    lines: tuple[int | None, int | None], chars: tuple[int | None, int | None], max_tokens: int | None
) -> None:
    """Arguments that cannot name a range: one line each, before anything is read."""
    if any(n is not None and n < 1 for n in lines):
        raise ConfigError(f"lines are numbered from 1, not {lines[0]}-{lines[1]}")
    if lines[0] is not None and lines[1] is not None and lines[1] < lines[0]:
        raise ConfigError(f"end line {lines[1]} is before start line {lines[0]}")
    if any(n is not None and n < 0 for n in chars):
        raise ConfigError(f"character offsets start at 0, not {chars[0]}-{chars[1]}")
    if chars[0] is not None and chars[1] is not None and chars[1] < chars[0]:
        raise ConfigError(f"end character {chars[1]} is before start character {chars[0]}")
    if max_tokens is not None and max_tokens < 1:
        raise ConfigError(f"max_tokens must be at least 1, not {max_tokens}")


def passages(store: Store, chunk_id: str, before: int, after: int) -> PassageWindow:
    """A chunk (by id, or by a hit's citation) and up to ``before``/``after`` neighbours of the
    same document."""
    if before < 0 or after < 0:
        raise ConfigError(f"before and after count passages, 0 or more, not {before} and {after}")
    ref = chunk_id.strip()
    found = store.get_chunks([ref])
    if found:
        target = found[0]
        doc = store.get_document_by_id(target.doc_id)
        if doc is None:
            gone = f"the document of chunk {chunk_id!r} was removed from the index; search again"
            raise NotFoundError(gone)
        chunks = store.document_chunks(doc.id)
    else:
        cited = _cited(store, ref)
        if cited is None:
            raise NotFoundError(
                f"unknown chunk id {chunk_id!r}: ids come from search results and change when a document "
                "is re-indexed; search again, or pass a hit's citation (path:START-END)"
            )
        doc, chunks, target = cited
    i = next((n for n, c in enumerate(chunks) if c.id == target.id), None)
    if i is None:  # re-indexed between the two reads
        raise NotFoundError(f"chunk {chunk_id!r} was just replaced by a re-index; search again")
    window = chunks[max(0, i - before) : i + after + 1]
    return PassageWindow(
        doc, [Passage(c, citation(doc, c.line_start, c.line_end, c.page), c.id == target.id) for c in window]
    )


def _cited(store: Store, ref: str) -> tuple[DocumentRecord, list[Chunk], Chunk] | None:
    """The document, its chunks and the passage a hit's citation names (``path:12-30``,
    ``file.pdf#page=3``, ``path#L12``); None when ``ref`` names no lines or page. Agents quote
    citations more often than ids."""
    where = parse_location(ref)
    if where.whole:
        return None
    doc = find_document(store, where.path, None)
    chunks = store.document_chunks(doc.id)
    if where.page is not None:
        picked = [c for c in chunks if c.page == where.page]
        if not picked:
            raise NotFoundError(
                f"no passage of {doc.path} on page {where.page}; read the document's pages with "
                "read_document (MCP) or `docshelf read PATH#page=N`"
            )
        return doc, chunks, picked[0]
    start, end = where.lines
    exact = [c for c in chunks if (c.line_start, c.line_end) == (start, end)]
    picked = exact or [c for c in chunks if start is not None and c.line_start <= start <= c.line_end]
    if not picked:
        raise NotFoundError(
            f"no passage of {doc.path} holds line {start}; read any lines with read_document (MCP) "
            "or `docshelf read PATH:START-END`"
        )
    return doc, chunks, picked[0]


def read_range(
    store: Store, registry: ParserRegistry, doc: DocumentRecord,
    lines: tuple[int | None, int | None] = (None, None),
    chars: tuple[int | None, int | None] = (None, None),
    page: int | None = None, max_tokens: int | None = None, max_bytes: int = 50 * 1_048_576,
) -> TextRange:  # fmt: skip
    """A page, line or character range of ``doc`` (whole text if none is given), cut to
    ``max_tokens`` at a line end when that costs little; ``rest`` says what was left out."""
    from docshelf.chunk import LineIndex

    _check_range(lines, chars, max_tokens)
    loaded = load_text(store, registry, doc, max_bytes)
    text = loaded.text
    index = LineIndex(text)
    total_lines = index.line_count
    start, end = 0, len(text)
    chunks = store.document_chunks(doc.id) if page is not None else None
    if page is not None:
        spans = [(c.char_start, c.char_end) for c in chunks or [] if c.page == page]
        if not spans:
            raise _no_page(doc, page, [c.page for c in chunks or [] if c.page is not None])
        start, end = min(s for s, _ in spans), max(e for _, e in spans)
    elif lines != (None, None):
        first, last = lines[0] or 1, lines[1] or total_lines
        if first > max(total_lines, 1):
            raise ConfigError(f"{doc.path} has {total_lines} lines; start line {first} is past the end")
        if last < first:
            raise ConfigError(f"end line {last} is before start line {first}")
        start = index.line_start(first)
        end = index.line_start(last + 1) if last < total_lines else len(text)
    elif chars != (None, None):
        start, end = chars[0] or 0, min(len(text), chars[1] if chars[1] is not None else len(text))
        if start > len(text) or (start == len(text) and text):
            raise ConfigError(
                f"{doc.path} has {len(text)} characters; start character {start} is past the end"
            )
    body = text[start:end]
    rest = None
    if max_tokens is not None and (fit := prefix_within(body, max_tokens)) < len(body):
        newline = body.rfind("\n", 0, fit)
        fit = newline + 1 if newline > fit // 2 else fit  # end on a whole line when that costs little
        body = body[:fit]
        rest = (start + fit, end)
    stop = start + len(body)
    line_start, line_end = index.line_of(start), index.line_of(max(start, stop - 1))
    all_chunks = chunks if chunks is not None else store.document_chunks(doc.id)
    first_page = next((c.page for c in all_chunks if c.char_end > start), None)
    return TextRange(
        doc, body, loaded.source, start, stop, line_start, line_end, len(text), total_lines,
        citation(doc, line_start, line_end, first_page), loaded.note, rest,
    )  # fmt: skip


def list_documents(store: Store, collection: str | None, path_glob: str | None) -> list[DocumentRecord]:
    """Indexed documents of one collection (or all), optionally matching an fnmatch glob."""
    if collection and collection not in store.collections():
        known = ", ".join(store.collections()) or "none yet"
        raise NotFoundError(f"no collection {collection!r}; known collections: {known}")
    return [
        d for d in store.iter_documents(collection) if not path_glob or fnmatch.fnmatchcase(d.path, path_glob)
    ]
