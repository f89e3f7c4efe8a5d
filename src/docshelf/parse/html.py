"""HTML pages (stdlib html.parser): headings, paragraphs, lists, tables and preformatted
text; scripts, styles, navigation and footers are dropped."""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser as _StdlibHTMLParser

from docshelf.parse.assemble import TextBuilder
from docshelf.parse.decode import encoding_metadata, read_text
from docshelf.parse.limits import ParseLimits
from docshelf.types import ParsedDocument

__all__ = ["HtmlParser"]

# Content of these elements is never text a reader sees as the page's content.
_DROP = frozenset({"script", "style", "nav", "footer", "noscript", "template", "svg", "head", "iframe"})
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_BLOCKS = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "aside", "blockquote", "figure",
        "figcaption", "ul", "ol", "dl", "dt", "dd", "li", "table", "tr", "pre", "address",
        "details", "summary", "form", "fieldset", "hr", "body", "html", "caption",
    }
)  # fmt: skip
_FEED_CHARS = 1 << 18
_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)|<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""",
    re.IGNORECASE,
)
_CHARSET_BYTES = 1 << 18  # a declaration may come late, after long styles or comments
# WHATWG: browsers read these labels as windows-1252, and so do the pages written for them
_AS_CP1252 = frozenset({"latin_1", "iso8859_1", "ascii", "cp1252"})


class _Extractor(_StdlibHTMLParser):
    def __init__(self, keep_nav: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self._drops = _DROP - {"nav"} if keep_nav else _DROP
        self.builder = TextBuilder()
        self.title: str | None = None
        self.first_h1: str | None = None
        self._drop: list[str] = []  # open dropped elements
        self._in_title = False
        self._title_parts: list[str] = []
        self._buf: list[str] = []
        self._kind = "paragraph"
        self._heading = 0
        self._pre = 0
        self._row: list[str] | None = None  # cells of the open table row
        self._rows: list[str] = []  # rows of the open table

    # -- text blocks -----------------------------------------------------------

    def _flush(self) -> None:
        raw = "".join(self._buf)
        self._buf = []
        if self._heading:
            text = " ".join(raw.split())
            if text and self._heading == 1 and self.first_h1 is None:
                self.first_h1 = text
            self.builder.heading(text, self._heading)
            return
        if self._kind == "code":
            self.builder.add(raw.strip("\n").rstrip(), "code")
        else:
            lines = [" ".join(line.split()) for line in raw.split("\n")]
            text = "\n".join(line for line in lines if line)
            if self._kind == "list" and text:
                text = "- " + text
            self.builder.add(text, self._kind)
        self._kind = "paragraph"

    def _cell_flush(self) -> None:
        if self._row is not None:
            self._row.append(" ".join("".join(self._buf).split()))
            self._buf = []

    def _end_table(self) -> None:
        self._end_row()
        if self._rows:
            self.builder.add("\n".join(self._rows), "table")
        self._rows = []

    def _end_row(self) -> None:
        if self._row is not None:
            self._cell_flush()
            cells = [c for c in self._row if c]
            if cells:
                self._rows.append(" | ".join(cells))
        self._row = None

    # -- parser callbacks ------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":  # read even inside the (dropped) <head>
            self._in_title = True
            return
        if self._drop:
            if tag == self._drop[-1] or tag in self._drops:
                self._drop.append(tag)
            return
        # a navigation list kept (an e-book's contents) unless hidden: no reader shows those
        # (EPUB's page-list and landmarks)
        if tag in self._drops or (tag == "nav" and any(name == "hidden" for name, _ in attrs)):
            self._drop.append(tag)
            return
        if tag == "br":
            self._buf.append("\n")
        elif tag in ("td", "th"):
            if self._row is None:
                self._row = []
            else:
                self._cell_flush()
        elif tag == "tr":
            self._end_row()
            self._row = []
        elif tag == "table":
            self._flush()
        elif tag in _HEADINGS:
            self._flush()
            self._heading = _HEADINGS[tag]
        elif tag in _BLOCKS and self._row is None:
            self._flush()
            if tag == "pre":
                self._pre += 1
                self._kind = "code"
            elif tag in ("li", "dt", "dd"):
                self._kind = "list"

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
            return
        if self._drop:
            if tag in self._drop:  # elements left unclosed inside are closed with it
                del self._drop[len(self._drop) - 1 - self._drop[::-1].index(tag) :]
            return
        if tag in ("td", "th"):
            self._cell_flush()
        elif tag == "tr":
            self._end_row()
        elif tag == "table":
            self._end_table()
        elif tag in _HEADINGS and self._heading:
            self._flush()
            self._heading = 0
        elif tag in _BLOCKS and self._row is None:
            self._flush()
            if tag == "pre" and self._pre:
                self._pre -= 1

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title_parts.append(data)
            return
        if self._drop:
            return
        if not self._pre and self._row is None:
            data = re.sub(r"\s+", " ", data)
        self._buf.append(data)

    def finish(self) -> None:
        self.close()
        self._end_table()
        self._flush()
        title = " ".join("".join(self._title_parts).split())
        self.title = title or self.first_h1


def _declared(data: bytes) -> str | None:
    m = _CHARSET.search(data[:_CHARSET_BYTES])
    if m is None:
        return None
    label = (m.group(1) or m.group(2)).decode("ascii", "replace")
    try:
        codec = codecs.lookup(label).name
    except LookupError:
        return None
    return "cp1252" if codec.replace("-", "_") in _AS_CP1252 else codec


class HtmlParser:
    """HTML: the page's visible text, with h1-h6 as headings; title from <title>."""

    name: str = "html"
    extensions: tuple[str, ...] = (".html", ".htm", ".xhtml")

    def __init__(self, limits: ParseLimits | None = None, keep_nav: bool = False) -> None:
        self.limits = limits or ParseLimits()
        self.keep_nav = keep_nav  # <nav> is a site's menu on the web, an e-book's contents

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Decode ``data`` and extract its text blocks."""
        deadline = self.limits.deadline(path)
        extractor = _Extractor(self.keep_nav)
        text, encoding = read_text(data, path, _declared(data))
        for start in range(0, len(text), _FEED_CHARS):  # pieces, so the time limit is checked
            deadline.check()
            extractor.feed(text[start : start + _FEED_CHARS])
        extractor.finish()
        builder = extractor.builder
        return ParsedDocument(
            text=builder.text,
            sections=builder.sections,
            file_type=self.name,
            title=extractor.title,
            metadata=encoding_metadata(encoding),
        )
