"""PDF: the text layer of each page (pypdf), with physical page numbers and printed labels."""

from __future__ import annotations

import io
import logging
import re
from typing import Any

from docshelf.errors import ParseError
from docshelf.parse.assemble import TextBuilder, missing_library
from docshelf.types import ParsedDocument

__all__ = ["PdfParser"]

_BLANK_LINES = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")


class PdfParser:
    """PDF text per page; every section carries its 1-based physical page.

    ``text`` is the page texts joined by blank lines. Pages without a text layer
    (scans) are listed in ``metadata["pages_without_text"]``; printed page labels
    ("iv", "A-3"), when the PDF defines them, in ``metadata["page_labels"]``.
    """

    name: str = "pdf"
    extensions: tuple[str, ...] = (".pdf",)
    binary: bool = True

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
        try:
            reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted and not _decrypt(reader):
                raise ParseError(
                    f"{path}: is password-protected (encrypted PDF); save an unprotected copy to index it"
                )
            pages = [_page_text(page) for page in reader.pages]
            labels = _printed_labels(reader, len(pages))
            title = _title(reader)
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
            if not text.strip():
                empty.append(number)
                continue
            for paragraph in _BLANK_LINES.split(text):
                builder.add(paragraph, "paragraph", page=number)
        metadata: dict[str, Any] = {"pages": len(pages)}
        if empty:
            metadata["pages_without_text"] = empty
        if labels is not None:
            metadata["page_labels"] = labels
        return ParsedDocument(
            text=builder.text, sections=builder.sections, file_type=self.name, title=title, metadata=metadata
        )


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
