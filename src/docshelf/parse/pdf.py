"""PDF: the text of each page (PDFium, pypdf as the fallback), on its physical page number, with
the outline as heading paths, form fields and comments, and OCR for pages without a text layer."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from docshelf.errors import ParseError
from docshelf.parse.assemble import TextBuilder, missing_library
from docshelf.parse.garble import garbled
from docshelf.parse.limits import Deadline, ParseLimits
from docshelf.parse.ocr import ocr_image, tesseract_path
from docshelf.parse.pdf_pypdf import PypdfPages, largest_image, read_pypdf
from docshelf.parse.pdf_text import PdfContent, add_pages, drop_running_lines, wide
from docshelf.types import ParsedDocument

__all__ = ["PdfParser"]

_LETTERS = re.compile(r"[^\W\d_]+")
_SPLIT_WORDS = 0.25  # share of one-letter words above which a page's words look split into letters


class PdfParser:
    """PDF text per page; every section carries its 1-based physical page.

    Pages without a text layer (scans) are read by OCR when it is on and Tesseract is
    installed (``metadata["ocr_pages"]``); those left empty are listed in
    ``metadata["pages_without_text"]``, and a PDF with no text on any page is refused with
    the reason. Pages whose text layer is mojibake in both libraries are OCR'd the same way, or
    listed in ``metadata["garbled_pages"]``. Printed page labels ("iv", "A-3"), when the PDF
    defines them, go to ``metadata["page_labels"]``; the library that read the text to
    ``metadata["pdf_library"]``.
    """

    name: str = "pdf"
    extensions: tuple[str, ...] = (".pdf",)
    binary: bool = True

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Extract the text of every page of ``data``."""
        pdfium = _available("pypdfium2")
        if not pdfium and not _available("pypdf"):
            raise missing_library(path, "PDF files", "pypdfium2")
        if b"%PDF-" not in data[:1024]:
            raise ParseError(f"{path}: is not a PDF (no %PDF- header); exclude it or rename it")
        deadline = self.limits.deadline(path)
        content = self._read(data, path, deadline, pdfium)
        pages = drop_running_lines(content.pages)
        ocr, why_not, ocr_languages = self._ocr_empty_pages(data, pages, content, deadline, path)
        builder = TextBuilder()
        texts = {n: t for n, t in enumerate(pages, start=1) if t.strip()}
        texts.update(ocr)
        add_pages(builder, texts, content.outline)
        garbled_pages = [i + 1 for i in content.garbled_pages]
        if pages and not builder.text:
            if garbled_pages:
                raise ParseError(
                    f"{path}: its text layer is mojibake on {len(garbled_pages)} of its {len(pages)} "
                    f"page(s) (a font without a usable ToUnicode map) and the others have none; {why_not}"
                )
            raise ParseError(f"{path}: no text layer on any of its {len(pages)} page(s) (a scan?); {why_not}")
        metadata: dict[str, Any] = {"pages": len(pages), "pdf_library": content.library}
        empty = [n for n in range(1, len(pages) + 1) if n not in texts and n not in garbled_pages]
        if empty:
            metadata["pages_without_text"] = empty
        if garbled_pages:
            metadata["garbled_pages"] = garbled_pages
        if content.failed_pages:
            metadata["unreadable_pages"] = [i + 1 for i in content.failed_pages]
        if ocr:
            metadata["ocr_pages"] = sorted(ocr)
            metadata["ocr_languages"] = ocr_languages
        if content.labels is not None:
            metadata["page_labels"] = content.labels
        return ParsedDocument(
            text=builder.text,
            sections=builder.sections,
            file_type=self.name,
            title=content.title,
            metadata=metadata,
        )

    def _read(self, data: bytes, path: str, deadline: Deadline, pdfium: bool) -> PdfContent:
        from docshelf.parse.pdf_pdfium import PasswordRequired, read_pdfium

        try:
            if not pdfium:
                raise ImportError("pypdfium2")
            content = read_pdfium(data, path, self.limits.max_pages, deadline)
        except PasswordRequired:
            raise _password(path) from None
        except ParseError:
            raise
        except Exception as first:  # PDFium cannot open it: pypdf repairs some files it rejects
            try:
                content = read_pypdf(data, path, self.limits.max_pages, deadline)
                _drop_garbled(content)
                return content
            except ParseError:
                raise
            except PermissionError:
                raise _password(path) from None
            except Exception as exc:
                raise ParseError(
                    f"{path}: damaged or unreadable PDF ({type(first).__name__}: {first}; pypdf: "
                    f"{type(exc).__name__}: {exc}); repair it (for example print it to a new PDF) "
                    "or exclude it"
                ) from None
        _second_opinion(content, PypdfPages(data), deadline)
        return content

    def _ocr_empty_pages(
        self, data: bytes, pages: list[str], content: PdfContent, deadline: Deadline, path: str
    ) -> tuple[dict[int, str], str, list[str]]:
        """OCR of the pages without a text layer (1-based page -> text), why there is none
        (when there is none), and the languages used."""
        empty = [i for i, text in enumerate(pages) if not text.strip()]
        if not empty:
            return {}, "", []
        if not self.limits.ocr:
            return {}, "OCR is off (parse.ocr = false)", []
        if tesseract_path() is None:
            return {}, "OCR is off because Tesseract is not installed (see `docshelf doctor`)", []
        from docshelf.parse.ocr_script import OcrLanguages

        languages = OcrLanguages(self.limits.ocr_languages, path)
        out: dict[int, str] = {}
        for index, image in _page_images(data, empty, content, deadline):
            where = f"{path}#page={index + 1}"
            langs, upright = languages.prepare(image, where, deadline.remaining())
            text = "\n\n".join(ocr_image(upright, langs, deadline.remaining(), where))
            if text.strip():
                out[index + 1] = text
        return out, "OCR found no text on its pages", languages.used


