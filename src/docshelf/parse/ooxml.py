"""Office Open XML packages read directly: parts, relationships and the text of their XML.

python-docx, python-pptx and openpyxl read the main body only (and not Strict OOXML); users'
text also lives in headers, footers, footnotes, comments, text boxes, content controls,
charts, SmartArt, notes and altChunk parts. The package is followed from its main part along
the relationships to each of these. Element names are matched by local name, so transitional
and Strict (ISO 29500) namespaces read alike.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Iterator
from xml.etree import ElementTree

from docshelf.errors import ParseError
from docshelf.parse.assemble import check_zip

__all__ = [
    "Package",
    "all_text",
    "cached_values",
    "core_title",
    "drawing_texts",
    "local",
    "open_package",
    "paragraph_text",
    "paragraphs",
    "row_text",
]

_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_PARAGRAPHS = frozenset({"p"})
_SKIP = frozenset({"delText", "instrText", "fldData", "sdtPr", "rPr", "pPr", "tblPr", "trPr", "tcPr"})
_BREAKS = frozenset({"br", "cr"})


def local(tag: str) -> str:
    """An element's name without its namespace."""
    return tag.rsplit("}", 1)[-1]


def open_package(data: bytes, path: str, what: str, cap: int, xml_cap: int | None = None) -> Package:
    """The package in ``data``; ParseError naming password protection, damage or size."""
    if data.startswith(_OLE):
        if "EncryptedPackage".encode("utf-16-le") in data or b"EncryptedPackage" in data:
            raise ParseError(
                f"{path}: is password-protected (an encrypted {what} file); save an unprotected copy "
                "to index it"
            )
        raise ParseError(f"{path}: is a legacy binary Office file, not {what}; save it in the newer format")
    check_zip(data, path, what, cap, xml_cap)
    return Package(zipfile.ZipFile(io.BytesIO(data)), path, what)


class Package:
    """Parts of an OOXML zip by name, and the relationships between them."""

    def __init__(self, archive: zipfile.ZipFile, path: str, what: str) -> None:
        self.archive = archive
        self.path = path
        self.what = what
        self.names = {n.lstrip("/"): n for n in archive.namelist()}
        self.lower = {n.lower(): n for n in self.names}

    def has(self, name: str) -> bool:
        return name in self.names or name.lower() in self.lower

    def read(self, name: str) -> bytes:
        key = self.names.get(name) or self.names.get(self.lower.get(name.lower(), ""), None)
        if key is None:
            raise KeyError(name)
        return self.archive.read(key)

    def xml(self, name: str) -> ElementTree.Element:
        """A part parsed (expat refuses entity-expansion bombs itself)."""
        try:
            return ElementTree.fromstring(self.read(name))
        except KeyError:
            raise ParseError(f"{self.path}: is not a valid {self.what} file ({name} is missing)") from None
        except ElementTree.ParseError as exc:
            raise ParseError(f"{self.path}: damaged {self.what} file ({name}: {exc})") from None

    def rels(self, part: str) -> list[tuple[str, str, str]]:
        """(id, type's last segment, target part) of ``part``'s relationships ("" = the package)."""
        folder, name = posixpath.split(part)
        rels_name = posixpath.join(folder, "_rels", name + ".rels")
        if not self.has(rels_name):
            return []
        try:
            root = ElementTree.fromstring(self.read(rels_name))
        except ElementTree.ParseError:
            return []
        out = []
        for rel in root:
            if rel.get("TargetMode") == "External":
                continue
            target = rel.get("Target") or ""
            full = (
                target.lstrip("/")
                if target.startswith("/")
                else posixpath.normpath(posixpath.join(folder, target))
            )
            out.append((rel.get("Id") or "", (rel.get("Type") or "").rsplit("/", 1)[-1], full))
        return out

    def related(self, part: str, kind: str) -> list[str]:
        """Targets of ``part``'s relationships of type ``kind`` (e.g. "header")."""
        return [t for _, k, t in self.rels(part) if k == kind and self.has(t)]

    def main_part(self, kind: str = "officeDocument") -> str:
        for _, k, target in self.rels(""):
            if k == kind and self.has(target):
                return target
        raise ParseError(f"{self.path}: is not a valid {self.what} file (no main document part)")


