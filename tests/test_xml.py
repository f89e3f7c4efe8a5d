"""XML documents (DocBook, feeds, TEI, data): the text of their elements, titles as headings.

/usr/share/doc skipped 18 `.xml` and 5 `.xml.gz` files (libxslt's DocBook tutorials among them)
as "no parser for .xml".
"""

from __future__ import annotations

import gzip
from pathlib import Path

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.parse import default_registry
from docshelf.parse.limits import ParseLimits
from docshelf.parse.xmldoc import XmlParser
from docshelf.shelf import Shelf
from docshelf.types import ParsedDocument

DOCBOOK = b"""<?xml version="1.0" encoding="ISO-8859-1"?>
<!DOCTYPE article PUBLIC "-//OASIS//DTD DocBook XML V4.1.2//EN" "docbookx.dtd">
<article xmlns:x="urn:x">
  <title>libxslt Tutorial</title>
  <!-- a comment is no text -->
  <sect1>
    <title>Introduction</title>
    <para>This tutorial shows the <emphasis>xsltproc</emphasis> steps
      for the quokka\xe9 stylesheet.</para>
    <programlisting>xsltproc -o out.html
  style.xsl in.xml</programlisting>
  </sect1>
  <sect1>
    <title>Parameters</title>
    <x:note><para>Pass the wombat parameter to &product;.</para></x:note>
  </sect1>
</article>
"""


def _parse(data: bytes, name: str = "tutorial.xml") -> ParsedDocument:
    return default_registry().parse(data, name)


def test_elements_become_paragraphs_and_titles_headings() -> None:
    doc = _parse(DOCBOOK)
    assert doc.file_type == "xml" and doc.title == "libxslt Tutorial"
    blocks = [(doc.text[s.start : s.end], s.kind, s.heading_path) for s in doc.sections]
    assert blocks == [
        ("libxslt Tutorial", "heading", ("libxslt Tutorial",)),
        ("Introduction", "heading", ("libxslt Tutorial", "Introduction")),
        (  # mixed content is one paragraph, its inline elements' words in place
            "This tutorial shows the xsltproc steps for the quokka\xe9 stylesheet.",
            "paragraph", ("libxslt Tutorial", "Introduction"),
        ),
        ("xsltproc -o out.html\n  style.xsl in.xml", "code", ("libxslt Tutorial", "Introduction")),
        ("Parameters", "heading", ("libxslt Tutorial", "Parameters")),
        # an entity of the DTD it names (not read: nothing is fetched) stays as written
        ("Pass the wombat parameter to &product;.", "paragraph", ("libxslt Tutorial", "Parameters")),
    ]  # fmt: skip


def test_a_docbook_4_title_in_articleinfo_heads_the_article() -> None:
    article = b"<article><articleinfo><title>The Guide</title><author>Ann</author></articleinfo>"
    article += b"<sect1><title>Setup</title><para>Install the quokka.</para></sect1></article>"
    doc = _parse(article, "guide.xml")
    assert doc.title == "The Guide"
    assert [(doc.text[s.start : s.end], s.heading_path) for s in doc.sections] == [
        ("The Guide", ("The Guide",)), ("Ann", ("The Guide",)), ("Setup", ("The Guide", "Setup")),
        ("Install the quokka.", ("The Guide", "Setup")),
    ]  # fmt: skip


def test_a_feed_nests_its_items_under_the_channel() -> None:
    feed = b"<rss><channel><title>News</title><item><title>Bilby found</title>"
    feed += b"<description>A bilby was seen.</description></item></channel></rss>"
    doc = _parse(feed, "feed.xml")
    assert [(doc.text[s.start : s.end], s.heading_path) for s in doc.sections][-1] == (
        "A bilby was seen.", ("News", "Bilby found"),
    )  # fmt: skip


def test_an_svg_drawing_gives_its_labels_not_its_shapes_or_styles() -> None:
    svg = b"""<svg xmlns="http://www.w3.org/2000/svg"><title>Architecture</title>
      <style>.box { fill: #eee }</style><rect class="box" x="1" y="2" width="30" height="9"/>
      <g><text x="3" y="8">Load <tspan>balancer</tspan></text><path d="M 10 10 L 20 20"/></g>
      <text>Numbat store</text></svg>"""
    doc = _parse(svg, "arch.svg")
    assert doc.file_type == "svg" and doc.title == "Architecture"
    assert doc.text == "Architecture\n\nLoad balancer\n\nNumbat store"


def test_xml_that_is_not_well_formed_is_read_as_text() -> None:
    doc = _parse(b"<notes><a>the numbat</b> entry\n", "broken.xml")
    assert doc.file_type == "xml" and "the numbat</b> entry" in doc.text
    assert doc.metadata["xml"] == "read as text: mismatched tag: line 1, column 22"


def test_xml_over_the_part_cap_is_read_as_text() -> None:
    """A tree takes ~20x its file in memory: past parse.max_xml_part_mb, as for Office parts."""
    big = b"<log>" + b"<e>the dibbler entry</e>" * 20_000 + b"</log>"
    doc = XmlParser(ParseLimits(max_xml_part_bytes=len(big) - 1)).parse(big, "big.xml")
    assert doc.metadata["xml"] == "read as text: over parse.max_xml_part_mb" and doc.text.startswith("<log>")
    assert XmlParser().parse(big, "big.xml").text.startswith("the dibbler entry")


def test_entities_neither_explode_nor_reach_outside(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the kowari password\n")
    outside = f'<!DOCTYPE d [<!ENTITY x SYSTEM "file://{secret}">]><d>before &x; after</d>'.encode()
    assert "kowari" not in _parse(outside, "x.xml").text
    lol = '<!ENTITY l0 "lol">' + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    bomb = f"<!DOCTYPE b [{lol}]><b>&l9;</b>".encode()
    doc = _parse(bomb, "bomb.xml")  # expat refuses the expansion: the file's own text, not 10^9 lols
    assert len(doc.text) <= len(bomb)


def test_the_shelf_finds_xml_and_gzipped_xml(settings: Settings, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tutorial.xml").write_bytes(DOCBOOK)
    (docs / "feed.xml.gz").write_bytes(
        gzip.compress(b"<rss><item><title>Quoll</title></item></rss>", mtime=0)
    )
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        sync = shelf.index([docs], "x").sync
        assert sorted(sync.added) == ["feed.xml.gz", "tutorial.xml"] and sync.skipped == []
        hit = shelf.search("wombat parameter", k=1, mode="keyword").hits[0]
        assert hit.path == "tutorial.xml" and hit.heading_path == ["libxslt Tutorial", "Parameters"]
        assert shelf.search("quoll", k=1, mode="keyword").hits[0].path == "feed.xml.gz"
