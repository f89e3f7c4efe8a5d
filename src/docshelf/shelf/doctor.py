"""What this installation can read: optional parsers and OCR languages, and how to add the rest."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
from dataclasses import dataclass

__all__ = ["Check", "checks"]

# (module, distribution, what it reads, how to install it)
_PACKAGES = [
    ("pypdfium2", "pypdfium2", "PDF text, rendering scanned pages for OCR", "pip install pypdfium2"),
    ("pypdf", "pypdf", "PDF fallback (files PDFium cannot open)", "pip install pypdf"),
    ("charset_normalizer", "charset-normalizer", "text that is not UTF-8", "pip install charset-normalizer"),
    ("striprtf", "striprtf", "RTF", "pip install striprtf"),
    ("olefile", "olefile", "Outlook .msg", "pip install olefile"),
    ("PIL", "pillow", "image size checks, images inside scanned PDFs", "pip install pillow"),
    ("gdown", "gdown", "Google Drive links", "pip install 'docshelf[drive]'"),
    ("wordfreq", "wordfreq", "German compounds split in keyword search", "pip install 'docshelf[german]'"),
]
# Languages worth suggesting: the bundled sample corpus's, plus a few common ones.
_MANY_LANGUAGES = 6
_SUGGESTED = ["eng", "deu", "chi_sim", "kor", "chi_tra", "jpn", "fra", "spa"]


@dataclass
class Check:
    """One line of the report."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


def _apt_package(lang: str) -> str:
    return "tesseract-ocr-" + lang.replace("_", "-").lower()


def _install_cmd(langs: list[str], base: bool = True) -> str:
    if sys.platform == "darwin":
        return "brew install tesseract" + (" tesseract-lang" if langs else "")
    return "apt-get install " + " ".join([*(["tesseract-ocr"] if base else []), *map(_apt_package, langs)])


def checks(ocr_enabled: bool = True, configured: list[str] | None = None) -> list[Check]:
    """Every check, in the order shown."""
    from docshelf.parse.ocr import installed_languages, tesseract_version

    found: list[Check] = [
        Check(
            "built in",
            True,
            "Markdown, text, reST, HTML, EPUB, Word/PowerPoint/Excel (OOXML, .xlsb), OpenDocument, e-mail, "
            "notebooks, CSV, code, JSON/YAML/TOML, web pages",
        )
    ]
    for module, dist, what, fix in _PACKAGES:
        if importlib.util.find_spec(module) is None:
            found.append(Check(dist, False, f"not installed: {what} unavailable", fix))
            continue
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            version = "?"
        found.append(Check(dist, True, f"{version}: {what}"))
    tesseract = tesseract_version()
    if tesseract is None:
        found.append(
            Check("tesseract", False, "not installed: images and scanned PDF pages are not OCR'd",
                  _install_cmd(["eng", "chi_sim", "kor", "deu"]))
        )  # fmt: skip
        return found
    langs = installed_languages()
    state = "on" if ocr_enabled else "off (parse.ocr = false)"
    found.append(Check("tesseract", True, f"{tesseract}; OCR {state}"))
    missing_conf = [lang for lang in configured or [] if lang not in langs]
    if missing_conf:
        found.append(
            Check("parse.ocr_languages", False, f"configured but not installed: {', '.join(missing_conf)}",
                  _install_cmd(missing_conf, base=False))
        )  # fmt: skip
    others = [lang for lang in _SUGGESTED if lang not in langs]
    found.append(
        Check("OCR languages", bool(langs), ", ".join(langs) or "none",
              f"more: {_install_cmd(others, base=False)}" if others else "")
    )  # fmt: skip
    if not configured and len(langs) > _MANY_LANGUAGES:
        # every installed language is used when none is configured; each one slows Tesseract down
        found.append(
            Check("OCR speed", False, f"all {len(langs)} installed languages are used for every image",
                  "set parse.ocr_languages to the few your documents use")
        )  # fmt: skip
    return found
