"""Rich Text Format (.rtf): text through striprtf, 8-bit escapes read in the file's code page."""

from __future__ import annotations

import codecs
import re

from docshelf.errors import ParseError
from docshelf.parse.assemble import TextBuilder, missing_library
from docshelf.types import ParsedDocument

__all__ = ["RtfParser"]

_CODEPAGE = re.compile(rb"\\ansicpg(\d+)")
_BLANK_LINES = re.compile(r"\n[ \t]*\n\s*")


def _codepage(data: bytes) -> str:
    """The code page of ``\\ansicpg`` (windows-1252 when absent or unknown)."""
    m = _CODEPAGE.search(data[:4096])
    if m is not None:
        name = "mac_roman" if m.group(1) == b"10000" else "cp" + m.group(1).decode("ascii")
        try:
            return codecs.lookup(name).name
        except LookupError:
            pass
    return "cp1252"


class RtfParser:
    """RTF documents: paragraphs in order (no headings: RTF marks them by style only)."""

    name: str = "rtf"
    extensions: tuple[str, ...] = (".rtf",)
    binary: bool = True  # 7-bit text, but embedded pictures can hold any byte

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Strip the RTF control words and keep the text."""
        try:
            from striprtf.striprtf import rtf_to_text
        except ImportError:
            raise missing_library(path, "RTF files", "striprtf") from None
        if not data.lstrip().startswith(b"{\\rtf"):
            raise ParseError(f"{path}: is not an RTF file (no {{\\rtf header); exclude it or rename it")
        encoding = _codepage(data)
        try:
            raw = data.decode("latin-1")
            text: str = rtf_to_text(raw, encoding=encoding, errors="replace")  # type: ignore[no-untyped-call]
        except Exception as exc:  # a regex-based reader: malformed groups raise odd errors
            raise ParseError(f"{path}: damaged RTF ({type(exc).__name__}: {exc}); exclude it") from None
        # characters beyond the BMP come as \uN surrogate pairs: join them into one code point
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        builder = TextBuilder()
        for paragraph in _BLANK_LINES.split(text.replace("\r\n", "\n")):
            builder.add(paragraph)
        return ParsedDocument(
            text=builder.text, sections=builder.sections, file_type=self.name, metadata={"encoding": encoding}
        )
