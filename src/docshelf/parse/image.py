"""Images (PNG, JPEG, TIFF, WebP): text recognised locally by Tesseract."""

from __future__ import annotations

import io
import re

from docshelf.errors import ParseError
from docshelf.parse.assemble import TextBuilder
from docshelf.parse.limits import ParseLimits
from docshelf.parse.ocr import ocr_image
from docshelf.parse.ocr_script import OcrLanguages
from docshelf.parse.quiet import native_stderr_to_log
from docshelf.types import ParsedDocument

__all__ = ["MAX_PIXELS", "ImageParser", "ocr_text_blocks"]

MAX_PIXELS = 150_000_000
"""Larger images are refused: decoding one would take gigabytes (a "pixel bomb")."""

_BLANK_LINES = re.compile(r"\n[ \t]*\n\s*")
_BOMB_SIZE = re.compile(r"\((\d+) pixels\)")
_MAGIC = {
    ".png": (b"\x89PNG\r\n\x1a\n",),
    ".jpg": (b"\xff\xd8\xff",),
    ".jpeg": (b"\xff\xd8\xff",),
    ".tif": (b"II*\x00", b"MM\x00*"),
    ".tiff": (b"II*\x00", b"MM\x00*"),
}


def _looks_right(data: bytes, ext: str) -> bool:
    if ext == ".webp":
        return data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    return data.startswith(_MAGIC.get(ext, (b"",)))


def _pixels(data: bytes, path: str) -> int | None:
    """Width x height from the header (Pillow reads it without decoding), None if unknown."""
    try:
        from PIL import Image
    except ImportError:
        return None
    try:
        with native_stderr_to_log(path), Image.open(io.BytesIO(data)) as img:
            return int(img.width) * int(img.height)
    except Image.DecompressionBombError as exc:
        # Pillow refuses to even open images over twice its own limit (~179 MP); its message
        # holds the size ("Image size (1600000000 pixels) exceeds limit of ...")
        m = _BOMB_SIZE.search(str(exc))
        return int(m.group(1)) if m else 2 * (Image.MAX_IMAGE_PIXELS or MAX_PIXELS)
    except Exception:  # Pillow may lack a codec Tesseract has; let Tesseract decide
        return None


def ocr_text_blocks(builder: TextBuilder, text: str, page: int | None) -> None:
    """Add OCR output to ``builder``: one block per paragraph, lines kept."""
    for paragraph in _BLANK_LINES.split(text):
        lines = [" ".join(line.split()) for line in paragraph.splitlines()]
        builder.add("\n".join(line for line in lines if line), "paragraph", page=page)


class ImageParser:
    """Image files read by OCR; a multi-page TIFF gets one ``page`` per frame."""

    name: str = "image"
    extensions: tuple[str, ...] = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp")
    binary: bool = True

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """OCR the image in ``data``."""
        if not self.limits.ocr:
            raise ParseError(f"{path}: image not indexed because OCR is off (parse.ocr = false)")
        ext = "." + path.rsplit(".", 1)[-1].lower() if "." in path else ""
        if not _looks_right(data, ext):
            raise ParseError(
                f"{path}: is not a {ext.lstrip('.').upper()} image (damaged or renamed); exclude it"
            )
        pixels = _pixels(data, path)
        if pixels is not None and pixels > MAX_PIXELS:
            raise ParseError(
                f"{path}: image has {pixels / 1e6:.0f} megapixels (over {MAX_PIXELS / 1e6:.0f}); "
                "refused as too large to decode safely"
            )
        deadline = self.limits.deadline(path)
        chooser = OcrLanguages(self.limits.ocr_languages, path)
        languages, upright = chooser.prepare(data, path, deadline.remaining())
        pages = ocr_image(upright, languages, deadline.remaining(), path)
        builder = TextBuilder()
        paged = len(pages) > 1
        for number, text in enumerate(pages, start=1):
            ocr_text_blocks(builder, text, number if paged else None)
        if not builder.text:
            raise ParseError(f"{path}: OCR found no text in the image; nothing to index")
        metadata: dict[str, object] = {"ocr": True, "ocr_languages": languages}
        if chooser.scripts:
            metadata["ocr_script"] = chooser.scripts[0]
        if chooser.rotations:
            metadata["ocr_rotated"] = chooser.rotations[0]
        if paged:
            metadata["pages"] = len(pages)
        return ParsedDocument(
            text=builder.text, sections=builder.sections, file_type=self.name, metadata=metadata
        )
