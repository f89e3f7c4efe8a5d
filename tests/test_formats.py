"""File formats beyond plain text: PDF, Word, PowerPoint, Excel, CSV, HTML, code, legacy Office.

Every file is real: written by the format's own library, or (PDF) by hand, byte for byte.
"""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

import docx
import openpyxl
import pptx
import pypdf
import pytest

from docshelf.errors import ParseError
from docshelf.parse import Parser, default_registry
from docshelf.parse.code import CodeParser, python_sections
from docshelf.parse.html import HtmlParser
from docshelf.parse.office import DocxParser, LegacyOfficeParser, PptxParser
from docshelf.parse.pdf import PdfParser
from docshelf.parse.sheets import CsvParser
from docshelf.parse.xlsx import XlsxParser
from docshelf.shelf import Shelf
from docshelf.testing import Stages
from docshelf.types import Chunk, ParsedDocument, Section


def make_pdf(pages: list[list[str] | None], labels: bool = False, title: str | None = None) -> bytes:
    """Minimal valid PDF: one page per entry; None = page without a text layer.
    Each entry is a list of lines drawn with Helvetica."""
    objs = []
    n = len(pages)
    # 1 catalog, 2 pages, 3 font, then per page: page obj, content obj
    page_ids = [4 + 2 * i for i in range(n)]
    cat = b"<< /Type /Catalog /Pages 2 0 R"
    if labels:
        cat += b" /PageLabels << /Nums [0 << /S /r >> 1 << /S /D /St 1 >>] >>"
    cat += b" >>"
    objs.append(cat)
    kids = b" ".join(b"%d 0 R" % p for p in page_ids)
    objs.append(b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % n)
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, lines in enumerate(pages):
        content = b""
        if lines:
            content = b"BT /F1 12 Tf 72 720 Td 14 TL "
            for line in lines:
                esc = line.encode("latin-1")
                for ch in (b"\\", b"(", b")"):
                    esc = esc.replace(ch, b"\\" + ch)
                content += b"(" + esc + b") Tj T* "
            content += b"ET"
        objs.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (page_ids[i] + 1)
        )
        objs.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    info = None
    if title:
        objs.append(b"<< /Title (" + title.encode("latin-1") + b") >>")
        info = len(objs)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for num, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % num + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    trailer = b"<< /Size %d /Root 1 0 R" % (len(objs) + 1)
    if info:
        trailer += b" /Info %d 0 R" % info
    out += b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def text_of(doc: ParsedDocument, sec: Section) -> str:
    return doc.text[sec.start : sec.end]


def find(doc: ParsedDocument, needle: str) -> Section:
    """The section whose text contains ``needle``."""
    hits = [s for s in doc.sections if needle in text_of(doc, s)]
    assert hits, f"{needle!r} not in any section of {doc.text!r}"
    return hits[0]


def encrypt(data: bytes, user: str, owner: str) -> bytes:
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(data)))
    writer.encrypt(user, owner, algorithm="RC4-128")  # RC4 needs no crypto library
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


SAMPLE_PDF = make_pdf(
    [["Quarterly report", "Revenue grew in the north."], None, ["The quokka lives on Rottnest Island."]],
    labels=True,
    title="Q3 Report",
)


# ----- PDF -------------------------------------------------------------------


def test_pdf_pages_labels_and_pages_without_text() -> None:
    doc = PdfParser().parse(SAMPLE_PDF, "r.pdf")
    assert doc.file_type == "pdf" and doc.title == "Q3 Report"
    assert doc.text == "Quarterly report\nRevenue grew in the north.\n\nThe quokka lives on Rottnest Island."
    assert find(doc, "Revenue grew").page == 1
    assert find(doc, "quokka").page == 3
    assert all(s.page in (1, 3) for s in doc.sections)
    assert doc.metadata["pages"] == 3
    assert doc.metadata["pages_without_text"] == [2]
    assert doc.metadata["page_labels"] == ["i", "1", "2"]


