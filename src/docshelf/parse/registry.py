"""Which parser handles which file: by extension, else by name (README, Makefile, no extension, .gz)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from docshelf.config import Settings
from docshelf.errors import ParseError
from docshelf.parse.clean import clean_document
from docshelf.parse.code import NAMES as CODE_NAMES
from docshelf.parse.code import code_parsers
from docshelf.parse.decode import looks_like_text
from docshelf.parse.epub import EpubParser
from docshelf.parse.gunzip import GunzipParser, gunzipped_head_is_text
from docshelf.parse.html import HtmlParser
from docshelf.parse.image import ImageParser
from docshelf.parse.light import light_parsers
from docshelf.parse.limits import ParseLimits
from docshelf.parse.mail import EmlParser, MboxParser, MsgParser
from docshelf.parse.markdown import MarkdownParser
from docshelf.parse.notebook import NotebookParser
from docshelf.parse.odf import OdfParser
from docshelf.parse.office import DocxParser, LegacyOfficeParser, PptxParser
from docshelf.parse.parser import Parser
from docshelf.parse.pdf import PdfParser
from docshelf.parse.quiet import warnings_to_log
from docshelf.parse.rst import RstParser
from docshelf.parse.rtf import RtfParser
from docshelf.parse.sheets import CsvParser
from docshelf.parse.text import TextParser
from docshelf.parse.xlsb import XlsbParser
from docshelf.parse.xlsx import XlsxParser
from docshelf.parse.xmldoc import XmlParser
from docshelf.types import ParsedDocument

if TYPE_CHECKING:
    from docshelf.config import ParseSettings

__all__ = ["NO_EXTENSION", "Parser", "ParserRegistry", "default_registry"]


def _normalise(extension: str) -> str:
    ext = extension.strip().lower()
    if not ext.startswith("."):
        ext = "." + ext
    if ext == ".":
        raise ValueError("a parser extension must not be empty")
    return ext


# a copy that stands for the file named inside (pkcs11.conf.example, config.h.in): read as that one
_STANDS_FOR = (".example", ".sample", ".dist", ".template", ".tmpl", ".in", ".default")
_FORMAT_SUFFIX = re.compile(r"\.[a-z0-9]*[a-z][a-z0-9]*")


def _names_no_format(suffix: str) -> bool:
    """Whether the suffix after a name's last dot (no parser takes it) is part of the name rather
    than a format's extension: a number (changelog.1, History.600: rotations, versions, man
    sections), other characters than letters and digits (v2.30-ReleaseNotes has
    ".30-ReleaseNotes") or capitals only (groff's MORE.STUFF, README.FIRST). Such a file is read like
    one without an extension, when its content is text; an editor's backup (notes.md~) is not."""
    if suffix.endswith("~"):
        return False
    return suffix[1:].isupper() or _FORMAT_SUFFIX.fullmatch(suffix.lower()) is None


# Files known by name, read as text when their content is text (README.Debian, changelog.gz too).
_TEXT_NAMES = (
    "readme", "license", "licence", "copying", "copyright", "notice", "authors", "contributors",
    "changelog", "changes", "news", "todo", "thanks", "credits",
)  # fmt: skip
NO_EXTENSION = ("", "(none)")
"""The ``sources.extensions`` keys that stand for files without an extension."""


class ParserRegistry:
    """Maps file extensions (case-insensitively) to parsers, and file names: well-known ones
    (``README``, ``Makefile``, also with a suffix no parser takes: ``README.Debian``), files without
    an extension, and ``NAME.gz`` of a text format (read through). Files chosen by name are indexed
    only when their first bytes read as text (``sniffer``)."""

    def __init__(
        self, gzip_limit: int = 512 * 1_048_576, gzip_setting: str = "parse.max_unzipped_mb"
    ) -> None:
        self._by_ext: dict[str, Parser] = {}
        self._refused: set[str] = set()  # extensions mapped to "" in sources.extensions
        self._by_name: dict[str, Parser | None] = {}  # lower-case names; None: not indexed
        self._no_ext: Parser | None = None
        self._gzip = (gzip_limit, gzip_setting)

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
            self._refused.discard(ext)

    def register_name(self, name: str, parser: Parser | None) -> None:
        """Read files called ``name`` (case-insensitively, also ``name.suffix`` when no parser
        takes the suffix) with ``parser``, once their content sniffs as text; None: leave them out."""
        self._by_name[name.strip().lower()] = parser

    def register_no_extension(self, parser: Parser | None) -> None:
        """Read files without an extension with ``parser`` once they sniff as text (None: never)."""
        self._no_ext = parser

    def _choose(self, name: str) -> tuple[Parser, bool] | None:
        """(parser, chosen by name rather than extension) for the file name ``name``."""
        low = name.lower()
        if low in self._by_name:
            named = self._by_name[low]
            return None if named is None else (named, True)
        ext = os.path.splitext(low)[1]
        if ext in self._refused:
            return None
        if ext in self._by_ext:
            return self._by_ext[ext], False
        if ext == ".gz" and not low.endswith(".gz.gz"):
            inner = self._text_inside(name[:-3])  # foo.tar.gz, report.pdf.gz: none
            return None if inner is None else (GunzipParser(inner[0], *self._gzip), inner[1])
        if ext in _STANDS_FOR:
            return self._text_inside(name[: -len(ext)])  # logo.png.example: none
        stem = low.split(".", 1)[0]
        by_stem = self._by_name.get(stem) if ext and stem else None
        # or the name as a suffix no parser takes: INSTALL.README, foo.LICENSE
        by_name = by_stem or (self._by_name.get(ext[1:]) if ext and stem else None)
        if by_name is not None:
            return by_name, True
        if not ext:
            return None if self._no_ext is None else (self._no_ext, True)
        suffix = os.path.splitext(name)[1]
        if _names_no_format(suffix):
            # the rest of the name decides: History.600 and v2.30-ReleaseNotes are read for their
            # content, notes.md.1 (a rotation, wget's second copy) as Markdown, app.log.1 as a log
            return self._text_inside(name[: -len(suffix)])
        return None

    def _text_inside(self, inner: str) -> tuple[Parser, bool] | None:
        """The choice for ``inner``, the name inside a longer one (``x.md`` of ``x.md.gz``,
        ``x.md.example`` or ``x.md.1``); None also for a binary format, whose parser wants the file
        itself, not a copy under another name or packed."""
        chosen = self._choose(inner)
        return None if chosen is None or getattr(chosen[0], "binary", False) else chosen

    def for_path(self, path: str | os.PathLike[str]) -> Parser | None:
        """The parser for ``path`` (by extension, else by name), or None when it is not supported."""
        chosen = self._choose(os.path.basename(os.fspath(path)))
        return None if chosen is None else chosen[0]

    def sniffer(self, path: str | os.PathLike[str]) -> Callable[[bytes], bool] | None:
        """For a file chosen by its name (``README``, ``copyright.gz``): whether its first bytes
        make it a text file, to index it; None for a file chosen by extension (or none)."""
        chosen = self._choose(os.path.basename(os.fspath(path)))
        if chosen is None or not chosen[1]:
            return None
        return gunzipped_head_is_text if isinstance(chosen[0], GunzipParser) else looks_like_text

    def map_extensions(self, mapping: Mapping[str, str]) -> None:
        """Handle each key with the parser named by its value: a parser name ("markdown") or an
        extension it already handles (".md"); "" leaves those files out. A key is an extension
        (".log"), ``""``/``"(none)"`` (files without an extension) or a file name ("Jenkinsfile",
        also before a suffix no parser takes; a name without a dot also stands for that
        extension, as keys did before names). ValueError for unknown parsers."""
        by_name = {p.name: p for p in self._by_ext.values()}
        for key, target in mapping.items():
            parser = by_name.get(target) or self._by_ext.get(_normalise(target) if target.strip() else "")
            if parser is None and target.strip():
                raise ValueError(
                    f"sources.extensions: {target!r} (for {key!r}) is no parser name or handled extension; "
                    f"parsers: {', '.join(sorted(by_name))}; an empty value leaves those files out"
                )
            key = key.strip()
            if key.lower() in NO_EXTENSION:
                self._no_ext = parser
                continue
            if not key.startswith("."):
                self.register_name(key, parser)
                if "." in key:
                    continue
            ext = _normalise(key)
            if parser is None:
                self._by_ext.pop(ext, None)
                self._refused.add(ext)
            else:
                self._by_ext[ext] = parser
                self._refused.discard(ext)

    @property
    def supported_extensions(self) -> tuple[str, ...]:
        """Registered extensions, sorted."""
        return tuple(sorted(self._by_ext))

    @property
    def binary_extensions(self) -> tuple[str, ...]:
        """Extensions of binary formats (parsers with ``binary = True``, e.g. PDF, and ``.gz``
        unless left out), which the source walker must not skip as binary files."""
        exts = {e for e, p in self._by_ext.items() if getattr(p, "binary", False)}
        if ".gz" not in self._by_ext and ".gz" not in self._refused:
            exts.add(".gz")
        return tuple(sorted(exts))

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
    # a gzipped file's limit is on what it unpacks to: the file cap and the unzip limit, the lower
    gzip_limit, gzip_setting = limits.max_unzipped_bytes, "parse.max_unzipped_mb"
    if isinstance(settings, Settings) and settings.sources.max_file_mb * 1_048_576 < gzip_limit:
        gzip_limit, gzip_setting = int(settings.sources.max_file_mb * 1_048_576), "sources.max_file_mb"
    registry = ParserRegistry(gzip_limit, gzip_setting)
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
        XmlParser(limits),
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
    by_name = {p.name: p for p in parsers}
    for name in _TEXT_NAMES:
        registry.register_name(name, by_name["text"])
    for name, language in CODE_NAMES.items():
        registry.register_name(name, by_name[language])
    registry.register_no_extension(by_name["text"])
    if isinstance(settings, Settings):
        registry.map_extensions(settings.sources.extensions)
    return registry
