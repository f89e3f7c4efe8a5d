"""Plain-text markup kept as its own text, with its headings: AsciiDoc, Org mode and LaTeX
(MDX goes through the Markdown parser). Offsets and line numbers cite the file exactly."""

from __future__ import annotations

import re
from collections.abc import Callable

from docshelf.parse.decode import encoding_metadata, read_text
from docshelf.parse.text import is_blank, split_lines, trim_span
from docshelf.types import ParsedDocument, Section

__all__ = ["LightMarkupParser", "light_parsers"]

_ADOC = re.compile(r"(={1,6}|#{1,6})[ \t]+(\S.*?)[ \t]*$")
_ORG = re.compile(r"(\*{1,8})[ \t]+(?:(?:TODO|DONE)[ \t]+)?(\S.*?)(?:[ \t]+:[\w:@#%]+:)?[ \t]*$")
_ORG_TITLE = re.compile(r"#\+TITLE:[ \t]*(.+?)[ \t]*$", re.IGNORECASE)
_TEX = re.compile(
    r"[ \t]*\\(part|chapter|section|subsection|subsubsection|paragraph)\*?(?:\[[^\]]*\])?\{(.+)\}"
)
_TEX_TITLE = re.compile(r"[ \t]*\\title\{(.+)\}")
_TEX_LEVELS = {"part": 1, "chapter": 1, "section": 2, "subsection": 3, "subsubsection": 4, "paragraph": 5}
_TEX_MARKUP = re.compile(r"\\[a-zA-Z]+\*?(?:\[[^\]]*\])?\{([^{}]*)\}|[{}]")

Heading = Callable[[str], tuple[int, str] | None]


def _adoc(line: str) -> tuple[int, str] | None:
    m = _ADOC.match(line)
    return (len(m.group(1)), m.group(2)) if m else None


def _org(line: str) -> tuple[int, str] | None:
    m = _ORG.match(line)
    return (len(m.group(1)), m.group(2)) if m else None


def _tex(line: str) -> tuple[int, str] | None:
    m = _TEX.match(line)
    if m is None:
        return None
    title = m.group(2)
    for _ in range(3):  # \section{The \emph{big} one} -> The big one
        title = _TEX_MARKUP.sub(r"\1", title)
    return _TEX_LEVELS[m.group(1)], " ".join(title.split())


def _sections(text: str, heading: Heading) -> tuple[list[Section], str | None]:
    """Headings as their lines, blank-line separated paragraphs between them."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    first: str | None = None
    para: tuple[int, int] | None = None

    def flush() -> None:
        nonlocal para
        if para is not None:
            s, e = trim_span(text, *para)
            if e > s:
                sections.append(Section(s, e, "paragraph", tuple(t for _, t in stack)))
            para = None

    for s, e in split_lines(text):
        line = text[s:e]
        if is_blank(line):
            flush()
            continue
        found = heading(line)
        if found is not None:
            flush()
            level, title = found
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            first = first or title
            ts, te = trim_span(text, s, e)
            sections.append(Section(ts, te, "heading", tuple(t for _, t in stack), level=level))
            continue
        para = (para[0] if para else s, e)
    flush()
    return sections, first


def _title(text: str, pattern: re.Pattern[str]) -> str | None:
    for s, e in split_lines(text)[:200]:
        m = pattern.match(text[s:e])
        if m:
            return " ".join(m.group(1).split())
    return None


class LightMarkupParser:
    """One markup language; ``file_type`` is its name."""

    binary: bool = False

    def __init__(self, name: str, extensions: tuple[str, ...], heading: Heading,
                 title: re.Pattern[str] | None = None) -> None:  # fmt: skip
        self.name = name
        self.extensions = extensions
        self.heading = heading
        self.title = title

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Decode ``data`` and find its headings."""
        text, encoding = read_text(data, path)
        sections, first = _sections(text, self.heading)
        title = (_title(text, self.title) if self.title is not None else None) or first
        return ParsedDocument(
            text=text,
            sections=sections,
            file_type=self.name,
            title=title,
            metadata=encoding_metadata(encoding),
        )


def light_parsers() -> list[LightMarkupParser]:
    """AsciiDoc, Org mode and LaTeX."""
    return [
        LightMarkupParser("asciidoc", (".adoc", ".asciidoc"), _adoc),
        LightMarkupParser("org", (".org",), _org, _ORG_TITLE),
        LightMarkupParser("latex", (".tex", ".ltx"), _tex, _TEX_TITLE),
    ]
