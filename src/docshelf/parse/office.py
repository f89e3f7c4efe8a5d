"""Word (.docx, python-docx) and PowerPoint (.pptx, python-pptx) documents, plus the
legacy binary Office formats, which are reported rather than mis-parsed."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from typing import Any

from docshelf.errors import ParseError
from docshelf.parse.assemble import TextBuilder, check_zip, missing_library
from docshelf.parse.limits import ParseLimits
from docshelf.types import ParsedDocument

__all__ = ["DocxParser", "LegacyOfficeParser", "PptxParser"]

_HEADING_STYLE = re.compile(r"heading\s*([1-9])$", re.IGNORECASE)


def _damaged(path: str, what: str, exc: Exception) -> ParseError:
    return ParseError(
        f"{path}: damaged or unreadable {what} file ({type(exc).__name__}: {exc}); "
        "open and save it again, or exclude it"
    )


def _row_text(cells: Iterable[str]) -> str:
    """A table row as "a | b | c"; merged cells (repeated text) appear once."""
    out: list[str] = []
    for cell in cells:
        text = " ".join(cell.split())
        if not out or text != out[-1]:
            out.append(text)
    return " | ".join(out) if any(out) else ""


class DocxParser:
    """Word documents: "Heading 1".."Heading 6" (and "Title") paragraphs become headings;
    paragraphs, list items and tables (rows as "a | b | c") follow in document order."""

    name: str = "docx"
    extensions: tuple[str, ...] = (".docx",)
    binary: bool = True

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Read the body of the document in ``data``."""
        try:
            import docx
        except ImportError:
            raise missing_library(path, "Word files", "python-docx") from None
        check_zip(data, path, "Word (.docx)", self.limits.max_unzipped_bytes, self.limits.max_xml_part_bytes)
        try:
            document = docx.Document(io.BytesIO(data))
            builder = TextBuilder()
            title = _docx_body(document.iter_inner_content(), builder)
            core_title = document.core_properties.title
        except ParseError:
            raise
        except Exception as exc:
            raise _damaged(path, "Word (.docx)", exc) from None
        if core_title and core_title.strip():
            title = " ".join(core_title.split())
        return ParsedDocument(text=builder.text, sections=builder.sections, file_type=self.name, title=title)


def _docx_body(blocks: Iterable[Any], builder: TextBuilder) -> str | None:
    """Add paragraphs and tables to ``builder``; the title (first Title or Heading 1)."""
    from docx.table import Table

    title: str | None = None
    heading1: str | None = None
    # style id -> name, resolved once: python-docx's Paragraph.style scans every style of the
    # document for each unstyled paragraph (~2 ms each: minutes for a 60 KB zip-bomb-like file)
    names: dict[str | None, str] = {}
    for block in blocks:
        if isinstance(block, Table):
            rows = [_row_text(cell.text for cell in row.cells) for row in block.rows]
            builder.add("\n".join(r for r in rows if r), "table")
            continue
        text = block.text
        style_id = block._p.style
        if style_id not in names:
            names[style_id] = (block.style.name if block.style is not None else "") or ""
        style = names[style_id]
        m = _HEADING_STYLE.match(style.strip())
        if style.strip().lower() == "title":
            if title is None and text.strip():
                title = " ".join(text.split())
            builder.heading(text, 1)
        elif m is not None:
            level = min(int(m.group(1)), 6)
            if level == 1 and heading1 is None and text.strip():
                heading1 = " ".join(text.split())
            # Under a "Title" paragraph, Heading 1 sits one level below it.
            builder.heading(text, level + 1 if title is not None else level)
        elif style.lower().startswith("list"):
            builder.add(text, "list")
        else:
            builder.add(text)
    return title or heading1


class PptxParser:
    """PowerPoint: one heading per slide ("Slide N: title"), then its text boxes, tables
    and speaker notes; every section's ``page`` is the slide number."""

    name: str = "pptx"
    extensions: tuple[str, ...] = (".pptx",)
    binary: bool = True

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Read every slide of the presentation in ``data``."""
        try:
            import pptx
        except ImportError:
            raise missing_library(path, "PowerPoint files", "python-pptx") from None
        check_zip(
            data, path, "PowerPoint (.pptx)", self.limits.max_unzipped_bytes, self.limits.max_xml_part_bytes
        )
        builder = TextBuilder()
        try:
            presentation = pptx.Presentation(io.BytesIO(data))
            first_title: str | None = None
            for number, slide in enumerate(presentation.slides, start=1):
                title_shape = slide.shapes.title
                slide_title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
                if first_title is None and slide_title:
                    first_title = slide_title
                heading = f"Slide {number}: {slide_title}" if slide_title else f"Slide {number}"
                builder.heading(heading, 1, page=number)
                for kind, text in _shape_texts(slide.shapes, title_shape):
                    builder.add(text, kind, page=number)
                if slide.has_notes_slide:
                    notes = slide.notes_slide.notes_text_frame
                    if notes is not None and notes.text.strip():
                        builder.add("Notes: " + notes.text.strip(), page=number)
            core_title = presentation.core_properties.title
        except ParseError:
            raise
        except Exception as exc:
            raise _damaged(path, "PowerPoint (.pptx)", exc) from None
        title = " ".join(core_title.split()) if core_title and core_title.strip() else first_title
        return ParsedDocument(
            text=builder.text,
            sections=builder.sections,
            file_type=self.name,
            title=title,
            metadata={"slides": len(presentation.slides)},
        )


def _shape_texts(shapes: Iterable[Any], skip: Any) -> Iterator[tuple[str, str]]:
    """(kind, text) of each text frame and table of ``shapes``, groups included."""
    for shape in shapes:
        if skip is not None and shape.shape_id == skip.shape_id:
            continue
        if hasattr(shape, "shapes"):
            yield from _shape_texts(shape.shapes, None)  # a group
        elif getattr(shape, "has_table", False):
            rows = [_row_text(cell.text for cell in row.cells) for row in shape.table.rows]
            yield "table", "\n".join(r for r in rows if r)
        elif getattr(shape, "has_text_frame", False):
            yield "paragraph", shape.text_frame.text


class LegacyOfficeParser:
    """Old binary Word/PowerPoint/Excel files: reported as unsupported, never mis-parsed."""

    name: str = "legacy-office"
    extensions: tuple[str, ...] = (".doc", ".ppt", ".xls")
    binary: bool = True

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Always raises ParseError saying how to convert the file."""
        raise ParseError(
            f"{path}: legacy binary Office format is not supported; save it as .docx/.pptx/.xlsx"
        )
