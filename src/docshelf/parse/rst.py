"""reStructuredText: section titles, paragraphs and literal blocks (no directives run)."""

from __future__ import annotations

import re

from docshelf.parse.decode import encoding_metadata, read_text
from docshelf.parse.text import indent_width, is_blank, split_lines, trim_span
from docshelf.types import ParsedDocument, Section

__all__ = ["RstParser", "rst_sections"]

# Any printable non-alphanumeric ASCII character may adorn a title (docutils).
_ADORNMENT_CHARS = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_CODE_DIRECTIVE = re.compile(r"\s*\.\.\s+(?:code-block|code|sourcecode)::")
_LIST_ITEM = re.compile(r"\s*(?:[-*+\u2022]|\d+[.)]|#\.|\(\d+\))\s")


def _adornment(line: str) -> str | None:
    """The repeated character when ``line`` is an adornment line (at least 2 long)."""
    s = line.rstrip()
    if len(s) >= 2 and s[0] in _ADORNMENT_CHARS and s == s[0] * len(s):
        return s[0]
    return None


def _underlines(title: str, line: str) -> str | None:
    """The adornment char when ``line`` underlines ``title`` (long enough to count)."""
    char = _adornment(line)
    if char is None:
        return None
    # docutils accepts a short underline with a warning; 4+ characters is clearly one.
    size = len(line.rstrip())
    return char if size >= len(title.strip()) or size >= 4 else None


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = split_lines(text)
        self.sections: list[Section] = []
        self.styles: list[tuple[str, bool]] = []  # adornment styles, in order of first use
        self.stack: list[tuple[int, str]] = []
        self.first_title: str | None = None

    def line(self, i: int) -> str:
        s, e = self.lines[i]
        return self.text[s:e]

    def blank(self, i: int) -> bool:
        return i >= len(self.lines) or is_blank(self.line(i))

    def emit(self, first: int, last: int, kind: str, level: int = 0) -> None:
        start, end = trim_span(self.text, self.lines[first][0], self.lines[last][1])
        if end > start:
            path = tuple(title for _, title in self.stack)
            self.sections.append(Section(start, end, kind, path, level=level))

    def title(self, first: int, last: int, title: str, style: tuple[str, bool]) -> None:
        if style not in self.styles:
            self.styles.append(style)
        level = self.styles.index(style) + 1
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, title))
        if level == 1 and self.first_title is None:
            self.first_title = title
        self.emit(first, last, "heading", level)

    def run(self) -> None:
        i, n = 0, len(self.lines)
        literal_indent: int | None = None  # set after a paragraph ending in "::"
        while i < n:
            line = self.line(i)
            if is_blank(line):
                i += 1
                continue
            width = indent_width(line)
            if literal_indent is not None and width > literal_indent:
                i = self.indented(i, literal_indent, "code")
                literal_indent = None
                continue
            literal_indent = None
            over = _adornment(line)
            if (
                over is not None
                and i + 2 < n
                and not self.blank(i + 1)
                and _adornment(self.line(i + 1)) is None
                and _adornment(self.line(i + 2)) == over
            ):
                self.title(i, i + 2, self.line(i + 1).strip(), (over, True))
                i += 3
                continue
            if over is None and width == 0 and i + 1 < n:
                under = _underlines(line, self.line(i + 1))
                if under is not None:
                    self.title(i, i + 1, line.strip(), (under, False))
                    i += 2
                    continue
            if over is not None and len(line.strip()) >= 4 and self.blank(i + 1):
                self.emit(i, i, "text")  # a transition (horizontal rule)
                i += 1
                continue
            if _CODE_DIRECTIVE.match(line):
                i = self.indented(i + 1, width, "code", first=i)
                continue
            j = i + 1
            while j < n and not is_blank(self.line(j)):
                j += 1
            self.emit(i, j - 1, "list" if _LIST_ITEM.match(line) else "paragraph")
            if self.line(j - 1).rstrip().endswith("::"):
                literal_indent = width
            i = j

    def indented(self, i: int, base: int, kind: str, first: int | None = None) -> int:
        """Emit lines more indented than ``base`` (blank lines inside kept) as one block."""
        n = len(self.lines)
        last = i - 1
        j = i
        while j < n:
            line = self.line(j)
            if not is_blank(line):
                if indent_width(line) <= base:
                    break
                last = j
            j += 1
        start = i if first is None else first
        if last >= start:
            self.emit(start, last, kind)
        return last + 1 if last >= i else i


def rst_sections(text: str) -> tuple[list[Section], str | None]:
    """Sections of ``text`` and the first top-level title."""
    scanner = _Scanner(text)
    scanner.run()
    return scanner.sections, scanner.first_title


class RstParser:
    """reStructuredText; title levels follow the order adornment styles first appear."""

    name: str = "rst"
    extensions: tuple[str, ...] = (".rst", ".rest")

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Decode ``data`` and find titles, paragraphs and literal blocks."""
        text, encoding = read_text(data, path)
        sections, title = rst_sections(text)
        return ParsedDocument(
            text=text,
            sections=sections,
            file_type=self.name,
            title=title,
            metadata=encoding_metadata(encoding),
        )
