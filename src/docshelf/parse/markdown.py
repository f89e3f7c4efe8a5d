"""Markdown: frontmatter plus a CommonMark-like block scan (no inline parsing)."""

from __future__ import annotations

import re

from docshelf.parse.decode import encoding_metadata, read_text
from docshelf.parse.frontmatter import split_frontmatter
from docshelf.parse.text import indent_width, is_blank, split_lines, trim_span
from docshelf.types import ParsedDocument, Section

__all__ = ["MarkdownParser", "markdown_sections"]

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_THEMATIC = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_BULLET = re.compile(r" {0,3}[-+*](?:[ \t]|$)")
_ORDERED = re.compile(r" {0,3}(\d{1,9})[.)](?:[ \t]|$)")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"\*\*|__|`")
# attribute lists (MkDocs/Python-Markdown attr_list, kramdown): "## Deploy { #deploy .wide }"
_ATTR_LIST = re.compile(
    r"[ \t]*\{:?[ \t]*(?:[#.][\w:-]+|[\w-]+=\S+)(?:[ \t]+(?:[#.][\w:-]+|[\w-]+=\S+))*[ \t]*\}[ \t]*$"
)
_TABLE_DELIM = re.compile(r" {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")


def _clean_title(raw: str) -> str:
    """Heading text without link targets, bold markers and backticks, for display."""
    raw = _ATTR_LIST.sub("", raw)
    return " ".join(_EMPHASIS.sub("", _LINK.sub(r"\1", raw)).split())


def _fence_open(line: str) -> tuple[str, int] | None:
    """(fence char, fence length) when ``line`` opens a fenced code block."""
    m = _FENCE.match(line)
    if m is None:
        return None
    fence = m.group(2)
    # A backtick fence's info string may not contain backticks (CommonMark).
    if fence[0] == "`" and "`" in m.group(3):
        return None
    return fence[0], len(fence)


def _fence_closes(line: str, fence: tuple[str, int]) -> bool:
    stripped = line.strip(" \t")
    return indent_width(line) <= 3 and len(stripped) >= fence[1] and stripped == fence[0] * len(stripped)


def _is_list_item(line: str) -> bool:
    return bool(_BULLET.match(line) or _ORDERED.match(line))


def _interrupts_paragraph(line: str) -> bool:
    """Block starts that end a paragraph without a blank line (CommonMark rules)."""
    if _ATX.match(line) or _fence_open(line) or _THEMATIC.match(line):
        return True
    if line.lstrip(" ").startswith(">"):
        return True
    m = _ORDERED.match(line)
    # Only bullets and lists numbered 1 may interrupt, so "in 1990. The" wraps safely.
    return bool(_BULLET.match(line)) or (m is not None and m.group(1) == "1")


