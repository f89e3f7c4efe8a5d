"""EPUB e-books: a zip of XHTML chapters, read in spine order through the HTML parser."""

from __future__ import annotations

import io
import posixpath
import zipfile
from urllib.parse import unquote
from xml.etree import ElementTree

from docshelf.errors import ParseError
from docshelf.parse.assemble import TextBuilder, check_zip
from docshelf.parse.html import HtmlParser
from docshelf.parse.limits import ParseLimits
from docshelf.types import ParsedDocument

__all__ = ["EpubParser"]

_NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
}
_XHTML = frozenset({"application/xhtml+xml", "text/html"})


def _xml(archive: zipfile.ZipFile, name: str, path: str) -> ElementTree.Element:
    try:
        # expat (>= 2.4, bundled with Python 3.11) refuses entity-expansion bombs itself
        return ElementTree.fromstring(archive.read(name))
    except KeyError:
        raise ParseError(f"{path}: is not a valid EPUB ({name} is missing); exclude it") from None
    except ElementTree.ParseError as exc:
        raise ParseError(f"{path}: is not a valid EPUB ({name}: {exc}); exclude it") from None


class EpubParser:
    """EPUB 2/3: every spine document is a chapter whose title (its first heading, else
    "Chapter N") becomes a level-1 heading; the chapter's own headings nest under it."""

    name: str = "epub"
    extensions: tuple[str, ...] = (".epub",)
    binary: bool = True

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()
        self.html = HtmlParser(self.limits)

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Read the chapters of the book in ``data``."""
        check_zip(data, path, "EPUB (.epub)", self.limits.max_unzipped_bytes)
        deadline = self.limits.deadline(path)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            container = _xml(archive, "META-INF/container.xml", path)
            rootfile = container.find(".//c:rootfile", _NS)
            opf_name = rootfile.get("full-path") if rootfile is not None else None
            if not opf_name:
                raise ParseError(f"{path}: is not a valid EPUB (no package document listed); exclude it")
            opf = _xml(archive, opf_name, path)
            base = posixpath.dirname(opf_name)
            items = {
                item.get("id"): (item.get("href") or "", item.get("media-type") or "")
                for item in opf.iterfind(".//opf:manifest/opf:item", _NS)
            }
            title_el = opf.find(".//opf:metadata/dc:title", _NS)
            title = " ".join((title_el.text or "").split()) if title_el is not None else ""
            builder = TextBuilder()
            chapters = 0
            for ref in opf.iterfind(".//opf:spine/opf:itemref", _NS):
                deadline.check()
                href, media = items.get(ref.get("idref"), ("", ""))
                if media not in _XHTML or not href:
                    continue
                name = posixpath.normpath(posixpath.join(base, unquote(href)))
                try:
                    chapter = self.html.parse(archive.read(name), f"{path}/{name}")
                except KeyError:
                    continue  # listed but missing: the rest of the book is still readable
                if chapter.text.strip():
                    chapters += 1
                    _add_chapter(builder, chapter, chapters)
        if not builder.text:
            raise ParseError(f"{path}: EPUB has no readable text (images only, or DRM-protected?)")
        return ParsedDocument(
            text=builder.text,
            sections=builder.sections,
            file_type=self.name,
            title=title or None,
            metadata={"chapters": chapters},
        )


def _add_chapter(builder: TextBuilder, chapter: ParsedDocument, number: int) -> None:
    """The chapter under one level-1 heading; its first heading names it, when it has one."""
    sections = chapter.sections
    first = sections[0] if sections else None
    if first is not None and first.kind == "heading":
        builder.heading(chapter.text[first.start : first.end], 1)
        sections = sections[1:]
    else:
        builder.heading(chapter.title or f"Chapter {number}", 1)
    for s in sections:
        text = chapter.text[s.start : s.end]
        if s.kind == "heading":
            builder.heading(text, s.level + 1)
        else:
            builder.add(text, s.kind)
