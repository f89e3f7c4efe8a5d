"""Word documents (.docx, .docm, .dotx, .dotm; transitional and Strict OOXML), read from the
package: the body with its content controls, text boxes, nested tables and altChunk parts, then
the headers and footers, footnotes, endnotes, comments, charts and SmartArt."""

from __future__ import annotations

import email
import re
from email.message import Message
from xml.etree import ElementTree

from docshelf.errors import ParseError
from docshelf.parse.assemble import TextBuilder
from docshelf.parse.limits import ParseLimits
from docshelf.parse.ooxml import (
    Package,
    all_text,
    core_title,
    drawing_texts,
    local,
    open_package,
    paragraph_text,
    row_text,
)
from docshelf.types import ParsedDocument

__all__ = ["DocxParser"]

_HEADING_STYLE = re.compile(r"heading\s*([1-9])$", re.IGNORECASE)
_CONTAINERS = frozenset({"document", "body", "sdt", "sdtContent", "customXml", "smartTag", "ins", "moveTo",
                         "hyperlink", "txbxContent", "AlternateContent", "Choice", "Fallback"})  # fmt: skip
_TEXT_PARTS = (("header", "Header"), ("footer", "Footer"), ("footnotes", "Footnote"),
               ("endnotes", "Endnote"), ("comments", "Comment"))  # fmt: skip


class _Styles:
    def __init__(self, package: Package, main: str) -> None:
        self.names: dict[str, str] = {}
        self.levels: dict[str, int] = {}
        for target in package.related(main, "styles"):
            try:
                root = ElementTree.fromstring(package.read(target))
            except ElementTree.ParseError:
                continue
            for style in root:
                sid = _attr(style, "styleId")
                if local(style.tag) != "style" or sid is None:
                    continue
                for child in style.iter():
                    if local(child.tag) == "name":
                        self.names[sid] = _attr(child, "val") or ""
                    elif local(child.tag) == "outlineLvl" and (_attr(child, "val") or "").isdigit():
                        self.levels[sid] = int(_attr(child, "val") or 0) + 1

    def kind(self, p: ElementTree.Element) -> tuple[str, int]:
        """("title" | "heading" | "list" | "paragraph", level) of a paragraph."""
        style_id = ""
        for ppr in p:
            if local(ppr.tag) != "pPr":
                continue
            for child in ppr:
                name = local(child.tag)
                if name == "pStyle":
                    style_id = _attr(child, "val") or ""
                elif name == "numPr":
                    return "list", 0
                elif name == "outlineLvl" and (_attr(child, "val") or "").isdigit():
                    level = int(_attr(child, "val") or 0) + 1
                    if level <= 6:
                        return "heading", level
        name = self.names.get(style_id, style_id).strip()
        if name.lower() == "title":
            return "title", 1
        m = _HEADING_STYLE.match(name)
        if m is not None:
            return "heading", min(int(m.group(1)), 6)
        if 0 < self.levels.get(style_id, 0) <= 6:
            return "heading", self.levels[style_id]
        return ("list", 0) if name.lower().startswith("list") else ("paragraph", 0)


def _attr(el: ElementTree.Element, name: str) -> str | None:
    for key, value in el.attrib.items():
        if local(key) == name:
            return value
    return None


