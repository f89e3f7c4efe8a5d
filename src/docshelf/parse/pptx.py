"""PowerPoint presentations (.pptx, .pptm, .ppsx, .potx; transitional and Strict OOXML), read
from the package: each slide's shapes, groups and tables, its charts and SmartArt, speaker
notes and comments, on the slide's number."""

from __future__ import annotations

from xml.etree import ElementTree

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

__all__ = ["PptxParser"]

_TITLES = frozenset({"title", "ctrTitle"})
# the notes-page placeholder that holds the slide's picture
_NOTES_SKIP = frozenset({"sldImg"})


def _placeholder(shape: ElementTree.Element) -> str | None:
    for el in shape.iter():
        if local(el.tag) == "ph":
            return el.get("type") or "body"
    return None


def _shapes(tree: ElementTree.Element) -> list[tuple[str, str]]:
    """(kind, text) of the shapes of a shape tree in order, groups included; the title shape's
    text has kind "title"."""
    out: list[tuple[str, str]] = []
    for shape in tree:
        name = local(shape.tag)
        if name == "grpSp":
            out.extend(_shapes(shape))
        elif name == "AlternateContent":
            chosen = [c for c in shape if local(c.tag) == "Choice"][:1] or [
                c for c in shape if local(c.tag) == "Fallback"
            ][:1]
            for c in chosen:
                out.extend(_shapes(c))
        elif name == "graphicFrame":
            tables = [el for el in shape.iter() if local(el.tag) == "tbl"]
            for tbl in tables:
                rows = [
                    row_text([" ".join(all_text(tc)) for tc in tr if local(tc.tag) == "tc"])
                    for tr in tbl
                    if local(tr.tag) == "tr"
                ]
                out.append(("table", "\n".join(r for r in rows if r)))
        elif name in ("sp", "cxnSp"):
            texts = [paragraph_text(p) for p in shape.iter() if local(p.tag) == "p"]
            text = "\n".join(t for t in texts if t.strip())
            out.append(("title" if _placeholder(shape) in _TITLES else "paragraph", text))
    return out


class PptxParser:
    """PowerPoint: one heading per slide ("Slide N: title"), then its text boxes, tables,
    charts, diagrams, speaker notes and comments; every section's ``page`` is the slide number."""

    name: str = "pptx"
    extensions: tuple[str, ...] = (".pptx", ".pptm", ".ppsx", ".ppsm", ".potx", ".potm")
    binary: bool = True

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Read every slide of the presentation in ``data``."""
        limits = self.limits
        package = open_package(
            data, path, "PowerPoint (.pptx)", limits.max_unzipped_bytes, limits.max_xml_part_bytes
        )
        deadline = limits.deadline(path)
        builder = TextBuilder()
        first_title: str | None = None
        with package.archive:
            main = package.main_part()
            slides = _slide_order(package, main)
            for number, slide in enumerate(slides, start=1):
                deadline.check()
                title = _slide(package, slide, number, builder)
                first_title = first_title or title
            title = core_title(package) or first_title
        return ParsedDocument(
            text=builder.text,
            sections=builder.sections,
            file_type=self.name,
            title=title,
            metadata={"slides": len(slides)},
        )


def _slide_order(package: Package, main: str) -> list[str]:
    by_id = {rid: target for rid, kind, target in package.rels(main) if kind == "slide"}
    order: list[str] = []
    for el in package.xml(main).iter():
        if local(el.tag) == "sldId":
            rid = next((v for k, v in el.attrib.items() if local(k) == "id" and k != "id"), None)
            if rid in by_id and package.has(by_id[rid]):
                order.append(by_id[rid])
    return order or sorted(by_id.values(), key=lambda t: (len(t), t))


def _slide(package: Package, slide: str, number: int, builder: TextBuilder) -> str | None:
    root = package.xml(slide)
    trees = [el for el in root.iter() if local(el.tag) == "spTree"][:1]
    shapes = _shapes(trees[0]) if trees else []
    title = next((" ".join(t.split()) for kind, t in shapes if kind == "title" and t.strip()), "")
    builder.heading(f"Slide {number}: {title}" if title else f"Slide {number}", 1, page=number)
    for kind, text in shapes:
        if kind == "title" and " ".join(text.split()) == title:
            continue
        builder.add(text, "paragraph" if kind == "title" else kind, page=number)
    for block in drawing_texts(package, slide):
        builder.add(block, page=number)
    for target in package.related(slide, "notesSlide"):
        notes_root = package.xml(target)
        tree = [el for el in notes_root.iter() if local(el.tag) == "spTree"][:1]
        texts = []
        for shape in tree[0] if tree else []:
            if _placeholder(shape) in _NOTES_SKIP:
                continue
            texts.extend(all_text(shape))
        if texts:
            builder.add("Notes: " + "\n".join(texts), page=number)
    for kind in ("comments", "comment"):
        for target in package.related(slide, kind):
            for el in package.xml(target):
                text = " ".join(t for t in _comment_text(el) if t)
                if text:
                    builder.add("Comment: " + text, page=number)
    return title or None


def _comment_text(el: ElementTree.Element) -> list[str]:
    """A comment's text: legacy p:cm/p:text, or modern comments' DrawingML paragraphs."""
    out = [" ".join((t.text or "").split()) for t in el.iter() if local(t.tag) == "text"]
    return out + all_text(el)