def test_pdf_hits_cite_the_page_and_its_printed_label(shelf: Shelf, tmp_path: Path) -> None:
    corpus = tmp_path / "pdfs"
    corpus.mkdir()
    (corpus / "r.pdf").write_bytes(SAMPLE_PDF)
    shelf.index([corpus], "test")
    hit = shelf.search("quokka Rottnest", mode="keyword").hits[0]
    assert (hit.page, hit.page_label, hit.citation) == (3, "2", "r.pdf#page=3")
    first = shelf.search("revenue north", mode="keyword").hits[0]
    assert (first.page, first.page_label) == (1, "i")


def test_pdf_without_page_labels_records_none() -> None:
    doc = PdfParser().parse(make_pdf([["one"], ["two"]]), "r.pdf")
    assert "page_labels" not in doc.metadata and "pages_without_text" not in doc.metadata
    assert [s.page for s in doc.sections] == [1, 2]


def test_pdf_with_only_an_owner_password_is_read() -> None:
    doc = PdfParser().parse(encrypt(SAMPLE_PDF, "", "owner-secret"), "r.pdf")
    assert "Rottnest" in doc.text


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (encrypt(SAMPLE_PDF, "user-secret", "owner-secret"), "password-protected"),
        (SAMPLE_PDF[:300], "damaged or unreadable PDF"),
        (b"%PDF-1.7\n\x00\x01 not really a pdf", "damaged or unreadable PDF"),
        (b"PK\x03\x04 a zip named .pdf", "is not a PDF"),
    ],
    ids=["encrypted", "truncated", "garbage", "not-pdf"],
)
def test_pdf_that_cannot_be_read_raises_parse_error(data: bytes, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as info:
        PdfParser().parse(data, "bad.pdf")
    assert str(info.value).startswith("bad.pdf: ")


def test_missing_pdf_libraries_name_the_pip_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # makes `import pypdfium2` fail
    # without PDFium, pypdf reads the file
    assert "Quarterly report" in PdfParser().parse(SAMPLE_PDF, "r.pdf").text
    monkeypatch.setitem(sys.modules, "pypdf", None)
    with pytest.raises(ParseError, match="pip install pypdfium2"):
        PdfParser().parse(b"irrelevant", "f.bin")


# ----- Word and PowerPoint -----------------------------------------------------


def make_docx() -> bytes:
    d = docx.Document()
    d.add_heading("Field Guide", 0)
    d.add_paragraph("An introduction to marsupials.")
    d.add_heading("Install", 1)
    d.add_paragraph("Download the kit first.")
    d.add_heading("Linux", 2)
    d.add_paragraph("Unpack the tarball.")
    d.add_paragraph("Check the checksum", style="List Bullet")
    table = d.add_table(rows=2, cols=3)
    for r, row in enumerate([["name", "weight", "habitat"], ["quokka", "3 kg", "Rottnest"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    d.add_heading("Usage", 1)
    d.add_paragraph("Run it daily.")
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def test_docx_headings_paragraphs_lists_and_tables() -> None:
    doc = DocxParser().parse(make_docx(), "guide.docx")
    assert doc.file_type == "docx" and doc.title == "Field Guide"
    install = find(doc, "Install")
    assert install.kind == "heading" and install.level == 2
    assert install.heading_path == ("Field Guide", "Install")
    assert find(doc, "Unpack the tarball").heading_path == ("Field Guide", "Install", "Linux")
    assert find(doc, "Check the checksum").kind == "list"
    table = find(doc, "quokka")
    assert table.kind == "table"
    assert text_of(doc, table) == "name | weight | habitat\nquokka | 3 kg | Rottnest"
    # "Usage" closes "Install" and "Linux"
    assert find(doc, "Run it daily").heading_path == ("Field Guide", "Usage")
    assert doc.text.index("Download") < doc.text.index("quokka") < doc.text.index("Run it daily")


def test_docx_heading_levels_without_a_title_paragraph() -> None:
    d = docx.Document()
    d.add_heading("Alpha", 1)
    d.add_heading("Beta", 3)
    d.add_paragraph("body text")
    out = io.BytesIO()
    d.save(out)
    doc = DocxParser().parse(out.getvalue(), "a.docx")
    assert doc.title == "Alpha"
    assert find(doc, "Beta").level == 3
    assert find(doc, "body text").heading_path == ("Alpha", "Beta")


def make_pptx() -> bytes:
    prs = pptx.Presentation()
    s1 = prs.slides.add_slide(prs.slide_layouts[1])
    s1.shapes.title.text = "Roadmap"
    s1.placeholders[1].text = "Ship the wombat tracker"
    shape = s1.shapes.add_table(2, 2, 0, 0, 914400, 914400)
    shape.table.cell(0, 0).text = "quarter"
    shape.table.cell(0, 1).text = "goal"
    shape.table.cell(1, 0).text = "Q1"
    shape.table.cell(1, 1).text = "beta"
    s2 = prs.slides.add_slide(prs.slide_layouts[1])
    s2.shapes.title.text = "Results"
    s2.placeholders[1].text = "Sightings doubled"
    s2.notes_slide.notes_text_frame.text = "Mention the numbat survey"
    s3 = prs.slides.add_slide(prs.slide_layouts[6])  # blank layout: no title
    box = s3.shapes.add_textbox(0, 0, 914400, 914400)
    box.text_frame.text = "Questions welcome"
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()


def test_pptx_slides_text_tables_and_notes_carry_slide_numbers() -> None:
    doc = PptxParser().parse(make_pptx(), "deck.pptx")
    assert doc.file_type == "pptx" and doc.title == "Roadmap"
    assert doc.metadata["slides"] == 3
    headings = [(text_of(doc, s), s.page) for s in doc.sections if s.kind == "heading"]
    assert headings == [("Slide 1: Roadmap", 1), ("Slide 2: Results", 2), ("Slide 3", 3)]
    assert find(doc, "wombat").page == 1
    assert find(doc, "wombat").heading_path == ("Slide 1: Roadmap",)
    assert text_of(doc, find(doc, "quarter")) == "quarter | goal\nQ1 | beta"
    notes = find(doc, "numbat")
    assert text_of(doc, notes) == "Notes: Mention the numbat survey" and notes.page == 2
    assert find(doc, "Questions welcome").page == 3
    assert doc.text.count("Roadmap") == 1  # the title shape is not repeated as a paragraph


@pytest.mark.parametrize("parser", [DocxParser(), PptxParser(), XlsxParser()])
def test_office_file_that_is_not_a_zip_is_reported(parser: Parser) -> None:
    with pytest.raises(ParseError, match="not a zip archive"):
        parser.parse(b"\xd0\xcf\x11\xe0 an OLE file", "x.bin")


def test_office_zip_bomb_is_refused() -> None:
    from docshelf.config import ParseSettings
    from docshelf.parse.limits import ParseLimits

    # the cap is a setting (parse.max_unzipped_mb); a real docx unpacks to ~30 KB
    limits = ParseLimits.from_settings(ParseSettings(max_unzipped_mb=0.01))
    with pytest.raises(ParseError, match=r"zip bomb"):
        DocxParser(limits).parse(make_docx(), "big.docx")
    assert DocxParser().parse(make_docx(), "ok.docx").text


def test_office_xml_part_over_the_cap_is_refused_before_parsing() -> None:
    """Under the unzipped cap but one huge XML part: python-docx would need ~20x it in memory."""
    from docshelf.config import ParseSettings
    from docshelf.parse.limits import ParseLimits

    buf = io.BytesIO()
    src_bytes = io.BytesIO(make_docx())
    with zipfile.ZipFile(src_bytes) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            body = src.read(item.filename)
            if item.filename == "word/document.xml":  # padding XML parsers must still read
                body = body.replace(b"<w:body>", b"<w:body>" + b"<!--" + b" " * 300_000 + b"-->")
            dst.writestr(item, body)
    limits = ParseLimits.from_settings(ParseSettings(max_xml_part_mb=0.2))
    with pytest.raises(ParseError, match=r"parse.max_xml_part_mb"):
        DocxParser(limits).parse(buf.getvalue(), "padded.docx")
    assert "quokka" in DocxParser().parse(buf.getvalue(), "padded.docx").text  # default cap: fine


def test_legacy_office_formats_are_reported_not_parsed() -> None:
    reg = default_registry()
    for ext in (".doc", ".ppt", ".xls"):
        parser = reg.for_path("old" + ext)
        assert isinstance(parser, LegacyOfficeParser)
        assert ext in reg.binary_extensions
    with pytest.raises(ParseError, match=r"save it as \.docx/\.pptx/\.xlsx"):
        reg.parse(b"\xd0\xcf\x11\xe0", "old.doc")


# ----- spreadsheets ------------------------------------------------------------


def make_xlsx() -> bytes:
    import datetime as dt

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "People"
    ws.append(["name", "born", "score"])
    ws.append(["Ada", dt.date(1815, 12, 10), 9.0])
    ws.append([None, None, None])
    ws.append(["Grace", None, 7.5])
    other = wb.create_sheet("Notes")
    other.append(["topic"])
    other.append(["quokka census"])
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def test_xlsx_sheets_as_headings_and_rows_with_header_context() -> None:
    doc = XlsxParser().parse(make_xlsx(), "book.xlsx")
    assert doc.file_type == "xlsx" and doc.metadata["sheets"] == ["People", "Notes"]
    assert [text_of(doc, s) for s in doc.sections if s.kind == "heading"] == ["Sheet: People", "Sheet: Notes"]
    rows = text_of(doc, find(doc, "Ada")).split("\n")
    assert rows == ["columns: name; born; score", "row 2: name: Ada; born: 1815-12-10; score: 9",
                    "row 4: name: Grace; score: 7.5"]  # fmt: skip
    assert find(doc, "quokka census").heading_path == ("Sheet: Notes",)


def test_sheet_rows_over_the_cap_are_cut_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    import docshelf.parse.sheets as sheets

    monkeypatch.setattr(sheets, "MAX_ROWS", 3)
    doc = XlsxParser().parse(make_xlsx(), "book.xlsx")
    assert doc.metadata["truncated_sheets"] == ["People"]
    assert "Grace" not in doc.text and "not indexed" in doc.text
    csv_doc = CsvParser().parse(b"a,b\n1,2\n3,4\n5,6\n", "t.csv")
    assert csv_doc.metadata == {"truncated": True} and "5" not in csv_doc.text


def test_csv_delimiter_quotes_and_tsv() -> None:
    data = b'city;note\n"Perth";"hot; dry"\nHobart;\n'
    doc = CsvParser().parse(data, "cities.csv")
    assert doc.text == "columns: city; note\nrow 2: city: Perth; note: hot; dry\nrow 3: city: Hobart"
    tsv = CsvParser().parse(b"k\tv\nx\t1,5\n", "a.tsv")
    assert tsv.text.endswith("row 2: k: x; v: 1,5")
    legacy = CsvParser().parse("city,note\nK\xf6ln,caf\xe9 am Dom\n".encode("latin-1"), "l.csv")
    assert "city: Köln; note: café am Dom" in legacy.text
    assert legacy.metadata["encoding"] == "cp1252"


# ----- HTML --------------------------------------------------------------------

PAGE = """<!doctype html><html><head><title>Wildlife  Notes</title>
<style>body { color: red }</style><script>var tracking = "SECRET";</script></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<h1>Marsupials</h1><p>Quokkas are   small.<br>They smile.</p>
<h2>Diet</h2><ul><li>Grass</li><li>Leaves &amp; stems</li></ul>
<pre>def feed():
    return "grass"</pre>
<table><tr><th>animal</th><th>kg</th></tr><tr><td>quokka</td><td>3</td></tr></table>
<h1>Other</h1><div>Wombats dig.</div>
<footer>Copyright footer text</footer><script>alert(1)</script></body></html>"""


def test_html_keeps_content_drops_chrome() -> None:
    doc = HtmlParser().parse(PAGE.encode(), "page.html")
    assert doc.file_type == "html" and doc.title == "Wildlife Notes"
    for gone in ("SECRET", "color: red", "Home", "Copyright", "alert"):
        assert gone not in doc.text
    assert text_of(doc, find(doc, "Quokkas")) == "Quokkas are small.\nThey smile."
    assert find(doc, "Quokkas").heading_path == ("Marsupials",)
    leaves = find(doc, "Leaves")
    assert leaves.kind == "list" and leaves.heading_path == ("Marsupials", "Diet")
    code = find(doc, "def feed")
    assert code.kind == "code" and text_of(doc, code) == 'def feed():\n    return "grass"'
    assert text_of(doc, find(doc, "quokka |")) == "animal | kg\nquokka | 3"
    assert find(doc, "Wombats").heading_path == ("Other",)


def test_html_in_a_declared_legacy_charset() -> None:
    data = '<html><head><meta charset="windows-1252"></head><body><p>café</p></body></html>'
    doc = HtmlParser().parse(data.encode("cp1252"), "old.htm")
    assert doc.text == "café"


# ----- code and data -------------------------------------------------------------

PY_SOURCE = '''"""Module docstring."""

import os

CONSTANT = 1


@decorator
def alpha(x):
    """Alpha."""
    y = x + 1

    return y


class Beta:
    def method(self):
        return os.sep


if __name__ == "__main__":
    alpha(CONSTANT)
'''


def test_python_top_level_defs_and_classes_start_sections() -> None:
    doc = CodeParser("python", (".py",)).parse(PY_SOURCE.encode(), "m.py")
    assert doc.text == PY_SOURCE and doc.file_type == "python"
    headings = [(text_of(doc, s), s.heading_path) for s in doc.sections if s.kind == "heading"]
    assert headings == [("@decorator\ndef alpha(x):", ("alpha",)), ("class Beta:", ("Beta",))]
    assert find(doc, "return y").heading_path == ("alpha",)
    assert find(doc, "return os.sep").heading_path == ("Beta",)
    assert find(doc, "__main__").heading_path == ()
    assert find(doc, "CONSTANT = 1").heading_path == ()


def test_python_that_does_not_parse_falls_back_to_blocks() -> None:
    sections = python_sections("def broken(:\n    pass\n\nx = 1\n")
    assert [s.kind for s in sections] == ["code", "code"] and all(s.heading_path == () for s in sections)


def test_code_and_data_files_keep_their_text() -> None:
    reg = default_registry()
    for name in ("a.js", "b.ts", "c.go", "d.rs", "e.java", "f.c", "g.h", "h.cpp", "i.rb", "j.sh",
                 "k.sql", "l.json", "m.yaml", "n.toml"):  # fmt: skip
        data = b"first = 1\n\nsecond = 2\n"
        doc = reg.parse(data, name)
        assert doc.text == data.decode()
        assert [text_of(doc, s) for s in doc.sections] == ["first = 1", "second = 2"]
    assert reg.parse(b"{}", "x.json").file_type == "json"


@pytest.mark.parametrize(
    ("name", "file_type"),
    [
        ("lib/Git/SVN.pm", "perl"), ("contrib/hooks/update.perl", "perl"), ("fit.R", "r"),
        ("solve.jl", "julia"), ("Main.hs", "haskell"), ("mix.exs", "elixir"), ("app.dart", "dart"),
        ("core.clj", "clojure"), ("lexer.ml", "ocaml"), ("View.m", "objc"), ("build.gradle", "groovy"),
        ("setup.ps1", "powershell"), ("make.bat", "batch"), ("site.scss", "css"), ("App.vue", "vue"),
        ("api.proto", "proto"), ("main.tf", "terraform"), ("setup.cfg", "ini"), ("nginx.conf", "ini"),
        ("fix.patch", "diff"), ("ftplugin.vim", "vim"),
    ],
)  # fmt: skip
def test_source_trees_in_more_languages_are_read_as_code(name: str, file_type: str) -> None:
    # a checkout of git's sources skipped its Perl (.pl, .perl, .pm) as "no parser"
    data = b"first = 1\n\nsecond = 2\n"
    doc = default_registry().parse(data, name)
    assert doc.file_type == file_type
    assert [text_of(doc, s) for s in doc.sections] == ["first = 1", "second = 2"]


def test_a_binary_file_with_a_code_extension_is_refused_in_one_line() -> None:
    video = bytes([0x47]) + bytes(range(256)) * 50  # an MPEG transport stream is also ".ts"
    with pytest.raises(ParseError, match=r"video\.ts: .*binary"):
        default_registry().parse(video, "video.ts")


# ----- through a real sync ---------------------------------------------------------


def build_corpus(root: Path) -> None:
    long_page = [f"Line {i} about the quokka census on Rottnest." for i in range(30)]
    (root / "report.pdf").write_bytes(make_pdf([["Intro text."], None, long_page]))
    (root / "locked.pdf").write_bytes(encrypt(SAMPLE_PDF, "user-secret", "o"))
    (root / "broken.pdf").write_bytes(SAMPLE_PDF[:300])
    (root / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00legacy")
    (root / "guide.docx").write_bytes(make_docx())
    (root / "deck.pptx").write_bytes(make_pptx())
    (root / "book.xlsx").write_bytes(make_xlsx())
    (root / "page.html").write_text(PAGE, encoding="utf-8")
    (root / "tool.py").write_text(PY_SOURCE, encoding="utf-8")
    (root / "note.md").write_text("# Note\n\nPlain markdown still works.\n", encoding="utf-8")


def chunks_by_path(rt: Stages) -> dict[str, list[Chunk]]:
    docs = {d.id: d.path for d in rt.store.iter_documents()}
    out: dict[str, list[Chunk]] = {}
    for c in rt.store.iter_chunks():
        out.setdefault(docs[c.doc_id], []).append(c)
    return out


def test_sync_indexes_every_format_and_reports_the_unreadable(stages: Stages, tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    build_corpus(root)
    report = stages.indexer().sync("test", [root])
    reasons = {s.path: s.reason for s in report.skipped}
    assert "password-protected" in reasons["locked.pdf"]
    assert "damaged or unreadable PDF" in reasons["broken.pdf"]
    assert "legacy binary Office format" in reasons["old.doc"]
    assert sorted(report.added) == ["book.xlsx", "deck.pptx", "guide.docx", "note.md", "page.html",
                                    "report.pdf", "tool.py"]  # fmt: skip
    chunks = chunks_by_path(stages)
    reg = default_registry()
    for path, doc_chunks in chunks.items():
        parsed = reg.parse((root / path).read_bytes(), path)
        for c in doc_chunks:
            assert parsed.text[c.char_start : c.char_end] == c.text, path

    pdf = chunks["report.pdf"]
    assert len(pdf) > 1  # the long page was split, and every piece keeps its page
    assert {c.page for c in pdf} == {1, 3}
    assert all(c.page == 3 for c in pdf if "Rottnest" in c.text)
    records = {d.path: d for d in stages.store.iter_documents()}
    assert records["report.pdf"].metadata["pages_without_text"] == [2]
    assert records["report.pdf"].file_type == "pdf"

    deck = chunks["deck.pptx"]
    assert any(c.page == 2 and "numbat" in c.text for c in deck)
    assert all(c.page is not None for c in deck)
    assert any(c.heading_path == ("Field Guide", "Install", "Linux") for c in chunks["guide.docx"])
    assert any(c.heading_path == ("Sheet: Notes",) and "quokka census" in c.text for c in chunks["book.xlsx"])

    beta = next(c for c in chunks["tool.py"] if c.text.startswith("class Beta"))
    assert beta.heading_path == ("Beta",)
    assert beta.line_start == PY_SOURCE.splitlines().index("class Beta:") + 1


def test_pdf_that_breaks_keeps_its_old_version(stages: Stages, tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    target = root / "report.pdf"
    target.write_bytes(SAMPLE_PDF)
    stages.indexer().sync("test", [root])
    before = [c.text for c in stages.store.iter_chunks()]
    assert any("quokka" in t for t in before)
    target.write_bytes(encrypt(SAMPLE_PDF, "user-secret", "o"))
    report = stages.indexer().sync("test", [root])
    assert [s.path for s in report.skipped] == ["report.pdf"]
    assert not report.removed
    assert [c.text for c in stages.store.iter_chunks()] == before
