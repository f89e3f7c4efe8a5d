"""PDF text through PDFium (pypdfium2): page text, form fields and annotations, the outline.

Measured on the realdocs set against poppler's text (bench/fidelity.py, docs/benchmarks.md):
PDFium reads more of the words than pypdf (custom font encodings, damaged content streams),
puts them on the right page more often, and runs about ten times faster.
"""

from __future__ import annotations

import ctypes
import io
from collections.abc import Iterator
from typing import Any

from docshelf.errors import ParseError
from docshelf.parse.limits import Deadline
from docshelf.parse.pdf_text import PdfContent, normalise_page_text
from docshelf.parse.quiet import native_stderr_to_log

__all__ = ["PasswordRequired", "read_pdfium", "render_pages"]

_OCR_DPI = 300
_MAX_RENDER_PIXELS = 60_000_000  # a poster-sized page is rendered at a lower resolution


class PasswordRequired(Exception):
    """PDFium needs a password to open the file."""


def _annot_string(raw: Any, annot: Any, key: bytes) -> str:
    """An annotation's string entry (UTF-16 from PDFium: ask for the length, then fill)."""
    size = int(raw.FPDFAnnot_GetStringValue(annot, key, None, 0))
    if size <= 2:
        return ""
    buf = ctypes.create_string_buffer(size)
    raw.FPDFAnnot_GetStringValue(annot, key, ctypes.cast(buf, ctypes.POINTER(raw.FPDF_WCHAR)), size)
    return buf.raw[:size].decode("utf-16-le", "replace").rstrip("\x00")


def _field_value(raw: Any, formenv: Any, annot: Any) -> str:
    """A form field's value, inherited from the field a widget belongs to."""
    size = int(raw.FPDFAnnot_GetFormFieldValue(formenv, annot, None, 0))
    if size <= 2:
        return ""
    buf = ctypes.create_string_buffer(size)
    raw.FPDFAnnot_GetFormFieldValue(formenv, annot, ctypes.cast(buf, ctypes.POINTER(raw.FPDF_WCHAR)), size)
    return buf.raw[:size].decode("utf-16-le", "replace").rstrip("\x00")


def _annotation_texts(raw: Any, pdf: Any, page: Any) -> list[str]:
    """Values of form fields and the text of comments (notes, free text) on ``page``."""
    out: list[str] = []
    formenv = pdf.formenv.raw if getattr(pdf, "formenv", None) else None
    skip_types = (raw.FPDF_ANNOT_LINK, raw.FPDF_ANNOT_POPUP)  # a popup repeats its parent's text
    toggles = (raw.FPDF_FORMFIELD_CHECKBOX, raw.FPDF_FORMFIELD_RADIOBUTTON)  # "Yes"/"Off" say nothing
    for k in range(raw.FPDFPage_GetAnnotCount(page.raw)):
        annot = raw.FPDFPage_GetAnnot(page.raw, k)
        if not annot:
            continue
        try:
            subtype = raw.FPDFAnnot_GetSubtype(annot)
            if subtype in skip_types:
                continue
            texts = [_annot_string(raw, annot, b"Contents")]
            if subtype == raw.FPDF_ANNOT_WIDGET:
                if formenv is not None and raw.FPDFAnnot_GetFormFieldType(formenv, annot) in toggles:
                    continue
                texts.append(_annot_string(raw, annot, b"V"))
                if formenv is not None and not texts[-1].strip():
                    # a widget that is a kid of its field: the value sits on the field, and an
                    # appearance drawn before it was filled in shows nothing when flattened
                    texts.append(_field_value(raw, formenv, annot))
            out.extend(text for text in texts if text.strip())
        finally:
            raw.FPDFPage_CloseAnnot(annot)
    return out


