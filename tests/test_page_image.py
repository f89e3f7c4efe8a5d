"""Shelf.page_image: a cited PDF page drawn by PDFium, with the passage boxed where its ink is."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from docshelf import AccessError, DocshelfError, NotFoundError, PageImage, Shelf
from test_formats import make_pdf

PAGES = [
    ["Quarterly report", "Revenue grew in the north."],
    None,  # no text layer
    [*(f"Filler line {i} about nothing." for i in range(20)), "The quokka lives on Rottnest Island,",
     "where it eats leaves and grass at night."],
]  # fmt: skip


@pytest.fixture
def pdf_shelf(shelf: Shelf, tmp_path: Path) -> Shelf:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "report.pdf").write_bytes(make_pdf(PAGES))
    (docs / "notes.md").write_text("# Notes\n\nNothing about marsupials.\n")
    shelf.index([docs])
    return shelf


def _ink(image: Image.Image, box: tuple[float, float, float, float]) -> float:
    """Share of dark pixels inside ``box`` (shares of the picture)."""
    w, h = image.size
    crop = image.convert("L").crop(
        (int(box[0] * w), int(box[1] * h), int(box[2] * w) + 1, int(box[3] * h) + 1)
    )
    counts = crop.histogram()
    return sum(counts[:128]) / max(1, sum(counts))


def test_a_hit_on_a_pdf_draws_its_page_with_the_passage_boxed_over_its_ink(pdf_shelf: Shelf) -> None:
    hit = next(h for h in pdf_shelf.search("quokka Rottnest", mode="keyword").hits if h.path == "report.pdf")
    assert hit.page == 3
    got = pdf_shelf.page_image(hit.path, chunk_id=hit.chunk_id, width=612)
    assert isinstance(got, PageImage)
    assert (got.page, got.pages, got.width, got.height) == (3, 3, 612, 792)
    image = Image.open(io.BytesIO(got.png))
    assert image.size == (612, 792) and got.png.startswith(b"\x89PNG")
    assert got.boxes and got.note is None
    # the passage's lines are boxed where they are printed (72 pt from the left, from the top down)
    # and each box covers ink; the blank page below the text has none
    for box in got.boxes:
        left, top, right, bottom = box
        assert 0 <= left < right <= 1 and 0 <= top < bottom <= 1
        assert abs(left - 72 / 612) < 0.02
        assert _ink(image, box) > 0.05
    assert _ink(image, (0.1, 0.8, 0.9, 0.95)) == 0
    last = max(got.boxes, key=lambda b: b[1])
    assert last[3] < 0.6  # 22 lines of 14 pt from 72 pt below the top end near the middle


def test_the_box_marks_only_the_passage_not_the_whole_page(pdf_shelf: Shelf, tmp_path: Path) -> None:
    hit = next(h for h in pdf_shelf.search("revenue north", mode="keyword").hits if h.path == "report.pdf")
    got = pdf_shelf.page_image(hit.path, chunk_id=hit.chunk_id, width=800)
    assert got.page == 1 and got.width == 800
    assert 1 <= len(got.boxes) <= 2  # the two printed lines (a heading may stand alone)
    assert all(b[3] < 0.15 for b in got.boxes)


def test_a_page_without_text_is_drawn_without_boxes(pdf_shelf: Shelf) -> None:
    got = pdf_shelf.page_image("report.pdf", 2)
    assert got.page == 2 and got.boxes == [] and got.note is None
    width, height = Image.open(io.BytesIO(got.png)).size
    assert width == 1000 and abs(height - 1000 * 792 / 612) <= 1


def test_a_passage_asked_on_another_page_is_not_boxed(pdf_shelf: Shelf) -> None:
    hit = next(h for h in pdf_shelf.search("quokka", mode="keyword").hits if h.path == "report.pdf")
    assert pdf_shelf.page_image("report.pdf", 1, chunk_id=hit.chunk_id).boxes == []


def test_refusals_say_what_to_do(pdf_shelf: Shelf) -> None:
    with pytest.raises(NotFoundError, match="no page 9"):
        pdf_shelf.page_image("report.pdf", 9)
    with pytest.raises(DocshelfError, match="not a PDF"):
        pdf_shelf.page_image("notes.md", 1)
    with pytest.raises(AccessError):
        pdf_shelf.page_image("../report.pdf", 1)
    with pytest.raises(DocshelfError, match="width"):
        pdf_shelf.page_image("report.pdf", 1, width=10_000)
    other = pdf_shelf.search("marsupials", mode="keyword").hits[0]
    with pytest.raises(NotFoundError, match="no passage"):
        pdf_shelf.page_image("report.pdf", chunk_id=other.chunk_id)


def test_a_pdf_changed_on_disk_is_drawn_and_says_the_passage_is_not_placed(
    pdf_shelf: Shelf, tmp_path: Path
) -> None:
    hit = next(h for h in pdf_shelf.search("quokka", mode="keyword").hits if h.path == "report.pdf")
    (tmp_path / "docs" / "report.pdf").write_bytes(make_pdf([["One"], ["Two"], ["Something else entirely"]]))
    got = pdf_shelf.page_image("report.pdf", chunk_id=hit.chunk_id)
    assert got.boxes == [] and got.note and "not known" in got.note
