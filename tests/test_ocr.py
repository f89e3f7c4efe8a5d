"""Images and scanned PDFs through local Tesseract OCR; what happens without it; `docshelf doctor`.

Images are rendered here with Pillow (DejaVu for English, WenQuanYi Zen Hei for Chinese);
the OCR tests run wherever Tesseract is installed (`.ci/run` installs it on CI).
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont
from typer.testing import CliRunner

from docshelf.cli import app
from docshelf.config import ParseSettings
from docshelf.errors import ParseError
from docshelf.parse import default_registry
from docshelf.parse.image import ImageParser
from docshelf.parse.limits import ParseLimits
from docshelf.parse.ocr import installed_languages, tesseract_path
from docshelf.parse.pdf import PdfParser
from docshelf.shelf import Shelf

_FONTS = {
    "latin": ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"],
    "cjk": [
        "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
        "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    ],
}


def _font(kind: str) -> str:
    for path in _FONTS[kind]:
        if Path(path).is_file():
            return path
    pytest.skip(f"no {kind} font installed (.ci/run installs fonts-wqy-zenhei)")


needs_tesseract = pytest.mark.skipif(
    tesseract_path() is None, reason="Tesseract is not installed (.ci/run installs it)"
)


def render(lines: list[str], font: str, fmt: str = "PNG") -> Image.Image:
    face = ImageFont.truetype(font, 40)
    img = Image.new("L", (1000, 90 + 70 * len(lines)), 255)
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((40, 40 + 70 * i), line, font=face, fill=0)
    return img


def encode(img: Image.Image, fmt: str, **kw: object) -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt, **kw)
    return buf.getvalue()


@needs_tesseract
@pytest.mark.parametrize(
    ("fmt", "ext"), [("PNG", ".png"), ("JPEG", ".jpg"), ("TIFF", ".tiff"), ("WEBP", ".webp")]
)
def test_english_image_is_read(fmt: str, ext: str) -> None:
    img = render(["Quarterly backup report", "The restore drill passed"], _font("latin"))
    doc = ImageParser().parse(encode(img, fmt), "scan" + ext)
    assert "Quarterly backup report" in doc.text and "restore drill passed" in doc.text
    assert doc.file_type == "image" and doc.metadata["ocr"] is True
    assert all(doc.text[s.start : s.end].strip() for s in doc.sections)


@needs_tesseract
def test_chinese_image_is_read() -> None:
    if "chi_sim" not in installed_languages():
        pytest.skip("tesseract-ocr-chi-sim is not installed")
    img = render(["数据备份策略", "每天晚上恢复演练"], _font("cjk"))
    doc = ImageParser().parse(encode(img, "PNG"), "备份.png")
    # no spaces between the characters (Tesseract puts them in; they are taken out)
    assert "数据备份策略" in doc.text and "恢复演练" in doc.text
    # English alone cannot read it: the recognised text comes from the Chinese model
    eng_only = ImageParser(ParseLimits(ocr_languages=("eng",))).parse(encode(img, "PNG"), "x.png")
    assert "数据" not in eng_only.text


@needs_tesseract
def test_multipage_tiff_gives_pages() -> None:
    font = _font("latin")
    first, second = render(["Alpha section text"], font), render(["Beta section text"], font)
    data = encode(first, "TIFF", save_all=True, append_images=[second])
    doc = ImageParser().parse(data, "two.tif")
    pages = {doc.text[s.start : s.end].split()[0]: s.page for s in doc.sections}
    assert pages == {"Alpha": 1, "Beta": 2} and doc.metadata["pages"] == 2


@needs_tesseract
def test_scanned_pdf_pages_are_ocred_and_cited(shelf: Shelf, tmp_path: Path) -> None:
    font = _font("latin")
    cover = ["Runbook cover page for the", "operations team in Berlin", "written in the year 2024"]
    pages = [render(cover, font), render(["Rotate the vault keys quarterly"], font)]
    pdf = encode(pages[0].convert("RGB"), "PDF", save_all=True, append_images=[pages[1].convert("RGB")])
    doc = PdfParser().parse(pdf, "scan.pdf")
    assert doc.metadata["ocr_pages"] == [1, 2] and "pages_without_text" not in doc.metadata
    by_page = {s.page for s in doc.sections if "vault keys" in doc.text[s.start : s.end]}
    assert by_page == {2}

    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "scan.pdf").write_bytes(pdf)
    # small chunks: the chunker packs paragraphs across page breaks, and a chunk cites the
    # page it starts on, so with the default budget both short pages would be one chunk
    shelf.settings.chunk.max_tokens = 16
    report = shelf.index([corpus], "test").sync
    assert report.added == ["scan.pdf"] and not report.skipped
    hit = shelf.search("vault keys", mode="keyword").hits[0]
    assert hit.citation == "scan.pdf#page=2"


def test_scanned_pdf_without_ocr_is_reported_no_text_layer() -> None:
    img = Image.new("RGB", (200, 100), "white")
    pdf = encode(img, "PDF")
    off = ParseLimits.from_settings(ParseSettings(ocr=False))
    with pytest.raises(ParseError, match=r"no text layer .*OCR is off \(parse\.ocr = false\)"):
        PdfParser(off).parse(pdf, "blank-scan.pdf")


def test_without_tesseract_images_are_skipped_with_a_reason(
    shelf: Shelf, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no tesseract on PATH
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "photo.png").write_bytes(encode(Image.new("L", (50, 50), 255), "PNG"))
    (corpus / "notes.md").write_text("# Notes\n\nThe batch goes on.\n", "utf-8")
    report = shelf.index([corpus], "test").sync
    assert report.added == ["notes.md"]
    reasons = {s.path: s.reason for s in report.skipped}
    assert "Tesseract is not installed" in reasons["photo.png"]
    assert "apt-get install tesseract-ocr" in reasons["photo.png"]


def test_ocr_off_and_bad_images_are_refused() -> None:
    png = encode(Image.new("L", (10, 10), 255), "PNG")
    with pytest.raises(ParseError, match=r"OCR is off \(parse\.ocr = false\)"):
        ImageParser(ParseLimits(ocr=False)).parse(png, "a.png")
    with pytest.raises(ParseError, match="is not a PNG image"):
        ImageParser().parse(b"GIF89a not a png", "b.png")
    with pytest.raises(ParseError, match="is not a JPG image"):
        ImageParser().parse(png, "c.jpg")
    reg = default_registry()
    assert all(e in reg.binary_extensions for e in (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp"))


def _doctor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, dict[str, object]]:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    return {c["name"]: c for c in json.loads(result.stdout)["checks"]}


def test_doctor_without_tesseract_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    checks = _doctor(monkeypatch, tmp_path)
    assert checks["tesseract"]["ok"] is False
    assert "tesseract-ocr-chi-sim" in str(checks["tesseract"]["fix"])
    assert checks["pypdf"]["ok"] is True and checks["gdown"]["ok"] is True
    assert "OCR languages" not in checks


@needs_tesseract
def test_doctor_lists_ocr_languages(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCSHELF_PARSE__OCR_LANGUAGES", '["eng", "xyz"]')
    checks = _doctor(monkeypatch, tmp_path)
    assert checks["tesseract"]["ok"] is True
    assert "eng" in str(checks["OCR languages"]["detail"])
    assert checks["parse.ocr_languages"]["ok"] is False
    assert "tesseract-ocr-xyz" in str(checks["parse.ocr_languages"]["fix"])


def test_tesseract_binary_lookup_uses_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert tesseract_path() is None and installed_languages() == []
    assert shutil.which("tesseract") is None
