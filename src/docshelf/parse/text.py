"""Plain-text parsing, plus the line and span helpers the other parsers share."""

from __future__ import annotations

import re

from docshelf.parse.decode import encoding_metadata, read_text
from docshelf.types import ParsedDocument, Section

__all__ = ["TextParser", "indent_width", "is_blank", "split_lines", "trim_span"]

# Only \n, \r\n and \r end lines (as in editors and Python's universal newlines);
# str.splitlines() would also split on \f, \x1c, U+2028 and friends.
_LINE = re.compile(r"([^\r\n]*)(?:\r\n|\r|\n)?")
_NON_SPACE = re.compile(r"\S")


def split_lines(text: str, pos: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """(start, end) of each line's content in ``text[pos:end]``, terminators excluded."""
    out: list[tuple[int, int]] = []
    n = len(text) if end is None else end
    match = _LINE.match
    while pos < n:
        m = match(text, pos, n)
        assert m is not None  # the pattern matches at every position
        out.append((pos, m.end(1)))
        pos = m.end()
    return out


def is_blank(line: str) -> bool:
    """True for an empty or whitespace-only line."""
    return not line or line.isspace()


def indent_width(line: str) -> int:
    """Leading indentation in columns, tabs advancing to the next multiple of 4."""
    col = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
    return col


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` to its non-whitespace part; (x, x) when all blank."""
    m = _NON_SPACE.search(text, start, end)
    if m is None:
        return start, start
    s = m.start()
    e = end
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


def paragraph_sections(text: str, pos: int = 0, heading_path: tuple[str, ...] = ()) -> list[Section]:
    """Blank-line separated paragraphs of ``text[pos:]`` as trimmed sections."""
    sections: list[Section] = []
    para_start: int | None = None
    para_end = pos
    for s, e in split_lines(text, pos):
        if is_blank(text[s:e]):
            if para_start is not None:
                sections.append(Section(para_start, para_end, "paragraph", heading_path))
                para_start = None
            continue
        ts, te = trim_span(text, s, e)
        if para_start is None:
            para_start = ts
        para_end = te
    if para_start is not None:
        sections.append(Section(para_start, para_end, "paragraph", heading_path))
    return sections


class TextParser:
    """Plain text: paragraphs separated by blank lines, no title."""

    name: str = "text"
    # Texinfo and Perl's POD are prose with markup: read as plain text. Not logs (.log): a test
    # suite's 92,000-line log outranked the documents on common words (sources.extensions maps it)
    extensions: tuple[str, ...] = (".txt", ".text", ".texi", ".texinfo", ".pod")

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Decode ``data`` and split it into paragraphs."""
        text, encoding = read_text(data, path)
        return ParsedDocument(
            text=text,
            sections=paragraph_sections(text),
            file_type=self.name,
            metadata=encoding_metadata(encoding),
        )
