"""PDF text through pypdf: the fallback for files PDFium cannot open, and for pages where PDFium
splits words into letters (text layers with odd character spacing, e.g. some OCR output)."""

from __future__ import annotations

import io
import logging
from typing import Any

from docshelf.errors import ParseError
from docshelf.parse.limits import Deadline
from docshelf.parse.pdf_text import PdfContent, normalise_page_text

__all__ = ["PypdfPages", "read_pypdf"]


def _reader(data: bytes) -> Any:
    import pypdf

    # pypdf logs every repaired structure at WARNING; a damaged file is reported once, by the caller
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
    if reader.is_encrypted:
        try:
            ok = bool(reader.decrypt(""))  # an empty user password: owner restrictions only
        except Exception:
            ok = False
        if not ok:
            raise PermissionError("password")
    return reader


class PypdfPages:
    """Single pages read on demand (the reader is opened on first use)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._reader: Any = None

    def text(self, index: int) -> str | None:
        """Page ``index``'s text, None when pypdf cannot read it."""
        try:
            if self._reader is None:
                self._reader = _reader(self.data)
            return normalise_page_text(self._reader.pages[index].extract_text() or "")
        except Exception:
            return None


def read_pypdf(data: bytes, path: str, max_pages: int, deadline: Deadline) -> PdfContent:
    """Every page's text with pypdf; PermissionError for a user password."""
    reader = _reader(data)
    count = len(reader.pages)
    if count > max_pages:
        raise ParseError(
            f"{path}: has {count} pages (over parse.max_pages = {max_pages}); "
            "raise the limit or exclude the file"
        )
    content = PdfContent(library="pypdf", title=_title(reader), labels=_labels(reader, count))
    for i, page in enumerate(reader.pages):
        deadline.check()
        try:
            content.pages.append(normalise_page_text(page.extract_text() or ""))
        except Exception:
            content.failed_pages.append(i)
            content.pages.append("")
    content.outline = _outline(reader)
    return content


def _outline(reader: Any) -> list[tuple[int, str, int]]:
    out: list[tuple[int, str, int]] = []

    def walk(items: list[Any], level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            try:
                index = reader.get_destination_page_number(item)
            except Exception:
                continue
            title = " ".join(str(getattr(item, "title", "") or "").split())
            if title and index is not None and index >= 0:
                out.append((level, title, index))

    try:
        walk(reader.outline, 1)
    except Exception:
        return out
    return out


def _labels(reader: Any, count: int) -> list[str] | None:
    """Printed page labels, only when the PDF defines some (else they are just 1..n)."""
    try:
        root = reader.trailer["/Root"]
        if "/PageLabels" not in root:
            return None
        labels = [str(label) for label in reader.page_labels]
    except Exception:
        return None
    if len(labels) != count or labels == [str(i) for i in range(1, count + 1)]:
        return None
    return labels


def _title(reader: Any) -> str | None:
    try:
        info = reader.metadata
        title = info.title if info is not None else None
    except Exception:
        return None
    if isinstance(title, str) and title.strip():
        return " ".join(title.split())
    return None


def largest_image(data: bytes, index: int) -> bytes | None:
    """The encoded bytes of page ``index``'s biggest image (for OCR without PDFium)."""
    try:
        page = _reader(data).pages[index]
        best: bytes | None = None
        for image in page.images:
            raw = image.data
            if best is None or len(raw) > len(best):
                best = raw
        return best
    except Exception:  # an image pypdf cannot decode (e.g. JBIG2): the page stays empty
        return None
