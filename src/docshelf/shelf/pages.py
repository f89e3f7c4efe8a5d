"""A PDF page as a picture with a passage marked on it: what a reader needs to see a cited page."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from docshelf.errors import AccessError, DocshelfError, NotFoundError
from docshelf.shelf.reading import guarded

if TYPE_CHECKING:
    from docshelf.store.base import DocumentRecord, Store

__all__ = ["PageImage", "page_image"]

MIN_WIDTH, MAX_WIDTH = 200, 2400


@dataclass(frozen=True)
class PageImage:
    """One page of a PDF drawn as a PNG, and where the passage asked for sits on it.

    ``boxes`` are (left, top, right, bottom) as shares (0-1) of the picture's width and height,
    one per line of the passage; empty when the page's text layer does not place it (a scanned
    page read by OCR, or a file changed since it was indexed), and ``note`` then says why.
    """

    document: DocumentRecord
    page: int  # 1-based
    pages: int
    png: bytes
    width: int
    height: int
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)
    note: str | None = None


def page_image(
    store: Store, doc: DocumentRecord, page: int | None, chunk_id: str | None, width: int, max_bytes: int
) -> PageImage:
    """Page ``page`` of ``doc`` (default: the page of ``chunk_id``), ``width`` pixels wide, with the
    text of chunk ``chunk_id`` marked. The file is read through the same guard as every read."""
    from docshelf.parse.pdf_render import render_page
    from docshelf.shelf.paths import check_link
    from docshelf.sources.regular import FileRefused, read_regular

    if not doc.path.lower().endswith(".pdf"):
        raise DocshelfError(f"{doc.path} is not a PDF: only PDF pages are drawn; read its text instead")
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        raise DocshelfError(f"width must be between {MIN_WIDTH} and {MAX_WIDTH} pixels, not {width}")
    needle = ""
    if chunk_id:
        found = store.get_chunks([chunk_id])
        if not found or found[0].doc_id != doc.id:
            raise NotFoundError(f"no passage {chunk_id!r} in {doc.path}; search again for a fresh one")
        needle = found[0].text
        page = page or found[0].page
        if found[0].page != page:
            needle = ""  # another page: nothing of this passage to mark
    if page is None or page < 1:
        raise DocshelfError(f"pages are numbered from 1; name the page of {doc.path} to draw")
    path = guarded(store, doc)
    try:
        data = read_regular(path, max_bytes)
    except FileRefused as exc:
        raise AccessError(f"{doc.path}: {exc.reason}") from None
    except OSError as exc:
        raise NotFoundError(f"{doc.path} cannot be read now ({exc.strerror}); re-index it") from None
    check_link(doc.root, doc.path, data, doc.content_hash)
    try:
        drawn = render_page(data, page - 1, width, needle)
    except IndexError:
        raise NotFoundError(f"{doc.path} has no page {page}") from None
    except Exception as exc:  # PdfiumError and what a damaged file raises inside PDFium
        raise DocshelfError(f"{doc.path}: PDFium cannot draw page {page} ({exc})") from None
    note = None
    if needle and not drawn.boxes:
        note = (
            "this page has no text layer (its text came from OCR): the passage is not marked"
            if not drawn.has_text
            else "the passage's place on the page is not known (the file may have changed since indexing)"
        )
    return PageImage(doc, page, drawn.pages, drawn.png, drawn.width, drawn.height, drawn.boxes, note)
