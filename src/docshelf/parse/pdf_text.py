"""PDF page text made fit to index: hyphenation joined, running headers dropped, outline headings."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from docshelf.parse.assemble import TextBuilder

__all__ = ["PdfContent", "add_pages", "drop_running_lines", "normalise_page_text", "wide"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")
# PDFium marks a hyphen it found at a line end with U+0002 and drops the line break
_PDFIUM_HYPHEN = re.compile(r"\x02[ \t]*")
# "Karten-\nwechsel": a word broken at a line end; the next line goes on in lower case
_LINE_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\u00ad\u2010][ \t]*\n[ \t]*(?=[^\W\d_])")
_BLANK_LINES = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_DIGITS = re.compile(r"\d+")
_EDGE_LINES = 3  # lines at the top and bottom of a page where running headers and footers sit
_MAX_RUNNING_CHARS = 120
_VERTICAL_RUN = 3  # lines of one full-width character in a row that are a column


@dataclass
class PdfContent:
    """What a PDF library read: page texts and the document's outline, labels and title."""

    library: str
    pages: list[str] = field(default_factory=list)
    outline: list[tuple[int, str, int]] = field(default_factory=list)  # (level, title, page index)
    labels: list[str] | None = None
    title: str | None = None
    failed_pages: list[int] = field(default_factory=list)  # 0-based pages the library could not read
    garbled_pages: list[int] = field(default_factory=list)  # 0-based pages whose text was mojibake


def _join_pdfium_hyphen(m: re.Match[str]) -> str:
    after = m.string[m.end() : m.end() + 1]
    return "" if after.islower() else "-"


def _join_line_hyphen(m: re.Match[str]) -> str:
    return "" if m.string[m.end() : m.end() + 1].islower() else m.group()


def normalise_page_text(text: str) -> str:
    """Unix line ends, words hyphenated at line ends joined, control characters dropped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _PDFIUM_HYPHEN.sub(_join_pdfium_hyphen, text)
    text = _LINE_HYPHEN.sub(_join_line_hyphen, text)
    return _join_vertical(_CONTROL.sub("", text))


def wide(ch: str) -> bool:
    """Whether ``ch`` is a full-width (Chinese, Japanese, Korean) character."""
    return unicodedata.east_asian_width(ch) in "WF"


def _join_vertical(text: str) -> str:
    """Vertical writing that PDFium read as one character a line, joined back into lines: a
    word spread over lines is no word to a search."""
    if "\n" not in text:
        return text
    out: list[str] = []
    run: list[str] = []
    for line in [*text.split("\n"), ""]:
        ch = line.strip()
        if len(ch) == 1 and wide(ch):
            run.append(ch)
            continue
        if len(run) >= _VERTICAL_RUN:
            out.append("".join(run))
        else:
            out.extend(run)
        run = []
        out.append(line)
    return "\n".join(out[:-1])


def _key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.lower().split()))


def _edges(lines: list[str]) -> set[int]:
    """Indices of the first and last few non-blank lines."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    return set(filled[:_EDGE_LINES] + filled[-_EDGE_LINES:])


def drop_running_lines(pages: list[str]) -> list[str]:
    """Pages without their running headers and footers (and page numbers): lines at a page's
    top or bottom that recur, digits aside, on at least half of the pages (and three). The
    first occurrence stays, so a header's words remain findable."""
    texts = [p for p in pages if p.strip()]
    if len(texts) < 3:
        return pages
    split = [p.split("\n") for p in pages]
    counts: Counter[str] = Counter()
    for lines in split:
        counts.update({_key(lines[i]) for i in _edges(lines) if len(lines[i].strip()) <= _MAX_RUNNING_CHARS})
    running = {k for k, n in counts.items() if k and n >= max(3, len(texts) / 2)}
    if not running:
        return pages
    seen: set[str] = set()
    out: list[str] = []
    for lines in split:
        drop = set()
        for i in sorted(_edges(lines)):
            key = _key(lines[i])
            if key in running:
                if key in seen:
                    drop.add(i)
                seen.add(key)
        out.append("\n".join(line for i, line in enumerate(lines) if i not in drop))
    return out


def _title_at(text: str, title: str, start: int) -> re.Match[str] | None:
    words = title.split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    return re.compile(pattern, re.IGNORECASE).search(text, start)


def add_pages(builder: TextBuilder, pages: dict[int, str], outline: list[tuple[int, str, int]]) -> None:
    """Add each page's paragraphs (1-based page numbers) with the heading path the outline
    gives them: an entry's path applies from where its title is printed on its page (from
    the page's top when it is not found); a title printed at a line start is a heading."""
    by_page: dict[int, list[list[tuple[int, str]]]] = {}
    stack: list[tuple[int, str]] = []
    for level, title, index in outline:  # in outline order, so each entry's parents are known
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, " ".join(title.split())))
        by_page.setdefault(index + 1, []).append(list(stack))
    for number in sorted(set(pages) | set(by_page)):
        text = pages.get(number, "")
        pos = 0
        for path in by_page.get(number, []):
            level, title = path[-1]
            m = _title_at(text, title, pos)
            if m is None:
                builder.stack = path
                continue
            _add_text(builder, text[pos : m.start()], number)
            at_line_start = m.start() == 0 or text[m.start() - 1] == "\n"
            builder.stack = path[:-1]
            if at_line_start:
                builder.heading(m.group(), level, page=number)
            builder.stack = path
            pos = m.end() if at_line_start else m.start()
        _add_text(builder, text[pos:], number)


def _add_text(builder: TextBuilder, text: str, page: int) -> None:
    for paragraph in _BLANK_LINES.split(text):
        builder.add(paragraph, "paragraph", page=page)
