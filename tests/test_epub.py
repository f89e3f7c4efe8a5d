"""EPUB books built here with zipfile: chapters in spine order, headings, limits, bad input."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from docshelf.errors import ParseError
from docshelf.parse import default_registry
from docshelf.parse.epub import EpubParser
from docshelf.parse.limits import ParseLimits
from docshelf.shelf import Shelf

CONTAINER = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"""

OPF = """<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Harbour  Tales</dc:title></metadata>
  <manifest>
    <item id="c2" href="text/chapter%202.xhtml" media-type="application/xhtml+xml"/>
    <item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style.css" media-type="text/css"/>
    <item id="gone" href="text/missing.xhtml" media-type="application/xhtml+xml"/>
  </manifest>
  <spine><itemref idref="c1"/><itemref idref="css"/><itemref idref="gone"/><itemref idref="c2"/></spine>
</package>"""

CH1 = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title><style>p {}</style></head>
<body><h1>The Harbour</h1><p>Boats leave at dawn.</p><h2>Tides</h2><p>The tide turns at noon.</p>
<script>var x = "never indexed";</script></body></html>"""

CH2 = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Epilogue</title></head>
<body><p>Die Fischer kehren am Abend zurück.</p></body></html>"""


def make_epub(files: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        entries = files or {
            "META-INF/container.xml": CONTAINER,
            "OEBPS/content.opf": OPF,
            "OEBPS/text/ch1.xhtml": CH1,
            "OEBPS/text/chapter 2.xhtml": CH2,
            "OEBPS/style.css": "p { color: red }",
        }
        for name, text in entries.items():
            z.writestr(name, text, compress_type=zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def test_chapters_in_spine_order_with_nested_headings() -> None:
    doc = EpubParser().parse(make_epub(), "tales.epub")
    assert doc.title == "Harbour Tales" and doc.file_type == "epub" and doc.metadata == {"chapters": 2}
    blocks = [(s.kind, doc.text[s.start : s.end], s.heading_path) for s in doc.sections]
    assert blocks == [
        ("heading", "The Harbour", ("The Harbour",)),
        ("paragraph", "Boats leave at dawn.", ("The Harbour",)),
        ("heading", "Tides", ("The Harbour", "Tides")),
        ("paragraph", "The tide turns at noon.", ("The Harbour", "Tides")),
        # no heading in the chapter: its <title> names it
        ("heading", "Epilogue", ("Epilogue",)),
        ("paragraph", "Die Fischer kehren am Abend zurück.", ("Epilogue",)),
    ]
    assert "never indexed" not in doc.text and "color" not in doc.text


def test_epub_is_indexed_and_searchable(shelf: Shelf, tmp_path: Path) -> None:
    corpus = tmp_path / "books"
    corpus.mkdir()
    (corpus / "tales.epub").write_bytes(make_epub())
    report = shelf.index([corpus], "test").sync
    assert report.added == ["tales.epub"] and not report.skipped
    hit = shelf.search("tide noon", mode="keyword").hits[0]
    assert hit.path == "tales.epub" and hit.heading_path == ["The Harbour", "Tides"]
    assert ".epub" in default_registry().binary_extensions


def test_epub_zip_bomb_and_broken_books_are_refused() -> None:
    with pytest.raises(ParseError, match="zip bomb"):
        EpubParser(ParseLimits(max_unzipped_bytes=1000)).parse(make_epub(), "big.epub")
    with pytest.raises(ParseError, match="not a valid EPUB"):
        EpubParser().parse(b"PK\x03\x04 truncated", "bad.epub")
    with pytest.raises(ParseError, match=r"META-INF/container\.xml is missing"):
        EpubParser().parse(make_epub({"OEBPS/content.opf": OPF}), "nocontainer.epub")
    with pytest.raises(ParseError, match="no readable text"):
        EpubParser().parse(
            make_epub({"META-INF/container.xml": CONTAINER, "OEBPS/content.opf": OPF}), "e.epub"
        )


def test_epub_time_limit_is_a_setting() -> None:
    with pytest.raises(ParseError, match=r"parse\.timeout_s"):
        EpubParser(ParseLimits(timeout_s=-1.0)).parse(make_epub(), "slow.epub")


NAV = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">
<head><title>Contents</title></head><body>
<nav epub:type="toc" id="toc"><h1>Table of Contents</h1><ol>
<li><a href="text/ch1.xhtml">The Harbour</a><ol><li><a href="text/ch1.xhtml#t">Tides</a></li></ol></li>
<li><a href="text/chapter%202.xhtml">Epilogue: the Lighthouse Keepers' Almanac</a></li></ol></nav>
<nav epub:type="page-list" hidden=""><ol><li><a href="text/ch1.xhtml#p1">PageMarkerOne</a></li></ol></nav>
</body></html>"""

NCX = """<?xml version="1.0" encoding="utf-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">
<docTitle><text>Harbour Tales</text></docTitle><navMap>
<navPoint id="n1" playOrder="1"><navLabel><text>The Harbour</text></navLabel><content src="text/ch1.xhtml"/>
<navPoint id="n2" playOrder="2"><navLabel><text>Tides and Currents</text></navLabel>
<content src="text/ch1.xhtml#t"/></navPoint></navPoint>
<navPoint id="n3" playOrder="3"><navLabel><text>Epilogue: the Lighthouse Keepers' Almanac</text></navLabel>
<content src="text/chapter%202.xhtml"/></navPoint></navMap></ncx>"""


def _book(nav_in_spine: bool) -> dict[str, str]:
    opf = OPF.replace(
        "<manifest>",
        '<manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>',
    )
    if nav_in_spine:
        opf = opf.replace("<spine>", '<spine><itemref idref="nav" linear="no"/>')
    return {
        "META-INF/container.xml": CONTAINER,
        "OEBPS/content.opf": opf,
        "OEBPS/nav.xhtml": NAV,
        "OEBPS/text/ch1.xhtml": CH1,
        "OEBPS/text/chapter 2.xhtml": CH2,
    }


@pytest.mark.parametrize("nav_in_spine", [True, False])
def test_the_navigation_document_is_indexed(nav_in_spine: bool) -> None:
    doc = EpubParser().parse(make_epub(_book(nav_in_spine)), "tales.epub")
    assert "Epilogue: the Lighthouse Keepers' Almanac" in doc.text
    headings = [doc.text[s.start : s.end] for s in doc.sections if s.kind == "heading" and s.level == 1]
    assert headings.count("Table of Contents") == 1
    assert "PageMarkerOne" not in doc.text  # a hidden list: no reader shows it
    assert doc.metadata == {"chapters": 3}


def test_an_epub2_table_of_contents_is_indexed() -> None:
    opf = OPF.replace(
        "<manifest>", '<manifest><item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'
    )
    opf = opf.replace("<spine>", '<spine toc="ncx">')
    files = {"META-INF/container.xml": CONTAINER, "OEBPS/content.opf": opf, "OEBPS/toc.ncx": NCX,
             "OEBPS/text/ch1.xhtml": CH1, "OEBPS/text/chapter 2.xhtml": CH2}  # fmt: skip
    doc = EpubParser().parse(make_epub(files), "tales.epub")
    assert "Epilogue: the Lighthouse Keepers' Almanac" in doc.text and "Tides and Currents" in doc.text
    contents = next(s for s in doc.sections if doc.text[s.start : s.end] == "Contents")
    assert contents.kind == "heading" and contents.level == 1
