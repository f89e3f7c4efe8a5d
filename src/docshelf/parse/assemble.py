"""Shared helpers for parsers of binary formats, whose text docshelf builds itself."""

from __future__ import annotations

import io
import zipfile

from docshelf.errors import ParseError
from docshelf.types import Section

__all__ = ["MAX_UNZIPPED_BYTES", "TextBuilder", "check_zip", "missing_library"]

MAX_UNZIPPED_BYTES = 512 * 1024 * 1024
"""Office files are zip archives; more than this uncompressed is refused as a likely zip bomb."""


def missing_library(path: str, what: str, package: str) -> ParseError:
    """The error for a parser whose optional library is not installed."""
    return ParseError(f"{path}: reading {what} needs the '{package}' package; `pip install {package}`")


def check_zip(
    data: bytes, path: str, what: str, cap: int = MAX_UNZIPPED_BYTES, xml_part_cap: int | None = None
) -> None:
    """Refuse a file that is not a zip archive, that unpacks to more than ``cap`` bytes, or (for
    formats whose XML parts are parsed whole) whose largest XML part exceeds ``xml_part_cap``."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            total = sum(info.file_size for info in infos)
            biggest = max((i.file_size for i in infos if i.filename.endswith(".xml")), default=0)
    except (zipfile.BadZipFile, OSError, ValueError):
        raise ParseError(
            f"{path}: is not a valid {what} file (not a zip archive: damaged, or another format "
            "with this extension); open and save it again, or exclude it"
        ) from None
    if total > cap:
        raise ParseError(
            f"{path}: unpacks to {total / 1_048_576:.0f} MB (over the {cap / 1_048_576:g} MB cap, "
            "parse.max_unzipped_mb), so it is refused as a possible zip bomb"
        )
    if xml_part_cap is not None and biggest > xml_part_cap:
        # python-docx/-pptx hold a part's whole XML tree: memory grows ~20x its size
        raise ParseError(
            f"{path}: has an XML part of {biggest / 1_048_576:.0f} MB (over the "
            f"{xml_part_cap / 1_048_576:g} MB cap, parse.max_xml_part_mb); it would need ~20x that in "
            "memory, so it is refused"
        )


class TextBuilder:
    """Builds ``ParsedDocument.text`` from blocks joined by blank lines, recording one
    Section per block so offsets are exact, and tracking the enclosing headings."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._size = 0
        self.sections: list[Section] = []
        self.stack: list[tuple[int, str]] = []  # (level, title) of enclosing headings

    @property
    def heading_path(self) -> tuple[str, ...]:
        return tuple(title for _, title in self.stack)

    def add(self, block: str, kind: str = "paragraph", page: int | None = None) -> None:
        """Append a block (whitespace at its ends dropped; empty blocks ignored)."""
        self._append(block, kind, self.heading_path, page, 0)

    def heading(self, title: str, level: int, page: int | None = None) -> None:
        """Append a heading and make it the innermost one of the heading path."""
        title = " ".join(title.split())
        if not title:
            return
        level = max(1, level)
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, title))
        self._append(title, "heading", self.heading_path, page, level)

    def _append(self, block: str, kind: str, path: tuple[str, ...], page: int | None, level: int) -> None:
        block = block.strip()
        if not block:
            return
        if self._parts:
            self._parts.append("\n\n")
            self._size += 2
        start = self._size
        self._parts.append(block)
        self._size += len(block)
        self.sections.append(Section(start, self._size, kind, path, page, level))

    @property
    def text(self) -> str:
        return "".join(self._parts)