class _Body:
    def __init__(self, package: Package, main: str, builder: TextBuilder, limits: ParseLimits) -> None:
        self.package = package
        self.main = main
        self.builder = builder
        self.styles = _Styles(package, main)
        self.limits = limits
        self.chunks = {rid: target for rid, kind, target in package.rels(main) if kind == "aFChunk"}
        self.title: str | None = None
        self.heading1: str | None = None

    def block(self, el: ElementTree.Element) -> None:
        name = local(el.tag)
        if name == "p":
            self.paragraph(el)
        elif name == "tbl":
            rows = self.table_rows(el)
            self.builder.add("\n".join(r for r in rows if r), "table")
        elif name == "altChunk":
            self.alt_chunk(_attr(el, "id"))
        elif name in _CONTAINERS:
            for child in el:
                self.block(child)

    def paragraph(self, p: ElementTree.Element) -> None:
        text = paragraph_text(p)
        kind, level = self.styles.kind(p)
        flat = " ".join(text.split())
        if kind == "title":
            if self.title is None and flat:
                self.title = flat
            self.builder.heading(text, 1)
        elif kind == "heading":
            if level == 1 and self.heading1 is None and flat:
                self.heading1 = flat
            self.builder.heading(text, level + 1 if self.title is not None else level)
        else:
            self.builder.add(text, kind)
        for box in _text_boxes(p):
            for child in box:
                self.block(child)

    def table_rows(self, tbl: ElementTree.Element) -> list[str]:
        rows = []
        for tr in (c for c in _flatten(tbl) if local(c.tag) == "tr"):
            cells = [self.cell_text(tc) for tc in _flatten(tr) if local(tc.tag) == "tc"]
            rows.append(row_text(cells))
        return rows

    def cell_text(self, tc: ElementTree.Element) -> str:
        parts: list[str] = []
        for child in _flatten(tc):
            name = local(child.tag)
            if name == "p":
                parts.append(paragraph_text(child))
                parts.extend(t for box in _text_boxes(child) for t in all_text(box))
            elif name == "tbl":  # a nested table: its rows inside the cell
                parts.extend(self.table_rows(child))
        return " ".join(" ".join(p.split()) for p in parts if p.strip())

    def alt_chunk(self, rid: str | None) -> None:
        target = self.chunks.get(rid or "")
        if target is None or not self.package.has(target):
            return
        from docshelf.parse.html import HtmlParser

        data = self.package.read(target)
        lower = target.lower()
        if lower.endswith((".mht", ".mhtml")):
            data = _mht_html(data)
        elif not lower.endswith((".htm", ".html", ".xhtml")):
            self.builder.add(data.decode("utf-8", "replace"))
            return
        try:
            doc = HtmlParser(self.limits).parse(data, f"{self.package.path}/{target}")
        except ParseError:
            return
        for s in doc.sections:
            if s.kind == "heading":
                self.builder.heading(doc.text[s.start : s.end], s.level)
            else:
                self.builder.add(doc.text[s.start : s.end], s.kind)


def _flatten(el: ElementTree.Element) -> list[ElementTree.Element]:
    """Children, with content controls and alternate content unwrapped."""
    out: list[ElementTree.Element] = []
    for child in el:
        if local(child.tag) in ("sdt", "sdtContent", "customXml", "AlternateContent", "Choice"):
            out.extend(_flatten(child))
        elif local(child.tag) != "Fallback":
            out.append(child)
    return out


def _text_boxes(p: ElementTree.Element) -> list[ElementTree.Element]:
    """The outermost text box contents inside a paragraph (one drawing of each alternative)."""
    found: list[ElementTree.Element] = []

    def walk(el: ElementTree.Element) -> None:
        for child in el:
            name = local(child.tag)
            if name == "txbxContent":
                found.append(child)
            elif name == "AlternateContent":
                chosen = [c for c in child if local(c.tag) == "Choice"][:1] or [
                    c for c in child if local(c.tag) == "Fallback"
                ][:1]
                for c in chosen:
                    walk(c)
            elif name != "p":
                walk(child)

    walk(p)
    return found


def _mht_html(data: bytes) -> bytes:
    """The HTML part of an MHT (MIME) archive."""
    message: Message = email.message_from_bytes(data)
    for part in message.walk():
        if part.get_content_type() == "text/html":
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                charset = part.get_content_charset()
                if charset:
                    return payload.decode(charset, "replace").encode("utf-8")
                return payload
    return b""


class DocxParser:
    """Word documents: "Heading 1".."Heading 6" (and "Title") paragraphs become headings;
    paragraphs, list items and tables (rows as "a | b | c") follow in document order; then
    the headers, footers, notes, comments, charts and diagrams."""

    name: str = "docx"
    extensions: tuple[str, ...] = (".docx", ".docm", ".dotx", ".dotm")
    binary: bool = True

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Read every part with the document's text."""
        limits = self.limits
        package = open_package(
            data, path, "Word (.docx)", limits.max_unzipped_bytes, limits.max_xml_part_bytes
        )
        with package.archive:
            main = package.main_part()
            builder = TextBuilder()
            body = _Body(package, main, builder, limits)
            body.block(package.xml(main))
            _other_parts(package, main, builder)
            title = core_title(package) or body.title or body.heading1
        return ParsedDocument(text=builder.text, sections=builder.sections, file_type=self.name, title=title)


def _other_parts(package: Package, main: str, builder: TextBuilder) -> None:
    seen: set[str] = set()
    builder.stack.clear()
    for kind, label in _TEXT_PARTS:
        for target in package.related(main, kind):
            root = package.xml(target)
            if kind in ("footnotes", "endnotes"):
                notes = [n for n in root if (_attr(n, "type") or "normal") == "normal"]
                texts = [" ".join(all_text(n)) for n in notes]
            elif kind == "comments":
                texts = [" ".join(all_text(c)) for c in root]
            else:
                texts = ["\n".join(all_text(root))]
            for text in texts:
                if text.strip() and text not in seen:  # first-page and even-page headers repeat
                    seen.add(text)
                    builder.add(f"{label}: {text}")
    for block in drawing_texts(package, main):
        builder.add(block)