def _outline(pdf: Any) -> list[tuple[int, str, int]]:
    entries: list[tuple[int, str, int]] = []
    try:
        for mark in pdf.get_toc(max_depth=8):
            dest = mark.get_dest()
            index = dest.get_index() if dest is not None else None
            title = " ".join(mark.get_title().split())
            if index is not None and title:
                entries.append((mark.level + 1, title, index))
    except Exception:  # a broken outline is no reason to lose the text
        return entries
    return entries


def _labels(pdf: Any, count: int) -> list[str] | None:
    try:
        labels = [pdf.get_page_label(i) for i in range(count)]
    except Exception:
        return None
    if not any(labels) or labels == [str(i) for i in range(1, count + 1)]:
        return None
    return [label or str(i) for i, label in enumerate(labels, start=1)]


def _title(pdf: Any) -> str | None:
    try:
        title = pdf.get_metadata_value("Title")
    except Exception:
        return None
    return " ".join(title.split()) if isinstance(title, str) and title.strip() else None


def read_pdfium(data: bytes, path: str, max_pages: int, deadline: Deadline) -> PdfContent:
    """The text of every page; PasswordRequired for a user password, other exceptions for
    files PDFium cannot open (the caller tries pypdf then)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    try:
        with native_stderr_to_log(path):
            pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise PasswordRequired from None
        raise
    try:
        pdf.init_forms()  # before any page is loaded: fields get appearances to flatten
        count = len(pdf)
        if count > max_pages:
            raise ParseError(
                f"{path}: has {count} pages (over parse.max_pages = {max_pages}); "
                "raise the limit or exclude the file"
            )
        content = PdfContent(library="pdfium", outline=_outline(pdf), title=_title(pdf))
        for i in range(count):
            deadline.check()
            # one page at a time, so other threads' log lines are never held back for long
            with native_stderr_to_log(f"{path}#page={i + 1}"):
                content.pages.append(_page_text(raw, pdf, i, content.failed_pages))
        content.labels = _labels(pdf, count)
        return content
    finally:
        pdf.close()


def _page_text(raw: Any, pdf: Any, i: int, failed: list[int]) -> str:
    try:
        page = pdf[i]
    except Exception:
        failed.append(i)
        return ""
    try:
        extras: list[str] = []
        if raw.FPDFPage_GetAnnotCount(page.raw) > 0:
            extras = _annotation_texts(raw, pdf, page)
            # draw form fields and annotations into the page, so their text is read in place
            if raw.FPDFPage_Flatten(page.raw, raw.FLAT_NORMALDISPLAY) == raw.FLATTEN_SUCCESS:
                page.close()
                page = pdf[i]
        textpage = page.get_textpage()
        try:
            text = normalise_page_text(textpage.get_text_bounded())
        finally:
            textpage.close()
        squashed = "".join(text.split())
        missing = [e for e in extras if "".join(e.split()) not in squashed]
        return "\n\n".join([text, *dict.fromkeys(m.strip() for m in missing)]) if missing else text
    except Exception:  # one broken page: the rest of the document is still read
        failed.append(i)
        return ""
    finally:
        page.close()


def render_pages(data: bytes, indices: list[int], deadline: Deadline) -> Iterator[tuple[int, bytes]]:
    """(index, PNG) of each page in ``indices`` rendered at 300 dpi, for OCR; pages that
    cannot be rendered are left out."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except Exception:
        return
    try:
        for index in indices:
            deadline.check()
            try:
                with native_stderr_to_log(f"#page={index + 1}"):
                    page = pdf[index]
                    width, height = page.get_size()
                    scale = _OCR_DPI / 72
                    if width * height * scale * scale > _MAX_RENDER_PIXELS:
                        scale = (_MAX_RENDER_PIXELS / max(1.0, width * height)) ** 0.5
                    image = page.render(scale=scale, grayscale=True).to_pil()
                    page.close()
            except Exception:
                continue
            out = io.BytesIO()
            image.save(out, format="PNG")
            yield index, out.getvalue()
    finally:
        pdf.close()
