"""PDF text layers the extractors misread: vertical Japanese, fonts without a usable ToUnicode
map (mojibake), values kept only in form fields. Made-up PDFs (tests/pdfwriter.py)."""

from __future__ import annotations

import pytest

from docshelf.parse.limits import ParseLimits
from docshelf.parse.pdf import PdfParser, _second_opinion
from docshelf.parse.pdf_pypdf import PypdfPages
from docshelf.parse.pdf_text import PdfContent
from pdfwriter import HELVETICA, MappedFont, build, glyph_codes, identity_font, latin_line, pages_pdf, stream

COLUMNS = [
    "今日は朝から雨が降っていましたが",
    "午後になって晴れてきました",
    "私たちは駅の近くで会議を開き",
    "来月の計画について話し合いました",
]
RUSSIAN = "Вчера вечером жители маленького города заметили на небе странный свет"
NO_OCR = ParseLimits(ocr=False)


def _vertical_page() -> bytes:
    # A horizontal line below the columns (a caption) makes PDFium read them as lines of one character
    font = MappedFont("".join(COLUMNS), tounicode_object=7)
    caption = latin_line("Minutes of the planning meeting", 72, 100, font=2)
    content = caption + font.vertical(COLUMNS * 6, font=1)
    return pages_pdf([content], [font.font, HELVETICA], [font.cmap])


def _mojibake(self: PypdfPages, index: int) -> str:
    # what pypdf makes of a vertical font's glyph numbers (Identity-V) when no ToUnicode map
    # says what they are: it reads them as UTF-16, letters of some other script, one string
    # per column as the typesetter wrote it
    return "\n".join("".join(chr(0x400 + ord(ch) % 0x50) for ch in column) for column in COLUMNS * 6)


def test_vertical_japanese_is_not_swapped_for_pypdfs_mojibake(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PypdfPages, "text", _mojibake)
    doc = PdfParser(NO_OCR).parse(_vertical_page(), "tategaki.pdf")
    for column in COLUMNS:  # joined back from PDFium's one character a line, so its words are found
        assert column in doc.text
    assert _mojibake(PypdfPages(b""), 0)[:4] not in doc.text


def test_one_wide_character_per_line_does_not_ask_for_a_second_opinion() -> None:
    asked: list[int] = []

    class Pypdf:
        def text(self, index: int) -> str:
            asked.append(index)
            return "never used"

    page = "\n".join("".join(COLUMNS))
    content = PdfContent("pdfium", pages=[page])
    _second_opinion(content, Pypdf(), NO_OCR.deadline("x.pdf"))  # type: ignore[arg-type]
    assert content.pages == [page] and asked == []


def _hangul_for_russian() -> bytes:
    fonts = [HELVETICA, *identity_font(8)]
    contents = [
        latin_line("Field report, page one: the sightings over the town.", 72, 720),
        b"BT /F2 12 Tf 72 720 Td " + glyph_codes(RUSSIAN) + b" Tj ET",
    ]
    return pages_pdf(contents, fonts)


def test_mojibake_from_a_font_without_tounicode_is_not_indexed_and_is_reported() -> None:
    doc = PdfParser(NO_OCR).parse(_hangul_for_russian(), "report.pdf")
    assert "Field report, page one" in doc.text
    assert not any("\uac00" <= ch <= "\ud7a3" for ch in doc.text)  # PDFium read the codes as Hangul
    assert doc.metadata["garbled_pages"] == [2]
    assert {s.page for s in doc.sections} == {1}


def test_a_garbled_page_takes_the_other_extractors_text_when_that_reads() -> None:
    class Pypdf:
        def text(self, index: int) -> str:
            return RUSSIAN

    garbage = "".join(chr(0xAC00 + 3 * (ord(ch) % 40)) for ch in RUSSIAN if ch != " ")
    content = PdfContent("pdfium", pages=[garbage])
    _second_opinion(content, Pypdf(), NO_OCR.deadline("x.pdf"))  # type: ignore[arg-type]
    assert content.pages == [RUSSIAN] and content.garbled_pages == []


def _form_with_stale_appearance() -> bytes:
    # the value sits on the field, its widget is a kid with an empty (stale) appearance stream:
    # flattening draws nothing and the widget's own dictionary has no /V
    return build([
        b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [6 0 R] /DR << /Font << /Helv 5 0 R >> >> "
        b"/DA (/Helv 0 Tf 0 g) >> >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> /Contents 4 0 R "
        b"/Annots [7 0 R] >>",
        stream(b""),
        HELVETICA,
        b"<< /FT /Tx /T (applicant) /V (Wilhelmina Quokkafield) /Kids [7 0 R] >>",
        b"<< /Type /Annot /Subtype /Widget /Parent 6 0 R /Rect [72 600 300 620] /F 4 /P 3 0 R "
        b"/AP << /N 8 0 R >> >>",
        stream(b"", b"/Type /XObject /Subtype /Form /BBox [0 0 228 20] "),
    ])  # fmt: skip


def test_a_value_kept_only_in_a_form_field_is_read() -> None:
    doc = PdfParser(NO_OCR).parse(_form_with_stale_appearance(), "form.pdf")
    assert "Wilhelmina Quokkafield" in doc.text
    assert [s.page for s in doc.sections] == [1]
