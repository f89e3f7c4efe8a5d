"""OpenDocument text, spreadsheets and presentations (.odt, .ods, .odp; LibreOffice, Google
Docs exports): ``content.xml`` read with the standard library, headings (``text:h``) as
headings, footnotes and comments after their paragraph, tables and sheets as rows, slides on
their number with their speaker notes."""

from __future__ import annotations

import io
import zipfile
from typing import Any
from xml.etree import ElementTree

from docshelf.errors import ParseError
from docshelf.parse.assemble import TextBuilder, check_zip
from docshelf.parse.limits import ParseLimits
from docshelf.parse.sheets import rows_to_lines
from docshelf.types import ParsedDocument

__all__ = ["OdfParser"]

_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
_PRES = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
_DC = "http://purl.org/dc/elements/1.1/"
_MANIFEST = "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"
_MAX_REPEAT = 256  # repeated empty rows/columns fill a sheet to its edge; their text is the same


def _q(ns: str, name: str) -> str:
    return f"{{{ns}}}{name}"


_P, _H, _SPAN, _S, _TAB, _BR = (_q(_TEXT, n) for n in ("p", "h", "span", "s", "tab", "line-break"))
_NOTE, _NOTE_BODY, _CHANGES = _q(_TEXT, "note"), _q(_TEXT, "note-body"), _q(_TEXT, "tracked-changes")
_ANNOTATION, _ANNOTATION_END = _q(_OFFICE, "annotation"), _q(_OFFICE, "annotation-end")
_TBL, _ROW, _CELL = _q(_TABLE, "table"), _q(_TABLE, "table-row"), _q(_TABLE, "table-cell")
_COVERED = _q(_TABLE, "covered-table-cell")
_PAGE, _NOTES = _q(_DRAW, "page"), _q(_PRES, "notes")
_SKIP = frozenset({_CHANGES, _q(_DC, "creator"), _q(_DC, "date"), _q(_TEXT, "bookmark-ref")})


class _Reader:
    def __init__(self, builder: TextBuilder) -> None:
        self.builder = builder
        self.page: int | None = None

    def inline(self, el: ElementTree.Element, notes: list[str]) -> str:
        """A paragraph's text; its footnotes and comments go to ``notes``."""
        out = [el.text or ""]
        for child in el:
            if child.tag == _S:
                out.append(" " * min(int(child.get(_q(_TEXT, "c")) or 1), 64))
            elif child.tag == _TAB:
                out.append("\t")
            elif child.tag == _BR:
                out.append("\n")
            elif child.tag == _NOTE:
                body = child.find(_NOTE_BODY)
                if body is not None:
                    notes.append("Footnote: " + " ".join(self.texts(body)))
            elif child.tag == _ANNOTATION:
                notes.append("Comment: " + " ".join(self.texts(child)))
            elif child.tag not in _SKIP and child.tag not in (_P, _H):
                out.append(self.inline(child, notes))
            out.append(child.tail or "")
        return "".join(out)

    def texts(self, el: ElementTree.Element) -> list[str]:
        """Paragraph texts under ``el`` (no structure), for notes and cells."""
        out: list[str] = []
        for p in el.iter():
            if p.tag in (_P, _H):
                notes: list[str] = []
                text = " ".join(self.inline(p, notes).split())
                out.extend(t for t in [text, *notes] if t)
        return out

    def block(self, el: ElementTree.Element) -> None:
        if el.tag in _SKIP:
            return
        if el.tag in (_P, _H):
            notes: list[str] = []
            text = self.inline(el, notes)
            if el.tag == _H:
                self.builder.heading(text, int(el.get(_q(_TEXT, "outline-level")) or 1), page=self.page)
            else:
                self.builder.add(text, page=self.page)
            for note in notes:
                self.builder.add(note, page=self.page)
            for child in el:  # frames anchored in the paragraph (text boxes, captions)
                if child.tag not in (_NOTE, _ANNOTATION, _SPAN):
                    inner = self.texts(child)
                    if inner:
                        self.builder.add("\n".join(inner), page=self.page)
            return
        if el.tag == _TBL:
            rows = [" | ".join(c for c in cells if c) for _, cells in _table_rows(self, el)]
            self.builder.add("\n".join(r for r in rows if r), "table", page=self.page)
            return
        for child in el:
            self.block(child)


