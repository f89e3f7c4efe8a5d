"""One PDF page as a picture, and where a passage's text sits on it (PDFium's text layer).

The web page shows a hit's page beside its text. The passage was cut from the page text the
indexer normalised (hyphens at line ends joined, running headers dropped, spaces tidied), so it
is found again on PDFium's characters compared without white space, hyphens or case; when the
whole passage is not there, its first and last words bound it.
"""

from __future__ import annotations

import ctypes
import io
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from docshelf.parse.quiet import native_stderr_to_log

__all__ = ["RenderedPage", "render_page"]

_MAX_PIXELS = 12_000_000  # a poster-sized page is drawn smaller rather than filling memory
_SKIPPED = frozenset("-\u00ad\u2010\u2011\x02")  # hyphens PDFium keeps or marks at a line end
_ENDS = 24  # characters of a passage's start and end that bound it when the whole is not found

Box = tuple[float, float, float, float]


@dataclass
class RenderedPage:
    """A page's PNG, its size in pixels, the page count, and the passage's boxes as shares of
    the picture's width and height (left, top, right, bottom); empty when not found."""

    png: bytes
    width: int
    height: int
    pages: int
    boxes: list[Box] = field(default_factory=list)
    has_text: bool = True  # False: no text layer (a scan), so nothing can be placed


def _fold(text: str) -> str:
    return "".join(
        c for c in unicodedata.normalize("NFKC", text).casefold() if not c.isspace() and c not in _SKIPPED
    )


def _span(haystack: str, needle: str) -> tuple[int, int] | None:
    """Where ``needle`` lies in ``haystack`` (both folded); bounded by its ends when not whole."""
    if not needle:
        return None
    at = haystack.find(needle)
    if at >= 0:
        return at, at + len(needle)
    head, tail = needle[:_ENDS], needle[-_ENDS:]
    start = haystack.find(head)
    if start < 0:
        return None
    end = haystack.find(tail, start + len(head))
    if end < 0 or end + len(tail) - start > 2 * len(needle):
        return start, start + len(head)  # only its start is certain: mark that much
    return start, end + len(tail)


def _char_boxes(raw: Any, page: Any, textpage: Any, size: tuple[int, int], needle: str) -> list[Box]:
    count = textpage.count_chars()
    folded: list[str] = []
    owner: list[int] = []  # the PDFium character each folded character came from
    for i in range(count):
        for c in _fold(chr(raw.FPDFText_GetUnicode(textpage.raw, i))):
            folded.append(c)
            owner.append(i)
    found = _span("".join(folded), _fold(needle))
    if found is None:
        return []
    chars = sorted(set(owner[found[0] : found[1]]))
    width, height = size
    dx, dy = ctypes.c_int(), ctypes.c_int()

    def device(x: float, y: float) -> tuple[float, float]:
        raw.FPDF_PageToDevice(page.raw, 0, 0, width, height, 0, x, y, ctypes.byref(dx), ctypes.byref(dy))
        return dx.value / width, dy.value / height

    boxes: list[list[float]] = []
    for i in chars:
        left, bottom, right, top = textpage.get_charbox(i)
        if right <= left or top <= bottom:
            continue
        (x0, y0), (x1, y1) = device(left, top), device(right, bottom)
        x0, x1, y0, y1 = min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1)
        last = boxes[-1] if boxes else None
        # the same line: vertical overlap of more than half the character, and not far to the left
        same_line = last is not None and min(y1, last[3]) - max(y0, last[1]) > (y1 - y0) / 2
        if last is not None and same_line and x0 >= last[0] - 0.01:
            last[:] = [min(last[0], x0), min(last[1], y0), max(last[2], x1), max(last[3], y1)]
        else:
            boxes.append([x0, y0, x1, y1])
    return [(round(a, 5), round(b, 5), round(c, 5), round(d, 5)) for a, b, c, d in boxes]


def render_page(data: bytes, index: int, width: int, needle: str = "") -> RenderedPage:
    """Page ``index`` (0-based) drawn ``width`` pixels wide, with the boxes of ``needle``.

    Raises IndexError for a page the file does not have and pypdfium2's PdfiumError for a file
    PDFium cannot open.
    """
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    with native_stderr_to_log(f"#page={index + 1}"):
        pdf = pdfium.PdfDocument(data)
        try:
            count = len(pdf)
            if not 0 <= index < count:
                raise IndexError(index)
            pdf.init_forms()  # form fields drawn with their values, as a viewer shows them
            page = pdf[index]
            try:
                w_pt, h_pt = page.get_size()
                if page.get_rotation() in (90, 270):
                    w_pt, h_pt = h_pt, w_pt
                scale = width / max(1.0, w_pt)
                if w_pt * h_pt * scale * scale > _MAX_PIXELS:
                    scale = (_MAX_PIXELS / max(1.0, w_pt * h_pt)) ** 0.5
                image = page.render(scale=scale, may_draw_forms=True).to_pil()
                textpage = page.get_textpage()
                try:
                    has_text = textpage.count_chars() > 0
                    boxes = _char_boxes(raw, page, textpage, image.size, needle) if has_text else []
                finally:
                    textpage.close()
            finally:
                page.close()
        finally:
            pdf.close()
    out = io.BytesIO()
    image.convert("RGB").save(out, format="PNG", optimize=False)
    return RenderedPage(out.getvalue(), image.size[0], image.size[1], count, boxes, has_text)
