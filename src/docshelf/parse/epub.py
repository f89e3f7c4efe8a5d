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
_NCX = "application/x-dtbncx+xml"


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
    "Chapter N") becomes a level-1 heading; the chapter's own headings nest under it. The
    navigation document (its contents list) is one too, and an EPUB 2 book's NCX table of
    contents a "Contents" chapter."""

    name: str = "epub"
    extensions: tuple[str, ...] = (".epub",)
    binary: bool = True

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()
        self.html = HtmlParser(self.limits)
        self.nav_html = HtmlParser(self.limits, keep_nav=True)

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
            items = {item.get("id"): item for item in opf.iterfind(".//opf:manifest/opf:item", _NS)}
            title_el = opf.find(".//opf:metadata/dc:title", _NS)
            title = " ".join((title_el.text or "").split()) if title_el is not None else ""
            # the navigation document (EPUB 3), read with its <nav> lists: in the spine or not
            navs = [i for i, item in items.items() if "nav" in (item.get("properties") or "").split()]
            spine = [ref.get("idref") for ref in opf.iterfind(".//opf:spine/opf:itemref", _NS)]
            builder = TextBuilder()
            chapters = 0
            for idref in [*spine, *(i for i in navs if i not in spine)]:
                deadline.check()
                item = items.get(idref)
                href = (item.get("href") or "") if item is not None else ""
                if item is None or item.get("media-type") not in _XHTML or not href:
                    continue
                name = posixpath.normpath(posixpath.join(base, unquote(href)))
                html = self.nav_html if idref in navs else self.html
                try:
                    chapter = html.parse(archive.read(name), f"{path}/{name}")
                except KeyError:
                    continue  # listed but missing: the rest of the book is still readable
                if chapter.text.strip():
                    chapters += 1
                    _add_chapter(builder, chapter, chapters)
            if not navs:
                chapters += _add_ncx(builder, archive, opf, items, base, path)
        if not builder.text:
            raise ParseError(f"{path}: EPUB has no readable text (images only, or DRM-protected?)")
        return ParsedDocument(
            text=builder.text,
            sections=builder.sections,
            file_type=self.name,
            title=title or None,
            metadata={"chapters": chapters},
        )


def _add_ncx(
    builder: TextBuilder,
    archive: zipfile.ZipFile,
    opf: ElementTree.Element,
    items: dict[str | None, ElementTree.Element],
    base: str,
    path: str,
) -> int:
    """An EPUB 2 table of contents (the spine's NCX) as a "Contents" chapter; 1 when added."""
    spine = opf.find(".//opf:spine", _NS)
    ncx = items.get(spine.get("toc") if spine is not None else None)
    if ncx is None:
        ncx = next((i for i in items.values() if i.get("media-type") == _NCX), None)
    if ncx is None or not ncx.get("href"):
        return 0
    name = posixpath.normpath(posixpath.join(base, unquote(ncx.get("href") or "")))
    try:
        root = _xml(archive, name, path)
    except ParseError:
        return 0  # a broken table of contents is no reason to lose the book
    nav_map = next((el for el in root.iter() if _local(el.tag) == "navMap"), None)
    if nav_map is None:
        return 0
    lines: list[str] = []

    def walk(parent: ElementTree.Element, depth: int) -> None:
        for point in parent:
            if _local(point.tag) != "navPoint":
                continue
            label = next((el for el in point.iter() if _local(el.tag) == "text"), None)
            text = " ".join((label.text or "").split()) if label is not None else ""
            if text:
                lines.append("  " * depth + "- " + text)
            walk(point, depth + 1)

    walk(nav_map, 0)
    if not lines:
        return 0
    builder.heading("Contents", 1)
    builder.add("\n".join(lines), "list")
    return 1


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


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
