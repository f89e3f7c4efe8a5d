"""Which Tesseract languages read an image: the script its OSD detects, or ``parse.ocr_languages``.

Running every installed language is slow (each adds a model) and wrong: English screenshots
read with ``eng+chi_sim+kor`` gain stray Hangul and Chinese characters. Tesseract's orientation
and script detection (the ``osd`` data file) names the script and the rotation of the page;
the languages of that script that are installed read it, after the image is turned upright.
"""

from __future__ import annotations

import io
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from docshelf.errors import ParseError
from docshelf.parse.ocr import (
    INSTALL_HINT,
    _run,
    installed_languages,
    osd_available,
    resolve_languages,
    tesseract_path,
)
from docshelf.parse.quiet import native_stderr_to_log

__all__ = ["SCRIPT_LANGUAGES", "OcrLanguages", "OsdResult", "detect_script"]

# Tesseract's script names (OSD) -> its language codes written in that script, most used first.
SCRIPT_LANGUAGES: dict[str, tuple[str, ...]] = {
    "Latin": ("eng", "deu", "fra", "spa", "ita", "por", "nld", "pol", "ces", "swe", "dan", "nor", "fin",
              "tur", "hun", "ron", "slk", "slv", "hrv", "lit", "lav", "est", "cat", "vie", "ind", "msa"),
    "Han": ("chi_sim", "chi_tra", "chi_sim_vert", "chi_tra_vert"),
    "Hangul": ("kor", "kor_vert"),
    "Korean": ("kor", "kor_vert"),
    "Japanese": ("jpn", "jpn_vert"),
    "Katakana": ("jpn",),
    "Hiragana": ("jpn",),
    "Cyrillic": ("rus", "ukr", "bul", "srp", "bel", "mkd", "kaz"),
    "Arabic": ("ara", "fas", "urd", "pus"),
    "Greek": ("ell", "grc"),
    "Hebrew": ("heb", "yid"),
    "Devanagari": ("hin", "mar", "nep", "san"),
    "Thai": ("tha",),
    "Bengali": ("ben", "asm"),
    "Tamil": ("tam",),
    "Georgian": ("kat",),
    "Armenian": ("hye",),
}  # fmt: skip
_MIN_SCRIPT_CONFIDENCE = 0.3
_MIN_ORIENTATION_CONFIDENCE = 1.0
_OSD_TIMEOUT_S = 60.0
_FIELD = re.compile(r"^(Rotate|Orientation confidence|Script|Script confidence):\s*(\S+)", re.MULTILINE)


@dataclass(frozen=True)
class OsdResult:
    """What Tesseract's OSD says of an image."""

    script: str | None
    script_confidence: float
    rotate: int  # degrees clockwise that turn the image upright
    orientation_confidence: float


def detect_script(image: bytes, timeout: float) -> OsdResult | None:
    """OSD of ``image``; None without the osd data or when there is too little text to tell."""
    exe = tesseract_path()
    if exe is None or not osd_available():
        return None
    try:
        proc = _run([exe, "stdin", "stdout", "--psm", "0", "-l", "osd"], image, min(timeout, _OSD_TIMEOUT_S))
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    fields = dict(_FIELD.findall(proc.stdout.decode("utf-8", "replace")))
    try:
        return OsdResult(
            script=fields.get("Script"),
            script_confidence=float(fields.get("Script confidence", 0)),
            rotate=int(fields.get("Rotate", 0)) % 360,
            orientation_confidence=float(fields.get("Orientation confidence", 0)),
        )
    except ValueError:
        return None


def _upright(image: bytes, rotate: int, where: str) -> bytes | None:
    """The image turned ``rotate`` degrees clockwise, as PNG (None if Pillow cannot)."""
    try:
        from PIL import Image

        with native_stderr_to_log(where), Image.open(io.BytesIO(image)) as img:
            if getattr(img, "n_frames", 1) > 1:
                return None  # a multi-page TIFF: its pages may differ; leave it as it is
            turned = img.rotate(-rotate, expand=True)
            out = io.BytesIO()
            turned.save(out, format="PNG")
            return out.getvalue()
    except Exception:
        return None


class OcrLanguages:
    """The languages (and upright image) for each image of one file."""

    def __init__(self, configured: Sequence[str], path: str) -> None:
        self.fixed = resolve_languages(configured, path) if configured else None
        if self.fixed is None and tesseract_path() is None:
            raise ParseError(f"{path}: OCR is off because Tesseract is not installed; {INSTALL_HINT}")
        self.installed = installed_languages()
        self.last: OsdResult | None = None
        self.scripts: list[str] = []
        self.rotations: list[int] = []
        self.used: list[str] = []

    def prepare(self, image: bytes, where: str, timeout: float = _OSD_TIMEOUT_S) -> tuple[list[str], bytes]:
        """(languages, image turned upright when OSD is sure it is rotated)."""
        langs = self.fixed or self.installed
        if not langs:
            raise ParseError(f"{where}: Tesseract has no language data; see `docshelf doctor`")
        osd = detect_script(image, timeout)
        self.last = osd
        if osd is not None and osd.rotate and osd.orientation_confidence >= _MIN_ORIENTATION_CONFIDENCE:
            turned = _upright(image, osd.rotate, where)
            if turned is not None:
                image = turned
                self.rotations.append(osd.rotate)
        if self.fixed is None and osd is not None and osd.script_confidence >= _MIN_SCRIPT_CONFIDENCE:
            fitting = [lang for lang in SCRIPT_LANGUAGES.get(osd.script or "", ()) if lang in self.installed]
            if fitting:
                self.scripts.append(osd.script or "")
                if osd.script != "Latin" and "eng" in self.installed:
                    fitting.append("eng")  # Latin words (names, code) are common in any script's text
                langs = fitting
        for lang in langs:
            if lang not in self.used:
                self.used.append(lang)
        return list(langs), image
