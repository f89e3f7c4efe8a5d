"""Word and PowerPoint parsers (docx.py, pptx.py), plus the legacy binary Office formats, which
are reported rather than mis-parsed."""

from __future__ import annotations

from docshelf.errors import ParseError
from docshelf.parse.docx import DocxParser
from docshelf.parse.pptx import PptxParser
from docshelf.types import ParsedDocument

__all__ = ["DocxParser", "LegacyOfficeParser", "PptxParser"]


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
