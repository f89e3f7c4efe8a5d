"""Office fidelity: every part of a Word, PowerPoint or Excel package that holds users' text,
Strict OOXML, macro and template variants, .xlsb, and password-protected files; all generated."""

from __future__ import annotations

import io
import struct
import zipfile

import docx
import openpyxl
import pptx
import pytest
from openpyxl.chart import BarChart, Reference
from openpyxl.comments import Comment
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Inches

from docshelf.errors import ParseError
from docshelf.parse import default_registry
from docshelf.parse.docx import DocxParser
from docshelf.parse.pptx import PptxParser
from docshelf.parse.xlsb import XlsbParser
from docshelf.parse.xlsx import XlsxParser

REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def rezip(data: bytes, replace: dict[str, tuple[str, str]], add: dict[str, bytes]) -> bytes:
    """A copy of the zip with text replaced in some parts (name -> (old, new)) and parts added."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename in replace:
                old, new = replace[info.filename]
                text = body.decode("utf-8")
                assert old in text, (info.filename, old)
                body = text.replace(old, new, 1).encode("utf-8")
            dst.writestr(info.filename, body)
        for name, body in add.items():
            dst.writestr(name, body)
    return out.getvalue()


BODY_XML = """
<w:sdt><w:sdtPr><w:alias w:val="Client"/></w:sdtPr><w:sdtContent>
  <w:p><w:r><w:t>ControlledQuokka answer</w:t></w:r></w:p></w:sdtContent></w:sdt>
<w:p><w:r><w:t>Before the box.</w:t></w:r><w:r><mc:AlternateContent>
  <mc:Choice Requires="wps"><w:drawing><wps:txbx><w:txbxContent>
    <w:p><w:r><w:t>BoxedWombat inside</w:t></w:r></w:p></w:txbxContent></wps:txbx></w:drawing></mc:Choice>
  <mc:Fallback><w:pict><v:textbox><w:txbxContent>
    <w:p><w:r><w:t>BoxedWombat inside</w:t></w:r></w:p></w:txbxContent></v:textbox></w:pict></mc:Fallback>
</mc:AlternateContent></w:r></w:p>
<w:p><w:r><w:ruby><w:rubyPr/><w:rt><w:r><w:t>とうきょう</w:t></w:r></w:rt>
  <w:rubyBase><w:r><w:t>東京</w:t></w:r></w:rubyBase></w:ruby></w:r></w:p>
<w:p><w:del><w:r><w:delText>DeletedBandicoot</w:delText></w:r></w:del><w:r><w:t>Kept text</w:t></w:r>
  <w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText>HYPERLINK "x"</w:instrText></w:r></w:p>
