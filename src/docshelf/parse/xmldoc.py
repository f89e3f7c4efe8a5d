"""XML documents: the text of their elements, titles as headings (DocBook, feeds, TEI, data).

An element with text of its own beside its children (mixed content: ``<para>the <emphasis>xsltproc
</emphasis> steps</para>``) is one paragraph with its inline elements' words in place; an element
of elements only is walked. A ``title``, ``head`` or ``heading`` child heads its parent's text, one
level below the title of the element around it. Comments, processing instructions and attributes
are no text. The standard library's expat reads it: no external entity is fetched and an entity
expansion past its amplification limit is refused; an entity declared in an external DTD only
stays as written (``&version;``). XML that is not well-formed is indexed as the text it is.
"""

from __future__ import annotations

import dataclasses
import re
from xml.etree import ElementTree

from docshelf.parse.assemble import TextBuilder
from docshelf.parse.limits import ParseLimits
from docshelf.parse.text import TextParser
from docshelf.types import ParsedDocument

__all__ = ["XmlParser"]

_TITLES = frozenset({"title", "head", "heading"})
_NO_TEXT = frozenset({"style", "script"})  # an SVG's or XHTML's styles and scripts
# elements whose line breaks are the text's (DocBook's program listings, XHTML's pre)
_VERBATIM = frozenset({"programlisting", "screen", "literallayout", "pre", "code", "synopsis"})


_REFERENCE = re.compile(rb"&([A-Za-z_][\w.:-]*);")


def _parser(data: bytes) -> ElementTree.XMLParser:
    """An expat parser for which each entity the document uses is known: one declared in a DTD it
    only names (DocBook's ``&version;``) stays as written, rather than making the whole file
    "not well-formed" (the accelerated parser's table takes entries, not a default)."""
    parser = ElementTree.XMLParser()
    for name in {m.group(1) for m in _REFERENCE.finditer(data)}:
        text = name.decode("utf-8", "replace")
        parser.entity.setdefault(text, f"&{text};")
    return parser


def _name(element: ElementTree.Element) -> str:
    tag = element.tag
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def _words(element: ElementTree.Element) -> str:
    return " ".join("".join(element.itertext()).split())


def _titled(element: ElementTree.Element) -> bool:
    return any(_name(child) in _TITLES for child in element)


def _mixed(element: ElementTree.Element) -> bool:
    return bool((element.text or "").strip()) or any((child.tail or "").strip() for child in element)


class XmlParser:
    """XML as paragraphs under the headings its title elements give."""

    name: str = "xml"
    # an SVG drawing's labels are its <text>; its shapes are attributes, which are no text
    extensions: tuple[str, ...] = (".xml", ".svg")

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """The elements' text; XML that is not well-formed is read as plain text, and so is a file
        over ``parse.max_xml_part_mb`` (its tree would take ~20x its size in memory)."""
        if len(data) > self.limits.max_xml_part_bytes:
            return self._as_text(data, path, "over parse.max_xml_part_mb")
        try:
            root = ElementTree.fromstring(data, parser=_parser(data))
            builder = TextBuilder()
            self._walk(root, builder, 0)
        except (ElementTree.ParseError, RecursionError) as exc:
            return self._as_text(
                data, path, "nested too deep" if isinstance(exc, RecursionError) else str(exc)
            )
        title = next((builder.text[s.start : s.end] for s in builder.sections if s.kind == "heading"), None)
        kind = "svg" if _name(root) == "svg" else self.name
        return ParsedDocument(text=builder.text, sections=builder.sections, file_type=kind, title=title)

    def _as_text(self, data: bytes, path: str, why: str) -> ParsedDocument:
        doc = TextParser().parse(data, path)
        return dataclasses.replace(
            doc, file_type=self.name, metadata={**doc.metadata, "xml": f"read as text: {why}"}
        )

    def _walk(self, element: ElementTree.Element, builder: TextBuilder, level: int) -> None:
        name = _name(element)
        if name in _NO_TEXT:
            return
        if name in _VERBATIM:
            builder.add("".join(element.itertext()).strip("\n"), "code")
            return
        children = list(element)
        if not children or _mixed(element):
            builder.add(_words(element))
            return
        if not _titled(element):
            # DocBook keeps a book's or article's title in its info element (articleinfo, info):
            # read the info's parts as the element's own, so that title heads it
            info = next((c for c in children if _name(c).endswith("info") and _titled(c)), None)
            if info is not None:
                children = [part for child in children for part in (child if child is info else [child])]
        titled = level + 1 if any(_name(child) in _TITLES for child in children) else level
        for child in children:
            if _name(child) in _TITLES:
                builder.heading(_words(child), titled)
            else:
                depth = len(builder.stack)
                self._walk(child, builder, titled)
                del builder.stack[depth:]  # the headings inside it end with it