def _choose(element: ElementTree.Element) -> list[ElementTree.Element]:
    """Children to read: of mc:AlternateContent only the first choice (else the fallback), as
    the two hold the same text drawn two ways."""
    if local(element.tag) != "AlternateContent":
        return list(element)
    for child in element:
        if local(child.tag) == "Choice":
            return [child]
    return [c for c in element if local(c.tag) == "Fallback"][:1]


def paragraph_text(p: ElementTree.Element) -> str:
    """Text of one paragraph: runs, tabs and breaks; ruby readings after their base in
    parentheses; nested paragraphs (text boxes inside) are left to ``paragraphs``."""
    out: list[str] = []

    def walk(el: ElementTree.Element) -> None:
        for child in _choose(el):
            name = local(child.tag)
            if name in _SKIP or name in _PARAGRAPHS or name == "txbxContent":
                continue
            if name == "t":
                out.append(child.text or "")
            elif name == "tab":
                out.append("\t")
            elif name in _BREAKS:
                out.append("\n")
            elif name == "ruby":  # base text, then its reading: 東京(とうきょう)
                parts = {local(c.tag): "".join(t.text or "" for t in c.iter() if local(t.tag) == "t")
                         for c in child}  # fmt: skip
                reading = parts.get("rt", "")
                out.append(parts.get("rubyBase", "") + (f"({reading})" if reading else ""))
            else:
                walk(child)

    walk(p)
    return "".join(out)


def paragraphs(root: ElementTree.Element) -> Iterator[ElementTree.Element]:
    """Every paragraph under ``root`` in document order, text boxes' own paragraphs after the
    paragraph holding them."""
    for child in _choose(root):
        if local(child.tag) in _SKIP:
            continue
        if local(child.tag) in _PARAGRAPHS:
            yield child
            yield from (p for inner in _choose(child) for p in paragraphs(inner))
        else:
            yield from paragraphs(child)


def all_text(root: ElementTree.Element) -> list[str]:
    """The non-empty paragraph texts under ``root``."""
    texts = (" ".join(paragraph_text(p).split()) for p in paragraphs(root))
    return [t for t in texts if t]


def cached_values(root: ElementTree.Element) -> list[str]:
    """Chart text: titles and labels (a:t) and the cached category/series values (c:v)."""
    out = all_text(root)
    for el in root.iter():
        if local(el.tag) == "v" and el.text and el.text.strip():
            out.append(el.text.strip())
    return out


def row_text(cells: list[str]) -> str:
    """A table row as "a | b | c"; merged cells (repeated text) appear once."""
    out: list[str] = []
    for cell in cells:
        text = " ".join(cell.split())
        if not out or text != out[-1]:
            out.append(text)
    return " | ".join(out) if any(out) else ""


def drawing_texts(package: Package, part: str) -> list[str]:
    """ "Chart: ..." and "Diagram: ..." blocks for the charts and SmartArt ``part`` refers to."""
    out: list[str] = []
    for kind, label in (("chart", "Chart"), ("diagramData", "Diagram")):
        for target in package.related(part, kind):
            root = package.xml(target)
            values = cached_values(root) if kind == "chart" else all_text(root)
            if values:
                out.append(f"{label}: " + "; ".join(dict.fromkeys(values)))
    return out


def core_title(package: Package) -> str | None:
    """dc:title of the package's core properties."""
    for _, kind, target in package.rels(""):
        if kind == "core-properties" and package.has(target):
            try:
                root = ElementTree.fromstring(package.read(target))
            except ElementTree.ParseError:
                return None
            for el in root:
                if local(el.tag) == "title" and el.text and el.text.strip():
                    return " ".join(el.text.split())
    return None
