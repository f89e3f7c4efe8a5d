"""PDF fidelity: PDFium text with hyphenation joined, running headers dropped, the outline as
heading paths, form fields and comments read, pypdf as the second opinion; made-up PDFs only."""

from __future__ import annotations

import io

import pypdf
from pypdf.annotations import Text
from pypdf.generic import (
    ArrayObject,
    DictionaryObject,
    FloatObject,
    NameObject,
    NumberObject,
    TextStringObject,
)

from docshelf.parse.limits import ParseLimits
from docshelf.parse.pdf import PdfParser, _second_opinion
from docshelf.parse.pdf_text import PdfContent, drop_running_lines, normalise_page_text
from test_formats import make_pdf

PAGES = [
    ["ACME Quarterly Report", "Introduction", "The Karten-", "wechselabbildung is smooth.", "Page 1"],
    ["ACME Quarterly Report", "Chapter Two", "Second page text here.", "Page 2"],
    ["ACME Quarterly Report", "Third page about quokkas.", "Page 3"],
    ["ACME Quarterly Report", "Fourth page about wombats.", "Page 4"],
]


def _with_outline(data: bytes) -> bytes:
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(data)))
    intro = writer.add_outline_item(title="Introduction", page_number=0)
    writer.add_outline_item(title="Chapter Two", page_number=1)
    writer.add_outline_item(title="Details", page_number=2, parent=intro)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_hyphenation_joined_and_running_headers_kept_once() -> None:
    doc = PdfParser().parse(make_pdf(PAGES), "report.pdf")
    assert "Kartenwechselabbildung is smooth" in doc.text
    assert doc.text.count("ACME Quarterly Report") == 1  # the first occurrence stays findable
    assert "Page 2" not in doc.text and "Page 4" not in doc.text
    assert doc.metadata["pdf_library"] == "pdfium"
    assert {s.page for s in doc.sections} == {1, 2, 3, 4}


def test_line_end_hyphens_join_only_before_lower_case() -> None:
    assert normalise_page_text("Daten-\nbank and Nord-\nAmerika\r\nKarten\x02wechsel Ost\x02West") == (
        "Datenbank and Nord-\nAmerika\nKartenwechsel Ost-West"
    )


def test_running_lines_need_three_pages_and_half_of_them() -> None:
    two = ["Header\nbody one", "Header\nbody two"]
    assert drop_running_lines(two) == two
    pages = ["Title\nalpha\n1", "Title\nbeta\n2", "Other\ngamma\n3", "Title\ndelta\n4"]
    assert drop_running_lines(pages) == ["Title\nalpha\n1", "beta", "Other\ngamma", "delta"]


def test_outline_entries_become_heading_paths_from_where_their_title_is() -> None:
    doc = PdfParser().parse(_with_outline(make_pdf(PAGES)), "report.pdf")
    by_text = {doc.text[s.start : s.end]: s for s in doc.sections}
    chapter = by_text["Chapter Two"]
    assert chapter.kind == "heading" and chapter.page == 2 and chapter.heading_path == ("Chapter Two",)
    assert by_text["Second page text here."].heading_path == ("Chapter Two",)
    # "Details" is not printed on page 3: its path applies from the top of the page, with its parent
    third = next(s for t, s in by_text.items() if "quokkas" in t)
    assert third.heading_path == ("Introduction", "Details") and third.page == 3


def _form_pdf() -> bytes:
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(make_pdf([["Application form"]]))))
    page = writer.pages[0]
    field = DictionaryObject({
        NameObject("/Type"): NameObject("/Annot"), NameObject("/Subtype"): NameObject("/Widget"),
        NameObject("/FT"): NameObject("/Tx"), NameObject("/T"): TextStringObject("applicant"),
        NameObject("/V"): TextStringObject("Wilhelmina Quokkafield"), NameObject("/F"): NumberObject(4),
        NameObject("/Rect"): ArrayObject([FloatObject(v) for v in (72, 600, 300, 620)]),
    })  # fmt: skip
    ref = writer._add_object(field)
    page[NameObject("/Annots")] = ArrayObject([ref])
    writer._root_object[NameObject("/AcroForm")] = DictionaryObject(
        {NameObject("/Fields"): ArrayObject([ref])}
    )
    writer.add_annotation(0, Text(rect=(50, 500, 70, 520), text="Remember the wombat census"))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_form_field_values_and_comments_are_read_on_their_page() -> None:
    doc = PdfParser().parse(_form_pdf(), "form.pdf")
    assert "Application form" in doc.text
    assert "Wilhelmina Quokkafield" in doc.text
    assert "Remember the wombat census" in doc.text
    assert all(s.page == 1 for s in doc.sections)


class _FakePypdf:
    def __init__(self, pages: dict[int, str]) -> None:
        self.pages = pages
        self.asked: list[int] = []

    def text(self, index: int) -> str | None:
        self.asked.append(index)
        return self.pages.get(index)


def test_pages_with_words_split_into_letters_get_a_second_opinion() -> None:
    split = " ".join(["Nort h Buon a Vist a Driv e"] * 6)
    maths = " ".join(["Let x and y be in X so f of x is y"] * 6)
    content = PdfContent("pdfium", pages=[split, maths, "fine ordinary words " * 10, ""], failed_pages=[3])
    fake = _FakePypdf({0: " ".join(["North Buona Vista Drive"] * 6), 1: maths, 3: "rescued page text"})
    _second_opinion(content, fake, ParseLimits().deadline("x.pdf"))  # type: ignore[arg-type]
    assert content.pages[0].startswith("North Buona Vista Drive")
    assert content.pages[1] == maths  # one-letter maths is no reason to switch: pypdf reads the same
    assert content.pages[3] == "rescued page text" and content.failed_pages == []
    assert 2 not in fake.asked  # ordinary pages are not read twice


def test_a_pdf_pdfium_cannot_open_is_tried_with_pypdf_and_reported_once_when_both_fail() -> None:
    import pytest

    from docshelf.errors import ParseError

    with pytest.raises(ParseError, match=r"damaged or unreadable PDF .*pypdf"):
        PdfParser().parse(b"%PDF-1.7\n" + bytes(range(256)) * 8, "junk.pdf")
