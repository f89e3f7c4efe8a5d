"""OCR languages from the script Tesseract's OSD detects, rotated scans turned upright, and
images over the pixel limit refused before Tesseract runs (real Tesseract where installed)."""

from __future__ import annotations

import struct
import zlib

import pytest

from docshelf.errors import ParseError
from docshelf.parse import image as image_module
from docshelf.parse.image import ImageParser
from docshelf.parse.limits import ParseLimits
from docshelf.parse.ocr import installed_languages, osd_available
from docshelf.parse.ocr_script import OcrLanguages
from test_ocr import _font, encode, needs_tesseract, render

needs_osd = pytest.mark.skipif(not osd_available(), reason="Tesseract's osd data is not installed")
ENGLISH = [
    "The quick brown fox jumps over",
    "the lazy dog near the river bank.",
    "Rotated pages are read too.",
]


@needs_tesseract
@needs_osd
def test_latin_script_uses_latin_languages_only_and_rotation_is_corrected() -> None:
    upright = render(ENGLISH, _font("latin"))
    for img in (upright, upright.rotate(90, expand=True)):
        doc = ImageParser().parse(encode(img, "PNG"), "scan.png")
        assert "quick brown fox" in doc.text.lower()
        langs = doc.metadata["ocr_languages"]
        assert "eng" in langs and "kor" not in langs and "chi_sim" not in langs
        assert doc.metadata["ocr_script"] == "Latin"
    assert doc.metadata["ocr_rotated"] == 90


@needs_tesseract
@needs_osd
def test_hangul_script_uses_korean() -> None:
    if "kor" not in installed_languages():
        pytest.skip("Korean OCR data is not installed")
    img = render(["대한민국의 수도는 서울입니다.", "한국어 문서를 인식하는 시험입니다."], _font("cjk"))
    chooser = OcrLanguages((), "korean.png")
    langs, _ = chooser.prepare(encode(img, "PNG"), "korean.png")
    assert chooser.scripts == ["Korean"]
    assert langs[0] == "kor" and "chi_sim" not in langs and "deu" not in langs


@needs_tesseract
def test_configured_languages_win_over_detection() -> None:
    doc = ImageParser(ParseLimits(ocr_languages=("eng",))).parse(
        encode(render(ENGLISH, _font("latin")), "PNG"), "a.png"
    )
    assert doc.metadata["ocr_languages"] == ["eng"] and "ocr_script" not in doc.metadata


def _png_header(width: int, height: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\x00"))
        + chunk(b"IEND", b"")
    )


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
@pytest.mark.parametrize("side", [13_000, 40_000])  # 169 MP (Pillow warns) and 1.6 GP (Pillow refuses)
def test_images_over_the_pixel_limit_are_refused_before_tesseract(
    monkeypatch: pytest.MonkeyPatch, side: int
) -> None:
    def no_ocr(*args: object, **kwargs: object) -> list[str]:
        raise AssertionError("Tesseract must not run")

    monkeypatch.setattr(image_module, "ocr_image", no_ocr)
    monkeypatch.setattr(image_module.OcrLanguages, "prepare", no_ocr)
    # the image's own size: over twice Pillow's limit it refuses to open, and its limit was said
    megapixels = round(side * side / 1e6)
    with pytest.raises(ParseError, match=rf"image has {megapixels} megapixels .*too large"):
        ImageParser().parse(_png_header(side, side), "poster.png")
