"""Which parser handles which file extension."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from docshelf.config import Settings
from docshelf.errors import ParseError
from docshelf.parse.clean import clean_document
from docshelf.parse.code import code_parsers
from docshelf.parse.epub import EpubParser
from docshelf.parse.html import HtmlParser
from docshelf.parse.image import ImageParser
from docshelf.parse.light import light_parsers
from docshelf.parse.limits import ParseLimits
from docshelf.parse.mail import EmlParser, MboxParser, MsgParser
from docshelf.parse.markdown import MarkdownParser
from docshelf.parse.notebook import NotebookParser
from docshelf.parse.odf import OdfParser
from docshelf.parse.office import DocxParser, LegacyOfficeParser, PptxParser
from docshelf.parse.pdf import PdfParser
from docshelf.parse.quiet import warnings_to_log
from docshelf.parse.rst import RstParser
from docshelf.parse.rtf import RtfParser
from docshelf.parse.sheets import CsvParser
from docshelf.parse.text import TextParser
from docshelf.parse.xlsb import XlsbParser
from docshelf.parse.xlsx import XlsxParser
from docshelf.types import ParsedDocument

if TYPE_CHECKING:
    from docshelf.config import ParseSettings

__all__ = ["Parser", "ParserRegistry", "default_registry"]


@runtime_checkable
class Parser(Protocol):
    """Turns one file's bytes into a ParsedDocument.

    ``extensions`` are lower-case with a leading dot. Parsers of binary formats
    (PDF, DOCX) also set a class attribute ``binary = True`` and, when paged,
    ``Section.page``. Every parser raises ParseError with an actionable message
    for files it cannot read.
    """

    # Read-only properties, so a plain class attribute such as
    # ``extensions = (".pdf",)`` (inferred as ``tuple[str]``) satisfies the protocol.
    @property
    def name(self) -> str:
        """Short name, stored as the document's ``file_type``."""
        ...

    @property
    def extensions(self) -> tuple[str, ...]:
        """File extensions handled, with a leading dot."""
        ...

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Parse ``data``, the content of the file at ``path`` (used in messages)."""
        ...


def _normalise(extension: str) -> str:
    ext = extension.strip().lower()
    if not ext.startswith("."):
        ext = "." + ext
    if ext == ".":
        raise ValueError("a parser extension must not be empty")
    return ext


def _extension_of(path: str | os.PathLike[str]) -> str:
    name = os.path.basename(os.fspath(path))
    # splitext keeps dotfiles such as ".md" extensionless, as a file manager would.
    return os.path.splitext(name)[1].lower()


class ParserRegistry:
    """Maps file extensions (case-insensitively) to parsers."""

    def __init__(self) -> None:
        self._by_ext: dict[str, Parser] = {}

    def register(self, parser: Parser, *, replace: bool = False) -> None:
        """Add ``parser`` for its extensions; ValueError if one is taken and not ``replace``."""
        exts = [_normalise(e) for e in parser.extensions]
        if not replace:
            for ext in exts:
                other = self._by_ext.get(ext)
                if other is not None and other is not parser:
                    raise ValueError(
                        f"extension {ext} is already handled by parser {other.name!r}; "
                        f"pass replace=True to override it with {parser.name!r}"
                    )
        for ext in exts:
            self._by_ext[ext] = parser

    def for_path(self, path: str | os.PathLike[str]) -> Parser | None:
        """The parser for ``path``'s extension, or None when it is not supported."""
        return self._by_ext.get(_extension_of(path))

    def map_extensions(self, mapping: Mapping[str, str]) -> None:
        """Handle each extension (key) with the parser named by the value: a parser name
        ("markdown") or an extension it already handles (".md"). ValueError for unknown ones."""
        by_name = {p.name: p for p in self._by_ext.values()}
        for ext, target in mapping.items():
            parser = by_name.get(target) or self._by_ext.get(_normalise(target) if target else "")
            if parser is None:
                raise ValueError(
                    f"sources.extensions: {target!r} (for {ext}) is no parser name or handled extension; "
                    f"parsers: {', '.join(sorted(by_name))}"
                )
            self._by_ext[_normalise(ext)] = parser

    @property
    def supported_extensions(self) -> tuple[str, ...]:
        """Registered extensions, sorted."""
        return tuple(sorted(self._by_ext))

    @property
    def binary_extensions(self) -> tuple[str, ...]:
        """Extensions of binary formats (parsers with ``binary = True``, e.g. PDF), which
        the source walker must not skip as binary files."""
        return tuple(sorted(e for e, p in self._by_ext.items() if getattr(p, "binary", False)))

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Parse with the parser for ``path``; ParseError when none handles it.

        The text is cleaned of code points no store can encode (lone surrogates), and
        libraries' warnings go to the log rather than the terminal.
        """
        parser = self.for_path(path)
        if parser is None:
            raise ParseError(
                f"{path}: no parser for files like this (supported: "
                f"{', '.join(self.supported_extensions)}); exclude it or rename it"
            )
        with warnings_to_log(path):
            return clean_document(parser.parse(data, path))


def default_registry(settings: ParseSettings | Settings | None = None) -> ParserRegistry:
    """A new registry with every built-in parser: Markdown, plain text, reST, PDF, Word,
    PowerPoint, Excel, CSV, HTML, EPUB, images (OCR), source code and data files, and the
    legacy Office formats (which report themselves as unsupported). ``settings`` sets the
    parse limits and OCR options (None: the defaults); given whole settings, their
    ``sources.extensions`` map more extensions to these parsers."""
    parse = settings.parse if isinstance(settings, Settings) else settings
    limits = ParseLimits.from_settings(parse)
    registry = ParserRegistry()
    parsers: list[Parser] = [
        MarkdownParser(),
        TextParser(),
        RstParser(),
        PdfParser(limits),
        DocxParser(limits),
        PptxParser(limits),
        XlsxParser(limits),
        XlsbParser(limits),
        CsvParser(),
        HtmlParser(limits),
        EpubParser(limits),
        ImageParser(limits),
        OdfParser(limits),
        RtfParser(),
        EmlParser(),
        MboxParser(),
        MsgParser(),
        NotebookParser(),
        *light_parsers(),
        LegacyOfficeParser(),
        *code_parsers(),
    ]
    for parser in parsers:
        registry.register(parser)
    if isinstance(settings, Settings):
        registry.map_extensions(settings.sources.extensions)
    return registry
