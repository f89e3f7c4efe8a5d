"""Local OCR with the Tesseract command-line program (nothing leaves the machine).

The binary is called directly rather than through pytesseract: that wrapper adds nothing
here (it writes temp files and shells out the same way) and keeps the base install light.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Sequence

from docshelf.errors import ParseError

__all__ = [
    "INSTALL_HINT",
    "installed_languages",
    "ocr_image",
    "osd_available",
    "resolve_languages",
    "tesseract_path",
    "tesseract_version",
]

INSTALL_HINT = (
    "install Tesseract (Debian/Ubuntu: `apt-get install tesseract-ocr tesseract-ocr-chi-sim "
    "tesseract-ocr-kor tesseract-ocr-deu`; macOS: `brew install tesseract tesseract-lang`)"
)
# Data files that are not languages: orientation detection and maths.
_NOT_LANGUAGES = frozenset({"osd", "equ"})
_CJK = r"\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
# Tesseract puts a space between every two Chinese/Japanese characters; readers and the
# keyword analyzer expect none.
_CJK_GAP = re.compile(rf"(?<=[{_CJK}]) +(?=[{_CJK}])")


def tesseract_path() -> str | None:
    """The tesseract executable on PATH, or None."""
    return shutil.which("tesseract")


def _run(
    args: Sequence[str], data: bytes | None = None, timeout: float = 30.0
) -> subprocess.CompletedProcess[bytes]:
    # One OpenMP thread: a page is small, and the machine is shared with the embedder.
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    return subprocess.run(list(args), input=data, capture_output=True, timeout=timeout, env=env, check=False)


@functools.lru_cache(maxsize=4)
def _data_files(exe: str) -> tuple[str, ...]:
    try:
        proc = _run([exe, "--list-langs"])
    except (OSError, subprocess.TimeoutExpired):
        return ()
    lines = (proc.stdout or proc.stderr).decode("utf-8", "replace").splitlines()
    return tuple(ln.strip() for ln in lines[1:] if ln.strip() and " " not in ln.strip())


def _languages(exe: str) -> tuple[str, ...]:
    return tuple(lang for lang in _data_files(exe) if lang not in _NOT_LANGUAGES)


def osd_available() -> bool:
    """True when Tesseract has its orientation and script detection data (``osd``)."""
    exe = tesseract_path()
    return exe is not None and "osd" in _data_files(exe)


def installed_languages() -> list[str]:
    """Installed Tesseract languages (English first), or [] without Tesseract."""
    exe = tesseract_path()
    if exe is None:
        return []
    return sorted(_languages(exe), key=lambda lang: (lang != "eng", lang))


def tesseract_version() -> str | None:
    """The first line of `tesseract --version`, or None."""
    exe = tesseract_path()
    if exe is None:
        return None
    try:
        proc = _run([exe, "--version"])
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = (proc.stdout or proc.stderr).decode("utf-8", "replace").strip().splitlines()
    return out[0] if out else None


def resolve_languages(configured: Sequence[str], path: str) -> list[str]:
    """The languages to OCR with: the configured ones (each must be installed) or all installed."""
    if tesseract_path() is None:
        raise ParseError(f"{path}: OCR is off because Tesseract is not installed; {INSTALL_HINT}")
    installed = installed_languages()
    if not configured:
        if not installed:
            raise ParseError(f"{path}: Tesseract has no language data; {INSTALL_HINT}")
        return installed
    missing = [lang for lang in configured if lang not in installed]
    if missing:
        pkgs = " ".join("tesseract-ocr-" + lang.replace("_", "-").lower() for lang in missing)
        raise ParseError(
            f"{path}: OCR language(s) {', '.join(missing)} not installed (parse.ocr_languages); "
            f"`apt-get install {pkgs}` or change the setting"
        )
    return list(configured)


def ocr_image(data: bytes, languages: Sequence[str], timeout: float, path: str) -> list[str]:
    """The text Tesseract reads in the image ``data``, one string per page (multi-page TIFF)."""
    exe = tesseract_path()
    if exe is None:
        raise ParseError(f"{path}: OCR is off because Tesseract is not installed; {INSTALL_HINT}")
    try:
        proc = _run([exe, "stdin", "stdout", "-l", "+".join(languages)], data, timeout)
    except subprocess.TimeoutExpired:
        raise ParseError(
            f"{path}: OCR took over {timeout:.0f} s (parse.timeout_s); raise the limit or exclude the file"
        ) from None
    except OSError as exc:
        raise ParseError(f"{path}: cannot run Tesseract ({exc.strerror}); see `docshelf doctor`") from None
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        why = lines[-1] if lines else f"exit status {proc.returncode}"
        raise ParseError(f"{path}: Tesseract could not read the image ({why}); check the file or exclude it")
    text = proc.stdout.decode("utf-8", "replace")
    pages = text.split("\f")
    if len(pages) > 1 and not pages[-1].strip():
        pages.pop()  # Tesseract ends every page with a form feed
    return [_CJK_GAP.sub("", page) for page in pages]
