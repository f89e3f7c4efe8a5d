"""PDF: the text layer of each page (pypdf), with physical page numbers and printed labels."""

from __future__ import annotations

import io
import logging
import re
from typing import Any

from docshelf.errors import ParseError
from docshelf.parse.assemble import TextBuilder, missing_library
from docshelf.parse.image import ocr_text_blocks
from docshelf.parse.limits import Deadline, ParseLimits
from docshelf.parse.ocr import ocr_image, resolve_languages, tesseract_path
from docshelf.types import ParsedDocument

__all__ = ["PdfParser"]

_BLANK_LINES = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")


class PdfParser:
    """PDF text per page; every section carries its 1-based physical page.

    ``text`` is the page texts joined by blank lines. Pages without a text layer
    (scans) are read by OCR when it is on and Tesseract is installed (``metadata["ocr_pages"]``);
    those left empty are listed in ``metadata["pages_without_text"]``, and a PDF with no text
    on any page is refused with the reason. Printed page labels ("iv", "A-3"), when the PDF
    defines them, go to ``metadata["page_labels"]``.
    """

    name: str = "pdf"
    extensions: tuple[str, ...] = (".pdf",)
    binary: bool = True

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Extract the text of every page of ``data``."""
        try:
            import pypdf
        except ImportError:
            raise missing_library(path, "PDF files", "pypdf") from None
        # pypdf logs every repaired structure at WARNING; a damaged file is reported once, below.
        logging.getLogger("pypdf").setLevel(logging.ERROR)
        if b"%PDF-" not in data[:1024]:
            raise ParseError(f"{path}: is not a PDF (no %PDF- header); exclude it or rename it")
        deadline = self.limits.deadline(path)
        try:
            reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted and not _decrypt(reader):
                raise ParseError(
                    f"{path}: is password-protected (encrypted PDF); save an unprotected copy to index it"
                )
            count = len(reader.pages)
            if count > self.limits.max_pages:
                raise ParseError(
                    f"{path}: has {count} pages (over parse.max_pages = {self.limits.max_pages}); "
                    "raise the limit or exclude the file"
                )
            pages = []
            for page in reader.pages:
                deadline.check()
                pages.append(_page_text(page))
            labels = _printed_labels(reader, len(pages))
            title = _title(reader)
            ocr = self._ocr_empty_pages(reader, pages, deadline, path)
        except ParseError:
            raise
        except Exception as exc:  # pypdf raises many types for damaged files
            raise ParseError(
                f"{path}: damaged or unreadable PDF ({type(exc).__name__}: {exc}); "
                "repair it (for example print it to a new PDF) or exclude it"
            ) from None
        builder = TextBuilder()
        empty: list[int] = []
        for number, text in enumerate(pages, start=1):
            if number in ocr.pages:
                ocr_text_blocks(builder, ocr.pages[number], number)
                continue
            if not text.strip():
                empty.append(number)
                continue
            for paragraph in _BLANK_LINES.split(text):
                builder.add(paragraph, "paragraph", page=number)
        if pages and not builder.text:
            raise ParseError(
                f"{path}: no text layer on any of its {len(pages)} page(s) (a scan?); {ocr.why_not}"
            )
        metadata: dict[str, Any] = {"pages": len(pages)}
        if empty:
            metadata["pages_without_text"] = empty
        if ocr.pages:
            metadata["ocr_pages"] = sorted(ocr.pages)
        if labels is not None:
            metadata["page_labels"] = labels
        return ParsedDocument(
            text=builder.text, sections=builder.sections, file_type=self.name, title=title, metadata=metadata
        )

    def _ocr_empty_pages(self, reader: Any, pages: list[str], deadline: Deadline, path: str) -> _Ocr:
        """OCR the largest image of each page without a text layer (a scanned page is one image)."""
        result = _Ocr()
        empty = [i for i, text in enumerate(pages) if not text.strip()]
        if not empty:
            return result
        if not self.limits.ocr:
            result.why_not = "OCR is off (parse.ocr = false)"
            return result
        if tesseract_path() is None:
            result.why_not = "OCR is off because Tesseract is not installed (see `docshelf doctor`)"
            return result
        languages = resolve_languages(self.limits.ocr_languages, path)
        for i in empty:
            deadline.check()
            image = _largest_image(reader.pages[i])
            if image is None:
                continue
            text = "\n\n".join(ocr_image(image, languages, deadline.remaining(), f"{path}#page={i + 1}"))
            if text.strip():
                result.pages[i + 1] = text
        return result


class _Ocr:
    def __init__(self) -> None:
        self.pages: dict[int, str] = {}  # 1-based page -> recognised text
        self.why_not = "OCR found no text in its images"


def _largest_image(page: Any) -> bytes | None:
    """The encoded bytes of the page's biggest image (pypdf decodes the PDF filters)."""
    best: bytes | None = None
    try:
        for image in page.images:
            data = image.data
            if best is None or len(data) > len(best):
                best = data
    except Exception:  # an image pypdf cannot decode (e.g. JBIG2): the page stays empty
        return best
    return best


def _decrypt(reader: Any) -> bool:
    """Open a PDF encrypted with an empty user password (owner restrictions only)."""
    try:
        return bool(reader.decrypt(""))
    except Exception:
        return False


def _page_text(page: Any) -> str:
    text = page.extract_text() or ""
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def _printed_labels(reader: Any, count: int) -> list[str] | None:
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