def _available(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def _password(path: str) -> ParseError:
    return ParseError(f"{path}: is password-protected (encrypted PDF); save an unprotected copy to index it")


def _page_images(
    data: bytes, indices: list[int], content: PdfContent, deadline: Deadline
) -> Iterator[tuple[int, bytes]]:
    if content.library == "pdfium":
        from docshelf.parse.pdf_pdfium import render_pages

        yield from render_pages(data, indices, deadline)
        return
    for index in indices:
        deadline.check()
        image = largest_image(data, index)
        if image is not None:
            yield index, image


def _split_score(text: str) -> tuple[float, int]:
    """(share of one-letter words, letters in words of 4+ letters) of a page's text; Chinese
    and Japanese runs left out: written without spaces, and vertically one character per line,
    they hold no words to count (Korean, written with spaces, stays)."""
    words = [w for w in _LETTERS.findall(text) if not wide(w[0]) or "\uac00" <= w[0] <= "\ud7a3"]
    if len(words) < 20:
        return 0.0, 0
    return sum(len(w) == 1 for w in words) / len(words), sum(len(w) for w in words if len(w) >= 4)


def _second_opinion(content: PdfContent, pypdf: PypdfPages, deadline: Deadline) -> None:
    """Pages PDFium could not read, whose words it split into letters ("Nort h Buon a"), or
    whose text is mojibake (`garbled`), read again with pypdf. Its text is kept when it holds
    clearly more whole words, or reads where PDFium's was mojibake; a page both read as
    mojibake is left empty (for OCR) and listed in ``garbled_pages``."""
    for i, text in enumerate(content.pages):
        share, letters = _split_score(text)
        bad = garbled(text)
        if i not in content.failed_pages and share <= _SPLIT_WORDS and not bad:
            continue
        deadline.check()
        other = pypdf.text(i)
        if other is not None and garbled(other):
            other = None
        if bad:
            content.pages[i] = other if other is not None and other.strip() else ""
            if not content.pages[i]:
                content.garbled_pages.append(i)
        elif other is None:
            continue
        elif i in content.failed_pages:
            if other.strip():
                content.pages[i] = other
                content.failed_pages.remove(i)
        elif _split_score(other)[1] > 1.1 * letters:
            content.pages[i] = other


def _drop_garbled(content: PdfContent) -> None:
    """pypdf read the file alone: its mojibake pages are left empty (for OCR) and listed."""
    for i, text in enumerate(content.pages):
        if garbled(text):
            content.pages[i] = ""
            content.garbled_pages.append(i)