def _table_rows(reader: _Reader, table: ElementTree.Element) -> list[tuple[int, list[str]]]:
    rows: list[tuple[int, list[str]]] = []
    number = 0
    for row in table.iter(_ROW):
        repeat = min(int(row.get(_q(_TABLE, "number-rows-repeated")) or 1), _MAX_REPEAT)
        cells: list[str] = []
        for cell in row:
            if cell.tag not in (_CELL, _COVERED):
                continue
            times = min(int(cell.get(_q(_TABLE, "number-columns-repeated")) or 1), _MAX_REPEAT)
            text = " ".join(reader.texts(cell))
            cells.extend([text] * (times if text else 1))
        while cells and not cells[-1]:
            cells.pop()
        for _ in range(repeat):
            number += 1
            if cells:
                rows.append((number, cells))
    return rows


def _xml(archive: zipfile.ZipFile, name: str, path: str) -> ElementTree.Element:
    try:
        return ElementTree.fromstring(archive.read(name))
    except KeyError:
        raise ParseError(
            f"{path}: is not a valid OpenDocument file ({name} is missing); exclude it"
        ) from None
    except ElementTree.ParseError as exc:
        raise ParseError(f"{path}: damaged OpenDocument file ({name}: {exc}); exclude it") from None


class OdfParser:
    """OpenDocument text (.odt/.ott), spreadsheets (.ods/.ots) and presentations (.odp/.otp)."""

    name: str = "odf"
    extensions: tuple[str, ...] = (".odt", ".ott", ".ods", ".ots", ".odp", ".otp", ".odg")
    binary: bool = True

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Read the document's content.xml."""
        check_zip(data, path, "OpenDocument", self.limits.max_unzipped_bytes, self.limits.max_xml_part_bytes)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            if "META-INF/manifest.xml" in names:
                manifest = _xml(archive, "META-INF/manifest.xml", path)
                if manifest.find(f".//{{{_MANIFEST}}}encryption-data") is not None:
                    raise ParseError(
                        f"{path}: is password-protected (an encrypted OpenDocument file); save an "
                        "unprotected copy to index it"
                    )
            content = _xml(archive, "content.xml", path)
            title = _title(archive) if "meta.xml" in names else None
        body = content.find(_q(_OFFICE, "body"))
        builder = TextBuilder()
        metadata: dict[str, Any] = {}
        if body is not None:
            for kind in body:
                name = kind.tag.rsplit("}", 1)[-1]
                metadata["odf_kind"] = name
                if name == "spreadsheet":
                    metadata["sheets"] = _sheets(kind, builder)
                elif name in ("presentation", "drawing"):
                    metadata["slides"] = _slides(kind, builder)
                else:
                    _Reader(builder).block(kind)
        return ParsedDocument(
            text=builder.text, sections=builder.sections, file_type=self.name, title=title, metadata=metadata
        )


def _sheets(spreadsheet: ElementTree.Element, builder: TextBuilder) -> list[str]:
    reader = _Reader(builder)
    names: list[str] = []
    for table in spreadsheet.iter(_TBL):
        name = table.get(_q(_TABLE, "name")) or f"Sheet {len(names) + 1}"
        names.append(name)
        builder.heading(f"Sheet: {name}", 1)
        lines, _ = rows_to_lines((n, list(cells)) for n, cells in _table_rows(reader, table))
        builder.add("\n".join(lines), "table")
        for annotation in table.iter(_ANNOTATION):
            builder.add("Comment: " + " ".join(reader.texts(annotation)))
    return names


def _slides(presentation: ElementTree.Element, builder: TextBuilder) -> int:
    reader = _Reader(builder)
    count = 0
    for count, page in enumerate(presentation.iter(_PAGE), start=1):
        reader.page = count
        name = page.get(_q(_DRAW, "name")) or ""
        builder.heading(f"Slide {count}: {name}" if name else f"Slide {count}", 1, page=count)
        for child in page:
            if child.tag == _NOTES:
                notes = reader.texts(child)
                if notes:
                    builder.add("Notes: " + "\n".join(notes), page=count)
            else:
                reader.block(child)
    return count


def _title(archive: zipfile.ZipFile) -> str | None:
    try:
        meta = ElementTree.fromstring(archive.read("meta.xml"))
    except (KeyError, ElementTree.ParseError):
        return None
    el = meta.find(f".//{{{_DC}}}title")
    return " ".join(el.text.split()) if el is not None and el.text and el.text.strip() else None