class _Scanner:
    """Walks the body line by line and emits sections with heading paths."""

    def __init__(self, text: str, body_start: int) -> None:
        self.text = text
        self.lines = split_lines(text, body_start)
        self.sections: list[Section] = []
        self.stack: list[tuple[int, str]] = []  # (level, title) of enclosing headings
        self.first_h1: str | None = None

    def line(self, i: int) -> str:
        s, e = self.lines[i]
        return self.text[s:e]

    def emit(self, first: int, last: int, kind: str) -> None:
        start, end = trim_span(self.text, self.lines[first][0], self.lines[last][1])
        if end > start:
            path = tuple(title for _, title in self.stack)
            self.sections.append(Section(start, end, kind, path))

    def heading(self, first: int, last: int, level: int, title: str) -> None:
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        title = _clean_title(title)
        self.stack.append((level, title))
        if level == 1 and self.first_h1 is None and title:
            self.first_h1 = title
        start, end = trim_span(self.text, self.lines[first][0], self.lines[last][1])
        path = tuple(t for _, t in self.stack)
        self.sections.append(Section(start, end, "heading", path, level=level))

    def run(self) -> None:
        i, n = 0, len(self.lines)
        while i < n:
            line = self.line(i)
            if is_blank(line):
                i += 1
                continue
            atx = _ATX.match(line)
            if atx:
                title = _ATX_CLOSE.sub("", atx.group(2) or "").strip()
                self.heading(i, i, len(atx.group(1)), title)
                i += 1
            elif (fence := _fence_open(line)) is not None:
                j = i + 1
                while j < n and not _fence_closes(self.line(j), fence):
                    j += 1
                # An unclosed fence runs to the end of the document, as in CommonMark.
                last = min(j, n - 1)
                self.emit(i, last, "code")
                i = last + 1
            elif _THEMATIC.match(line):
                self.emit(i, i, "text")
                i += 1
            elif _is_list_item(line):
                i = self.list_block(i)
            elif indent_width(line) >= 4:
                i = self.indented_code(i)
            elif self.table_starts(i):
                i = self.table(i)
            else:
                i = self.paragraph(i)

    def list_block(self, i: int) -> int:
        n = len(self.lines)
        last = i
        j = i + 1
        fence: tuple[str, int] | None = None
        fence_indent = 0
        while j < n:
            line = self.line(j)
            if fence is not None:
                if not is_blank(line) and indent_width(line) < fence_indent:
                    fence = None  # the item holding the fence ended; look at it again
                    continue
                if _fence_closes(line.lstrip(" \t"), fence):
                    fence = None
                last = j
                j += 1
                continue
            if is_blank(line):
                k = j + 1
                while k < n and is_blank(self.line(k)):
                    k += 1
                # After a blank line only indented content or another item continues.
                if k < n and (indent_width(self.line(k)) >= 2 or _is_list_item(self.line(k))):
                    j = k
                    continue
                break
            width = indent_width(line)
            if width < 2 and (_ATX.match(line) or _fence_open(line) or _THEMATIC.match(line)):
                break
            opened = _fence_open(line.lstrip(" \t"))
            if opened is not None:
                fence, fence_indent = opened, width
            last = j
            j += 1
        self.emit(i, last, "list")
        return last + 1

    def indented_code(self, i: int) -> int:
        n = len(self.lines)
        last = i
        j = i + 1
        while j < n:
            line = self.line(j)
            if is_blank(line):
                j += 1
            elif indent_width(line) >= 4:
                last = j
                j += 1
            else:
                break
        self.emit(i, last, "code")
        return last + 1

    def table_starts(self, i: int) -> bool:
        if i + 1 >= len(self.lines) or "|" not in self.line(i):
            return False
        delim = self.line(i + 1)
        return "|" in delim and _TABLE_DELIM.match(delim) is not None

    def table(self, i: int) -> int:
        n = len(self.lines)
        j = i + 2
        while j < n:
            line = self.line(j)
            if is_blank(line) or _ATX.match(line) or _fence_open(line):
                break
            j += 1
        self.emit(i, j - 1, "table")
        return j

    def paragraph(self, i: int) -> int:
        n = len(self.lines)
        # "> quote" followed by "---" is a quote and a rule, not a setext heading.
        quoted = self.line(i).lstrip(" ").startswith(">")
        j = i + 1
        while j < n:
            line = self.line(j)
            if is_blank(line):
                break
            if not quoted and _SETEXT.match(line):
                s, e = self.lines[i][0], self.lines[j - 1][1]
                title = " ".join(part.strip() for part in self.text[s:e].splitlines())
                self.heading(i, j, 1 if line.strip()[0] == "=" else 2, title.strip())
                return j + 1
            if _interrupts_paragraph(line):
                break
            j += 1
        self.emit(i, j - 1, "paragraph")
        return j


def markdown_sections(text: str, body_start: int = 0) -> tuple[list[Section], str | None]:
    """Sections of ``text[body_start:]`` and the first level-1 heading's title."""
    scanner = _Scanner(text, body_start)
    scanner.run()
    return scanner.sections, scanner.first_h1


class MarkdownParser:
    """Markdown with optional YAML frontmatter (kept as metadata, never as body)."""

    name: str = "markdown"
    extensions: tuple[str, ...] = (".md", ".markdown", ".mdown", ".mkd", ".mdx")

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Decode, split off frontmatter, and find the block structure."""
        text, encoding = read_text(data, path)
        metadata, body_start = split_frontmatter(text, path)
        metadata = {**encoding_metadata(encoding), **metadata}
        sections, first_h1 = markdown_sections(text, body_start)
        title = metadata.get("title")
        if isinstance(title, (int, float)) and not isinstance(title, bool):
            title = str(title)
        if not isinstance(title, str) or not title.strip():
            title = first_h1
        return ParsedDocument(
            text=text,
            sections=sections,
            file_type=self.name,
            title=title.strip() if title else None,
            metadata=metadata,
            body_start=body_start,
        )