<w:altChunk r:id="rIdAlt"/>
"""
FOOTNOTES = f"""<?xml version="1.0" encoding="UTF-8"?><w:footnotes {W}>
<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>
<w:footnote w:id="1"><w:p><w:r><w:t>FootnoteNumbat source</w:t></w:r></w:p></w:footnote></w:footnotes>"""


def make_rich_docx() -> bytes:
    d = docx.Document()
    d.add_heading("Field Guide", 0)
    d.add_heading("Marsupials", 1)
    para = d.add_paragraph("Commented words")
    d.add_comment(para.runs, text="CommentedPlatypus remark", author="A", initials="A")
    outer = d.add_table(rows=1, cols=2)
    outer.cell(0, 0).text = "Outer cell"
    outer.cell(0, 1).add_table(rows=1, cols=1).cell(0, 0).text = "NestedPossum value"
    d.sections[0].header.paragraphs[0].text = "HeaderKoala running"
    d.sections[0].footer.paragraphs[0].text = "FooterEmu running"
    buf = io.BytesIO()
    d.save(buf)
    rels = (
        f'<Relationship Id="rIdAlt" Type="{REL}/aFChunk" Target="chunk.html"/>'
        f'<Relationship Id="rIdFn" Type="{REL}/footnotes" Target="footnotes.xml"/></Relationships>'
    )
    return rezip(
        buf.getvalue(),
        {
            "word/document.xml": ("<w:sectPr", BODY_XML + "<w:sectPr"),
            "word/_rels/document.xml.rels": ("</Relationships>", rels),
        },
        {
            "word/chunk.html": b"<html><body><h2>Imported</h2><p>AltChunkDingo text</p></body></html>",
            "word/footnotes.xml": FOOTNOTES.encode(),
        },
    )


def test_docx_reads_every_part_with_text_once() -> None:
    doc = DocxParser().parse(make_rich_docx(), "guide.docx")
    text = doc.text
    words = [
        "ControlledQuokka",
        "BoxedWombat",
        "東京(とうきょう)",
        "Kept text",
        "AltChunkDingo",
        "NestedPossum",
    ]
    for word in [*words, "HeaderKoala", "FooterEmu", "FootnoteNumbat", "CommentedPlatypus"]:
        assert word in text, word
    assert text.count("BoxedWombat") == 1  # the text box's two drawings are one box
    assert "DeletedBandicoot" not in text and "HYPERLINK" not in text
    assert doc.title == "Field Guide"
    assert next(s for s in doc.sections if "ControlledQuokka" in text[s.start : s.end]).heading_path == (
        "Field Guide", "Marsupials")  # fmt: skip
    assert "Outer cell | NestedPossum value" in text


@pytest.mark.parametrize("ext", [".docm", ".dotx", ".dotm"])
def test_word_macro_and_template_variants_are_read(ext: str) -> None:
    doc = default_registry().parse(make_rich_docx(), "template" + ext)
    assert "ControlledQuokka" in doc.text and doc.file_type == "docx"


def test_password_protected_office_files_are_reported_as_such() -> None:
    # an encrypted OOXML file is an OLE compound file holding an "EncryptedPackage" stream
    ole = (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504) + "EncryptedPackage".encode("utf-16-le") + bytes(64)
    )
    for parser, name in ((DocxParser(), "a.docx"), (PptxParser(), "a.pptx"), (XlsxParser(), "a.xlsx")):
        with pytest.raises(ParseError, match="password-protected"):
            parser.parse(ole, name)
    with pytest.raises(ParseError, match="not a zip archive"):
        DocxParser().parse(b"PK\x03\x04truncated", "cut.docx")


def make_rich_pptx() -> bytes:
    prs = pptx.Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Wildlife census"
    group = slide.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(2), Inches(3), Inches(1)).text_frame.text = "GroupedQuoll note"
    data = CategoryChartData()
    data.categories = ["Spring", "Autumn"]
    data.add_series("Sightings", (3, 5))
    chart = slide.shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(3), Inches(4), Inches(3), data
    )
    chart.chart.has_title = True
    chart.chart.chart_title.text_frame.text = "ChartedBilby counts"
    slide.notes_slide.notes_text_frame.text = "SpeakerNotesNumbat"
    buf = io.BytesIO()
    prs.save(buf)
    return buf.getvalue()


def test_pptx_reads_groups_charts_and_notes_on_the_slide() -> None:
    doc = PptxParser().parse(make_rich_pptx(), "deck.pptx")
    for word in (
        "Slide 1: Wildlife census",
        "GroupedQuoll",
        "ChartedBilby",
        "Spring",
        "Autumn",
        "SpeakerNotesNumbat",
    ):
        assert word in doc.text, word
    assert {s.page for s in doc.sections} == {1}
    assert default_registry().parse(make_rich_pptx(), "deck.ppsx").text == doc.text


def make_rich_xlsx() -> bytes:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Counts"
    ws.append(["animal", "count"])
    ws.append(["quokka", 4])
    ws.append(["wombat", 7])
    ws["A2"].comment = Comment("CommentedEchidna seen twice", "ranger")
    ws.oddHeader.center.text = "HeaderKookaburra"
    ws.oddFooter.right.text = "Page &P of &N"
    chart = BarChart()
    chart.title = "ChartedDugong totals"
    chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=3), titles_from_data=True)
    ws.add_chart(chart, "D2")
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def test_xlsx_reads_cells_comments_headers_and_charts() -> None:
    doc = XlsxParser().parse(make_rich_xlsx(), "book.xlsx")
    assert "row 2: animal: quokka; count: 4" in doc.text
    for word in ("CommentedEchidna", "HeaderKookaburra", "ChartedDugong"):
        assert word in doc.text, word
    assert "&P" not in doc.text
    assert default_registry().parse(make_rich_xlsx(), "macro.xlsm").text == doc.text


STRICT = "http://purl.oclc.org/ooxml"


def make_strict_xlsx() -> bytes:
    """A Strict OOXML (ISO 29500) workbook: the same parts, other namespaces."""
    rel = f"{STRICT}/officeDocument/relationships"
    main = f'xmlns="{STRICT}/spreadsheetml/main" xmlns:r="{rel}"'
    parts = {
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
        "_rels/.rels": '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/_rels/workbook.xml.rels": '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
        f'relationships"><Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/>'
        f'<Relationship Id="rId2" Type="{rel}/sharedStrings" Target="sharedStrings.xml"/></Relationships>',
        "xl/workbook.xml": f'<workbook {main}><sheets><sheet name="StrictSheet" sheetId="1" r:id="rId1"/>'
        "</sheets></workbook>",
        "xl/sharedStrings.xml": f"<sst {main}><si><t>name</t></si><si><t>StrictPlatypus</t></si></sst>",
        "xl/worksheets/sheet1.xml": f'<worksheet {main}><sheetData><row r="1"><c r="A1" t="s"><v>0</v>'
        '</c></row><row r="2"><c r="A2" t="s"><v>1</v></c><c r="B2"><v>2.5</v></c></row></sheetData>'
        "</worksheet>",
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, body in parts.items():
            z.writestr(name, body)
    return out.getvalue()


def test_strict_ooxml_workbook_is_read() -> None:
    doc = XlsxParser().parse(make_strict_xlsx(), "strict.xlsx")
    assert doc.metadata["sheets"] == ["StrictSheet"]
    assert "row 2: name: StrictPlatypus; column B: 2.5" in doc.text


def _xlsx_with_sheet(sheet_data: str) -> bytes:
    """A workbook of one sheet whose cells are inline strings and numbers, as given."""
    main = f'xmlns="{SPREADSHEETML}" xmlns:r="{OFFICE_RELS}"'
    parts = {
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
        "_rels/.rels": f'<Relationships xmlns="{PACKAGE_RELS}"><Relationship Id="rId1" '
        f'Type="{OFFICE_RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/_rels/workbook.xml.rels": f'<Relationships xmlns="{PACKAGE_RELS}"><Relationship Id="rId1" '
        f'Type="{OFFICE_RELS}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        "xl/workbook.xml": f'<workbook {main}><sheets><sheet name="Export" sheetId="1" r:id="rId1"/>'
        "</sheets></workbook>",
        "xl/worksheets/sheet1.xml": f"<worksheet {main}><sheetData>{sheet_data}</sheetData></worksheet>",
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, body in parts.items():
            z.writestr(name, body)
    return out.getvalue()


SPREADSHEETML = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
OFFICE_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PACKAGE_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"


def _cell(value: str | float, ref: str | None = None) -> str:
    at = f' r="{ref}"' if ref else ""
    if isinstance(value, str):
        return f'<c{at} t="inlineStr"><is><t>{value}</t></is></c>'
    return f"<c{at}><v>{value}</v></c>"


def test_xlsx_cells_and_rows_without_references_follow_the_previous_one() -> None:
    # the r attributes are optional (some exporters leave them out): each cell is the next column,
    # each row the next row; one cell or row that has it sets the place for those after it
    header = "<row>" + "".join(_cell(v) for v in ("city", "animal", "count")) + "</row>"
    first = "<row>" + "".join(_cell(v) for v in ("Perth", "quokka", 12)) + "</row>"
    placed = '<row r="5">' + _cell("Hobart", "A5") + _cell("wombat", "C5") + _cell(3) + "</row>"
    after = "<row>" + "".join(_cell(v) for v in ("Cairns", "cassowary", 2)) + "</row>"
    doc = XlsxParser().parse(_xlsx_with_sheet(header + first + placed + after), "export.xlsx")
    rows = [line for line in doc.text.split("\n") if line.startswith(("row", "columns"))]
    assert rows == [
        "columns: city; animal; count",
        "row 2: city: Perth; animal: quokka; count: 12",
        "row 5: city: Hobart; count: wombat; column D: 3",
        "row 6: city: Cairns; animal: cassowary; count: 2",
    ]


def _record(kind: int, payload: bytes) -> bytes:
    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            byte = n & 0x7F
            n >>= 7
            out.append(byte | (0x80 if n else 0))
            if not n:
                return bytes(out)

    return varint(kind) + varint(len(payload)) + payload


def _wide(text: str) -> bytes:
    return struct.pack("<I", len(text)) + text.encode("utf-16-le")


def make_xlsb() -> bytes:
    """A binary workbook written record by record (MS-XLSB): one sheet, shared and inline strings."""
    cell = struct.pack("<II", 0, 0)  # column 0, style 0
    sheet = (
        _record(0, struct.pack("<I", 0) + bytes(13)) + _record(7, cell + struct.pack("<I", 0))
        + _record(0, struct.pack("<I", 1) + bytes(13)) + _record(7, cell + struct.pack("<I", 1))
        + _record(5, struct.pack("<II", 1, 0) + struct.pack("<d", 42.5))
        + _record(6, struct.pack("<II", 2, 0) + _wide("InlineWallaby"))
    )  # fmt: skip
    strings = _record(19, b"\x00" + _wide("species")) + _record(19, b"\x00" + _wide("BinaryBandicoot"))
    workbook = _record(156, bytes(8) + _wide("rId1") + _wide("Binary Sheet"))
    rels_ns = "http://schemas.openxmlformats.org/package/2006/relationships"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("_rels/.rels", f'<Relationships xmlns="{rels_ns}"><Relationship Id="rId1" '
                   f'Type="{REL}/officeDocument" Target="xl/workbook.bin"/></Relationships>')  # fmt: skip
        z.writestr("xl/_rels/workbook.bin.rels", f'<Relationships xmlns="{rels_ns}">'
                   f'<Relationship Id="rId1" Type="{REL}/worksheet" Target="worksheets/sheet1.bin"/>'
                   f'<Relationship Id="rId2" Type="{REL}/sharedStrings" Target="sharedStrings.bin"/>'
                   "</Relationships>")  # fmt: skip
        z.writestr("xl/workbook.bin", workbook)
        z.writestr("xl/worksheets/sheet1.bin", sheet)
        z.writestr("xl/sharedStrings.bin", strings)
    return out.getvalue()


def test_xlsb_sheets_and_strings_are_read_from_biff12_records() -> None:
    doc = XlsbParser().parse(make_xlsb(), "book.xlsb")
    assert doc.metadata["sheets"] == ["Binary Sheet"]
    assert "row 2: species: BinaryBandicoot; column B: 42.5; column C: InlineWallaby" in doc.text
